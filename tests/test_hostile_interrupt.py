"""Interruptions that leave nothing: SIGTERM, SIGKILL and the replacement of an output.

``SIGTERM`` (the signal of ``kill``, ``timeout`` and systemd) used to kill
``creator fit`` while it wrote, leaving a hidden ``.OUT.creator-tmp-*``
directory with partial results; ``SIGKILL`` the same, with nothing to remove
it later; and while ``--force`` replaced an output, the previous output
existed for a moment only under a hidden name.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import output_dir, simulate
from creator_plugin.output_dir import MARKER, OWNER_MARKER, OutputDir, stale_directories

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "safety.md"

# The child runs ``creator fit`` and signals itself once the results are written into
# the temporary directory (the moment an external kill is most likely to hit).
CHILD = textwrap.dedent("""
    import os, signal, sys
    from creator_plugin import cli, report
    real = report.write_fit_report
    def hit(*args, **kwargs):
        written = real(*args, **kwargs)
        if sys.argv[1] != "none":
            os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        return written
    report.write_fit_report = hit
    sys.exit(cli.main(["fit", "data.csv", "--env-column", "lab", "--n-latent", "2",
                       "--out", "out", *sys.argv[2:]]))
""")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("interrupt")
    sim = simulate(2, 2, 150, n_features=3, random_state=0)
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["lab"] = np.array(["u", "v"])[env]
    df.to_csv(root / "data.csv", index=False)
    (root / "child.py").write_text(CHILD)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "child.py", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def _hidden(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".out."))


@pytest.mark.slow
def test_sigterm_while_writing_leaves_nothing(workdir):
    """Budget: two fits in subprocesses, about 10 s."""
    done = _run(workdir, "SIGTERM")
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith("warning:")]
    assert lines == ["error: interrupted by SIGTERM; no partial results were left behind."]
    assert "Traceback" not in done.stderr
    assert not (workdir / "out").exists() and _hidden(workdir) == []
    # and while --force replaces an output: the previous output stays whole
    assert _run(workdir, "none").returncode == 0
    before = sorted(os.listdir(workdir / "out"))
    marker = (workdir / "out" / MARKER).read_text()
    assert _run(workdir, "SIGTERM", "--force").returncode == 128 + signal.SIGTERM
    assert sorted(os.listdir(workdir / "out")) == before
    assert (workdir / "out" / MARKER).read_text() == marker and _hidden(workdir) == []


@pytest.mark.slow
def test_sigkill_leaves_a_directory_the_next_run_removes(workdir, tmp_path):
    """Budget: two fits in subprocesses, about 10 s."""
    root = tmp_path
    for name in ("data.csv", "child.py"):
        (root / name).write_bytes((workdir / name).read_bytes())
    done = _run(root, "SIGKILL")
    assert done.returncode == -signal.SIGKILL
    left = _hidden(root)
    assert len(left) == 1 and left[0].startswith(".out.creator-tmp-")
    owner = json.loads((root / left[0] / OWNER_MARKER).read_text())
    assert owner["host"] == socket.gethostname() and isinstance(owner["pid"], int)
    again = _run(root, "none")
    assert again.returncode == 0, again.stderr
    assert _hidden(root) == [] and (root / "out" / MARKER).is_file()
    assert f"removed the temporary directory {root / left[0]}" in again.stderr


def test_sigterm_in_the_cli_is_an_interruption_that_leaves_nothing(workdir, tmp_path,
                                                                   monkeypatch, capsys):
    """In-process (the subprocess tests above are in the slow lane)."""
    from creator_plugin import cli, report

    real = report.write_fit_report

    def hit(*args, **kwargs):
        written = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return written

    monkeypatch.setattr(report, "write_fit_report", hit)
    out = tmp_path / "out"
    code = cli.main(["fit", str(workdir / "data.csv"), "--env-column", "lab", "--n-latent",
                     "2", "--out", str(out)])
    assert code == 128 + signal.SIGTERM
    err = [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("warning")]
    assert err == ["error: interrupted by SIGTERM; no partial results were left behind."]
    assert os.listdir(tmp_path) == []


def _fake_temp(parent: Path, owner: dict | None, kind: str = "creator-tmp-") -> Path:
    d = parent / f".out.{kind}x{len(os.listdir(parent))}"
    d.mkdir()
    (d / "half.csv").write_text("1,2\n")
    if owner is not None:
        (d / OWNER_MARKER).write_text(json.dumps({"tool": "creator-plugin", **owner}))
    return d


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_directory_removed_only_when_its_process_is_dead(tmp_path):
    host = socket.gethostname()
    dead = _fake_temp(tmp_path, {"pid": _dead_pid(), "host": host})
    old = _fake_temp(tmp_path, {"pid": _dead_pid(), "host": host}, "creator-old-")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = _fake_temp(tmp_path, {"pid": sleeper.pid, "host": host,
                                     "start_time": output_dir._start_time(sleeper.pid)})
        elsewhere = _fake_temp(tmp_path, {"pid": 1, "host": host + "-other"})
        unnamed = _fake_temp(tmp_path, None)
        past = time.time() - 2 * output_dir.STARTING_SECONDS  # a leftover, not a run starting
        os.utime(unnamed, (past, past))
        reused = _fake_temp(tmp_path, {"pid": sleeper.pid, "host": host, "start_time": "1"})
        with pytest.warns(UserWarning) as caught:
            OutputDir(tmp_path / "out")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not dead.exists() and not old.exists() and not reused.exists()
    assert live.exists() and elsewhere.exists() and unnamed.exists()
    text = " ".join(str(w.message) for w in caught)
    assert str(live) in text and "still runs" in text
    assert str(elsewhere) in text and str(unnamed) in text and "names no process" in text


def test_a_just_created_directory_without_owner_is_a_run_starting(tmp_path):
    """A run creates its temporary directory, then writes its owner record: a second run
    that looks in between neither notes nor touches it; once old, it is noted."""
    starting = _fake_temp(tmp_path, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OutputDir(tmp_path / "out")
    assert starting.exists()
    past = time.time() - 2 * output_dir.STARTING_SECONDS
    os.utime(starting, (past, past))
    with pytest.warns(UserWarning, match="names no process"):
        OutputDir(tmp_path / "out")
    assert starting.exists()


def test_links_and_foreign_names_are_never_touched(tmp_path):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    os.symlink(target, tmp_path / ".out.creator-tmp-link")
    _fake_temp(tmp_path, {"pid": _dead_pid(), "host": socket.gethostname()}).rename(
        tmp_path / ".other.creator-tmp-zz")
    OutputDir(tmp_path / "out")
    assert (target / "keep.txt").read_text() == "keep"
    assert (tmp_path / ".out.creator-tmp-link").is_symlink()
    assert (tmp_path / ".other.creator-tmp-zz").is_dir()
    assert stale_directories(tmp_path / "out") == []


def test_replacement_is_an_exchange_and_a_kill_after_it_is_cleaned_up(tmp_path, monkeypatch):
    target = tmp_path / "out"
    with OutputDir(target).write({}) as tmp:
        (tmp / "old.csv").write_text("old")
    seen = []

    def killed_here(directory, marker):
        # A kill lands after the swap: --out already holds the new output. (Raised as an
        # exception here; a real SIGKILL runs no cleanup, hence nothing on the second call.)
        if not seen:
            seen.append(sorted(os.listdir(target)))
            raise SystemExit("killed")

    monkeypatch.setattr(output_dir, "_delete_own", killed_here)
    with pytest.raises(SystemExit), OutputDir(target, force=True).write({}) as tmp:
        (tmp / "new.csv").write_text("new")
    assert seen == [sorted([MARKER, "new.csv"])]
    hidden = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert len(hidden) == 1 and (hidden[0] / "old.csv").read_text() == "old"
    # the old output's marker names its writer: this process, alive, so it is kept ...
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        OutputDir(target, force=True)
    assert caught == [] and hidden[0].is_dir()
    marker = json.loads((hidden[0] / MARKER).read_text())
    marker["pid"] = _dead_pid()
    (hidden[0] / MARKER).write_text(json.dumps(marker))
    with pytest.warns(UserWarning, match="removed the temporary directory"):
        OutputDir(target, force=True)  # ... and removed once its writer is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_cli_holds_a_signal_during_the_final_steps(tmp_path, monkeypatch):
    """A SIGTERM while the output is moved into place takes effect after it: whole output."""
    from creator_plugin import cli

    real = output_dir._sync_tree

    def signalled(root):
        os.kill(os.getpid(), signal.SIGTERM)  # lands inside the final steps
        real(root)

    monkeypatch.setattr(output_dir, "_sync_tree", signalled)
    target = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt), cli._interruptible() as received:
        with OutputDir(target).write({}) as tmp:
            (tmp / "a.csv").write_text("1")
    assert received == ["SIGTERM"]
    assert sorted(os.listdir(target)) == sorted([MARKER, "a.csv"])
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_an_interrupted_replacement_puts_the_previous_output_back(tmp_path, monkeypatch):
    """Ctrl-C in the Python API between the exchange and its check: --out as it was."""
    target = tmp_path / "out"
    with OutputDir(target).write({}) as tmp:
        (tmp / "old.csv").write_text("old")
    real = output_dir._own_contents
    calls = []

    def interrupted(directory, option):
        calls.append(directory)
        if len(calls) == 2:  # the check after the exchange (the first is at construction)
            raise KeyboardInterrupt
        return real(directory, option)

    monkeypatch.setattr(output_dir, "_own_contents", interrupted)
    out = OutputDir(target, force=True)
    with pytest.raises(KeyboardInterrupt), out.write({}) as tmp:
        (tmp / "new.csv").write_text("new")
    assert sorted(os.listdir(target)) == sorted([MARKER, "old.csv"])
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_the_python_api_installs_no_signal_handler(tmp_path):
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with OutputDir(tmp_path / "out").write({}) as tmp:
        (tmp / "a.csv").write_text("1")
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_the_cli_restores_the_sigterm_handler(tmp_path, capsys):
    from creator_plugin.cli import main

    before = signal.getsignal(signal.SIGTERM)
    assert main(["fit", str(tmp_path / "missing.csv"), "--env-column", "e", "--n-latent", "2",
                 "--out", str(tmp_path / "o")]) == 2
    assert signal.getsignal(signal.SIGTERM) == before


def test_safety_page_says_what_sigkill_and_a_full_disk_leave():
    text = " ".join(DOCS.read_text().split())
    assert "**`SIGKILL`**" in text and "**A full disk**" in text
    assert ".OUT.creator-tmp-" in text and "no longer running" in text


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(files=st.lists(st.sampled_from(["a.csv", "b.json", "sub/c.csv", "model.npz"]),
                      min_size=1, max_size=4, unique=True),
       fail_at=st.integers(0, 4))
def test_an_error_at_any_point_of_writing_leaves_nothing(tmp_path_factory, files, fail_at):
    root = tmp_path_factory.mktemp("w")
    target = root / "out"
    with pytest.raises(KeyboardInterrupt), OutputDir(target).write({}) as tmp:
        for i, name in enumerate(files):
            if i == fail_at:
                raise KeyboardInterrupt
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(name)
        raise KeyboardInterrupt
    assert os.listdir(root) == []
