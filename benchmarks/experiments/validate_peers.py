"""Validate the re-implemented peers against the authors' public code, on the authors' generators.

The authors' repositories are read and run from a local checkout given on
the command line; nothing of theirs is part of this project.

* LinCD (Squires et al.): ``--lincd-repo`` is a checkout of
  csquires/linear-causal-disentanglement-via-interventions. Data: its
  ``src.rand.rand_model`` (d = 5 latents, p = 10 measurements, Erdos-Renyi
  density 0.75 as its experiment script, one hard intervention per latent)
  with precision matrices drawn by its ``Dataset.sample_thetas(n)``
  (Wishart, n = 2000) and, separately, its exact precisions. Both
  algorithms get the same precisions; compared: encoder H, weights B0,
  targets, the graph read from B0 (same threshold for both) and MCC/SHD
  against the truth under the shared scoring. Its solver imports
  ``causaldag`` only for a partial-order container and its generator for
  ``rand_weights``; a minimal stand-in is installed here (Erdos-Renyi DAG on
  an upper-triangular order, weights uniform on +-[0.25, 1], causaldag's
  defaults).
* LSCALE-I (Varici et al.): ``--lscale-repo`` is a checkout of
  acarturk-e/score-based-crl. Data: its ``LinearSCM`` and
  ``utils.generate_mixing`` as in ``LSCALE-I/l_scale_i_test.py`` (n = 5
  latents, d = 10 measurements, fill rate 0.5, variance scaling 5.0 at the
  target, 2000 samples, Gaussian score estimates, its model-validity
  resampling). Its ``l_scale_i`` gets score differences from Gaussian
  score estimates on the same rows the re-implementation sees. Two small
  work-arounds for NumPy 2 and missing modules: ``dtype=np.floating`` in
  ``np.empty`` is read as float, and ``dcor`` and ``utils.util_analysis``
  (imported, unused here; the latter is absent from the repository) are
  stubbed.

* GIN: causal-learn's own test cases 1 and 2 (``tests/TestGIN.py``: two
  latents with two pure indicators, three latents with three) through
  causal-learn's ``GIN`` (KCI, its default, and HSIC) and through the GIN
  with tests indexed by variable (``--gin``; written to
  ``gin_validation.csv`` beside ``--out``).

Usage::

    python benchmarks/experiments/validate_peers.py \\
        --lincd-repo /path/to/linear-causal-disentanglement-via-interventions \\
        --lscale-repo /path/to/score-based-crl --seeds 20 \\
        --out benchmarks/results/peers/validation.csv
    python benchmarks/experiments/validate_peers.py --gin

The mirrors are git directories without a work tree; ``--export`` writes a
work tree of each to a temporary directory first.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin.benchmark.lincd import graph_from_B0, lincd_from_precisions
from creator_plugin.benchmark.lscale import fit_lscale_i
from creator_plugin.benchmark.scoring import correlation_scores

EDGE_THRESHOLD = 0.1


def _export(git_dir: str) -> str:
    out = tempfile.mkdtemp(prefix="peer_")
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "HEAD"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", out], input=archive, check=True)
    return out


# ---------------------------------------------------------------- LinCD
def _install_causaldag_stand_in(rng_holder):
    cd = types.ModuleType("causaldag")

    class DAG:
        def __init__(self, nodes=None, arcs=None):
            self.nodes = set(nodes or [])
            self.arcs = set(arcs or [])

        def add_arcs_from(self, arcs):
            self.arcs |= set(arcs)

        @property
        def nnodes(self):
            return len(self.nodes)

    class Weighted:
        def __init__(self, amat):
            self._amat = amat

        def to_amat(self):
            return self._amat

    def rand_weights(dag):
        n = dag.nnodes
        A = np.zeros((n, n))
        # the authors' generator seeds NumPy's global stream; the stand-in draws from it too
        for i, j in dag.arcs:
            A[i, j] = np.random.uniform(0.25, 1.0) * np.random.choice([-1, 1])  # noqa: NPY002
        return Weighted(A)

    cd.DAG = DAG
    cd.rand = types.SimpleNamespace(rand_weights=rand_weights)
    sys.modules["causaldag"] = cd
    return cd


def _lincd_truth_graph(B_obs):
    d = B_obs.shape[0]
    adj = np.zeros((d, d), dtype=int)
    for i in range(d):
        for j in range(d):
            if i != j and abs(B_obs[i, j]) > 1e-12:
                adj[j, i] = 1  # row i of B: parents j of node i
    return adj


def _latent_samples(enc_list, Theta_obs_true, n, seed):
    cov = np.linalg.pinv(Theta_obs_true)
    cov = (cov + cov.T) / 2
    x = np.random.default_rng(seed).multivariate_normal(np.zeros(cov.shape[0]), cov, size=n,
                                                         method="eigh")
    return [[x @ enc.T] for enc in enc_list]


def validate_lincd(repo: str, seeds: int, n_samples: int) -> list[dict]:
    cd = _install_causaldag_stand_in(None)
    sys.path.insert(0, repo)
    from src.rand import rand_model
    from src.rank_tester import SVDRankOneScorer
    from src.solver_partial_order import IterativeProjectionPartialOrderSolver

    d, p, density = 5, 10, 0.75
    rows = []
    for seed in range(seeds):
        rs = np.random.RandomState(10_000 + seed)
        arcs = {(i, j) for i in range(d) for j in range(i + 1, d) if rs.rand() < density}
        dag = cd.DAG(nodes=set(range(d)), arcs=arcs)
        ds = rand_model(dag, {i: 1 for i in range(d)}, nnodes_obs=p, seed=seed)
        true_adj = _lincd_truth_graph(ds.B_obs)
        for kind in ("exact", "sampled"):
            if kind == "exact":
                Th0, Ths = ds.Theta_obs, ds.Thetas
            else:
                np.random.seed(20_000 + seed)  # noqa: NPY002 (the authors' sampler uses it)
                obs = ds.sample_thetas(n_samples)
                Th0, Ths = obs.Theta_obs, obs.Thetas
            solver = IterativeProjectionPartialOrderSolver(
                rank_one_scorer=SVDRankOneScorer(), rank_gamma=0.99, num_latent=d)
            quiet = io.StringIO()
            with contextlib.redirect_stderr(quiet), contextlib.redirect_stdout(quiet):
                theirs = solver.solve(types.SimpleNamespace(Theta_obs=Th0, Thetas=list(Ths)))
            ours = lincd_from_precisions(Th0, list(Ths), d, rank_gamma=0.99)
            t_targets = [int(theirs["ix2target"][k]) for k in range(d)]
            g_theirs = graph_from_B0(theirs["B0_est"], EDGE_THRESHOLD)
            g_ours = graph_from_B0(ours["B0"], EDGE_THRESHOLD)
            lat = _latent_samples([ds.H, theirs["H_est"], ours["H"]], ds.Theta_obs, 5000, seed)
            s_t = correlation_scores(true_adj, lat[0], g_theirs, lat[1])
            s_o = correlation_scores(true_adj, lat[0], g_ours, lat[2])
            rows.append(dict(
                method="LinCD", seed=seed, input=kind,
                same_targets=t_targets == [int(t) for t in ours["targets"]],
                same_graph=bool(np.array_equal(g_theirs, g_ours)),
                max_abs_diff_H=float(np.max(np.abs(theirs["H_est"] - ours["H"]))),
                max_abs_diff_B0=float(np.max(np.abs(theirs["B0_est"] - ours["B0"]))),
                mcc_authors=s_t["mcc"], mcc_ours=s_o["mcc"],
                shd_authors=s_t["shd_corr"], shd_ours=s_o["shd_corr"],
            ))
    sys.path.remove(repo)
    return rows


# ---------------------------------------------------------------- LSCALE-I
def validate_lscale(repo: str, seeds: int, n_samples: int, hard: bool,
                    atol_edge: float) -> list[dict]:
    sys.modules.setdefault("dcor", types.ModuleType("dcor"))
    for name in [m for m in sys.modules if m == "utils" or m.startswith("utils.")]:
        del sys.modules[name]
    sys.path.insert(0, repo)
    sys.path.insert(0, str(Path(repo) / "LSCALE-I"))
    _empty = np.empty

    def empty(shape, dtype=float, *a, **k):  # NumPy 2 rejects dtype=np.floating
        return _empty(shape, float if dtype is np.floating else dtype, *a, **k)

    np.empty = empty
    try:
        sys.modules["utils.util_analysis"] = types.ModuleType("utils.util_analysis")
        import utils
        from l_scale_i import l_scale_i
        from scm.linear import LinearSCM

        n, d = 5, 10
        type_int = "hard int" if hard else "soft int"
        rows = []
        for seed in range(seeds):
            np_rng = np.random.default_rng(seed)
            envs = [[]] + [[i] for i in range(n)]
            while True:
                decoder, _ = utils.generate_mixing(n=n, d=d, np_rng=np_rng,
                                                   DECODER_MIN_COND_NUM=0.1,
                                                   normalize_decoder=True)
                scm = LinearSCM(n, 0.5, randomize_top_order=False, np_rng=np_rng)
                z = np.stack([scm.sample((n_samples,), nodes_int=e, type_int=type_int,
                                         var_change_mech="scale", var_change=5.0)
                              for e in envs])
                sz = np.stack([scm.score_fn(z[0], nodes_int=e, type_int=type_int,
                                            var_change_mech="scale", var_change=5.0)
                               for e in envs])
                dsz = sz[0] - sz[1:]
                cor = np.swapaxes(dsz[..., 0], -1, -2) @ dsz[..., 0] / n_samples
                diag = np.stack([np.diag(cor[i]) for i in range(n)], axis=1)
                g = scm.adj_mat.astype(bool)
                if g.sum() == 0 or diag[g].min() >= 0.02:
                    break
            x = decoder @ z  # (n + 1, N, d, 1)
            # l_scale_i centres the first rows of its input in place: give it a copy
            X_list = [x[k, :, :, 0].copy() for k in range(n + 1)]
            xc = utils.cov(x[0, : n + d, :, 0].copy())  # utils.cov centres its input in place
            basis = np.linalg.eigh(xc)[1][:, -n:]
            scores = np.stack([basis @ utils.gaussian_score_est(basis.T @ x[i])(basis.T @ x[0])
                               for i in range(n + 1)])
            dsx = scores[0] - scores[1:]
            soft, hard_res, _ = l_scale_i(x.copy(), dsx, hard_intervention=hard,
                                          hard_graph_postprocess=hard,
                                          soft_graph_postprocess=None,
                                          full_rank_scores=False, ATOL_EIGV=1e-2,
                                          ATOL_EDGE=atol_edge)
            g_t, enc_t = (hard_res[0], hard_res[1]) if hard else (soft[0], soft[1])
            adj_o, lat_o, _ = fit_lscale_i(X_list, n, hard=hard, atol_edge=atol_edge)
            true = scm.adj_mat.astype(int)
            Z = [z[k, :, :, 0] for k in range(n + 1)]
            lat_t = [xx @ enc_t.T for xx in X_list]
            s_t = correlation_scores(true, Z, g_t.astype(int), lat_t)
            s_o = correlation_scores(true, Z, adj_o, lat_o)
            rows.append(dict(
                method=f"LSCALE-I ({'hard' if hard else 'soft'})", seed=seed, input="sampled",
                same_targets=True,
                same_graph=bool(np.array_equal(g_t.astype(int), adj_o)),
                max_abs_diff_H=float("nan"), max_abs_diff_B0=float("nan"),
                mcc_authors=s_t["mcc"], mcc_ours=s_o["mcc"],
                shd_authors=s_t["shd_corr"], shd_ours=s_o["shd_corr"],
            ))
        return rows
    finally:
        np.empty = _empty
        sys.path.remove(repo)
        sys.path.remove(str(Path(repo) / "LSCALE-I"))


# ---------------------------------------------------------------- GIN
def _gin_case(case: int) -> tuple[np.ndarray, list[list[int]]]:
    """causal-learn's tests/TestGIN.py test_case1 / test_case2 and their true clusters."""
    n = 1000
    np.random.seed(0)  # noqa: NPY002 (causal-learn's own cases use the global stream)

    def u():
        return np.random.uniform(-1, 1, size=n) ** 5  # noqa: NPY002

    def c():
        return np.random.uniform(0.5, 2.0)  # noqa: NPY002

    L1 = u()
    L2 = c() * L1 + u()
    if case == 1:
        X = [c() * L1 + u() for _ in range(2)] + [c() * L2 + u() for _ in range(2)]
        truth = [[0, 1], [2, 3]]
    else:
        L3 = c() * L1 + c() * L2 + u()
        X = [c() * L1 + u() for _ in range(3)] + [c() * L2 + u() for _ in range(3)] \
            + [c() * L3 + u() for _ in range(3)]
        truth = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    data = np.array(X).T
    return (data - data.mean(axis=0)) / data.std(axis=0), truth


def validate_gin() -> list[dict]:
    from causallearn.search.HiddenCausal.GIN.GIN import GIN

    from creator_plugin.benchmark.gin import gin_structure
    from creator_plugin.benchmark.gin_corrected import gin_clusters_and_order

    rows = []
    for case in (1, 2):
        data, truth = _gin_case(case)
        for test in ("kci", "hsic"):
            start = time.perf_counter()
            graph, order = GIN(data, indep_test_method=test)
            clusters = gin_structure(graph, data.shape[1])[0]
            rows.append(dict(case=case, method="GIN (causal-learn 0.1.4.8)", test=test,
                             clusters=json.dumps(clusters),
                             ordered=json.dumps([sorted(map(int, c)) for c in order]),
                             truth=json.dumps(truth), same_clusters=sorted(clusters) == truth,
                             seconds=time.perf_counter() - start))
        start = time.perf_counter()
        ordered, unordered = gin_clusters_and_order(data)
        clusters = ordered + unordered
        rows.append(dict(case=case, method="GIN (tests by variable)", test="hsic",
                         clusters=json.dumps(clusters), ordered=json.dumps(ordered),
                         truth=json.dumps(truth), same_clusters=sorted(clusters) == truth,
                         seconds=time.perf_counter() - start))
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lincd-repo")
    ap.add_argument("--lscale-repo")
    ap.add_argument("--export", action="store_true",
                    help="the repos are git directories: export a work tree of each first")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--n-samples", type=int, default=2000)
    ap.add_argument("--atol-edge", type=float, default=0.001)
    ap.add_argument("--out", default="benchmarks/results/peers/validation.csv")
    ap.add_argument("--gin", action="store_true",
                    help="run causal-learn's GIN test cases (no repository needed)")
    args = ap.parse_args(argv)
    if args.gin:
        out = Path(args.out).with_name("gin_validation.csv")
        df = pd.DataFrame(validate_gin())
        df.to_csv(out, index=False)
        print(df.to_string(index=False))
        if not (args.lincd_repo or args.lscale_repo):
            return
    rows: list[dict] = []
    if args.lincd_repo:
        repo = _export(args.lincd_repo) if args.export else args.lincd_repo
        rows += validate_lincd(repo, args.seeds, args.n_samples)
    if args.lscale_repo:
        repo = _export(args.lscale_repo) if args.export else args.lscale_repo
        for hard in (True, False):
            rows += validate_lscale(repo, args.seeds, args.n_samples, hard, args.atol_edge)
    df = pd.DataFrame(rows)
    df["mcc_diff"] = (df.mcc_ours - df.mcc_authors).abs()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    summary = df.groupby(["method", "input"]).agg(
        seeds=("seed", "size"), same_graph=("same_graph", "mean"),
        same_targets=("same_targets", "mean"), max_mcc_diff=("mcc_diff", "max"),
        mcc_authors=("mcc_authors", "mean"), mcc_ours=("mcc_ours", "mean"),
        shd_authors=("shd_authors", "mean"), shd_ours=("shd_ours", "mean"),
        max_abs_diff_H=("max_abs_diff_H", "max"), max_abs_diff_B0=("max_abs_diff_B0", "max"))
    print(summary.to_string())
    summary.to_csv(Path(args.out).with_name(Path(args.out).stem + "_summary.csv"))


if __name__ == "__main__":
    main()
