"""What a ``ctx serve`` process is allowed to do, fixed when it starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, UsageError


@dataclass(frozen=True)
class ServeConfig:
    """The server's fixed identity and folders.

    ``subject_id``/``scopes``/``purpose`` replace whatever a case file or variant declares; left
    unset, each case's own subject and purpose are used (as ``ctx investigate CASE`` does), and
    variants that declare another subject or purpose are refused.
    """

    db: Path | str
    runs_dir: Path
    audit_log: Path
    subject_id: str | None = None
    scopes: tuple[str, ...] | None = None
    purpose: str | None = None
    clearance: str | None = None     # the fixed subject's clearance; None: internal (a case's own subject: its own)
    tenant: str | None = None        # the tenant of ad-hoc runs (playbook + seeds); a case file names its own
    cases_dir: Path | None = None
    playbooks_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    no_runs: bool = False            # --no-runs: investigate and build_context write no run folder, no ledger record

    def describe(self) -> dict[str, Any]:
        return {"subject": self.subject_id, "scopes": list(self.scopes) if self.scopes is not None else None,
                "purpose": self.purpose, "clearance": self.clearance, "tenant": self.tenant, "runs_dir": str(self.runs_dir), "audit_log": str(self.audit_log)}


_CONFIG_KEYS = {"subject", "scopes", "purpose", "clearance", "tenant", "db", "runs_dir", "audit_log"}


def read_config_file(path: Path) -> dict[str, Any]:
    """A YAML mapping with any of: subject, scopes (list), purpose, clearance, tenant, db, runs_dir,
    audit_log."""
    from ..util.yamlio import read_yaml

    data = read_yaml(Path(path), display=str(path))
    if not isinstance(data, dict):
        raise InputError("a serve config must be a YAML mapping", file=str(path))
    unknown = sorted(set(data) - _CONFIG_KEYS)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_CONFIG_KEYS))})",
                         file=str(path), field=unknown[0])
    scopes = data.get("scopes")
    if scopes is not None and (not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes)):
        raise InputError("scopes must be a list of strings", file=str(path), field="scopes")
    for k in ("subject", "purpose", "clearance", "tenant", "db", "runs_dir", "audit_log"):
        if data.get(k) is not None and not isinstance(data[k], str):
            raise InputError(f"{k} must be a string", file=str(path), field=k)
        if isinstance(data.get(k), str) and (not data[k] or any(ord(c) < 32 for c in data[k])):
            # a NUL in a path fails only at the first tool call, as an internal error
            raise InputError(f"{k} must be a non-empty string without control characters", file=str(path), field=k)
    return data


def load_config(*, db: Path | str | None, runs_dir: Path | None, audit_log: Path | None, subject_id: str | None,
                scopes: list[str] | None, purpose: str | None, config_file: Path | None = None,
                clearance: str | None = None, tenant: str | None = None, no_runs: bool = False) -> ServeConfig:
    """Flags win over the config file; the config file wins over defaults."""
    from ..models.manifest import CLEARANCE_LEVELS, IDENT_RE, SCOPE_RE

    conf: dict[str, Any] = read_config_file(config_file) if config_file is not None else {}
    from .. import paths

    db = paths.db_path(db if db is not None else conf.get("db"))     # a path or a postgresql:// address
    subject_id = subject_id if subject_id is not None else conf.get("subject")
    scopes = scopes if scopes is not None else conf.get("scopes")
    purpose = purpose if purpose is not None else conf.get("purpose")
    clearance = clearance if clearance is not None else conf.get("clearance")
    tenant = tenant if tenant is not None else conf.get("tenant")
    if subject_id is not None and not IDENT_RE.match(subject_id):
        raise UsageError(f"--subject {subject_id!r} is not a valid id")
    for sc in scopes or []:
        if not SCOPE_RE.match(sc):
            raise UsageError(f"--scope {sc!r} is not a valid scope")
    if scopes is not None and subject_id is None:
        raise UsageError("--scope needs --subject: the scopes belong to a fixed subject")
    if clearance is not None and clearance not in CLEARANCE_LEVELS:
        raise UsageError(f"--clearance {clearance!r} is not one of {', '.join(CLEARANCE_LEVELS)}")
    if clearance is not None and subject_id is None:
        raise UsageError("--clearance needs --subject: the clearance belongs to a fixed subject")
    if tenant is not None and not IDENT_RE.match(tenant):
        raise UsageError(f"--tenant {tenant!r} is not a valid id")
    if subject_id is not None and scopes is None:
        scopes = []
    if purpose is not None and not IDENT_RE.match(purpose):
        raise UsageError(f"--purpose {purpose!r} is not a valid purpose")
    runs = Path(runs_dir) if runs_dir is not None else Path(conf["runs_dir"]) if conf.get("runs_dir") else None
    if runs is None:
        from .. import paths

        runs = paths.root() / "runs" / "serve"
    audit = Path(audit_log) if audit_log is not None else (
        Path(conf["audit_log"]) if conf.get("audit_log") else runs / "audit.jsonl")
    return ServeConfig(db=db, runs_dir=runs, audit_log=audit, subject_id=subject_id,
                       scopes=tuple(sorted(set(scopes))) if scopes is not None else None, purpose=purpose,
                       clearance=clearance, tenant=tenant, no_runs=no_runs)
