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
