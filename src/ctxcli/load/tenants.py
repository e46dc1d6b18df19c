"""One manifest, many tenants: a source manifest's ``extends:`` (a shared base manifest inside the
manifests folder) and ``tenants:`` (per-tenant values) expanded into plain source manifests, one
per tenant, before they are validated. Each expansion is a source of its own, with its own
source id, digest and access rules, and is exactly the manifest a person would write by hand for
that tenant: the same fields, so the same digest and the same objects.

An error names the manifest's file:line:column (a base's, for a value the base gave) and the
tenant entry (``tenants.1 (globex)``). A manifest without either key is read as before."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import ValidationError

from ..errors import InputError
from ..util.suggest import did_you_mean
from ..util.yamlio import Marks, read_yaml_marked

# What a tenant entry may set; everything else is shared by every tenant of the manifest.
TENANT_KEYS = ("tenant_id", "source_id", "source_id_suffix", "snapshot", "owner_team", "classification",
               "required_scopes", "allowed_purposes", "enabled", "git", "table", "json_export")
# The keys of a parser block a tenant entry may set (where its data lies); the manifest's block
# gives the others.
TENANT_BLOCKS = {"git": ("path", "ref"), "table": ("file", "sheet", "table", "database", "query"),
                 "json_export": ("file",)}
MAX_BASES = 8


def uses_tenants(data: Any) -> bool:
    """Whether a manifest's data declares ``tenants`` or ``extends`` (else it is read as before)."""
    return isinstance(data, dict) and ("tenants" in data or "extends" in data)


@dataclass(frozen=True)
class Layer:
    """One place values of an expanded manifest come from: a file's marks, and where in its data."""

    prefix: tuple[str, ...]
    marks: Marks
    file: str
    aliases: dict = field(default_factory=dict)     # a field -> the key that gives it here


class Layered:
    """Where each value of an expanded manifest was written: the tenant entry, the manifest, then
    each base (nearest first); the layer holding most of a field's path wins. :meth:`locate`
    gives (file, (line, column)); :meth:`find` (:class:`Marks`' interface, for errors that name
    the manifest's own file) gives a base's value at the manifest's ``extends`` key."""

    def __init__(self, data: dict, layers: list[Layer], own_file: str, extends_at: tuple[int, int] | None,
                 label: str | None = None) -> None:
        self.data = data
        self.label = label          # the tenant entry: tenants.1 (globex)
        self.layers = layers
        self.own_file = own_file
        self.extends_at = extends_at

    def locate(self, loc: Any) -> tuple[str, tuple[int, int] | None]:
        parts = [p for p in (loc.split(".") if isinstance(loc, str) else [str(x) for x in loc])
                 if p and p != "__root__"]
        parts = ["from" if p == "from_" else p for p in parts]
        best, depth, where = self.layers[0], 0, self.layers[0].prefix
        for layer in self.layers:
            want = [layer.aliases.get(parts[0], parts[0])] + parts[1:] if parts else []
            d, path = _depth(layer.marks.data, layer.prefix, want)
            if d > depth:
                best, depth, where = layer, d, path
        return best.file, best.marks.marks.get(where)

    def find(self, loc: Any) -> tuple[int, int] | None:
        file, pos = self.locate(loc)
        return pos if file == self.own_file else self.extends_at


def _depth(data: Any, prefix: tuple[str, ...], parts: list[str]) -> tuple[int, tuple[str, ...]]:
    """How many of ``parts`` lie in ``data`` below ``prefix``, and the path to the deepest."""
    node = data
    for p in prefix:
        node = node[int(p)] if isinstance(node, list) else node[p]
    path, n = prefix, 0
    for p in parts:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            break
        path, n = path + (p,), n + 1
    return n, path


@dataclass
class Expansion:
    """One source of a manifest file: its data (before validation), where its values were
    written, and its tenant entry (``tenants.1 (globex)``; None for a manifest without tenants)."""

    data: Any
    marks: Any
    label: str | None = None


def _err(msg: str, marks: Marks, disp: str, path: tuple[str, ...], fld: str | None = None) -> InputError:
    pos = marks.marks.get(path) or marks.find(path)
    line, col = pos if pos else (None, None)
    return InputError(msg, file=disp, line=line, column=col, field=fld)


def _merge(base: dict, over: dict) -> dict:
    """``over`` on ``base``: nested mappings merge key by key; a list or a value replaces."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _bases(marks: Marks, disp: str, path: Path, mdir: Path, display: Callable[[Path], str]) -> list[tuple[Marks, str]]:
    """The base manifests ``marks`` extends, nearest first; a missing or escaping base, or a cycle,
    is an error at the ``extends`` key that names it."""
    real_mdir = os.path.realpath(mdir)
    chain = [(os.path.realpath(path), disp)]
    out: list[tuple[Marks, str]] = []
    cur, cur_disp = marks, disp
    while isinstance(cur.data, dict) and "extends" in cur.data:
        ref = cur.data["extends"]

        def err(msg: str, cur=cur, cur_disp=cur_disp) -> InputError:
            return _err(msg, cur, cur_disp, ("extends",), "extends")

        if not isinstance(ref, str) or not ref.strip():
            raise err("a base manifest's path inside the manifests folder, e.g. bases/tickets.yaml")
        raw = Path(ref)
        if raw.is_absolute() or ".." in raw.parts or any(ord(c) < 32 for c in ref):
            raise err(f"{ref}: a base manifest lies inside the manifests folder (a relative path, without ..)")
        if raw.suffix not in (".yaml", ".yml"):
            raise err(f"{ref}: a base manifest is a .yaml file")
        p = mdir / raw
        real = os.path.realpath(p)
        if not real.startswith(real_mdir + os.sep):
            raise err(f"{ref} leads outside the manifests folder (through a symlink?)")
        bdisp = display(p)
        seen = [r for r, _ in chain]
        if real in seen:
            cycle = [d for _, d in chain[seen.index(real):]] + [bdisp]
            raise err("a cycle of bases: " + " -> ".join(cycle))
        if not p.is_file():
            raise err(f"no base manifest {ref} in {display(mdir)}")
        if len(out) >= MAX_BASES:
            raise err(f"more than {MAX_BASES} bases in a row")
        bm = read_yaml_marked(p, display=bdisp)
        if not isinstance(bm.data, dict):
            raise InputError("a base manifest must be a YAML mapping", file=bdisp)
        if "tenants" in bm.data:
            raise _err("a base manifest declares no tenants (the manifest that extends it does)", bm, bdisp,
                       ("tenants",), "tenants")
        out.append((bm, bdisp))
        chain.append((real, bdisp))
        cur, cur_disp = bm, bdisp
    return out


def _check_entry(entry: Any, i: int, marks: Marks, disp: str) -> str:
    """The tenant id of entry ``i``; an entry that is no mapping, names no tenant or holds a key
    a tenant entry does not set is an error at that key (with a did-you-mean)."""
    from ..models.manifest import SourceManifest

    at = ("tenants", str(i))
    if not isinstance(entry, dict):
        raise _err("a tenant entry is a mapping (tenant_id, snapshot …)", marks, disp, at, f"tenants.{i}")
    tid = entry.get("tenant_id")
    if not isinstance(tid, str) or not tid:
        raise _err("tenant_id: missing (each tenant entry names its tenant)", marks, disp, at, f"tenants.{i}")
    label = f"tenants.{i} ({tid})"
    for k, v in entry.items():
        k = str(k)
        if k not in TENANT_KEYS:
            shared = k in SourceManifest.model_fields or k in ("extends", "tenants")
            msg = (f"{k} is shared by every tenant: set it in the manifest (a tenant entry sets "
                   f"{', '.join(TENANT_KEYS)})" if shared else f"unknown key {k!r}{did_you_mean(k, TENANT_KEYS)}")
            raise _err(msg, marks, disp, at + (k,), label)
        if k in TENANT_BLOCKS and isinstance(v, dict):
            for sk in v:
                sk = str(sk)
                if sk not in TENANT_BLOCKS[k]:
                    msg = (f"{k}.{sk} is shared by every tenant: set it in the manifest (a tenant entry's {k} "
                           f"sets {', '.join(TENANT_BLOCKS[k])})" if _block_key(k, sk) else
                           f"unknown key {k}.{sk}{did_you_mean(sk, TENANT_BLOCKS[k])}")
                    raise _err(msg, marks, disp, at + (k, sk), label)
    if "source_id" in entry and "source_id_suffix" in entry:
        raise _err("give source_id or source_id_suffix, not both", marks, disp, at + ("source_id_suffix",), label)
    return tid


def _block_key(block: str, key: str) -> bool:
    from ..models.manifest import GitOptions, JsonExportOptions, TableOptions

    return key in {"git": GitOptions, "table": TableOptions, "json_export": JsonExportOptions}[block].model_fields


def expand(marks: Marks, disp: str, path: Path, mdir: Path, display: Callable[[Path], str]) -> list[Expansion]:
    """The sources of one manifest file (its data and marks as read): one per tenant entry, or
    the manifest merged onto its bases, or (neither key) the manifest as it is."""
    data = marks.data
    if not uses_tenants(data):
        return [Expansion(data, marks, None)]
    bases = _bases(marks, disp, path, mdir, display) if "extends" in data else []
    merged: dict = {}
    for bm, _ in reversed(bases):
        merged = _merge(merged, {k: v for k, v in bm.data.items() if k != "extends"})
    merged = _merge(merged, {k: v for k, v in data.items() if k not in ("extends", "tenants")})
    base_layers = [Layer((), bm, bdisp) for bm, bdisp in bases]
    extends_at = marks.marks.get(("extends",))
    own = Layer((), marks, disp)
    if "tenants" not in data:
        return [Expansion(merged, Layered(merged, [own, *base_layers], disp, extends_at), None)]
    tenants = data["tenants"]
    if not isinstance(tenants, list) or not tenants:
        raise _err("a list of tenant entries (tenant_id, snapshot …), at least one", marks, disp, ("tenants",),
                   "tenants")
    if "tenant_id" in data:
        raise _err("a manifest with tenants names each tenant in its entry (tenants: - tenant_id: …)", marks, disp,
                   ("tenant_id",), "tenant_id")
    out: list[Expansion] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(tenants):
        tid = _check_entry(entry, i, marks, disp)
        label = f"tenants.{i} ({tid})"
        if tid in seen:
            raise _err(f"tenant {tid} has two entries: tenants.{seen[tid]} and tenants.{i}", marks, disp,
                       ("tenants", str(i), "tenant_id"), label)
        seen[tid] = i
        d = dict(merged)
        for k, v in entry.items():
            if k in ("source_id", "source_id_suffix"):
                continue
            d[k] = {**d[k], **v} if k in TENANT_BLOCKS and isinstance(v, dict) and isinstance(d.get(k), dict) else v
        if "source_id" in entry:
            d["source_id"] = entry["source_id"]
        else:
            suffix = entry.get("source_id_suffix", f"-{tid}")
            if not isinstance(merged.get("source_id"), str) or not isinstance(suffix, str):
                raise _err("source_id: missing: give the manifest a source_id (a tenant's is it plus -<tenant_id>, "
                           "or plus its source_id_suffix) or the entry its own", marks, disp, ("tenants", str(i)),
                           label)
            d["source_id"] = merged["source_id"] + suffix
        aliases = {"source_id": "source_id_suffix"} if "source_id_suffix" in entry else {}
        layers = [Layer(("tenants", str(i)), marks, disp, aliases), own, *base_layers]
        out.append(Expansion(d, Layered(d, layers, disp, extends_at, label), label))
    return out


def validated(exp: Expansion, disp: str):
    """The expansion as a :class:`SourceManifest`; a refusal is an InputError at the file:line:column
    that wrote the value, naming the tenant entry."""
    from ..models.manifest import SourceManifest
    from ..util.pyd import first_error, input_error

    try:
        return SourceManifest.model_validate(exp.data)
    except ValidationError as e:
        if not isinstance(exp.marks, Layered):
            raise input_error(e, file=disp, marks=exp.marks) from None
        loc, msg = first_error(e)
        raw = e.errors()[0].get("loc", ())
        file, pos = exp.marks.locate(raw if raw else ("" if loc == "(record)" else loc))
        line, col = pos if pos else (None, None)
        raise InputError(msg, file=file, line=line, column=col, field=labelled(exp.label, loc)) from None


def labelled(label: str | None, fld: str | None) -> str | None:
    """A field name with the tenant entry it belongs to (``tenants.1 (globex): snapshot``)."""
    if label is None:
        return fld
    return f"{label}: {fld}" if fld else label


def expanded_marks(path: Path, disp: str, source_id: str, display: Callable[[Path], str]) -> Any:
    """Where the values of source ``source_id`` of the manifest at ``path`` (in a manifests
    folder's sources/) were written, or None when it cannot be read again."""
    from ..errors import CtxError

    try:
        marks = read_yaml_marked(path, display=disp)
        if not uses_tenants(marks.data):
            return marks
        for exp in expand(marks, disp, path, path.parent.parent, display):
            if exp.data.get("source_id") == source_id:
                return exp.marks
    except (CtxError, OSError):
        return None
    return None


@contextmanager
def tenant_named(m, mdisp: str, root: Path) -> Iterator[None]:
    """An InputError at the manifest of a tenant's source (a snapshot folder that does not exist,
    a table file …) names the tenant entry, at the line and column that wrote the field."""
    try:
        yield
    except InputError as e:
        if e.file == mdisp and root is not None:
            from .parsers.common import rel

            marks = expanded_marks(Path(root) / mdisp, mdisp, m.source_id, lambda p: rel(p, root))
            label = getattr(marks, "label", None)
            if label is not None and not (e.field or "").startswith(label):
                if e.line is None and e.field:
                    e.line, e.column = marks.find(e.field) or (None, None)
                e.field = labelled(label, e.field)
        raise


def data_place(m, root: Path) -> str | None:
    """The real path of what source ``m`` reads (its snapshot folder, or the file or repository
    in it), when it reads one tenant's data from a path; else None."""
    if m.tenant_id is None or not m.enabled or (m.table is not None and m.table.format == "postgres"):
        return None
    sub = m.git.path if m.git is not None else m.table.file if m.table is not None else \
        m.json_export.file if m.json_export is not None else "."
    snapshot: str | Path = m.snapshot
    if m.snapshot.startswith("@"):         # "@name/path": in a data root of ctx.toml
        from ..paths import data_roots

        name, _, inside = m.snapshot[1:].partition("/")
        base = data_roots(root).get(name)
        if base is None:
            return None     # (the load refuses an unknown root: load/parse.resolve_snapshot)
        snapshot = base / (inside or ".")
    path = os.path.join(root, snapshot, sub or ".")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return None     # (the load refuses the path itself: load/parse.resolve_snapshot)
    return os.path.realpath(path)


def shown_place(place: str, root: Path) -> str:
    """A real path as a message shows it: relative to the project root, or ``@name/…`` in a data
    root — never a machine path."""
    from ..paths import data_roots

    real_root = os.path.realpath(root)
    if place == real_root or place.startswith(real_root.rstrip(os.sep) + os.sep):
        return os.path.relpath(place, real_root)
    for name, base in sorted(data_roots(root).items()):
        rb = os.path.realpath(base)
        if place == rb or place.startswith(rb.rstrip(os.sep) + os.sep):
            inside = os.path.relpath(place, rb)
            return f"@{name}" if inside == "." else f"@{name}/{inside}"
    return os.path.basename(place)


def overlaps(a: str, b: str) -> bool:
    """Whether one of two real paths is, or holds, the other."""
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep) or b.startswith(a.rstrip(os.sep) + os.sep)
