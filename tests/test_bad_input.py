"""Bad input through the CLI (issues 2 and 7).

Every user error is one line on stderr starting ``ctx: error: `` that names the file
(relative to the project root), the line and the field where they apply; the exit code is 2;
the existing store is untouched (same bytes, same mtime, no stray files beside it); never a
traceback, a hang or a crash.

Each case loads a good store first, breaks one thing in a private copy of the project
(``project_copy``), loads again and checks the above. Big inputs (a 50 MB document, a 10 MB
JSONL line) are generated in tmp_path at test time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest

from .conftest import run_cli

ESC = b"\x1b"


# ------------------------------------------------------------------------------ helpers
def _lines(p: Path) -> list[str]:
    return p.read_text(encoding="utf-8").splitlines()


def _write_lines(p: Path, lines: list[str]) -> None:
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit_record(path: str, lineno: int, fn: Callable[[dict], dict | None]) -> Callable[[Path], None]:
    """Mutator: apply ``fn`` to the JSON record on line ``lineno`` of ``path``."""

    def mutate(proj: Path) -> None:
        p = proj / path
        lines = _lines(p)
        rec = json.loads(lines[lineno - 1])
        out = fn(rec)
        lines[lineno - 1] = json.dumps(out if out is not None else rec, ensure_ascii=False)
        _write_lines(p, lines)

    return mutate


def _set(**kv) -> Callable[[dict], dict]:
    def fn(rec: dict) -> dict:
        rec.update(kv)
        return rec

    return fn


def _edit_manifest(name: str, fn: Callable[[str], str]) -> Callable[[Path], None]:
    def mutate(proj: Path) -> None:
        p = proj / "manifests" / "sources" / f"{name}.yaml"
        p.write_text(fn(p.read_text(encoding="utf-8")), encoding="utf-8")

    return mutate


def _replace_line(key: str, new: str | None) -> Callable[[str], str]:
    """Replace (or with None drop) the top-level ``key:`` line of a YAML text."""

    def fn(text: str) -> str:
        out, hit = [], False
        for ln in text.splitlines():
            if ln.startswith(f"{key}:"):
                hit = True
                if new is not None:
                    out.append(new)
            else:
                out.append(ln)
        assert hit, key
        return "\n".join(out) + "\n"

    return fn


def _append_bytes(path: str, data: bytes) -> Callable[[Path], None]:
    def mutate(proj: Path) -> None:
        with open(proj / path, "ab") as fh:
            fh.write(data)

    return mutate


def _write_bytes(path: str, data: bytes) -> Callable[[Path], None]:
    def mutate(proj: Path) -> None:
        (proj / path).write_bytes(data)

    return mutate


def _n_lines(proj: Path, path: str) -> int:
    return len(_lines(proj / path))


# ------------------------------------------------------------------------------ mutators
CORE = "sources/claims-core/objects.jsonl"
CORE_REL = "sources/claims-core/relations.jsonl"
RULES = "sources/claims-rules/objects.jsonl"
HANDBOOK = "sources/claims-handbook/motor-claims-handbook-2026.md"
CORE_MANIFEST = "manifests/sources/claims-core.yaml"


def m_malformed_yaml(proj: Path) -> None:
    _edit_manifest("claims-core", lambda t: t + "required_scopes: [case:read\nowner_team: x\n")(proj)


def m_symlink_out(proj: Path) -> None:
    outside = proj.parent / "outside"
    (outside).mkdir()
    (outside / "objects.jsonl").write_text("", encoding="utf-8")
    os.symlink(outside, proj / "sources" / "evil")
    _edit_manifest("claims-core", _replace_line("snapshot", "snapshot: sources/evil"))(proj)


def m_file_symlink_out(proj: Path) -> None:
    outside = proj.parent / "outside.jsonl"
    outside.write_text("", encoding="utf-8")
    os.unlink(proj / CORE_REL)
    os.symlink(outside, proj / CORE_REL)


def m_collide(proj: Path) -> None:
    src = proj / CORE_MANIFEST
    (proj / "manifests" / "sources" / "claims-core2.yaml").write_text(src.read_text(encoding="utf-8"),
                                                                       encoding="utf-8")


def m_duplicate_id(proj: Path) -> None:
    p = proj / CORE
    lines = _lines(p)
    _write_lines(p, lines + [lines[1]])


def m_deep_yaml(proj: Path) -> None:
    _edit_manifest("claims-core", lambda t: t + "extra: " + "[" * 10_000 + "]" * 10_000 + "\n")(proj)


def m_deep_yaml_flow_first(proj: Path) -> None:
    (proj / "manifests" / "sources" / "a-deep.yaml").write_text("[" * 10_000 + "]" * 10_000 + "\n",
                                                                 encoding="utf-8")


def m_deep_yaml_block(proj: Path) -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(1000)) + " " * 1000 + "x: 1\n"
    (proj / "manifests" / "sources" / "a-deep.yaml").write_text(text, encoding="utf-8")


BILLION_LAUGHS = """source_id: claims-core
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def m_front_matter_bomb(proj: Path) -> None:
    p = proj / HANDBOOK
    text = p.read_text(encoding="utf-8")
    p.write_text(text.replace("facts: {}", "facts: {}\nbomb: &b [1, 2]\nbomb2: *b", 1), encoding="utf-8")


def m_jsonl_deep(proj: Path) -> None:
    _append_bytes(CORE, b'{"object_id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")(proj)


def m_big_markdown(proj: Path) -> None:
    p = proj / HANDBOOK
    head = p.read_bytes()
    with open(p, "ab") as fh:
        chunk = b"## Filler\n\n" + b"lorem ipsum dolor sit amet " * 4000 + b"\n\n"
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(chunk)
    assert p.stat().st_size >= 50 * 1024 * 1024 > len(head)


def m_long_line(proj: Path) -> None:
    p = proj / CORE
    rec = json.loads(_lines(p)[0])
    rec["object_id"] = "CASE-BIG"
    rec["content"] = "x" * (10 * 1024 * 1024)
    rec.pop("content_hash")
    with open(p, "ab") as fh:
        fh.write(json.dumps(rec).encode() + b"\n")


def m_unknown_key_ansi(proj: Path) -> None:
    _edit_record(CORE, 2, lambda r: {**r, "\x1b[31mevil\x1b[0m": 1})(proj)


def m_invalid_utf8_markdown(proj: Path) -> None:
    p = proj / HANDBOOK
    lines = p.read_bytes().split(b"\n")
    lines[19] = lines[19] + b" \xff\xfe broken"
    p.write_bytes(b"\n".join(lines))


def m_nul_in_yaml(proj: Path) -> None:
    _edit_manifest("claims-core", lambda t: t.replace("owner_team: claims-platform", "owner_team: claims\x00x"))(proj)


def m_yaml_not_mapping(proj: Path) -> None:
    _edit_manifest("claims-core", lambda t: "- just\n- a list\n")(proj)


def m_tombstone_unknown_tenant(proj: Path) -> None:
    _edit_record("sources/claims-documents/tombstones.jsonl", 1, _set(tenant_id="tenant-other"))(proj)


def m_no_front_matter(proj: Path) -> None:
    p = proj / HANDBOOK
    p.write_text("# no front matter\n\ntext\n", encoding="utf-8")


def m_naive_front_matter(proj: Path) -> None:
    p = proj / HANDBOOK
    p.write_text(p.read_text(encoding="utf-8").replace('observed_at: "2025-12-20T09:00:00+08:00"',
                                                        'observed_at: "2025-12-20T09:00:00"'), encoding="utf-8")


def m_fact_wrong_type(proj: Path) -> None:
    _edit_record(CORE, 2, lambda r: {**r, "facts": {**r["facts"], "status": {"nested": {"dict": 1}}}})(proj)


def m_infinite_number(proj: Path) -> None:
    p = proj / CORE
    lines = _lines(p)
    lines[1] = lines[1].replace('"facts": {', '"facts": {"amount": 1e400, ', 1)
    _write_lines(p, lines)


def m_bad_confidence(proj: Path) -> None:
    _edit_record(CORE_REL, 2, _set(confidence="high"))(proj)


def m_fifo(where: str) -> Callable[[Path], None]:
    def mutate(proj: Path) -> None:
        os.mkfifo(proj / where)

    return mutate


def m_symlink_loop(proj: Path) -> None:
    os.symlink("loop", proj / "sources" / "claims-core" / "loop")


def m_unreadable(proj: Path) -> None:
    os.chmod(proj / CORE_REL, 0)


def _front(old: str, new: str) -> Callable[[Path], None]:
    def mutate(proj: Path) -> None:
        p = proj / HANDBOOK
        text = p.read_text(encoding="utf-8")
        assert old in text
        p.write_text(text.replace(old, new, 1), encoding="utf-8")

    return mutate


def m_dir_named_objects(proj: Path) -> None:
    (proj / "manifests" / "sources" / "zz.yaml").mkdir()


# (id, mutator, fragments that must appear in the one-line message; "{n}" is filled in by n_of)
CASES: list[tuple[str, Callable[[Path], None], list[str]]] = [
    ("malformed_yaml", m_malformed_yaml, [f"{CORE_MANIFEST}:18: ", "invalid YAML"]),
    ("unknown_key", _edit_manifest("claims-core", lambda t: t + "colour: red\n"),
     [f"{CORE_MANIFEST}:17:1: colour: unknown field"]),
    ("missing_field", _edit_manifest("claims-core", _replace_line("owner_team", None)),
     [f"{CORE_MANIFEST}:2:1: owner_team: missing field"]),
    ("bad_enum", _edit_manifest("claims-core", _replace_line("trust_level", "trust_level: super")),
     [f"{CORE_MANIFEST}:7:1: trust_level: ", "authoritative"]),
    ("not_a_mapping", m_yaml_not_mapping, [f"{CORE_MANIFEST}: ", "mapping"]),
    ("nul_in_yaml", m_nul_in_yaml, [f"{CORE_MANIFEST}:", "invalid YAML"]),
    ("snapshot_dotdot", _edit_manifest("claims-core", _replace_line("snapshot", "snapshot: ../x")),
     [f"{CORE_MANIFEST}: snapshot: ", "inside the project root"]),
    ("snapshot_absolute", _edit_manifest("claims-core", _replace_line("snapshot", "snapshot: /etc")),
     [f"{CORE_MANIFEST}: snapshot: ", "inside the project root"]),
    ("snapshot_nul_byte", _edit_manifest("claims-core", _replace_line("snapshot", 'snapshot: "sources/claims\\0-core"')),
     [f"{CORE_MANIFEST}: snapshot: ", "control character (a NUL byte?)"]),
    ("snapshot_symlink_out", m_symlink_out, [f"{CORE_MANIFEST}: snapshot: ", "escapes the project root"]),
    ("file_symlink_out", m_file_symlink_out, [f"{CORE_REL}: ", "symlink"]),
    ("source_id_collision", m_collide,
     ["manifests/sources/claims-core2.yaml:2:1: source_id: ", "already registered by", CORE_MANIFEST]),
    ("malformed_jsonl", _append_bytes(CORE, b'{"object_id": "X", \n'), [f"{CORE}:8: ", "invalid JSON"]),
    ("jsonl_not_object", _append_bytes(CORE, b'[1, 2]\n'), [f"{CORE}:8: ", "JSON object"]),
    ("naive_timestamp", _edit_record(CORE, 2, _set(observed_at="2026-07-22T18:00:00")),
     [f"{CORE}:2: observed_at: ", "no timezone offset"]),
    ("impossible_date", _edit_record(CORE, 3, _set(valid_from="2026-02-30T00:00:00+08:00")),
     [f"{CORE}:3: valid_from: ", "2026-02-30"]),
    ("valid_to_before_from", _edit_record(CORE, 2, _set(valid_from="2026-05-01T00:00:00+08:00",
                                                        valid_to="2026-04-01T00:00:00+08:00")),
     [f"{CORE}:2: valid_to: ", "after valid_from"]),
    ("duplicate_object_id", m_duplicate_id, [f"{CORE}:8: object_id: ", "duplicate object id 'CASE-C-102'",
                                              f"{CORE}:2"]),
    ("relation_unknown_entity", _edit_record(CORE_REL, 2, _set(to="ruleset:no-such-ruleset")),
     [f"{CORE_REL}:2: to: ", "unknown entity 'ruleset:no-such-ruleset'"]),
    ("record_tenant_differs", _edit_record(CORE, 2, _set(tenant_id="tenant-other")),
     [f"{CORE}:2: tenant_id: ", "'tenant-other'", "'tenant-demo'"]),
    ("tombstone_tenant_differs", m_tombstone_unknown_tenant,
     ["sources/claims-documents/tombstones.jsonl:1: tenant_id: "]),
    ("content_hash_mismatch", _edit_record(RULES, 2, lambda r: {**r, "content": r["content"] + " tampered"}),
     [f"{RULES}:2: content_hash: ", "RULE-MCS-2026.1"]),
    ("bad_content_hash_format", _edit_record(RULES, 2, _set(content_hash="md5:abc")),
     [f"{RULES}:2: content_hash: "]),
    ("fact_wrong_type", m_fact_wrong_type, [f"{CORE}:2: facts.status"]),
    ("infinite_number", m_infinite_number, [f"{CORE}:2: ", "invalid JSON"]),
    ("bad_confidence", m_bad_confidence, [f"{CORE_REL}:2: confidence: "]),
    ("deep_yaml", m_deep_yaml, [f"{CORE_MANIFEST}:", "invalid YAML", "nesting"]),
    ("deep_yaml_flow", m_deep_yaml_flow_first, ["manifests/sources/a-deep.yaml:1: ", "nesting"]),
    ("deep_yaml_block", m_deep_yaml_block, ["manifests/sources/a-deep.yaml:", "nesting"]),
    ("billion_laughs", _write_bytes(CORE_MANIFEST, BILLION_LAUGHS.encode()),
     [f"{CORE_MANIFEST}:3: ", "aliases are not allowed"]),
    ("front_matter_alias", m_front_matter_bomb, [f"{HANDBOOK}:14: ", "aliases are not allowed"]),
    ("deep_jsonl", m_jsonl_deep, [f"{CORE}:8: ", "invalid JSON"]),
    ("invalid_utf8_jsonl", _append_bytes(CORE, b'{"object_id": "X\xff\xfe"}\n'), [f"{CORE}:8: ", "UTF-8"]),
    ("invalid_utf8_markdown", m_invalid_utf8_markdown, [f"{HANDBOOK}:20: ", "UTF-8"]),
    ("invalid_utf8_manifest", _append_bytes(CORE_MANIFEST, b"# caf\xe9\n"), [f"{CORE_MANIFEST}:17: ", "UTF-8"]),
    ("no_front_matter", m_no_front_matter, [f"{HANDBOOK}:1: ", "front matter"]),
    ("naive_front_matter", m_naive_front_matter, [f"{HANDBOOK}:1: observed_at: ", "no timezone offset"]),
    ("markdown_50mb", m_big_markdown, [f"{HANDBOOK}: ", "larger than 8 MB"]),
    ("jsonl_line_10mb", m_long_line, [f"{CORE}:8: ", "longer than"]),
    ("unknown_key_ansi", m_unknown_key_ansi, [f"{CORE}:2: ", "unknown field", "\\x1b[31mevil"]),
    ("fifo_in_snapshot", m_fifo("sources/claims-core/pipe.jsonl"),
     ["sources/claims-core/pipe.jsonl: ", "not a regular file"]),
    ("fifo_manifest", m_fifo("manifests/sources/pipe.yaml"), ["manifests/sources/pipe.yaml: ", "not a regular file"]),
    ("symlink_loop", m_symlink_loop, ["sources/claims-core/loop: ", "cannot read file"]),
    ("unreadable_file", m_unreadable, [f"{CORE_REL}: ", "cannot read file"]),
    ("timestamp_out_of_range", _edit_record(CORE, 2, _set(observed_at="9999-12-31T23:00:00-05:00")),
     [f"{CORE}:2: observed_at: ", "out of range"]),
    ("timestamp_year_one", _edit_record(CORE, 2, _set(observed_at="0001-01-01T00:00:00+05:00")),
     [f"{CORE}:2: observed_at: ", "out of range"]),
    ("timestamp_not_a_string", _edit_record(CORE, 2, _set(observed_at=1784800000)),
     [f"{CORE}:2: observed_at: ", "ISO-8601"]),
    ("duplicate_yaml_key", _edit_manifest("claims-core", lambda t: t + "trust_level: untrusted\n"),
     [f"{CORE_MANIFEST}:17: ", "duplicate key 'trust_level'"]),
    ("yaml_bad_int_tag", _edit_manifest("claims-core", _replace_line("schema_version", "schema_version: !!int one")),
     [f"{CORE_MANIFEST}:14: ", "invalid int value"]),
    ("yaml_python_tag", _edit_manifest("claims-core", _replace_line("owner_team", "owner_team: !!python/name:os.system ''")),
     [f"{CORE_MANIFEST}:5: ", "invalid YAML"]),
    ("huge_duration", _edit_manifest("claims-core", _replace_line("refresh_sla", "refresh_sla: 99999999999999999w")),
     [f"{CORE_MANIFEST}:10:1: refresh_sla: ", "too long"]),
    ("front_matter_unquoted_impossible_date", _front('valid_from: "2026-01-01T00:00:00+08:00"',
                                                     "valid_from: 2026-02-30T00:00:00+08:00"),
     [f"{HANDBOOK}:1: valid_from: ", "2026-02-30"]),
    ("front_matter_unquoted_naive", _front('valid_from: "2026-01-01T00:00:00+08:00"', "valid_from: 2026-01-01 00:00:00"),
     [f"{HANDBOOK}:1: valid_from: ", "no timezone offset"]),
    ("front_matter_yaml_error_line", _front("keys: [motor-claim-standard, handbook]", "keys: [motor-claim-standard"),
     [f"{HANDBOOK}:14: ", "invalid YAML"]),
    ("front_matter_duplicate_key", _front("facts: {}", "facts: {}\nfacts: {x: 1}"),
     [f"{HANDBOOK}:13: ", "duplicate key 'facts'"]),
    ("manifest_is_directory", m_dir_named_objects, ["manifests/sources/zz.yaml: "]),
]


# Issue 12 (items 10 and 16): a tombstone may delete only its own source's objects; huge
# integers, duplicate JSON keys and manifests symlinked out of the project are refused.
TOMBS = "sources/claims-documents/tombstones.jsonl"
CASES += [
    ("tombstone_other_source", _append_bytes(TOMBS, b'{"object_id": "RULE-MCS-2026.1", "tenant_id": "tenant-demo", '
                                                    b'"deleted_at": "2026-07-09T10:15:00+08:00", "reason": "x"}\n'),
     [f"{TOMBS}:2: object_id: ", "'RULE-MCS-2026.1'", "source 'claims-rules'", "only delete its own objects"]),
    ("jsonl_huge_integer", lambda proj: _sub_line(proj, CORE, 2, '"facts": {', '"facts": {"amount": 123456789012345678901234567890, '),
     [f"{CORE}:2: ", "integer 123456789012345678901234567890 is outside the 64-bit range"]),
    ("jsonl_integer_just_over_64_bits", lambda proj: _sub_line(proj, CORE, 2, '"facts": {', '"facts": {"amount": 18446744073709551616, '),
     [f"{CORE}:2: ", "integer 18446744073709551616 is outside the 64-bit range"]),
    ("jsonl_duplicate_key", lambda proj: _sub_line(proj, CORE, 2, "{", '{"title": "Forged title", '),
     [f"{CORE}:2: ", "invalid JSON: duplicate key 'title'"]),
    ("jsonl_duplicate_nested_key", lambda proj: _sub_line(proj, CORE, 2, '"facts": {', '"facts": {"status": "closed", '),
     [f"{CORE}:2: ", "duplicate key 'status'"]),
    ("relation_duplicate_key", lambda proj: _sub_line(proj, CORE_REL, 1, "{", '{"to": "ruleset:other", '),
     [f"{CORE_REL}:1: ", "duplicate key 'to'"]),
    ("front_matter_huge_integer", _front("facts: {}", "facts: {amount: 123456789012345678901234567890}"),
     [f"{HANDBOOK}:1: facts: ", "integer 123456789012345678901234567890 is outside the 64-bit range"]),
    ("manifest_symlink_out", lambda proj: _symlink_out(proj, CORE_MANIFEST),
     [f"{CORE_MANIFEST}: ", "manifest is a symlink that leads outside the project root"]),
]


def _sub_line(proj: Path, path: str, lineno: int, old: str, new: str) -> None:
    p = proj / path
    lines = _lines(p)
    assert old in lines[lineno - 1]
    lines[lineno - 1] = lines[lineno - 1].replace(old, new, 1)
    _write_lines(p, lines)


def _symlink_out(proj: Path, path: str) -> None:
    """Move a file out of the project and leave a symlink to it in its place."""
    outside = proj.parent / ("outside-" + Path(path).name)
    os.replace(proj / path, outside)
    os.symlink(outside, proj / path)


@pytest.fixture(scope="session")
def _loaded_project(tmp_path_factory) -> Path:
    """The bundled project and its store, loaded once per session (per xdist worker)."""
    from ctxcli.load.build import build_store

    from .conftest import REPO

    proj = tmp_path_factory.mktemp("loaded") / "proj"
    for name in ("manifests", "sources", "examples"):
        shutil.copytree(REPO / name, proj / name, symlinks=True)
    build_store(proj / "manifests", proj / ".ctx" / "ctx.duckdb", root=proj)
    return proj


@pytest.fixture
def good_store(project_copy: Path, _loaded_project: Path) -> tuple[Path, Path]:
    """``project_copy`` with the store ``ctx load`` built from it (a copy of one loaded per
    session: the same files, at this test's path)."""
    db = project_copy / ".ctx" / "ctx.duckdb"
    shutil.copytree(_loaded_project / ".ctx", db.parent)
    r = run_cli(["load", "--manifests", project_copy / "manifests", "--db", db])
    assert r.exit_code == 0 and "unchanged" in r.stdout, (r.stderr, r.stdout)
    return project_copy, db


def _snapshot(db: Path) -> tuple[bytes, int, list[str]]:
    return db.read_bytes(), db.stat().st_mtime_ns, sorted(os.listdir(db.parent))


def assert_one_line_error(r, fragments: list[str]) -> str:
    err = r.stderr_bytes
    assert ESC not in err, err
    text = err.decode("utf-8")
    assert "Traceback" not in text and "Traceback" not in r.stdout, text
    assert text.endswith("\n") and text.count("\n") == 1, repr(text)
    assert text.startswith("ctx: error: "), repr(text)
    assert "internal error" not in text, text
    for f in fragments:
        assert f in text, f"{f!r} not in {text!r}"
    return text


_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
PARAMS = [pytest.param(*c, id=c[0], marks=[pytest.mark.skipif(_ROOT, reason="root reads any file")]
                       if c[0] == "unreadable_file" else []) for c in CASES]


@pytest.mark.parametrize("case,mutate,fragments", PARAMS)
def test_bad_input_is_one_line_exit_2_store_untouched(good_store, case, mutate, fragments):
    proj, db = good_store
    before = _snapshot(db)
    mutate(proj)
    r = run_cli(["load", "--manifests", proj / "manifests", "--db", db])
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.stdout[-500:])
    assert_one_line_error(r, fragments)
    assert r.stdout == ""
    assert _snapshot(db) == before
    # The message names no absolute path of the project (paths are relative to its root).
    assert str(proj) not in r.stderr
    if case in ("markdown_50mb", "jsonl_line_10mb"):  # do not keep big files in pytest's tmp folders
        os.unlink(proj / (HANDBOOK if case == "markdown_50mb" else CORE))


def test_store_still_usable_after_a_failed_load(good_store):
    proj, db = good_store
    _edit_record(CORE, 2, _set(observed_at="2026-07-22T18:00:00"))(proj)
    assert run_cli(["load", "--manifests", proj / "manifests", "--db", db]).exit_code == 2
    r = run_cli(["sources", "--db", db, "--json"])
    assert r.exit_code == 0
    assert any(s["source_id"] == "claims-core" for s in json.loads(r.stdout)["sources"])


# ------------------------------------------------------------------------------ control characters
def _ansi_project(proj: Path) -> None:
    bad = "\x1b[31mRED\x1b[0m\x07\x08\u009b2J\u202e"
    _edit_record(CORE, 2, lambda r: {**r, "title": "Case snapshot C-102 " + bad,
                                      "facts": {**r["facts"], "status": "waiting" + bad}})(proj)
    _edit_record("sources/claims-core/entities.jsonl", 2, _set(name="Motor claim " + bad))(proj)
    _edit_manifest("claims-core", _replace_line("owner_team", 'owner_team: "claims\\e[31m-platform\\a"'))(proj)


def test_control_characters_load_but_never_reach_a_terminal(project_copy, tmp_path):
    proj = project_copy
    db = proj / ".ctx" / "ctx.duckdb"
    _ansi_project(proj)
    r = run_cli(["load", "--manifests", proj / "manifests", "--db", db])
    assert r.exit_code == 0, r.stderr
    assert ESC not in r.stdout_bytes + r.stderr_bytes

    r = run_cli(["sources", "--db", db])
    assert r.exit_code == 0, r.stderr
    assert ESC not in r.stdout_bytes + r.stderr_bytes
    assert b"\x07" not in r.stdout_bytes
    assert "claims\\x1b[31m-platform" in r.stdout.replace("\n", "")  # shown escaped, not dropped

    # JSON output keeps the data (escaped by JSON, never raw)
    r = run_cli(["sources", "--db", db, "--json"])
    assert r.exit_code == 0 and ESC not in r.stdout_bytes
    assert any(s["owner_team"] == "claims\x1b[31m-platform\x07" for s in json.loads(r.stdout)["sources"])

    r = run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "out"])
    assert r.exit_code == 0, r.stderr
    assert ESC not in r.stdout_bytes + r.stderr_bytes
    assert b"\x07" not in r.stdout_bytes + r.stderr_bytes
    assert b"\xc2\x9b" not in r.stdout_bytes  # C1 CSI
    # answer.md is for people too
    assert ESC not in (tmp_path / "out" / "answer.md").read_bytes()

    r = run_cli(["investigate", "C-102", "--db", db, "--json", "--out", tmp_path / "out2"])
    assert r.exit_code == 0 and ESC not in r.stdout_bytes + r.stderr_bytes


def test_control_characters_in_arguments_are_escaped_in_errors(project_copy):
    r = run_cli(["investigate", "C-\x1b[31m102"])
    assert r.exit_code == 2
    assert_one_line_error(r, ["\\x1b[31m"])
    r = run_cli(["investigate", "C-102", "--as-of", "2026-07-23T12:00:00\x1b[2J"])
    assert r.exit_code == 2
    assert_one_line_error(r, ["--as-of"])


def test_bad_case_file_names_file_and_field(project_copy):
    p = project_copy / "examples" / "cases" / "C-102.yaml"
    p.write_text(p.read_text(encoding="utf-8").replace('as_of: "2026-07-23T12:00:00+08:00"',
                                                       'as_of: "2026-07-23T12:00:00"', 1), encoding="utf-8")
    r = run_cli(["investigate", "C-102", "--db", project_copy / ".ctx" / "ctx.duckdb"])
    assert r.exit_code == 2
    text = assert_one_line_error(r, ["C-102.yaml", "as_of", "no timezone offset"])
    assert re.search(r"examples/cases/C-102\.yaml", text)


@pytest.mark.parametrize("how", ["symlink", "relative"])
def test_messages_name_relative_paths_however_the_project_is_reached(good_store, tmp_path, monkeypatch, how):
    proj, db = good_store
    before = _snapshot(db)
    if how == "symlink":
        link = tmp_path / "link"
        os.symlink(proj, link)
        manifests = link / "manifests"
    else:
        monkeypatch.chdir(proj)
        manifests = Path("manifests")
    _edit_manifest("claims-core", lambda t: t + "colour: red\n")(proj)
    r = run_cli(["load", "--manifests", manifests, "--db", db])
    assert r.exit_code == 2
    assert_one_line_error(r, [f"ctx: error: {CORE_MANIFEST}:17:1: colour: unknown field"])
    _edit_manifest("claims-core", lambda t: t.replace("colour: red\n", ""))(proj)
    _edit_record(CORE, 2, _set(observed_at="2026-07-22T18:00:00"))(proj)
    r = run_cli(["load", "--manifests", manifests, "--db", db])
    assert r.exit_code == 2
    assert_one_line_error(r, [f"ctx: error: {CORE}:2: observed_at: "])
    assert _snapshot(db) == before


def test_markdown_line_numbers_count_newlines_only(project_copy):
    """U+2028, form feeds and other characters str.splitlines() splits at do not shift the
    line numbers in a section's locator."""
    from ctxcli.load.build import build_store
    from ctxcli.store.db import open_reader

    p = project_copy / HANDBOOK
    lines = p.read_text(encoding="utf-8").split("\n")
    i = next(n for n, ln in enumerate(lines) if ln.startswith("This handbook covers"))
    lines[i] = lines[i] + " \u2028 \x0c \x1c \x85 end"
    p.write_text("\n".join(lines), encoding="utf-8")
    heading = next(n for n, ln in enumerate(lines, 1) if ln == "## Manual review")
    db = project_copy / ".ctx" / "ctx.duckdb"
    build_store(project_copy / "manifests", db, root=project_copy)
    con = open_reader(db)
    try:
        loc = con.execute("SELECT locator FROM objects WHERE object_id = 'HB-MOTOR-CLAIMS-2026#manual-review'"
                          ).fetchone()[0]
    finally:
        con.close()
    assert loc.startswith(f"motor-claims-handbook-2026.md#manual-review:L{heading}-"), loc


# ------------------------------------------------------------------------------ issue 12, item 16
def test_playbook_symlinked_out_of_the_project_is_refused(good_store, tmp_path):
    proj, db = good_store
    _symlink_out(proj, "manifests/playbooks/motor-claim-review.yaml")
    r = run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "o"])
    assert r.exit_code == 2, r.stderr
    assert_one_line_error(r, ["manifests/playbooks/motor-claim-review.yaml: playbook is a symlink that leads "
                              "outside the project root"])
    assert not (tmp_path / "o").exists()
    # A symlink that stays inside the project is followed as before.
    os.unlink(proj / "manifests/playbooks/motor-claim-review.yaml")
    os.replace(proj.parent / "outside-motor-claim-review.yaml", proj / "manifests" / "mcr.yaml")
    os.symlink(proj / "manifests" / "mcr.yaml", proj / "manifests/playbooks/motor-claim-review.yaml")
    r = run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_case_file_that_is_a_fifo_or_folder_says_so(good_store, tmp_path, kind):
    proj, db = good_store
    case = proj / "examples" / "cases" / "C-102.yaml"
    case.unlink()
    os.mkfifo(case) if kind == "fifo" else case.mkdir()
    want = "not a regular file" + (" (a folder)" if kind == "folder" else "")
    r = run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "o"])
    assert r.exit_code == 2, r.stderr
    text = assert_one_line_error(r, [f"ctx: error: examples/cases/C-102.yaml: {want}"])
    assert "unknown case" not in text
    # Named by path, too.
    r = run_cli(["investigate", case, "--db", db, "--out", tmp_path / "o"])
    assert r.exit_code == 2, r.stderr
    assert_one_line_error(r, [f"C-102.yaml: {want}"])
    assert not (tmp_path / "o").exists()


def test_a_playbook_that_is_a_fifo_says_so(good_store, tmp_path):
    proj, db = good_store
    pb = proj / "manifests" / "playbooks" / "motor-claim-review.yaml"
    pb.unlink()
    os.mkfifo(pb)
    r = run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "o"])
    assert r.exit_code == 2, r.stderr
    text = assert_one_line_error(r, ["manifests/playbooks/motor-claim-review.yaml: not a regular file"])
    assert "unknown playbook" not in text


@pytest.mark.parametrize("edit", ["duplicate_top_level", "duplicate_nested", "huge_integer"])
def test_pack_json_with_a_duplicate_key_or_huge_integer_is_refused(good_store, tmp_path, edit):
    """orjson keeps the last of duplicate keys, so a duplicate that repeats or precedes the
    real value leaves the content hash intact; a reader that keeps the first would see
    another pack. ctx refuses such a file outright."""
    proj, db = good_store
    out = tmp_path / "o"
    r = run_cli(["investigate", "C-102", "--db", db, "--out", out])
    assert r.exit_code == 0, r.stderr
    p = out / "pack.json"
    text = p.read_text(encoding="utf-8")
    if edit == "duplicate_top_level":
        text = text.replace("{\n", '{\n  "pack_id": "pk-0000000000000000",\n', 1)
        want = "duplicate key 'pack_id'"
    elif edit == "duplicate_nested":
        text = text.replace('"verdict": ', '"verdict": "conflicting_evidence",\n    "verdict": ', 1)
        want = "duplicate key 'verdict'"
    else:
        text = text.replace('"budget": {', '"budget_x": 123456789012345678901234567890,\n  "budget": {', 1)
        want = "integer 123456789012345678901234567890 is outside the 64-bit range"
    p.write_text(text, encoding="utf-8")
    for cmd in (["replay", p, "--db", db], ["render", p], ["explain-omissions", p, "--db", db]):
        r = run_cli(cmd)
        assert r.exit_code == 2, (cmd, r.exit_code, r.stderr)
        assert_one_line_error(r, [f"{p}: not a pack: {want}"])


@pytest.mark.parametrize("text,result", [
    (b'{"a": "say \\":\\" twice", "b": {"c": 1}}', {"a": 'say ":" twice', "b": {"c": 1}}),   # not a duplicate
    (b'{"a": 18446744073709551615, "b": -9223372036854775808}', {"a": 2**64 - 1, "b": -(2**63)}),  # exact
    (b'{"a": 1e300, "b": [1.5, -2.5e19]}', {"a": 1e300, "b": [1.5, -2.5e19]}),  # floats stay floats
    (b'{"a": {"b": 1}, "c": {"b": 2}}', {"a": {"b": 1}, "c": {"b": 2}}),       # same key, other objects
])
def test_strict_json_keeps_what_is_exact(text, result):
    from ctxcli.util import jsonstrict

    assert jsonstrict.loads(text) == result


@pytest.mark.parametrize("text,message", [
    (b'{"a": 1, "a": 1}', "duplicate key 'a'"),
    (b'{"x": [{"k": 1, "k": 2}]}', "duplicate key 'k'"),
    (b'{"a": -9223372036854775809}', "integer -9223372036854775809 is outside the 64-bit range"),
    (b'{"a": [18446744073709551616]}', "integer 18446744073709551616 is outside the 64-bit range"),
    (b'{"a": ' + b"9" * 100 + b"}", "integer of more than 60 digits is outside the 64-bit range"),
])
def test_strict_json_refuses_what_orjson_would_change(text, message):
    from ctxcli.util import jsonstrict

    with pytest.raises(jsonstrict.StrictJSONError) as e:
        jsonstrict.loads(text)
    assert str(e.value).startswith(message), str(e.value)
