"""A throw-away PostgreSQL server for the tests: initdb in a temporary folder, listening on
127.0.0.1 on a free port, stopped at the end of the session (the logic of benchmarks/run.py's
PG class). PostgreSQL refuses to run as root: as root the server runs as the ``postgres``
user (``runuser``). One role needs a password (scram-sha-256) so that tests can check that no
password is ever printed; every other connection from 127.0.0.1 is trusted.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

PASSWORD_ROLE = "ctxpw"
PASSWORD = "Sx9-very-secret-pw"
# The planted-bug runner (tests/mutants.py) starts one server for all its runs and names its port
# here; a session then uses it (a fresh database per test, as always) and leaves it running.
SHARED = "TESTS_PG_SHARED_PORT"
_NUMBERS = itertools.count(1)


def find_bin() -> Path | None:
    """The folder of initdb and pg_ctl: Debian's /usr/lib/postgresql/<v>/bin, else PATH."""
    for c in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (c / "initdb").exists() and (c / "pg_ctl").exists():
            return c
    p = shutil.which("pg_ctl")
    if p and (Path(os.path.realpath(p)).parent / "initdb").exists():
        return Path(os.path.realpath(p)).parent
    return None


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, bindir: Path, port: int | None = None) -> None:
        self.bin = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="ctx-test-pg-")) if port is None else None
        self.port = _free_port() if port is None else port
        self.as_root = os.geteuid() == 0

    def _run(self, args: list[str]) -> None:
        if self.as_root:
            args = ["runuser", "-u", "postgres", "--"] + args
        subprocess.run(args, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        if self.as_root:
            os.chmod(self.dir, 0o755)
            shutil.chown(self.dir, "postgres", "postgres")
        data = self.dir / "data"
        self._run([str(self.bin / "initdb"), "-D", str(data), "-U", "ctx", "--auth=trust", "-E", "UTF8",
                   "--locale=C.UTF-8"])
        with open(data / "postgresql.conf", "a") as fh:
            fh.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\nunix_socket_directories = '{self.dir}'\n"
                     "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\njit = off\n"
                     "max_connections = 60\nshared_buffers = 64MB\n")
        (data / "pg_hba.conf").write_text(f"local all all trust\nhost all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n"
                                          "host all all 127.0.0.1/32 trust\n")
        self._run([str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "log"), "-w", "start"])
        with self.admin() as c:
            c.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN SUPERUSER PASSWORD '{PASSWORD}'")

    def admin(self):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user="ctx", dbname="postgres", autocommit=True)

    def url(self, db: str, user: str = "ctx", password: str | None = None) -> str:
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its name."""
        name = f"ctx_t{os.getpid()}_{next(_NUMBERS)}"     # unique per process, whichever Server made it
        with self.admin() as c:
            c.execute(f"CREATE DATABASE {name}")
        return name

    def stop(self) -> None:
        if self.dir is None:        # the shared server: its owner stops it
            return
        try:
            self._run([str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def session_server(bindir: Path) -> Server:
    """The server a test session uses: the shared one when $TESTS_PG_SHARED_PORT names it (its
    :meth:`Server.stop` leaves it running), else a new one, started."""
    port = os.environ.get(SHARED)
    if port:
        return Server(bindir, int(port))
    srv = Server(bindir)
    srv.start()
    return srv
