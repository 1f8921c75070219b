"""A tampered marker never makes ``--force`` touch anything outside ``--out``.

Each case edits the marker (or the directory) of a genuine earlier output,
then asks to replace it: the run must refuse before writing anything, and
every file of the tree (the output, its siblings, a file outside) must be
as it was.
"""

import hashlib
import json
import os

import numpy as np
import pytest

from creator_plugin.cli import main
from creator_plugin.output_dir import MARKER, OutputDir, OutputDirError


def _tree(root):
    """Every entry under root: files with bytes, directories, links with targets."""
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            out[os.path.relpath(p, root)] = ("link", os.readlink(p)) if os.path.islink(p) else "dir"
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.islink(p):
                out[os.path.relpath(p, root)] = ("link", os.readlink(p))
            else:
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, root)] = fh.read()
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def old_output(tmp_path):
    """An output directory written by the tool, a victim file beside it and one far away."""
    out = tmp_path / "work" / "r"
    with OutputDir(out).write({"n_latent": 3}) as tmp:
        (tmp / "a.csv").write_text("1,2\n")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.json").write_text("{}")
    victim = tmp_path / "work" / "data.csv"
    victim.write_text("precious input\n")
    far = tmp_path / "elsewhere" / "secret.txt"
    far.parent.mkdir()
    far.write_text("secret\n")
    return tmp_path, out, victim, far


def _edit_marker(out, edit):
    marker = json.loads((out / MARKER).read_text())
    edit(marker)
    (out / MARKER).write_text(json.dumps(marker))


def _entries(victim, far):
    return {
        "absolute path": (str(far), far.read_bytes()),
        "dot-dot path": ("../data.csv", victim.read_bytes()),
        "deep dot-dot": ("sub/../../data.csv", victim.read_bytes()),
        "dot component": ("./a.csv", b"1,2\n"),
        "empty component": ("sub//b.json", b"{}"),
        "trailing slash": ("sub/", b""),
        "NUL byte": ("a.csv\x00x", b"1,2\n"),
        "backslash": ("..\\data.csv", victim.read_bytes()),
        "marker itself": (MARKER, b""),
        "empty name": ("", b""),
    }


CASES = ["absolute path", "dot-dot path", "deep dot-dot", "dot component", "empty component",
         "trailing slash", "NUL byte", "backslash", "marker itself", "empty name"]


@pytest.mark.parametrize("case", CASES)
def test_tampered_entry_refused_and_nothing_touched(old_output, case):
    root, out, victim, far = old_output
    entry, data = _entries(victim, far)[case]
    _edit_marker(out, lambda m: m["files"].__setitem__(entry, _sha(data)))
    before = _tree(root)
    with pytest.raises(OutputDirError, match="not written by creator"):
        OutputDir(out, force=True)
    assert _tree(root) == before


@pytest.mark.parametrize("bad", [None, 5, "x" * 64, "A" * 64, ["a"], {"a": 1}])
def test_malformed_checksum_refused(old_output, bad):
    root, out, _, _ = old_output
    _edit_marker(out, lambda m: m["files"].__setitem__("a.csv", bad))
    before = _tree(root)
    with pytest.raises(OutputDirError):
        OutputDir(out, force=True)
    assert _tree(root) == before


def test_symlink_inside_out_refused(old_output):
    root, out, victim, _ = old_output
    os.symlink(victim.parent, out / "link")
    _edit_marker(out, lambda m: m["files"].__setitem__("link/data.csv",
                                                       _sha(victim.read_bytes())))
    before = _tree(root)
    with pytest.raises(OutputDirError, match="link"):
        OutputDir(out, force=True)
    assert _tree(root) == before


def test_listed_file_replaced_by_symlink_refused(old_output):
    root, out, victim, _ = old_output
    (out / "a.csv").unlink()
    os.symlink(victim, out / "a.csv")
    before = _tree(root)
    with pytest.raises(OutputDirError):
        OutputDir(out, force=True)
    assert _tree(root) == before


def test_listed_directory_replaced_by_symlink_refused(old_output):
    root, out, victim, _ = old_output
    elsewhere = root / "elsewhere"
    (elsewhere / "b.json").write_text("{}")
    (out / "sub" / "b.json").unlink()
    (out / "sub").rmdir()
    os.symlink(elsewhere, out / "sub")
    before = _tree(root)
    with pytest.raises(OutputDirError):
        OutputDir(out, force=True)
    assert _tree(root) == before


def test_empty_user_subdirectory_refused(old_output):
    root, out, _, _ = old_output
    (out / "mine").mkdir()
    before = _tree(root)
    with pytest.raises(OutputDirError, match="mine"):
        OutputDir(out, force=True)
    assert _tree(root) == before


def test_marker_entry_naming_a_directory_refused(old_output):
    root, out, _, _ = old_output
    _edit_marker(out, lambda m: m["files"].__setitem__("sub", _sha(b"")))
    before = _tree(root)
    with pytest.raises(OutputDirError, match="sub"):
        OutputDir(out, force=True)
    assert _tree(root) == before


def test_listed_file_missing_refused(old_output):
    root, out, _, _ = old_output
    _edit_marker(out, lambda m: m["files"].__setitem__("gone.csv", _sha(b"x")))
    with pytest.raises(OutputDirError, match="gone.csv"):
        OutputDir(out, force=True)


def test_untampered_replacement_leaves_no_hidden_folder(old_output):
    root, out, victim, far = old_output
    target = OutputDir(out, force=True)
    with target.write({"n_latent": 2}) as tmp:
        (tmp / "new.csv").write_text("3\n")
    assert sorted(os.listdir(out.parent)) == ["data.csv", "r"]
    assert sorted(os.listdir(out)) == sorted([MARKER, "new.csv"])
    assert victim.read_text() == "precious input\n" and far.read_text() == "secret\n"


def test_cli_force_with_tampered_marker_writes_nothing(tmp_path, monkeypatch, capsys):
    """The reported attack: edit an old output's marker, rerun with --force."""
    from creator_plugin import simulate

    monkeypatch.chdir(tmp_path)
    sim = simulate(3, 3, 200, n_features=4, random_state=0)
    X, env = sim.stacked()
    rows = ["x0,x1,x2,x3,lab"] + [",".join(map(str, r)) + f",e{e}" for r, e in zip(X, env)]
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    argv = ["fit", "data.csv", "--env-column", "lab", "--n-latent", "3", "--out", "r"]
    assert main(argv) == 0
    far = tmp_path / "elsewhere.txt"
    far.write_text("keep me\n")
    _edit_marker(tmp_path / "r", lambda m: m["files"].update({
        str(far): _sha(far.read_bytes()),
        "../data.csv": _sha((tmp_path / "data.csv").read_bytes()),
    }))
    before = _tree(tmp_path)
    capsys.readouterr()
    assert main([*argv, "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not written by creator" in err[0]
    assert _tree(tmp_path) == before
    assert np.isfinite(np.loadtxt(tmp_path / "data.csv", delimiter=",", skiprows=1,
                                  usecols=range(4))).all()
