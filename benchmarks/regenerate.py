"""Regenerate every published table and figure: the commands the results pages state.

Each page of ``docs/results/`` states the command that reproduces each of its
tables in a ``console`` block (lines starting with ``$``). This script
collects those commands, page by page in the order they appear, and runs
them from the repository root, so that a change of defaults refreshes every
published number with one command and the pages' commands cannot drift
from what is run. Expect hours on two cores for the whole set (the tau table
and the peers' table dominate); ``--list`` shows what would run.

Usage::

    python benchmarks/regenerate.py --list
    python benchmarks/regenerate.py                      # everything
    python benchmarks/regenerate.py --page accuracy verdict
    python benchmarks/regenerate.py --match verdict_checks
    python benchmarks/regenerate.py --smoke --keep-going # every command, one seed, a copy

A command that fails stops the run (exit status 1) unless ``--keep-going``.
``--smoke`` runs the commands as :func:`smoke_command` rewrites them (one
seed, small sizes) in a temporary copy of ``benchmarks/`` and ``examples/``,
with every output under ``smoke/`` of that copy: it checks that each command
still runs and never touches a committed file.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "results"

_BLOCK = re.compile(r"```(console|bash)\n(.*?)```", re.S)
# A bash block with a loop, a conditional or a variable set on its own line
# is one script, not a list of independent commands.
_SCRIPT = re.compile(r"^\s*(for|while|until|if)\s|^\s*\w+=\S*\s*$", re.M)


def commands(pages: list[str] | None = None) -> list[tuple[str, str]]:
    """``(page, command)`` for every command the results pages state.

    A command is a ``$`` line of a ``console`` block or a line (not a
    comment) of a ``bash`` block or of a ``console`` block without prompts;
    a command stated on two pages runs once, and commands with placeholder
    paths (``/path/to``: they need checkouts of other projects) are left
    out. A ``bash`` block with a loop, a conditional or a variable assigned
    on its own line is one command (the whole block, run as one script).

    Parameters
    ----------
    pages : list of str, optional
        Page names (file stems of ``docs/results/*.md``); all pages when None.

    Returns
    -------
    list of (str, str)
        Continuation lines (ending in a backslash) are joined.
    """
    found = []
    for path in sorted(PAGES.glob("*.md")):
        if pages and path.stem not in pages:
            continue
        for lang, block in _BLOCK.findall(path.read_text(encoding="utf-8")):
            if lang == "console" and not any(
                    line.startswith("$ ") for line in block.splitlines()):
                lang = "bash"  # a console block without prompts lists bare commands
            if lang == "bash" and _SCRIPT.search(block):
                # loops or variables span lines: the block runs as one script
                script = "\n".join(line for line in block.splitlines()
                                   if line.strip() and not line.lstrip().startswith("#"))
                if _bare(script) not in {_bare(c) for _, c in found}:
                    found.append((path.stem, script))
                continue
            command = None
            for line in block.splitlines():
                if command is not None:
                    command += " " + line.strip()
                elif lang == "console" and line.startswith("$ "):
                    command = line[2:].strip()
                elif lang == "bash" and line.strip() and not line.lstrip().startswith("#"):
                    command = line.strip()
                else:
                    continue
                if command.endswith("\\"):
                    command = command[:-1].rstrip()
                    continue
                if ("regenerate.py" not in command and "/path/to" not in command
                        and _bare(command) not in {_bare(c) for _, c in found}):
                    found.append((path.stem, command))
                command = None
    return found


#: Scripts whose first arguments are ``run SET FIRST COUNT OUT`` (or the like):
#: the position of the count among the arguments after the script's path.
_COUNT_AT = {"disentangle_precision_cache.py": 3, "branch_check.py": 3, "search_check.py": 3,
             "likelihood_features_check.py": 3, "buried_noise_probe.py": 4,
             "rows_per_column.py": 2}
#: Sub-commands and scripts that write rows (their ``benchmarks/results`` paths are outputs).
_RUNS = {"run", "run-auto"}
_WRITERS = {"disentangle_precision_cache.py", "graph_selection.py", "disentangle_precision.py",
            "outlier_anatomy.py"}
_LARGE_D = 10  # a smoke run fits at most this many latents


def smoke_command(command: str) -> str:
    """``command`` with one seed, small sizes and its outputs under ``smoke/``.

    Seed counts (``--seeds N``, a range ``--seeds A-B``, the count of the
    ``run SET FIRST COUNT OUT`` scripts, the seed list of
    ``outlier_anatomy.py``) become one seed; ``--n``/``--ns`` at most 300 rows,
    ``--d`` at most 10 (5 for ``speed_vs_base.py``) and ``--ds`` its smallest
    value; ``scaling.py`` gets two small sizes. Every ``benchmarks/results/...``
    path a writing command names (``--out``, ``--csv``, ``--figure``, ``>``, the rows of a ``run``),
    every ``docs/figures/...`` path it writes (``--figure``) and every
    ``R=benchmarks/results/...`` prefix moves under ``smoke/``, as
    does every ``/tmp/`` path; ``zoo.py run`` without ``--out`` gets one. The
    command is meant to run from the root of a copy (see :func:`smoke_copy`).
    """
    out = []
    for line in command.split("\n"):
        line = re.sub(r"^(\s*\w+=)(benchmarks/results/)", r"\1smoke/\2", line)
        line = re.sub(r"(?<![\w/])/tmp/", "smoke/tmp/", line)
        line = re.sub(r"--seeds (\d+)-\d+\b", r"--seeds \1-\1", line)
        line = re.sub(r"--seeds \d+\b(?!-)", "--seeds 1", line)
        line = re.sub(r"--ns? (\d+)", lambda m: f"{m.group(0).split()[0]} "
                      f"{min(int(m.group(1)), 300)}", line)
        line = re.sub(r"--d (\d+)", lambda m: f"--d {min(int(m.group(1)), _LARGE_D)}", line)
        line = re.sub(r"--ds ([\d,]+)",
                      lambda m: f"--ds {min(int(x) for x in m.group(1).split(','))}", line)
        out.append(_smoke_scripts(line))
    return "\n".join(out)


def _smoke_scripts(line: str) -> str:
    """The per-script part of :func:`smoke_command`, on every ``python SCRIPT ...`` of a line."""
    def one(m: re.Match) -> str:
        script, rest = m.group(1), m.group(2)
        name = script.rsplit("/", 1)[-1]
        args = rest.split()
        writes = (bool(args) and args[0] in _RUNS) or name in _WRITERS or any(
            flag in rest for flag in ("--out ", "--csv ", "--figure "))
        if name in _COUNT_AT and len(args) > _COUNT_AT[name] and (
                name == "disentangle_precision_cache.py" or args[0] in _RUNS):
            args[_COUNT_AT[name]] = "1"
        if name == "outlier_anatomy.py" and len(args) > 3:
            args = [args[0], args[1], args[-1]]
        if name == "scaling.py":
            args += ["--values", "300", "1000"]
        if name == "speed_vs_base.py" and "--d" in args:  # a timing script: any size runs it
            args[args.index("--d") + 1] = "5"
        if name == "zoo.py" and args and args[0] == "run" and "--out" not in args:
            args += ["--out", "smoke/zoo_run.jsonl"]
        rest = " ".join(args)
        if writes:
            rest = re.sub(r"(?<![\w/])(benchmarks/results/)", r"smoke/\1", rest)
        return f"python {script} {rest}".rstrip()
    # a script's arguments end at a shell operator
    line = re.sub(r"python (\S+\.py)((?:\s+(?![|&;>])(?:'[^']*'|\"[^\"]*\"|[^\s|&;>'\"]+))*)",
                  one, line)
    line = re.sub(r"(--out|--csv|--figure|>)(\s*)(benchmarks/results/|docs/figures/)",
                  r"\1\2smoke/\3", line)
    return line


def smoke_copy(root: Path = ROOT) -> Path:
    """A temporary folder holding copies of ``benchmarks/`` and ``examples/``, a link to
    the checkout's package (``speed_vs_base.py --base .`` imports it from there), and
    ``smoke/`` with the folders of ``benchmarks/results`` (empty) and ``tmp/``."""
    tmp = Path(tempfile.mkdtemp(prefix="creator-smoke-"))
    for folder in ("benchmarks", "examples"):
        if (root / folder).is_dir():
            shutil.copytree(root / folder, tmp / folder,
                            ignore=shutil.ignore_patterns("__pycache__"))
    (tmp / "creator_plugin").symlink_to(root / "creator_plugin", target_is_directory=True)
    for d in [root / "benchmarks" / "results", *(root / "benchmarks" / "results").rglob("*")]:
        if d.is_dir():
            (tmp / "smoke" / d.relative_to(root)).mkdir(parents=True, exist_ok=True)
    (tmp / "smoke" / "tmp").mkdir(parents=True, exist_ok=True)
    return tmp


def _bare(command: str) -> str:
    """The command without leading environment assignments (``OMP_NUM_THREADS=1 ...``)."""
    return re.sub(r"^(\w+=\S+\s+)+", "", command)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the commands, run nothing")
    parser.add_argument("--page", nargs="+", metavar="NAME",
                        help="only these pages (e.g. accuracy verdict)")
    parser.add_argument("--match", help="only commands containing this text")
    parser.add_argument("--keep-going", action="store_true",
                        help="run the remaining commands after a failure")
    parser.add_argument("--smoke", action="store_true",
                        help="one seed and small sizes, in a temporary copy (see smoke_command)")
    args = parser.parse_args(argv)
    todo = [(p, c) for p, c in commands(args.page) if not args.match or args.match in c]
    if not todo:
        print("no command matches", file=sys.stderr)
        return 1
    if args.smoke:
        todo = [(p, smoke_command(c)) for p, c in todo]
    if args.list:
        for page, command in todo:
            print(f"[{page}] {command}")
        return 0
    cwd = smoke_copy() if args.smoke else ROOT
    failed = []
    for page, command in todo:
        print(f"[{page}] $ {command}", flush=True)
        start = time.perf_counter()
        status = subprocess.run(["bash", "-c", command], cwd=cwd).returncode
        print(f"[{page}] exit {status} after {time.perf_counter() - start:.0f} s", flush=True)
        if status:
            failed.append(command)
            if not args.keep_going:
                break
    if args.smoke:
        shutil.rmtree(cwd, ignore_errors=True)
    if failed:
        print(f"{len(failed)} of {len(todo)} commands failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
