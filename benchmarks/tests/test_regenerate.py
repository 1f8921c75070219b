"""The one command that regenerates the published tables finds every page's commands."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import regenerate  # noqa: E402


def test_every_results_page_with_a_table_has_a_command_and_its_scripts_exist():
    found = regenerate.commands()
    pages = {p for p, _ in found}
    assert {"accuracy", "llm", "peers", "real_data", "scale", "verdict", "zoo"} <= pages
    assert not any("/path/to" in c for _, c in found)
    for _, command in found:
        for script in re.findall(r"python (\S+\.py)", command):
            assert (ROOT / script).is_file(), command
        if "\n" not in command:  # a one-line command: continuation lines are joined
            assert "\\" not in command
        assert "regenerate.py" not in command  # never runs itself


def test_a_command_stated_twice_runs_once():
    bare = [regenerate._bare(c) for _, c in regenerate.commands()]
    assert len(bare) == len(set(bare))
    assert regenerate._bare("OMP_NUM_THREADS=1 A=2 creator bench") == "creator bench"


def test_list_runs_nothing(capsys):
    assert regenerate.main(["--list", "--page", "verdict"]) == 0
    out = capsys.readouterr().out
    assert "verdict_checks.py" in out and "[accuracy]" not in out
    assert regenerate.main(["--list", "--match", "no such command"]) == 1


def test_every_command_is_a_complete_shell_script():
    # a loop split into lines would fail at its first line ("for ...; do")
    found = regenerate.commands()
    for _, command in found:
        check = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
        assert check.returncode == 0, (command, check.stderr)
    loops = [c for _, c in found if c.startswith("for ")]
    assert loops and all("done" in c for c in loops)
