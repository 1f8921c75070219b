"""Every script in ``examples/`` runs to completion and prints readable results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))

# Text the adapter examples must print (other examples only need to exit cleanly).
EXPECTED = {
    "01_causallearn_style.py": ["Graph Edges:", "SHD(truth, recovered) = 0", "digraph"],
    "02_dowhy_effect.py": ["DoWhy estimate", "truth", "Refuter"],
    "03_gcm_intervention.py": ["Intervention do(L1 :=", "truth", "relative error"],
    "04_name_latents.py": ["Top standardised loadings", "loadings.png", "Noise SD per lab"],
}


def test_examples_exist():
    assert set(EXPECTED) <= {p.name for p in EXAMPLES}


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script: Path):
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=EXAMPLES_DIR.parent, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, f"{script.name} failed:\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), f"{script.name} printed nothing"
    for text in EXPECTED.get(script.name, []):
        assert text in out.stdout, f"{script.name}: expected {text!r} in its output"
