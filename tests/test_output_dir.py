"""Output directories: whole or nothing, and never a file the tool did not write."""

import errno
import json
import os

import pytest

from creator_plugin import output_dir
from creator_plugin.output_dir import MARKER, OutputDir, OutputDirError


def _write(out: OutputDir, files=("a.csv", "b.json"), parameters=None):
    with out.write(parameters or {"n_latent": 3}) as tmp:
        for name in files:
            (tmp / name).write_text(name)


def _snapshot(root):
    """Every path under root with its bytes and mtime."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = (fh.read(), os.stat(p).st_mtime_ns)
    return out


def test_new_directory_gets_outputs_and_marker(tmp_path):
    target = tmp_path / "sub" / "out"
    _write(OutputDir(target))
    assert sorted(p.name for p in target.iterdir()) == sorted([MARKER, "a.csv", "b.json"])
    marker = json.loads((target / MARKER).read_text())
    assert marker["tool"] == "creator-plugin" and marker["parameters"] == {"n_latent": 3}
    assert set(marker["files"]) == {"a.csv", "b.json"} and marker["version"]
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["out"]  # no temporary


def test_failure_midway_leaves_nothing(tmp_path):
    target = tmp_path / "deep" / "out"
    out = OutputDir(target)
    with pytest.raises(RuntimeError), out.write({}) as tmp:
        (tmp / "half.csv").write_text("1,2")
        raise RuntimeError("crash midway")
    assert list(tmp_path.iterdir()) == []  # the parents it created are gone too


def test_disk_full_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out"
    out = OutputDir(target)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "marker")

    monkeypatch.setattr(output_dir, "_write_marker", full)
    with pytest.raises(OSError, match="No space left"):
        _write(out)
    assert list(tmp_path.iterdir()) == []


def test_existing_directory_refused_without_force(tmp_path):
    target = tmp_path / "out"
    _write(OutputDir(target))
    with pytest.raises(OutputDirError, match="already exists; pass --force"):
        OutputDir(target)


def test_force_replaces_only_own_unchanged_directory(tmp_path):
    target = tmp_path / "out"
    _write(OutputDir(target))
    _write(OutputDir(target, force=True), files=("new.csv",))
    assert sorted(p.name for p in target.iterdir()) == sorted([MARKER, "new.csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the old one is gone


@pytest.mark.parametrize("change", ["foreign", "extra_file", "extra_dir", "modified",
                                    "bad_marker"])
def test_force_refuses_what_the_tool_did_not_write(tmp_path, change):
    target = tmp_path / "out"
    if change == "foreign":
        target.mkdir()
        (target / "thesis.tex").write_text("years of work")
    else:
        _write(OutputDir(target))
        if change == "extra_file":
            (target / "notes.txt").write_text("mine")
        elif change == "extra_dir":
            (target / "mine").mkdir()
            (target / "mine" / "x.txt").write_text("mine")
        elif change == "modified":
            (target / "a.csv").write_text("edited by hand")
        else:
            (target / MARKER).write_text("{not json")
    before = _snapshot(tmp_path)
    with pytest.raises(OutputDirError, match="not written by creator"):
        OutputDir(target, force=True)
    assert _snapshot(tmp_path) == before


def test_directory_appearing_during_the_run_is_not_replaced(tmp_path):
    target = tmp_path / "out"
    out = OutputDir(target)  # checked: absent
    with pytest.raises(OutputDirError, match="appeared while this run"), out.write({}) as tmp:
        (tmp / "a.csv").write_text("results")
        target.mkdir()  # another process creates it meanwhile (empty: still not replaced)
    assert list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_directory_appearing_during_the_run_portable_fallback(tmp_path, monkeypatch):
    monkeypatch.setattr(output_dir, "_RENAMEAT2", None)  # the mkdir-reservation path
    target = tmp_path / "out"
    out = OutputDir(target)
    with pytest.raises(OutputDirError, match="appeared"), out.write({}) as tmp:
        (tmp / "a.csv").write_text("results")
        target.mkdir()
        (target / "theirs.txt").write_text("theirs")
    assert [p.name for p in target.iterdir()] == ["theirs.txt"]
    _write(OutputDir(tmp_path / "fresh"))  # and the fallback still writes a new directory
    assert (tmp_path / "fresh" / "a.csv").exists()


def test_forced_directory_rewritten_during_the_run_is_not_replaced(tmp_path):
    target = tmp_path / "out"
    _write(OutputDir(target))
    out = OutputDir(target, force=True)
    with pytest.raises(OutputDirError, match="while this run was going on"), \
            out.write({}) as tmp:
        (tmp / "a.csv").write_text("mine")
        _write(OutputDir(target, force=True), files=("other.csv",))  # a concurrent run won
    assert (target / "other.csv").read_text() == "other.csv"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("where", ["cwd", "ancestor_of_cwd", "input", "holds_input",
                                   "ancestor_of_input", "file", "symlink"])
def test_refused_locations(tmp_path, monkeypatch, where):
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    data = work / "data" / "x.csv"
    data.write_text("a\n1\n")
    monkeypatch.chdir(work)
    target = {
        "cwd": ".", "ancestor_of_cwd": "..", "input": str(data), "holds_input": "data",
        "ancestor_of_input": str(work), "file": str(data), "symlink": "link",
    }[where]
    if where == "symlink":
        (tmp_path / "elsewhere").mkdir()
        os.symlink(tmp_path / "elsewhere", "link")
    inputs = [] if where == "file" else [data]
    before = _snapshot(tmp_path)
    with pytest.raises(OutputDirError):
        OutputDir(target, force=True, inputs=inputs)
    assert _snapshot(tmp_path) == before
