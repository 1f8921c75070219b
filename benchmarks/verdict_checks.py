"""The verdict's data-condition checks on the workloads they are about, and their false alarms.

Workloads (d = K = 5, n = 1000 per environment, p = d unless said):

* ``default``: :func:`creator_plugin.simulate` as it is (weights redrawn in every
  environment): every flag here is a false alarm when the fit is good (SHD <= 1);
* ``invariant_weights``: the same graph and weights in every environment, only the
  noise scales change (the graph is not identified);
* ``single_node``: an observational environment plus one environment per latent
  in which only that latent's mechanism changes (weights and noise scale);
* ``mean_shifts``: ``default`` with every environment's latents shifted by
  N(0, 3^2) per latent (the covariances, hence the fit, are unchanged);
* ``one_gaussian``: ``default`` with one latent's noise Gaussian in every
  environment (allowed by the model).

Run: ``python benchmarks/verdict_checks.py --seeds 2000-2099 --out
benchmarks/results/verdict/checks_seeds2000-2099.csv``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from creator_plugin import CREATOR, metrics, simulate


def _rebuild(sim, W, Omega, Z, shifts=None):
    d = W[0].shape[0]
    Y = [z @ om @ np.linalg.inv(np.eye(d) - w) for z, om, w in zip(Z, Omega, W)]
    if shifts is not None:
        Y = [y + s for y, s in zip(Y, shifts)]
    sim.W, sim.Omega, sim.Z, sim.Y = list(W), list(Omega), list(Z), Y
    sim.X = [y @ sim.H.T for y in Y]
    return sim


def make(workload: str, seed: int, d: int = 5, n: int = 1000):
    sim = simulate(d, d if workload != "single_node" else d + 1, n, random_state=seed)
    rng = np.random.default_rng(seed + 7919)
    K = len(sim.X)
    if workload == "default":
        return sim
    if workload == "invariant_weights":
        return _rebuild(sim, [sim.W[0]] * K, sim.Omega, sim.Z)
    if workload == "single_node":
        W, Om = [sim.W[0].copy() for _ in range(K)], [sim.Omega[0].copy() for _ in range(K)]
        for k in range(1, K):
            i = k - 1
            W[k][:, i] = sim.W[k][:, i]  # latent i's incoming weights change in environment k
            Om[k][i, i] = sim.Omega[k][i, i]
        return _rebuild(sim, W, Om, sim.Z)
    if workload == "mean_shifts":
        shifts = [rng.normal(0, 3.0, d) * np.sqrt(np.diag(np.cov(y.T))) for y in sim.Y]
        return _rebuild(sim, sim.W, sim.Omega, sim.Z, shifts)
    if workload == "one_gaussian":
        g = sim.causal_order[rng.integers(d)]
        Z = [z.copy() for z in sim.Z]
        for z in Z:
            z[:, g] = rng.standard_normal(len(z))
        return _rebuild(sim, sim.W, sim.Omega, Z)
    raise ValueError(f"unknown workload {workload!r}")


WORKLOADS = ["default", "invariant_weights", "single_node", "mean_shifts", "one_gaussian"]


def run(seeds, workloads=WORKLOADS) -> pd.DataFrame:
    rows = []
    for wl in workloads:
        for seed in seeds:
            sim = make(wl, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = CREATOR(sim.adjacency.shape[0], random_state=seed).fit(sim.X)
            ev = metrics.evaluate_model(model, sim)
            kinds = [i["kind"] for i in model.diagnostics_["quality"]["issues"]]
            rows.append({"workload": wl, "seed": seed, "shd": int(ev["shd"]),
                         "locr2": float(ev["locr2"]), "flagged": bool(kinds),
                         "kinds": ";".join(kinds), "n_true_edges": int(sim.adjacency.sum()),
                         "n_est_edges": int(model.adjacency_matrix_.sum())})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    def agg(g):
        good, bad = g[g.shd <= 1], g[g.shd >= 2]
        return pd.Series({
            "fits": len(g), "mean SHD": g.shd.mean(),
            "flagged, SHD<=1": f"{good.flagged.sum()}/{len(good)}",
            "flagged, SHD>=2": f"{bad.flagged.sum()}/{len(bad)}",
            "invariant_mechanisms": int(g.kinds.str.contains("invariant_mechanisms").sum()),
            "mean_shifts_ignored": int(g.kinds.str.contains("mean_shifts_ignored").sum()),
        })
    return df.groupby("workload", sort=False).apply(agg, include_groups=False)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="2000-2019", help="a range a-b (inclusive)")
    parser.add_argument("--workloads", nargs="*", default=WORKLOADS)
    parser.add_argument("--out", help="CSV of one row per fit")
    args = parser.parse_args(argv)
    a, b = (int(v) for v in args.seeds.split("-"))
    df = run(range(a, b + 1), args.workloads)
    if args.out:
        df.to_csv(args.out, index=False)
    print(summary(df).to_string())


if __name__ == "__main__":
    main()
