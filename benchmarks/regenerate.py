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

A command that fails stops the run (exit status 1) unless ``--keep-going``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
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
    args = parser.parse_args(argv)
    todo = [(p, c) for p, c in commands(args.page) if not args.match or args.match in c]
    if not todo:
        print("no command matches", file=sys.stderr)
        return 1
    if args.list:
        for page, command in todo:
            print(f"[{page}] {command}")
        return 0
    failed = 0
    for page, command in todo:
        print(f"[{page}] $ {command}", flush=True)
        start = time.perf_counter()
        status = subprocess.run(["bash", "-c", command], cwd=ROOT).returncode
        print(f"[{page}] exit {status} after {time.perf_counter() - start:.0f} s", flush=True)
        if status:
            failed += 1
            if not args.keep_going:
                return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
