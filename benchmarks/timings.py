"""How long the commands the README and the getting-started page name take, timed here.

Each step runs its command in a subprocess and appends one row per timed run
to ``benchmarks/results/timings/timings.csv``: the step, the run's kind, the
wall-clock seconds, the CPU seconds of the command and its children, its exit
code, the command, the checkout's commit, the date, the load average at the start and
the number of CPUs. The machine is shared: the load average says how busy it
was, and the CPU seconds are what the command itself used (on an idle machine
a single-process command's wall-clock time is close to them). The pages quote
the last session's rows of a step (one invocation of this script), never a
best run picked from several sessions.

Steps (``--steps``, default every one but the installs):

* ``demo``: ``creator demo``, ``--repeats`` runs after one untimed run (kind
  ``warm``);
* ``fit``: ``creator fit`` on the README's data file (its command as written
  there; kind ``warm``, after one untimed run);
* ``bench_quick``: ``creator bench --quick`` (kind ``warm``);
* ``quick_lane``: the quick lane of the tests,
  ``python -m pytest -q -m "not slow" -n 2 -p no:cacheprovider`` (kind ``warm``);
* ``install_core`` and ``install_all``: ``pip install --no-cache-dir`` of this
  checkout, and of its ``[all]`` extra, each into a new virtual environment
  (downloads from PyPI; kind ``cold``); the row's ``packages`` column counts
  what the environment holds afterwards beyond pip, setuptools and this
  package. After the core
  install, the first ``creator demo`` of that environment is timed too (step
  ``demo``, kind ``first run``: what a user waits for right after installing).

Usage::

    python benchmarks/timings.py
    python benchmarks/timings.py --steps demo bench_quick --repeats 3
    python benchmarks/timings.py --steps install_core install_all
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "results" / "timings" / "timings.csv"
FIELDS = ["session", "step", "kind", "run", "seconds", "cpu_seconds", "exit_code", "packages",
          "command", "commit", "date", "load1", "cpus"]
STEPS = ("demo", "fit", "bench_quick", "quick_lane", "install_core", "install_all")
DEFAULT_STEPS = ("demo", "fit", "bench_quick", "quick_lane")

#: The README's data file for ``creator fit`` (its Python block, as written there).
README_DATA = """
import pandas as pd
from creator_plugin import simulate

X, env = simulate(n_latent=3, n_environments=3, n_samples=500, random_state=0).stacked()
pd.DataFrame(X).add_prefix("x").assign(lab=env).to_csv("data.csv", index=False)
"""


def _creator() -> str:
    """The ``creator`` command of this interpreter's environment."""
    found = Path(sys.executable).with_name("creator")
    return str(found) if found.exists() else "creator"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], cwd: Path, env: dict | None = None,
           may_fail: bool = False) -> tuple[float, float, int]:
    """Wall-clock and CPU seconds (the process and its children) and exit code of ``args``.

    The run must succeed unless ``may_fail`` (the test lane: its time is a time
    whatever its outcome, and the row records the exit code).
    """
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    if done.returncode != 0 and not may_fail:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return seconds, cpu, done.returncode


def _commit() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else ""


def _runs(step: str, work: Path, repeats: int) -> list[tuple[str, tuple, int | str, str]]:
    """``(kind, (seconds, cpu_seconds, exit code), packages, command)`` of each timed run."""
    creator = _creator()
    if step == "demo":
        _timed([creator, "demo"], work)  # untimed first run
        return [("warm", _timed([creator, "demo"], work), "", "creator demo")
                for _ in range(repeats)]
    if step == "fit":
        subprocess.run([sys.executable, "-c", README_DATA], cwd=work, check=True)
        args = [creator, "fit", "data.csv", "--env-column", "lab", "--n-latent", "3",
                "--out", "results/"]
        _timed(args, work)  # untimed first run
        shutil.rmtree(work / "results")
        command = "creator fit data.csv --env-column lab --n-latent 3 --out results/"
        out = []
        for _ in range(repeats):
            out.append(("warm", _timed(args, work), "", command))
            shutil.rmtree(work / "results")
        return out
    if step == "bench_quick":
        command = "creator bench --quick --no-progress --out quick"
        out = []
        for i in range(repeats):
            out.append(("warm", _timed([creator, "bench", "--quick", "--no-progress",
                                        "--out", str(work / f"quick{i}")], work), "", command))
        return out
    if step == "quick_lane":
        args = [sys.executable, "-m", "pytest", "-q", "-m", "not slow", "-n", "2",
                "-p", "no:cacheprovider"]
        return [("warm", _timed(args, ROOT, may_fail=True), "",
                 'python -m pytest -q -m "not slow" -n 2 -p no:cacheprovider')]
    if step in ("install_core", "install_all"):
        venv = work / step
        # as a user's shell: Python writes its bytecode caches
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        target = str(ROOT) + ("[all]" if step == "install_all" else "")
        seconds = _timed(pip + ["install", "--quiet", "--no-cache-dir", target], work, env)
        listed = subprocess.run(pip + ["list", "--format=freeze"], capture_output=True,
                                text=True, check=True, env=env).stdout.split()
        own = ("pip==", "setuptools==", "creator-plugin", "creator_plugin")
        packages = sum(not line.lower().startswith(own) for line in listed)
        name = "." + ("[all]" if step == "install_all" else "")
        rows = [("cold", seconds, packages, f'pip install --no-cache-dir "{name}"')]
        if step == "install_core":
            rows.append(("first run", _timed([str(venv / "bin" / "creator"), "demo"], work, env),
                         "", "creator demo"))
        shutil.rmtree(venv)
        return rows
    raise ValueError(f"step must be one of {STEPS}, got {step!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(DEFAULT_STEPS))
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs of demo, fit and bench_quick (default 3)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1.")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    session = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = _commit()
    with open(out, "a", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        for step in args.steps:
            with tempfile.TemporaryDirectory() as tmp:
                load1 = os.getloadavg()[0]
                for i, (kind, (seconds, cpu, code), packages, command) in enumerate(
                        _runs(step, Path(tmp), args.repeats)):
                    name = "demo" if kind == "first run" else step
                    row = {"session": session, "step": name, "kind": kind, "run": i,
                           "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
                           "exit_code": code,
                           "packages": packages,
                           "command": command, "commit": commit,
                           "date": datetime.date.today().isoformat(),
                           "load1": round(load1, 2), "cpus": os.cpu_count()}
                    writer.writerow(row)
                    fh.flush()
                    print(f"{name} {kind} {seconds:.2f} s wall, {cpu:.2f} s CPU {packages} "
                          f"(load {load1:.1f})")


if __name__ == "__main__":
    main()
