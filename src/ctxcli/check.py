"""Static checks of manifests, playbooks and case files, without loading anything.

A typo must fail loudly: a misspelt fact name in an ``expr`` would otherwise turn a claim
``unknown`` at run time, and a misspelt name in a decision rule's ``when`` would silently fall
back to the default action. Every problem is one :class:`Problem` at ``file:line:column``.

Checked: every name used in ``expr``, ``when``, claim templates and ``uses`` is defined
before use; referenced evidence types exist; path templates use edge and entity types that
the registered sources declare (their ``relations.jsonl`` / ``entities.jsonl``); every
required evidence type has a retrieval route; a case's playbook, purpose, seeds and params
resolve. ``ctx load`` and ``ctx investigate`` run the same checks first. Checking the whole
project (``ctx check`` without paths) also reads every source's records: a ``supports`` typo
and a playbook ``match`` rule that matches no object are problems (evidence_problems).

Warned (not a failure, ``ctx check`` only): a case whose subject's clearance is below the
classification of every source that holds an evidence type of its playbook; rules of one
playbook that give one object two different evidence types.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import CtxError, InputError, UsageError

BUILTIN_NAMES = frozenset({"as_of", "true", "false", "True", "False"})


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "message": self.message}

    def error(self) -> InputError:
        return InputError(self.message, file=self.file, line=self.line, column=self.column)


@dataclass
class CheckReport:
    checked: list[dict[str, str]] = field(default_factory=list)   # {"file", "kind"}
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)         # reported, never a failure
    notes: list[Problem] = field(default_factory=list)            # state, not a fault: e.g. not loaded yet

    def to_json(self) -> dict[str, Any]:
        return {"ok": not self.problems, "checked": self.checked,
                "problems": [p.to_json() for p in self.problems],
                "warnings": [p.to_json() for p in self.warnings],
                "notes": [p.to_json() for p in self.notes]}


@dataclass
class Vocabulary:
    """Edge and entity types the registered sources declare (None: unknown, not checked)."""

    edges: set[str] | None = None
    entity_types: set[str] | None = None


def _at(marks, disp: str, where: str, message: str) -> Problem:
    pos = marks.find(where) if marks is not None else None
    return Problem(disp, pos[0] if pos else None, pos[1] if pos else None, message)


def template_names(template: str) -> list[str]:
    """The field names a claim text uses (``{name}``, ``{param.period}``)."""
    out = []
    try:
        for _, name, _, _ in string.Formatter().parse(template):
            if name:
                out.append(name)
    except ValueError:
        pass
    return out


def _expr_names(src: str) -> set[str]:
    from .answer import expr

    return {n for n in expr.names(src) if n not in BUILTIN_NAMES}


# ------------------------------------------------------------------------------ playbooks
def playbook_problems(pb, marks, disp: str, vocab: Vocabulary | None = None) -> list[Problem]:
    """Semantic problems of a schema-valid playbook, section by section in file order."""
    c = _PlaybookCheck(pb, marks, disp, vocab or Vocabulary())
    c.facts()
    c.claims()
    c.decision()
    c.evidence_types()
    c.path_templates()
    return c.out


class _PlaybookCheck:
    """The checks of one playbook; ``defined`` grows as the facts are checked in order."""

    def __init__(self, pb, marks, disp: str, vocab: Vocabulary) -> None:
        self.pb, self.marks, self.disp, self.vocab = pb, marks, disp, vocab
        self.out: list[Problem] = []
        self.params = set(getattr(pb, "params", {}) or {})
        self.types = {et.type for et in pb.evidence_types}
        self.defined: set[str] = {a.name for a in getattr(pb, "aggregates", [])}    # bound before the facts
        self.all_facts = {f.name for f in pb.facts}

    def problem(self, where: str, message: str) -> None:
        self.out.append(_at(self.marks, self.disp, where, message))

    def names_ok(self, names, known: set[str], where: str, what: str) -> None:
        for n in sorted(names):
            if n.startswith("param."):
                if n[6:] not in self.params:
                    self.problem(where, f"{what} uses undeclared parameter {n}")
            elif n not in known and n not in BUILTIN_NAMES:
                later = " (defined later)" if n in self.all_facts else ""
                hint = _suggest(n, known)
                self.problem(where, f"{what} uses unknown name {n}{later}{hint}")

    def expr_ok(self, src: str, where: str, what: str) -> None:
        from .answer import expr

        try:
            self.names_ok(_expr_names(src), self.defined, where, what)
        except expr.ExprError as e:
            self.problem(where, str(e))

    def facts(self) -> None:
        for f in self.pb.facts:
            where = f"facts.{f.name}"
            if f.from_ and f.from_ not in self.types:
                self.problem(where + ".from", f"fact {f.name}: unknown evidence type {f.from_}")
            for ref in (f.input, f.mapping, f.left, f.right):
                if ref and ref not in self.defined:
                    self.problem(where, f"fact {f.name} refers to {ref} before it is defined")
            if f.expr:
                self.expr_ok(f.expr, where + ".expr", f"fact {f.name}: expr")
            for k, v in f.where.items():
                if isinstance(v, str):
                    self.names_ok([n for n in template_names(v)], set(), f"{where}.where.{k}",
                                  f"fact {f.name}: where {k}")
            self.defined.add(f.name)

    def claims(self) -> None:
        for c in self.pb.claims:
            where = f"claims.{c.id}"
            for u in list(c.uses) + list(c.competing):
                if u not in self.defined:
                    self.problem(where + ".uses", f"claim {c.id} uses unknown fact {u}{_suggest(u, self.defined)}")
            if c.when:
                self.expr_ok(c.when, where + ".when", f"claim {c.id}: when")
            for key, tmpl in (("text", c.text), ("else_text", c.else_text)):
                if tmpl:
                    self.names_ok(template_names(tmpl), self.defined, f"{where}.{key}", f"claim {c.id}: {key}")

    def decision(self) -> None:
        for r in self.pb.decision.rules:
            self.expr_ok(r.when, f"decision.rules.{r.id}.when", f"decision rule {r.id}: when")

    def window_ok(self, w, where: str, what: str) -> None:
        """A window's entity template, entity type and relation types against the sources' vocabulary."""
        vocab = self.vocab
        if w.entity:
            self.names_ok(template_names(w.entity), set(), where + ".entity", f"{what} entity")
        etype = w.entity_type or (w.entity.split(":", 1)[0] if w.entity and ":" in w.entity else None)
        if vocab.entity_types is not None and etype and "{" not in etype and etype not in vocab.entity_types:
            self.problem(where, f"{what}: no source declares entity type {etype}")
        for edge in w.via:
            if vocab.edges is not None and edge not in vocab.edges:
                self.problem(where + ".via", f"{what}: edge type {edge} is not declared by any "
                                             f"source{_suggest(edge, vocab.edges)}")

    def evidence_types(self) -> None:
        for et in self.pb.evidence_types:
            routes = [s for s in (et.retrieve, et.followup) if s is not None
                      and ((s.structured and s.structured.object_types) or s.fulltext or s.graph or s.window)]
            if et.required and not routes:
                self.problem(f"evidence_types.{et.type}", f"required evidence type {et.type} has no retrieval route")
            for spec_name, spec in (("retrieve", et.retrieve), ("followup", et.followup)):
                if spec and spec.fulltext:
                    for t in spec.fulltext.terms:
                        self.names_ok(template_names(t), set(), f"evidence_types.{et.type}.{spec_name}.fulltext",
                                      f"evidence type {et.type}: term")
                if spec and spec.window:
                    self.window_ok(spec.window, f"evidence_types.{et.type}.{spec_name}.window",
                                   f"evidence type {et.type}: window")
        for a in getattr(self.pb, "aggregates", []):
            self.window_ok(a.over, f"aggregates.{a.name}.over", f"aggregate {a.name}: over")

    def path_templates(self) -> None:
        vocab = self.vocab
        for t in self.pb.path_templates:
            where = f"path_templates.{t.id}"
            for i, seed in enumerate(t.seeds):
                self.names_ok(template_names(seed), set(), f"{where}.seeds.{i}", f"path template {t.id}: seed")
            if vocab.entity_types is not None and t.start not in vocab.entity_types:
                self.problem(where + ".start", f"path template {t.id}: no source declares entity type {t.start}")
            for i, s in enumerate(t.steps):
                if vocab.edges is not None and s.edge not in vocab.edges:
                    self.problem(f"{where}.steps.{i}", f"path template {t.id}: edge type {s.edge} is not declared "
                                                       f"by any source{_suggest(s.edge, vocab.edges)}")
                if vocab.entity_types is not None and s.to not in vocab.entity_types:
                    self.problem(f"{where}.steps.{i}", f"path template {t.id}: no source declares entity type {s.to}")


def manifest_problems(m, marks, disp: str, vocab: Vocabulary) -> list[Problem]:
    """Problems of a schema-valid manifest against the sources' vocabulary: an entity type its
    ``linking`` block names that no source declares would link nothing, silently; a parser
    no installed distribution registers, or two do, or one that does not import (load/parse.py)."""
    from .load.parse import known_parser, resolve_parser

    out: list[Problem] = []
    try:
        known_parser(m, disp, marks)
        resolve_parser(m, disp)
    except InputError as e:
        out.append(Problem(disp, e.line, e.column, f"{e.field}: {e.detail}"))
    if m.linking is not None and vocab.entity_types is not None:
        for i, et in enumerate(m.linking.entity_types):
            if et not in vocab.entity_types:
                out.append(_at(marks, disp, f"linking.entity_types.{i}",
                               f"linking: no source declares entity type {et}"
                               f"{_suggest(et, vocab.entity_types)}"))
    return out


def snapshot_problems(m, disp: str, root: Path) -> list[Problem]:
    """A snapshot in a data root (``@name/…``) that does not resolve inside it, as ``ctx load``
    would refuse it: an unknown root name, ``..``, a symlink out of the root or out of the
    snapshot folder, a missing folder. (A snapshot in the project is left to ``ctx load``, as
    before data roots.)"""
    from .load.parse import ROOT_MARK, snapshot_files

    if not m.enabled or not m.snapshot.startswith(ROOT_MARK):
        return []
    try:
        snapshot_files(m, disp, root)
    except CtxError as e:
        return [Problem(e.file or disp, e.line, e.column, f"{e.field}: {e.detail}" if e.field else e.detail)]
    return []


def mapped_name_problems(m, marks, disp: str, root: Path) -> list[Problem]:
    """A field the manifest's mapping names that no record of its source has (load/parsers/
    names.py), read as ``ctx load`` reads the source; a source that does not read is left to
    ``ctx load`` to report."""
    if not m.enabled:
        return []
    from .load.parse import open_source
    from .load.parsers.names import unknown_names, uses

    if not uses(m):
        return []
    try:
        ls = open_source(m, disp, root)
        errs = unknown_names(ls, marks)
    except (CtxError, OSError):
        return []
    return [Problem(disp, e.line, e.column, f"{e.field}: {e.detail}") for e in errs]


def _suggest(name: str, known) -> str:
    from .util.suggest import did_you_mean

    return did_you_mean(name, known)


# ------------------------------------------------------------------------------ cases
def case_problems(case, marks, disp: str, pb, vocab: Vocabulary | None = None) -> list[Problem]:
    """Problems of a schema-valid case against its (schema-valid) playbook."""
    vocab = vocab or Vocabulary()
    out: list[Problem] = []
    if pb is not None:
        purposes = [("purpose", case.purpose)] + [(f"variants.{k}.purpose", v.purpose)
                                                  for k, v in case.variants.items() if v.purpose]
        for where, p in purposes:
            if p not in pb.purposes:
                out.append(_at(marks, disp, where, f"purpose {p} is not served by playbook {pb.playbook_id} "
                                                   f"(serves: {', '.join(pb.purposes)})"))
    from .engine.resolve import is_entity_key

    for i, s in enumerate(case.seeds):
        # a seed that is no type:key is a name (Checkout-API), resolved when the case runs
        # (engine/resolve.py); an entity key's type must be one a source declares
        if is_entity_key(s) and vocab.entity_types is not None and s.split(":", 1)[0] not in vocab.entity_types:
            out.append(_at(marks, disp, f"seeds.{i}",
                           f"seed {s}: no source declares entity type {s.split(':', 1)[0]}"))
    if pb is not None:
        from .params import param_problems

        for where, msg in param_problems(case, pb):
            out.append(_at(marks, disp, where, msg))
    return out


# ------------------------------------------------------------------------------ vocabulary
def vocabulary(root: Path, manifests_dir: Path | None = None) -> Vocabulary:
    """Edge and entity types in the snapshots of the registered sources under ``root``.
    Unreadable or malformed files are skipped here (``ctx load`` reports them)."""
    import orjson

    from .load.tenants import expand, uses_tenants
    from .util.yamlio import read_yaml, read_yaml_marked

    mdir = manifests_dir or root / "manifests"
    src = mdir / "sources"
    if not src.is_dir():
        return Vocabulary()
    edges: set[str] = set()
    etypes: set[str] = set()
    datas: list = []
    for m in sorted(src.glob("*.y*ml")):
        try:
            data = read_yaml(m, display=m.name)
            if uses_tenants(data):      # each tenant's source (load/tenants.py)
                datas += [e.data for e in expand(read_yaml_marked(m, display=m.name), m.name, m, mdir, str)]
            else:
                datas.append(data)
        except CtxError:
            return Vocabulary()     # a source we cannot read may declare any edge: no vocabulary checks
    for data in datas:
        link = data.get("linking") if isinstance(data, dict) else None
        if isinstance(link, dict):      # entity linking declares its relation type (default MENTIONS)
            rel = link.get("relation", "MENTIONS")
            if isinstance(rel, str):
                edges.add(rel)
        snap = data.get("snapshot") if isinstance(data, dict) else None
        if not isinstance(snap, str) or "\0" in snap or Path(snap).is_absolute() or ".." in Path(snap).parts:
            return Vocabulary()     # (its own error is reported at the manifest)
        folder, base = _snapshot_folder(snap, root)
        if folder is None or not folder.is_dir() or not folder.resolve().is_relative_to(base):
            return Vocabulary()     # missing, or a symlink out of its root: reported by load
        for fname, key, acc in (("relations.jsonl", "type", edges), ("entities.jsonl", "entity_type", etypes)):
            p = folder / fname
            if not p.is_file():
                continue
            if not p.resolve().is_relative_to(base):
                return Vocabulary()     # a symlink out of its root: load reports it
            try:
                with open(p, "rb") as fh:
                    for raw in fh:
                        try:
                            rec = orjson.loads(raw)
                        except orjson.JSONDecodeError:
                            continue
                        if isinstance(rec, dict) and isinstance(rec.get(key), str):
                            acc.add(rec[key])
                            if key == "type":
                                for end in ("from", "to"):
                                    v = rec.get(end)
                                    if isinstance(v, str) and ":" in v:
                                        etypes.add(v.split(":", 1)[0])
            except OSError:
                continue
    return Vocabulary(edges=edges or None, entity_types=etypes or None)


def _snapshot_folder(snap: str, root: Path) -> tuple[Path | None, Path]:
    """(the snapshot folder as written, the real folder it must stay in): a ``@name/…`` snapshot
    in its data root (None when the name is unknown: reported at the manifest), else in ``root``."""
    from .load.parse import ROOT_MARK, split_rooted
    from .paths import data_roots

    if not snap.startswith(ROOT_MARK):
        return root / snap, root.resolve()
    name, inside = split_rooted(snap)
    try:
        base = data_roots(root).get(name)
    except CtxError:
        return None, root.resolve()
    return (None, root.resolve()) if base is None else (base / inside, base.resolve())


# ------------------------------------------------------------------------------ files
def _kind(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    for key, kind in (("source_id", "manifest"), ("tenants", "manifest"), ("extends", "manifest"),
                      ("playbook_id", "playbook"), ("case_id", "case"), ("tools", "tool-registry")):
        if key in data:
            return kind
    return None


def _schema(model, marks, disp: str):
    from .util.pyd import input_error

    try:
        return model.model_validate(marks.data), None
    except ValidationError as e:
        err = input_error(e, file=disp, marks=marks)
        return None, Problem(disp, err.line, err.column, f"{err.field}: {err.detail}" if err.field else err.detail)


def tenant_manifest_problems(path: Path, marks, disp: str, root: Path, vocab: Vocabulary,
                             mdir: Path) -> list[Problem]:
    """The problems of each source a manifest with ``tenants`` or ``extends`` expands to
    (load/tenants.py), each naming its tenant entry; an expansion that does not validate is one
    problem at the file:line:column that wrote the value."""
    from .load.tenants import expand, labelled, validated
    from .paths import display

    try:
        exps = expand(marks, disp, path, mdir, display)
    except InputError as e:
        return [Problem(e.file or disp, e.line, e.column, f"{e.field}: {e.detail}" if e.field else e.detail)]
    out: list[Problem] = []
    for exp in exps:
        try:
            m = validated(exp, disp)
        except InputError as e:
            out.append(Problem(e.file or disp, e.line, e.column, f"{e.field}: {e.detail}" if e.field else e.detail))
            continue
        for p in manifest_problems(m, exp.marks, disp, vocab):
            out.append(Problem(p.file, p.line, p.column, f"{labelled(exp.label, None)}: {p.message}"
                               if exp.label else p.message))
        out += mapped_name_problems(m, exp.marks, disp, root)      # (each names the tenant entry)
    return out


def check_file(path: Path, disp: str, *, root: Path, vocab: Vocabulary,
               playbooks_dir: Path, cases: list | None = None) -> tuple[str, list[Problem]]:
    """(kind, problems) of one YAML file. Raises UsageError when it is none of the three. A
    case file whose playbook reads is appended to ``cases`` as (case, marks, display, playbook)."""
    from .models.case import CaseFile
    from .models.manifest import SourceManifest
    from .models.playbook import Playbook
    from .util.yamlio import read_yaml_marked

    try:
        marks = read_yaml_marked(path, display=disp)
    except InputError as e:
        return "unknown", [Problem(e.file or disp, e.line, e.column, e.detail)]
    kind = _kind(marks.data)
    if path.parent.resolve() == (playbooks_dir.parent / "bases").resolve():
        return "base", []           # a shared base: checked through each manifest that extends it
    if kind is None:
        raise UsageError(f"{disp}: not a source manifest, playbook, case file or tool registry "
                         "(no source_id, playbook_id, case_id or tools)")
    if kind == "tool-registry":       # manifests/tools.yaml: the tools and their shape declarations
        from .agents.registry import Registry

        _, p = _schema(Registry, marks, disp)
        return kind, [p] if p else []
    if kind == "manifest":
        from .load.tenants import uses_tenants

        if uses_tenants(marks.data):
            return kind, tenant_manifest_problems(path, marks, disp, root, vocab, playbooks_dir.parent)
        m, p = _schema(SourceManifest, marks, disp)
        if p:
            return kind, [p]
        where = snapshot_problems(m, disp, root)
        return kind, where or manifest_problems(m, marks, disp, vocab) + mapped_name_problems(m, marks, disp, root)
    if kind == "playbook":
        pb, p = _schema(Playbook, marks, disp)
        if p:
            return kind, [p]
        probs = []
        if path.stem != pb.playbook_id:
            probs.append(_at(marks, disp, "playbook_id",
                             f"playbook_id {pb.playbook_id!r} differs from the file name"))
        return kind, probs + playbook_problems(pb, marks, disp, vocab)
    case, p = _schema(CaseFile, marks, disp)
    if p:
        return kind, [p]
    pb = None
    pb_path = playbooks_dir / f"{case.playbook}.yaml"
    probs: list[Problem] = []
    if not pb_path.is_file():
        probs.append(_at(marks, disp, "playbook", f"unknown playbook {case.playbook!r}: no {pb_path.name} in "
                                                   f"{playbooks_dir} (set CTX_ROOT to the project folder)"))
    else:
        try:
            pbm = read_yaml_marked(pb_path, display=pb_path.name)
            pb = Playbook.model_validate(pbm.data)
        except (InputError, ValidationError):
            probs.append(_at(marks, disp, "playbook", f"playbook {case.playbook!r} is invalid (check it too)"))
    if pb is not None and cases is not None:
        cases.append((case, marks, disp, pb))
    return kind, probs + case_problems(case, marks, disp, pb, vocab)


def check_paths(paths: list[Path], *, root: Path, manifests_dir: Path | None = None) -> CheckReport:
    """Check the given files and folders (default: the project's manifests, playbooks, cases)."""
    from .paths import display as _display

    whole_project = not paths       # only then are evidence types checked against the data (it reads it)
    if not paths:
        paths = [p for p in (root / "manifests" / "sources", root / "manifests" / "playbooks",
                             root / "examples" / "cases") if p.is_dir()]
        if not paths:
            raise UsageError(f"nothing to check under {root} (no manifests/ or examples/cases/)")
        registry = (manifests_dir or root / "manifests") / "tools.yaml"
        if registry.is_file():
            paths.append(registry)
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml") and x.is_file())
        elif p.is_file():
            files.append(p)
        else:
            raise UsageError(f"{p}: no such file or folder")
    vocab = vocabulary(root, manifests_dir)
    pdir = (manifests_dir or root / "manifests") / "playbooks"
    rep = CheckReport()
    cases: list = []
    for f in files:
        disp = _display(f)
        kind, probs = check_file(f, disp, root=root, vocab=vocab, playbooks_dir=pdir, cases=cases)
        rep.checked.append({"file": disp, "kind": kind})
        rep.problems += probs
    if whole_project and not rep.problems:
        rep.problems += evidence_problems(root, manifests_dir or root / "manifests", rep.warnings)
    if cases:
        rep.warnings += clearance_warnings(cases, source_levels(root, manifests_dir))
    return rep


# ------------------------------------------------------------------------------ clearance warnings
def source_levels(root: Path, manifests_dir: Path | None = None) -> dict[tuple[str, str], dict[str, str]]:
    """(tenant, evidence type) -> {source id: classification} of the enabled sources whose
    objects support that type (their own ``supports`` and the playbooks' ``match`` rules), from
    their snapshots as ``ctx load`` parses them. A source that does not parse is left out
    (``ctx load`` reports it)."""
    from .load.evidence_rules import read_rules
    from .load.parse import parse_source, read_manifests

    mdir = manifests_dir or root / "manifests"
    out: dict[tuple[str, str], dict[str, str]] = {}
    try:
        rules = read_rules(mdir / "playbooks", root)
        manifests = read_manifests(mdir, root)
    except (CtxError, OSError):
        return out
    for m, disp, mbytes in manifests:
        if not m.enabled:
            continue
        try:
            ls = parse_source(m, disp, mbytes, root, None, rules)
            for o in ls.parser.objects(ls):
                for t in set(o["supports"]) | {r.type for r in ls.rules if r.matches(o)}:
                    out.setdefault((o["tenant_id"], t), {})[m.source_id] = m.classification.value
        except (CtxError, OSError, ValueError):
            continue
    return out


def clearance_warnings(cases: list, levels: dict[tuple[str, str], dict[str, str]]) -> list[Problem]:
    """A warning for each evidence type of a case's playbook whose every source is classified
    above the clearance of the case's subject (or a variant's subject): the classification gate
    will withhold all of its evidence, whatever scopes the subject holds."""
    from .models.manifest import clearance_rank

    out: list[Problem] = []
    for case, marks, disp, pb in cases:
        subjects = [("subject.clearance", case.subject)] + [
            (f"variants.{k}.subject.clearance", v.subject) for k, v in case.variants.items() if v.subject]
        for where, subj in subjects:
            clearance = subj.clearance.value
            for et in pb.evidence_types:
                srcs = levels.get((case.tenant_id, et.type), {})
                if srcs and all(clearance_rank(lv) > clearance_rank(clearance) for lv in srcs.values()):
                    named = ", ".join(f"{s} ({lv})" for s, lv in sorted(srcs.items()))
                    out.append(_at(marks, disp, where, (
                        f"subject {subj.id} is cleared for {clearance}, below the classification of every "
                        f"source of evidence type {et.type}: {named}; the classification gate will withhold "
                        f"all of it")))
    return out


# ------------------------------------------------------------------------------ evidence types in the data
def evidence_problems(root: Path, manifests_dir: Path, warnings: list[Problem] | None = None) -> list[Problem]:
    """Evidence types against the data: a ``supports`` name in a snapshot that no playbook
    declares but that is close to one that is — a typo — (at the first record's file:line that
    names it; a name far from every declared type is a type no playbook uses yet, allowed), and
    a playbook ``match`` rule that matches no object of the registered sources (at the rule).
    Rules of one playbook that give one object two different types are a warning (appended to
    ``warnings``, once per pair of types, at the later type's first rule that matched). Reads every enabled source as ``ctx load`` would; a source
    that does not parse is skipped here (``ctx load`` reports it)."""
    from .load.evidence_rules import read_rules
    from .load.parse import parse_source, read_manifests
    from .models.playbook import Playbook
    from .util.yamlio import read_yaml

    pdir = manifests_dir / "playbooks"
    known: set[str] = set()
    for p in sorted(pdir.glob("*.y*ml")):
        try:
            known |= {et.type for et in Playbook.model_validate(read_yaml(p, display=p.name)).evidence_types}
        except (CtxError, ValidationError):
            return []           # reported at the playbook
    try:
        rules = read_rules(pdir, root)
    except CtxError:
        return []
    try:
        manifests = read_manifests(manifests_dir, root)
    except CtxError as e:   # every file checked out alone: a problem between them (one id twice, shared data)
        return [Problem(e.file or str(manifests_dir), e.line, e.column, f"{e.field}: {e.detail}" if e.field
                        else e.detail)]
    out: list[Problem] = []
    hit: set[tuple[str, int, str]] = set()
    told: set[tuple[str, str]] = set()
    # (playbook, type, later type) -> [objects, the first one's id, file, line, its rules]
    both: dict[tuple[str, str, str], list] = {}
    for m, disp, mbytes in manifests:
        if not m.enabled:
            continue
        try:
            ls = parse_source(m, disp, mbytes, root, None, rules)
            mine = ls.rules
            for o in ls.parser.objects(ls):
                for name in sorted(set(o["supports"]) - known):
                    hint = _suggest(name, known)
                    if hint and (o["_file"], name) not in told:
                        told.add((o["_file"], name))
                        out.append(Problem(o["_file"], o["_line"], None,
                                           f"supports names unknown evidence type {name}{hint}"))
                first: dict[tuple[str, str], Any] = {}      # (playbook, type) -> its first rule matching o
                for r in mine:
                    if r.matches(o):
                        hit.add((r.file, r.line or 0, r.type))
                        first.setdefault((r.file, r.type), r)
                matched = list(first.values())
                for i, a in enumerate(matched):
                    for b in matched[i + 1:]:
                        if a.file == b.file:
                            seen = both.setdefault((a.file, a.type, b.type), [0, o["object_id"], o["_file"],
                                                                             o["_line"], a, b])
                            seen[0] += 1
        except CtxError:
            continue
    for r in rules:
        if (r.file, r.line or 0, r.type) not in hit:
            out.append(Problem(r.file, r.line, r.column,
                               f"evidence type {r.type}: match rule {r.index} matches no object of the registered sources"))
    if warnings is not None:
        for n, oid, f, ln, a, b in both.values():
            where = f"{f}:{ln}" if ln is not None else f
            warnings.append(Problem(b.file, b.line, b.column, (
                f"evidence type {b.type}: match rule {b.index} and evidence type {a.type}: match rule {a.index} "
                f"(line {a.line}) both match {n} object(s), e.g. {oid} ({where}): each gets both types")))
    return out
