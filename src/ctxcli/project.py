"""The project's own files: its cases and playbooks, read and checked, and whether the store
was loaded from its current manifests.

Where things are (the root, ctx.toml, the store address, the folders) is :mod:`ctxcli.paths`,
which sits lower (the answer layer and the run-folder writer need the root too); this module
reads what is there. It sits below the API, the request policy (:mod:`ctxcli.request_policy`),
replay and ``ctx ask``, and above the checks (:mod:`ctxcli.check`), so none of them imports
the API (docs/modules.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from . import paths
from .errors import InputError, UnknownCaseError, UsageError
from .models.case import CaseFile
from .models.playbook import Playbook
from .paths import display
from .util.canon import obj_hash
from .util.pyd import input_error
from .util.yamlio import read_yaml_marked

_ID_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:@-")


def stale_sources(con) -> list[str]:
    """The sources whose manifest now differs (by content digest) from the one the store was
    loaded from — or that only one of them has — in the manifests folder of :func:`manifests_of`.
    Empty when they agree, when that folder has no manifests any more, or when the store
    predates manifest digests."""
    return compare_manifests(con)[0]


def compare_manifests(con) -> tuple[list[str], list[tuple[Any, str, bytes]]]:
    """(:func:`stale_sources`, the manifests read to tell it: none when it read none)."""
    meta = con.meta()
    recorded = meta.get("manifest_digests")
    mdir = manifests_of(meta)
    if recorded is None or not (mdir / "sources").is_dir():
        return [], []
    loaded = loaded_digests(meta)
    sources, now = _read(mdir)
    return sorted(s for s in set(loaded) | set(now) if loaded.get(s) != now.get(s)), list(sources)


def loaded_digests(meta: dict) -> dict[str, str]:
    """source id -> the digest of the manifest the store was loaded from (its ``meta``)."""
    import orjson

    try:
        out = orjson.loads(meta.get("manifest_digests") or "{}")
    except orjson.JSONDecodeError:
        return {}
    return out if isinstance(out, dict) else {}


# The digests of a manifests folder, kept per process (a warm `ctx serve` checks them at every
# call): keyed by the folder and by every manifest file's path and identity (device, inode,
# size, mtime, ctime: util/yamlio.py). Kept only when every file is settled (unchanged for 2 s,
# as the parse cache does) and unchanged while it was read; any edit, added or removed file
# changes the key, so the next call reads and validates the folder again.
_DIGESTS: dict[tuple, tuple[list, dict[str, str]]] = {}
_DIGESTS_MAX = 16


def _manifest_files(mdir: Path) -> tuple[tuple[str, tuple | None], ...]:
    from .util.yamlio import settled_identity

    # every YAML file of the manifests folder, not only sources/: a manifest may extend a base
    # anywhere in it (load/tenants.py)
    files = sorted(p for p in mdir.rglob("*") if p.suffix in (".yaml", ".yml"))
    return tuple((str(p), settled_identity(p)) for p in files)


def _read(mdir: Path) -> tuple[list, dict[str, str]]:
    from .load.parse import manifest_digest, read_manifests

    root = mdir.resolve().parent
    key = (str(mdir), str(root), _manifest_files(mdir))
    settled = all(ident is not None for _, ident in key[2])
    kept = _DIGESTS.get(key) if settled else None
    if kept is not None:
        return kept
    sources = read_manifests(mdir, root, parsers_installed=False)
    now = (sources, {m.source_id: manifest_digest(m) for m, _, _ in sources})
    if settled and _manifest_files(mdir) == key[2]:      # unchanged while they were read
        if len(_DIGESTS) >= _DIGESTS_MAX:
            _DIGESTS.clear()
        _DIGESTS[key] = now
    return now


def current_digests(mdir: Path) -> dict[str, str]:
    """source id -> digest of every manifest now in ``mdir``'s sources/ (load.parse.manifest_digest)."""
    return dict(_read(mdir)[1])


def read_sources(mdir: Path) -> list[tuple[Any, str, bytes]]:
    """Every source manifest now in ``mdir``'s sources/ (load.parse.read_manifests), read once
    per process while the files are unchanged (as :func:`current_digests`)."""
    return list(_read(mdir)[0])


def manifests_of(meta: dict[str, str]) -> Path:
    """The manifests folder to compare a store with: loaded from inside a project, that place in
    the project of this run (a copied project — ``cp -r``, a clone — checks its own manifests as
    they are now, never the original's); loaded from a folder outside the project, that folder
    while it exists; else the project's."""
    inside = meta.get("manifests_in_project")
    if inside is not None:
        return paths.root() / inside
    loaded_from = meta.get("manifests_dir")
    if loaded_from and (Path(loaded_from) / "sources").is_dir():
        return Path(loaded_from)
    return paths.manifests_dir()


def require_current_manifests(con) -> list[tuple[Any, str, bytes]]:
    """Refuse (exit 3, naming the sources) to run with permissions older than the manifests: a
    tightened ``required_scopes`` or a new mask takes effect only with ``ctx load``, so until
    then nothing is served from the store. Returns the manifests it compared (load.parse's
    (manifest, file shown, bytes); none when the store records no manifest digests)."""
    from .errors import StoreStaleError

    stale, sources = compare_manifests(con)
    if stale:
        shown = ", ".join(stale[:8]) + (f" and {len(stale) - 8} more" if len(stale) > 8 else "")
        raise StoreStaleError(f"the store was loaded before the manifests of {shown} changed: run `ctx load` so "
                              f"that their scopes, purposes, clearance and masks apply")
    return sources


NO_PROJECT_HINT = ("run `ctx init` for a new project (or `ctx init --example claims` for the bundled example), "
                   "then `ctx load`")


def _safe_id(value: str, what: str) -> str:
    if not value or not set(value) <= _ID_OK or value.startswith("."):
        raise UsageError(f"{what} {value!r} is not a valid id")
    return value


def read_case(case_id: str, cases_dir: Path | None = None, *, by_id: bool = False) -> tuple[CaseFile, str]:
    """The case file for ``case_id`` (or a path to a case file; with ``by_id``, only an id
    resolved under the project's cases folder)."""
    case, disp, _ = _read_case(case_id, cases_dir, by_id=by_id)
    return case, disp


def read_case_marked(case_id: str, cases_dir: Path | None = None, *, by_id: bool = False):
    """(case, display name, marks): :func:`read_case` with what :func:`read_checked` needs to
    check it later (``read=``) without reading the file again (a ``ctx serve`` step)."""
    return _read_case(case_id, cases_dir, by_id=by_id)


def _read_case(case_id: str, cases_dir: Path | None = None, *, by_id: bool = False):
    """With ``by_id`` (``ctx serve``: the caller is not the operator) a path is never taken,
    whether or not it exists, and a case file that is a symlink leading out of the cases
    folder is refused without naming its target."""
    cdir = Path(cases_dir) if cases_dir else paths.cases_dir()
    p = Path(case_id)
    if not by_id and p.suffix in (".yaml", ".yml") and os.path.lexists(p):
        path = p     # a FIFO or folder is reported by read_yaml ("not a regular file")
    else:
        _safe_id(case_id, "case")
        path = cdir / f"{case_id}.yaml"
        if not os.path.lexists(path):
            known = sorted(x.stem for x in cdir.glob("*.yaml")) if cdir.is_dir() else []
            hint = (f" (known: {', '.join(known[:12])})" if known else
                    "" if paths.is_project() else f"; {paths.root()} is not a ctx project: {NO_PROJECT_HINT}")
            raise UnknownCaseError(f"unknown case {case_id!r}: no {display(path)}{hint}")
        if by_id and Path(os.path.realpath(cdir)) not in Path(os.path.realpath(path)).parents:
            raise InputError("case file is a symlink that leads outside the cases folder",
                             file=f"{display(cdir)}/{case_id}.yaml")     # the link, never its target
    disp = display(path)
    marks = read_yaml_marked(path, display=disp)
    data = marks.data
    if not isinstance(data, dict):
        raise InputError("a case file must be a YAML mapping", file=disp)
    try:
        return CaseFile.model_validate(data), disp, marks
    except ValidationError as e:
        raise input_error(e, file=disp, marks=marks) from None


def read_checked(case_id: str, cases_dir: Path | None = None, playbooks_dir: Path | None = None, *,
                 by_id: bool = False, read: tuple | None = None):
    """(case, playbook, playbook hash) after the static checks of ``ctx check`` passed: a typo
    in a name fails here, loudly, instead of turning a claim unknown at run time. ``read``: the
    case as :func:`read_case_marked` already read it in this call (not read again)."""
    from .check import case_problems

    case, disp, marks = read if read is not None else _read_case(case_id, cases_dir, by_id=by_id)
    pb, pb_hash = read_playbook(case.playbook, playbooks_dir)
    probs = case_problems(case, marks, disp, pb)
    if probs:
        raise probs[0].error()
    return case, pb, pb_hash


def read_playbook(playbook_id: str, playbooks_dir: Path | None = None) -> tuple[Playbook, str]:
    from .answer import expr

    _safe_id(playbook_id, "playbook")
    pdir = Path(playbooks_dir) if playbooks_dir else paths.playbooks_dir()
    path = pdir / f"{playbook_id}.yaml"
    if not os.path.lexists(path):   # a FIFO or folder is reported by read_yaml ("not a regular file")
        raise InputError(f"unknown playbook {playbook_id!r}: no {display(path)} (playbooks are read from "
                         f"the project root {paths.root()}; set CTX_ROOT to the project folder)", field="playbook")
    disp = display(path)
    real_root = Path(os.path.realpath(pdir)).parent.parent    # the folder holding manifests/playbooks
    if real_root not in Path(os.path.realpath(path)).parents:
        raise InputError("playbook is a symlink that leads outside the project root", file=disp)
    marks = read_yaml_marked(path, display=disp)
    data = marks.data
    if not isinstance(data, dict):
        raise InputError("a playbook must be a YAML mapping", file=disp)
    try:
        pb = Playbook.model_validate(data)
    except ValidationError as e:
        raise input_error(e, file=disp, marks=marks) from None
    if pb.playbook_id != playbook_id:
        ln, col = marks.find("playbook_id") or (None, None)
        raise InputError(f"playbook_id {pb.playbook_id!r} differs from the file name", file=disp,
                         line=ln, column=col, field="playbook_id")
    for where, src in ([(f"facts.{f.name}.expr", f.expr) for f in pb.facts if f.expr]
                       + [(f"claims.{c.id}.when", c.when) for c in pb.claims if c.when]
                       + [(f"decision.rules.{r.id}.when", r.when) for r in pb.decision.rules]):
        try:
            expr.parse(src)
        except expr.ExprError as e:
            ln, col = marks.find(where) or (None, None)
            raise InputError(str(e), file=disp, line=ln, column=col, field=where) from None
    from .check import playbook_problems

    probs = playbook_problems(pb, marks, disp)
    if probs:
        raise probs[0].error()
    return pb, playbook_hash(pb)


def _calendar_when_used(window: dict) -> None:
    """A window's ``calendar`` and ``zone`` (issue 47) count in the hash only when declared."""
    for k in ("calendar", "zone"):
        if window.get(k) is None:
            window.pop(k, None)


def playbook_hash(pb: Playbook) -> str:
    """The hash of a playbook's content. Fields added later (``params``, path-template
    ``seeds``, ``min_confidence`` and ``inferred``, ``resolve_names``, evidence rules ``match``,
    the ``window`` channel and its ``calendar`` and ``zone``, evidence types' ``valid_at`` and ``compare``, claims' ``temporal``, ``aggregates``, ``deadline_seconds``,
    ``statement_timeout_seconds`` and ``memory_max_age``, ``rerank``, the rule criteria ``contains``, ``paths``,
    ``front_matter``, ``front_matter_keys`` and ``regex``) count only when used, so the hash of a playbook without them
    is unchanged; ``vectors`` never counts."""
    d = pb.model_dump(mode="json", by_alias=True)
    del d["vectors"]        # what `ctx load` builds (the store's identity records it), not how a run works
    for k in ("params", "aggregates", "deadline_seconds", "statement_timeout_seconds", "memory_max_age"):
        if k in d and not d[k]:
            del d[k]
    if d["resolve_names"] is None:
        del d["resolve_names"]
    if d["rerank"] is None:
        del d["rerank"]
    for et in d["evidence_types"]:
        if not et["match"]:
            del et["match"]
        for r in et.get("match", []):       # the criteria added with issue 48
            for k in ("contains", "paths", "front_matter", "front_matter_keys", "regex"):
                if not r[k]:
                    del r[k]
        if et.get("valid_at") is None:
            et.pop("valid_at", None)
        if not et.get("compare"):
            et.pop("compare", None)
        for spec in (et["retrieve"], et["followup"]):
            if spec is not None and spec.get("window") is None:
                spec.pop("window", None)
            elif spec is not None:
                _calendar_when_used(spec["window"])
    for a in d.get("aggregates", []):
        _calendar_when_used(a["over"])
    for c in d["claims"]:
        if c.get("temporal") is None:
            c.pop("temporal", None)
    for t in d["path_templates"]:
        if not t["seeds"]:
            del t["seeds"]
        if t["min_confidence"] is None:
            del t["min_confidence"]
        if t["inferred"]:
            del t["inferred"]
    return obj_hash(d)
