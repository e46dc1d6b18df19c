"""util/yamlio keeps the files it parsed (issue 36: a warm `ctx serve` re-read the case, the
playbook and every source manifest at each call). What a user would notice if it went wrong:
an edited file read as its old content, or one caller's change leaking into another's data."""

from __future__ import annotations

import os

import pytest

from ctxcli.util import yamlio


@pytest.fixture
def settled(monkeypatch):
    """Treat every file as settled (the 2 s wait is for the file system's clock tick)."""
    monkeypatch.setattr(yamlio, "_SETTLED_NS", -(10 ** 18))
    monkeypatch.setattr(yamlio, "_PARSED", {})


def test_each_caller_gets_its_own_copy(tmp_path, settled):
    f = tmp_path / "a.yaml"
    f.write_text("id: x\nitems:\n  - {name: a, tags: [1, 2]}\n")
    first = yamlio.read_yaml_marked(f, display="a.yaml")
    first.data["items"][0]["tags"].append(3)
    first.data["id"] = "changed"
    second = yamlio.read_yaml_marked(f, display="a.yaml")
    assert second.data == {"id": "x", "items": [{"name": "a", "tags": [1, 2]}]}
    assert second.find(("items", 0, "tags")) == (3, 15) and len(yamlio._PARSED) == 1


def test_a_changed_file_is_read_again(tmp_path, settled):
    f = tmp_path / "a.yaml"
    f.write_text("id: x\n")
    assert yamlio.read_yaml(f, display="a.yaml") == {"id": "x"}
    f.write_text("id: yy\n")
    assert yamlio.read_yaml(f, display="a.yaml") == {"id": "yy"}
    st = f.stat()
    f.write_text("id: zz\n")                                  # same size, same mtime: ctime moved
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert yamlio.read_yaml(f, display="a.yaml") == {"id": "zz"}
    g = tmp_path / "b.yaml"
    os.replace(f, g)
    g.write_text("id: qq\n")
    os.replace(g, f)                                          # another inode at the same path
    assert yamlio.read_yaml(f, display="a.yaml") == {"id": "qq"}


def test_a_file_just_written_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlio, "_PARSED", {})
    f = tmp_path / "a.yaml"
    f.write_text("id: x\n")
    yamlio.read_yaml(f, display="a.yaml")
    assert yamlio._PARSED == {}


def test_errors_are_not_kept(tmp_path, settled):
    f = tmp_path / "a.yaml"
    f.write_text("id: [x\n")
    for _ in range(2):
        with pytest.raises(yamlio.InputError, match="invalid YAML"):
            yamlio.read_yaml(f, display="a.yaml")
    assert yamlio._PARSED == {}


@pytest.fixture
def by_text(monkeypatch):
    """An empty parse cache by text, and a count of the parses made."""
    monkeypatch.setattr(yamlio, "_BY_TEXT", yamlio.OrderedDict())
    monkeypatch.setattr(yamlio, "_by_text_chars", 0)
    parsed: list[str] = []
    real = yamlio._parse_marked

    def counting(text, **kw):
        parsed.append(text)
        return real(text, **kw)

    monkeypatch.setattr(yamlio, "_parse_marked", counting)
    return parsed


def test_the_same_text_in_a_fresh_copy_is_parsed_once_and_each_caller_gets_its_own(tmp_path, by_text):
    text = "id: x\nitems:\n  - {name: a, tags: [1, 2]}\n"
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "a.yaml").write_text(text)       # just written: the path cache keeps neither
    first = yamlio.read_yaml_marked(tmp_path / "a.yaml", display="a.yaml")
    first.data["items"][0]["tags"].append(3)
    first.marks.clear()
    second = yamlio.read_yaml_marked(tmp_path / "copy" / "a.yaml", display="copy/a.yaml")
    assert second.data == {"id": "x", "items": [{"name": "a", "tags": [1, 2]}]}
    assert second.find(("items", 0, "tags")) == (3, 15)
    assert by_text == [text]
    # the line a text starts on is part of what is kept (front matter starts on line 2)
    assert yamlio.loads_yaml_marked(text, file="b.md", first_line=2).find(("items", 0, "tags")) == (4, 15)
    assert by_text == [text, text]
    # another text of the same length is another parse
    assert yamlio.loads_yaml(text.replace("x", "y"), file="c.yaml")["id"] == "y" and len(by_text) == 3


def test_a_text_that_does_not_parse_is_never_kept_and_each_error_names_its_own_file(by_text):
    bad = "id: [unclosed\n"
    for name in ("first.yaml", "second.yaml"):
        with pytest.raises(yamlio.InputError) as e:
            yamlio.loads_yaml_marked(bad, file=name)
        assert e.value.file == name
    assert len(by_text) == 2 and yamlio._BY_TEXT == {}


def test_the_kept_texts_are_bounded_by_their_size_least_recently_used_first(by_text, monkeypatch):
    monkeypatch.setattr(yamlio, "_BY_TEXT_MAX_CHARS", 20)
    a, b, c = "a: 1\nx: 1\n", "b: 2\nx: 2\n", "c: 3\nx: 3\n"  # 10 characters each
    for t in (a, b, a, c):                                  # a used again: b is the oldest when c comes
        yamlio.loads_yaml(t, file="x.yaml")
    assert by_text == [a, b, c]
    yamlio.loads_yaml(a, file="x.yaml")
    yamlio.loads_yaml(b, file="x.yaml")
    assert by_text == [a, b, c, b] and yamlio._by_text_chars == 20
