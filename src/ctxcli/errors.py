"""Every error a user can cause, in one place.

The CLI catches :class:`CtxError`, prints ``str(err)`` as one line on stderr and exits
with ``err.exit_code``. Library code raises these and never prints or exits.

Exit codes: :class:`ExitCode`, the one list (README.md "Exit codes" documents each).
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Every exit code of ``ctx`` (README.md, "Exit codes"; tests/test_exit_codes.py checks the table)."""

    OK = 0
    FAILED = 1            # a check ran and failed: replay drift, packs differ, eval below threshold, model answer rejected
    BAD_INPUT = 2         # bad input or usage: one line naming file, line and field
    STORE = 3             # the store is busy, unusable or stale
    UNREACHABLE = 4       # the model endpoint or OTLP collector is unreachable or answered an error
    MODEL_AUTH = 5        # the model endpoint refused the credentials
    INTERNAL = 70         # a bug in ctx (sysexits' EX_SOFTWARE)
    INTERRUPTED = 130     # Ctrl-C (128 + SIGINT)
    BROKEN_PIPE = 141     # the reader of stdout closed it (`| head -1`): 128 + SIGPIPE, as a tool killed by it
    TERMINATED = 143      # SIGTERM during a load (CI cancellation, timeout, docker stop): 128 + SIGTERM


class CtxError(Exception):
    """Base class: a user-facing error with a one-line message and an exit code."""

    exit_code: int = ExitCode.BAD_INPUT

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None, column: int | None = None) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.detail = message
        super().__init__(message)

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        fld = f"{self.field}: " if self.field else ""
        return one_line(f"{where}{fld}{self.detail}")


class InputError(CtxError):
    """A manifest, snapshot, playbook or case file is malformed or invalid."""


class LoadProblems(InputError):
    """Every problem a load found (up to a limit), each an InputError with its position. The
    message is the first; :meth:`lines` gives one line per problem."""

    def __init__(self, problems: list[InputError], more: bool = False) -> None:
        self.problems = list(problems)
        self.more = more
        first = problems[0]
        n = len(problems)
        tail = f" (and {n - 1}{'+' if more else ''} more problem{'s' if n > 2 or more else ''})" if n > 1 or more else ""
        super().__init__(first.detail + tail, file=first.file, line=first.line, field=first.field,
                         column=first.column)

    def lines(self) -> list[str]:
        out = [str(p) for p in self.problems]
        if self.more:
            out.append(f"… stopped after {len(self.problems)} problems")
        return out


class UsageError(CtxError):
    """A command-line argument is invalid (bad time, unknown purpose, missing file)."""


class VectorsNotInstalledError(UsageError):
    """A load asking for vectors, or the hybrid strategy, without the ``vectors`` extra installed; exit 2."""


class UnknownCaseError(CtxError):
    """No case file exists for the requested case id."""


class StoreError(CtxError):
    """The store is missing, of an incompatible schema version, or unreadable."""


class StoreBusyError(CtxError):
    """Another process holds the store's write lock; retry shortly."""

    exit_code = ExitCode.STORE


class EmbeddingError(StoreError):
    """The pinned embedding model's files are damaged, or differ from the one the store's vectors were made with, or the store holds no vectors; exit 3."""

    exit_code = ExitCode.STORE


class StoreUnusableError(StoreError):
    """The store is damaged (corrupt, truncated) or cannot be written (disk full, read-only folder); exit 3."""

    exit_code = ExitCode.STORE


class StatementTimeoutError(StoreError):
    """A store statement ran longer than the playbook's statement_timeout_seconds and was cancelled; exit 3."""

    exit_code = ExitCode.STORE


class StoreStaleError(StoreError):
    """The store was loaded from older manifests than the project's (scopes, purposes, clearance or masks changed since); exit 3."""

    exit_code = ExitCode.STORE


class OutputError(CtxError):
    """An output file or run folder cannot be written (a folder in the way, disk full, read-only)."""


class PackError(CtxError):
    """A pack file is missing, not a pack, of an unknown schema or tampered with."""


class CheckFailed(CtxError):
    """A check ran and failed (replay drift, eval threshold); exit code 1."""

    exit_code = ExitCode.FAILED


_PYDANTIC_URL = None     # the compiled pattern, made on first use


def without_pydantic_url(text: str) -> str:
    """``text`` without pydantic's "For further information visit https://errors.pydantic.dev/…"
    (a link to pydantic's documentation is no help to a user of ctx)."""
    global _PYDANTIC_URL
    if "errors.pydantic.dev" not in text:
        return text
    import re

    if _PYDANTIC_URL is None:
        _PYDANTIC_URL = re.compile(r"\s*For further information visit https?://errors\.pydantic\.dev/\S*")
    return _PYDANTIC_URL.sub("", text)


def one_line(text: str, limit: int = 400) -> str:
    """Collapse a message to one printable line: control characters escaped, length capped."""
    text = without_pydantic_url(text)
    out = []
    for ch in text:
        o = ord(ch)
        if ch in "\n\r\t":
            out.append(" ")
        elif o < 32 or o == 127 or 0x80 <= o < 0xA0:
            out.append(f"\\x{o:02x}")
        elif o in (0x2028, 0x2029, 0x200E, 0x200F) or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    s = "".join(out)
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


class ModelEndpointError(CtxError):
    """The model endpoint is unreachable, timed out, or answered an HTTP error or non-JSON; exit code 4."""

    exit_code = ExitCode.UNREACHABLE


class ModelAuthError(CtxError):
    """The model endpoint refused the credentials (HTTP 401/403); exit code 5."""

    exit_code = ExitCode.MODEL_AUTH


class OtlpExportError(CtxError):
    """The OTLP collector (--otel-endpoint or OTEL_EXPORTER_OTLP_*) is unreachable or refused the
    spans; exit code 4 (the run folder is written first)."""

    exit_code = ExitCode.UNREACHABLE
