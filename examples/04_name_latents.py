"""Name the latents from their standardised loadings, with ``creator fit --plots``.

A hand-written process observed in 5 labs: three latent causes (heat ->
pressure -> output) with lab-specific effects and non-Gaussian noise, each
measured by three instruments in very different units (x100, x0.01, ...),
with some cross-talk and measurement noise. The
script writes the data as a CSV, runs ``creator fit --plots`` on it, and
names every recovered latent by its three largest standardised loadings.
``--figures DIR`` copies the two pictures there (the README's figures).
"""

import argparse
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin.cli import main as creator_cli

GROUPS = {  # latent -> its instruments and their units (multipliers)
    "heat": {"thermo_C": 1.0, "thermo_F_x100": 180.0, "ir_camera": 0.01},
    "pressure": {"gauge_kPa": 100.0, "gauge_bar": 1.0, "valve_pos": 0.05},
    "output": {"throughput_kg": 50.0, "energy_kWh": 2.0, "defect_rate": 0.001},
}
NOISES = (
    lambda rng, n: rng.laplace(0, 1 / np.sqrt(2), n),
    lambda rng, n: rng.uniform(-np.sqrt(3), np.sqrt(3), n),
    lambda rng, n: rng.exponential(1.0, n) - 1.0,
)


def simulate_labs(n_labs: int = 5, n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """One row per sample: the lab, then the 9 measurements."""
    rng = np.random.default_rng(seed)
    columns = [c for group in GROUPS.values() for c in group]
    units = np.array([u for group in GROUPS.values() for u in group.values()])
    H = np.kron(np.eye(3), np.ones((3, 1))) * rng.uniform(0.7, 1.3, (9, 1))
    H[5, 2] = 0.3  # cross-talk: the valve position also follows the output
    frames = []
    for lab in range(n_labs):
        W = np.zeros((3, 3))
        W[0, 1], W[1, 2] = rng.uniform(0.5, 1.5, 2) * rng.choice([-1, 1], 2)
        scales = rng.uniform(0.5, 1.5, 3)
        Z = np.column_stack([NOISES[(lab + i) % 3](rng, n) for i in range(3)]) * scales
        Y = Z @ np.linalg.inv(np.eye(3) - W)  # y = W^T y + z
        X = (Y @ H.T + 0.1 * rng.standard_normal((n, 9)) + rng.normal(0, 1, 9)) * units
        df = pd.DataFrame(X, columns=columns)
        df.insert(0, "lab", f"lab_{'ABCDE'[lab]}")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def run(figures: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        csv, out = Path(tmp) / "labs.csv", Path(tmp) / "results"
        simulate_labs().to_csv(csv, index=False)
        status = creator_cli(["fit", str(csv), "--env-column", "lab", "--n-latent", "3",
                              "--out", str(out), "--plots"])
        if status:
            raise SystemExit(status)
        table = pd.read_csv(out / "loadings.csv", index_col="measurement")
        print("\nTop standardised loadings per latent "
              "(SDs of the measurement per SD of the latent):")
        for latent in table.columns:
            top = table[latent].abs().nlargest(3).index
            print(f"  {latent}: " + ", ".join(f"{m} {table.loc[m, latent]:+.2f}" for m in top))
        print("\nNoise SD per lab (units of each latent):")
        print(pd.read_csv(out / "noise_scales.csv", index_col="environment").round(2))
        if figures is not None:
            figures.mkdir(parents=True, exist_ok=True)
            for name in ("graph.png", "loadings.png"):
                shutil.copy(out / name, figures / name)
                print(f"figure: {figures / name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, default=None,
                        help="copy graph.png and loadings.png here")
    run(parser.parse_args().figures)
