"""The one command that regenerates the published tables finds every page's commands."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_smoke_commands_use_one_seed_and_write_under_smoke():
    for _, command in regenerate.commands():
        smoke = regenerate.smoke_command(command)
        assert not re.search(r"--seeds (?!1\b)\d+\b(?!-)", smoke), smoke
        for first, last in re.findall(r"--seeds (\d+)-(\d+)", smoke):
            assert first == last, smoke
        assert not re.search(r"(?<![\w/])/tmp/", smoke), smoke
        for path in re.findall(r"(?:--out|--csv|--figure|>)\s*(\S+)", smoke):
            assert not path.startswith(("/", "benchmarks/", "examples/", "docs/")), smoke
        for n in re.findall(r"--ns? (\d+)", smoke):
            assert int(n) <= 300, smoke
        assert "regenerate.py" not in smoke
    run = regenerate.smoke_command(
        "R=benchmarks/results/x/fresh\n"
        "python benchmarks/experiments/branch_check.py run d10 104000 80 ${R}_d10.jsonl\n"
        "python benchmarks/experiments/branch_check.py summary ${R}_*.jsonl")
    assert run.splitlines() == [
        "R=smoke/benchmarks/results/x/fresh",
        "python benchmarks/experiments/branch_check.py run d10 104000 1 ${R}_d10.jsonl",
        "python benchmarks/experiments/branch_check.py summary ${R}_*.jsonl"]
    # a summary reads the committed rows (in the copy), a run writes under smoke/
    assert regenerate.smoke_command(
        "python benchmarks/zoo.py summary benchmarks/results/zoo/package_d5.jsonl") == (
        "python benchmarks/zoo.py summary benchmarks/results/zoo/package_d5.jsonl")
    assert regenerate.smoke_command(
        "python benchmarks/zoo.py run --simulator package --first-seed 10000 --seeds 50") == (
        "python benchmarks/zoo.py run --simulator package --first-seed 10000 --seeds 1 "
        "--out smoke/zoo_run.jsonl")
    # a figure the docs show is drawn under smoke/ too, never over the page's figure
    assert regenerate.smoke_command(
        "python benchmarks/edge_confidence.py reliability a=benchmarks/results/e/p.csv.gz "
        "--csv benchmarks/results/e/r.csv --figure docs/figures/r.png") == (
        "python benchmarks/edge_confidence.py reliability a=smoke/benchmarks/results/e/p.csv.gz "
        "--csv smoke/benchmarks/results/e/r.csv --figure smoke/docs/figures/r.png")


#: One or more commands of most lab scripts, cheap at one seed (about a minute on two
#: cores). Not run here: the d >= 7 probes and checks (minutes even at one seed), the
#: LLM scripts and the d = 20 levels (no seed argument), the peers' validation against
#: their authors' code, the real-data example's full run and the package's own
#: ``creator bench`` (CI runs ``creator bench --quick``); ``python
#: benchmarks/regenerate.py --smoke --keep-going`` runs every command this way.
SMOKE = [
    "zoo.py run --simulator package --first-seed 10000",
    "zoo.py summary benchmarks/results/zoo/package_d5.jsonl",
    "accuracy_vs_n.py --ds 5",
    "disentangle_precision_cache.py 10 2000 71000",
    "disentangle_precision.py",
    "paired_zoo.py benchmarks/results/zoo/revise_off_package_d5.jsonl",
    "pooled_blocks.py",
    "agreement_level_d.py run --simulator package --ds 10,5,7",
    "agreement_level_d.py compare",
    "prune_level_K.py summary",
    "quality.py --workload default",
    "verdict_checks.py",
    "select_n_latent_small_p.py off_by_one",
    "rows_per_column.py summary",
    "buried_noise_probe.py",
    "tune_defaults.py --seeds 50 --grid",
    "peers.py --table benchmarks/results/peers/paper_preset_n250.csv",
    "speed_vs_base.py --base . --params",
]


@pytest.mark.slow
def test_representative_commands_run_at_one_seed_in_a_copy():
    found = regenerate.commands()
    chosen = []
    for text in SMOKE:
        match = [c for _, c in found if text in c]
        assert match, text  # the pages still state it
        chosen.append(regenerate.smoke_command(match[0]))
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "benchmarks" / "results").rglob("*")}
    copy = regenerate.smoke_copy()
    try:
        for command in chosen:
            proc = subprocess.run(["bash", "-c", command], cwd=copy, capture_output=True,
                                  text=True, env={**os.environ, "OMP_NUM_THREADS": "1",
                                                  "MPLBACKEND": "Agg"}, timeout=600)
            assert proc.returncode == 0, (command, proc.stderr[-3000:])
        written = [p for p in (copy / "smoke").rglob("*") if p.is_file()]
        assert len(written) >= 8  # the runs wrote their rows under smoke/
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "benchmarks" / "results").rglob("*")}
    assert after == before  # nothing committed was touched


class _Parsed(Exception):
    pass


def _argparse_commands():
    """``(script, argv)`` of every one-line ``python SCRIPT ...`` command whose script
    parses its arguments with argparse."""
    import shlex

    out = []
    for _, command in regenerate.commands():
        if "\n" in command or "$" in command:
            continue
        for part in re.split(r"\s*&&\s*", command):
            words = shlex.split(re.sub(r"\s*>\s*\S+$", "", part))
            while words and "=" in words[0]:
                words.pop(0)  # OMP_NUM_THREADS=1
            if words[:1] == ["nice"]:
                words.pop(0)
            if len(words) >= 2 and words[0] == "python" and words[1].endswith(".py"):
                if "argparse" in (ROOT / words[1]).read_text():
                    out.append((words[1], words[2:]))
    return out


@pytest.mark.slow
def test_every_argparse_command_of_the_pages_parses(monkeypatch):
    """The arguments the pages state are accepted (parsed, nothing run)."""
    import argparse
    import runpy

    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    checked = set()
    for script, argv in _argparse_commands():
        if script.startswith("benchmarks/llm_"):
            pytest.importorskip("torch")
        monkeypatch.setattr(sys, "argv", [script, *argv])
        monkeypatch.syspath_prepend(str((ROOT / script).parent))
        with pytest.raises(_Parsed):
            runpy.run_path(str(ROOT / script), run_name="__main__")
        checked.add(script)
    assert len(checked) >= 10
