"""The field's generators and UMNI-CRL checked against the authors' code.

Needs local exports of the authors' repositories (nothing of theirs is part
of this project; the harness imports their modules from the given folders):

* ``--lincd-repo``: csquires/linear-causal-disentanglement-via-interventions
  (``src.rand.rand_model`` on ``causaldag.rand.directed_erdos`` with the
  experiment script's density 0.75, 5 latents, 10 measurements);
* ``--scorecrl-repo``: acarturk-e/score-based-crl (``scm.linear.LinearSCM``,
  ``utils.generate_mixing``, ``UMNI-CRL/umni_crl.py``; the settings of
  ``LSCALE-I/l_scale_i_test.py`` and ``UMNI-CRL/umni_crl_test.py``);
* ``--mncrl-repo``: simonbing/Multi-Node-CRL (``get_scm("rand_d_6")``,
  ``get_rand_A``; d = 6, the smallest of its random SCMs above 3).

Part 1 (``--generators``) draws ``--draws`` models from the authors' code and
from :mod:`creator_plugin.benchmark.field_generators` and compares the laws:
edges per graph, edge-weight moduli and signs, observational noise
variances, intervention targets and strengths, the covariance spectra of x
(largest and smallest of the top d log eigenvalues, averaged over a draw's
environments) and the excess kurtosis of x (averaged over a draw's
columns); each with both means and a two-sample Kolmogorov-Smirnov p-value
(a small p-value would mean the laws differ).

Part 2 (``--umni``) runs the authors' ``umni_crl`` and
:func:`creator_plugin.benchmark.umni_crl.fit_umni_crl` on the same data of
the authors' generator (d = 5, p = 10, 2000 rows per environment, kappa 2,
ATOL_EIGV and ATOL_CI_TEST 0.05, their test script's values; soft and hard
interventions). Both get score differences from Gaussian score estimates on
the same rows. Compared: failures, the graph, MCC and SHD under the
shared scoring (:func:`creator_plugin.benchmark.scoring.correlation_scores`).

Part 3 (``--umni-field``) runs the same pair on the package's ``lincd``,
``lscale_i`` and ``umni_crl`` families (both noises; the data of the peers
table, ``random_state = 50_000 + seed``), to tell where a failure of the
reconstruction is the method's own.

The UMNI-CRL parts append a row per fit and skip the rows already in their
file, so an interrupted run resumes.

Work-arounds for their imports on NumPy 2 without their whole environment:
``np.empty(dtype=np.floating)`` is read as float; ``np.int`` is ``int`` and
``np.in1d`` is ``np.isin``;
``torch``, ``dcor``, ``score_estimators.ssm`` and ``utils.util_analysis``
(unused here) are empty stand-ins.

Usage (a virtual environment with ``causaldag`` and
``conditional-independence``, the project on ``PYTHONPATH``)::

    PYTHONPATH=. python benchmarks/field_generators_validation.py --generators --umni \\
        --lincd-repo /tmp/lincd --scorecrl-repo /tmp/score-based-crl \\
        --mncrl-repo /tmp/Multi-Node-CRL --draws 200 --seeds 20 \\
        --out benchmarks/results/peers/field_validation
    PYTHONPATH=. python benchmarks/field_generators_validation.py --umni-field \\
        --scorecrl-repo /tmp/score-based-crl --seeds 20
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, kurtosis

from creator_plugin import simulate_family
from creator_plugin.benchmark.field_generators import (
    simulate_lincd,
    simulate_lscale_i,
    simulate_multi_node_crl,
    simulate_umni_crl,
)
from creator_plugin.benchmark.scoring import correlation_scores
from creator_plugin.benchmark.umni_crl import fit_umni_crl

D, P, N = 5, 10, 2000


def _stubs():
    for name in ("torch", "dcor", "score_estimators", "score_estimators.ssm",
                 "utils.util_analysis"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["score_estimators.ssm"].score_fn_from_data = None
    _empty = np.empty

    def empty(shape, dtype=float, *a, **k):
        return _empty(shape, float if dtype is np.floating else dtype, *a, **k)

    np.empty = empty
    vars(np)["int"] = int  # removed in NumPy 1.24; Multi-Node-CRL's SCM uses it
    vars(np).setdefault("in1d", np.isin)  # removed in NumPy 2.4; likewise


def _spectrum_and_kurtosis(X_list, d):
    logs, kurt = [], []
    for x in X_list:
        ev = np.sort(np.linalg.eigvalsh(np.cov(x.T)))[::-1][:d]
        logs.append(np.log(np.maximum(ev, 1e-300)))
        sd = x.std(axis=0)
        kurt += list(kurtosis(x[:, sd > 1e-12], axis=0))
    return np.array(logs), kurt


def _record(A, weights, var_obs, targets, ratios, X_list, d):
    logs, kurt = _spectrum_and_kurtosis(X_list, d)
    return dict(edges=int(A.sum()), weights=list(weights), var_obs=list(var_obs),
                target_sizes=[len(t) for t in targets[1:]], targets=targets,
                ratios=list(ratios),
                # one value per draw (the environments of a draw share its model)
                log_top=[float(logs[:, 0].mean())], log_bottom=[float(logs[:, -1].mean())],
                kurt=[float(np.mean(kurt))])


def _ours(sim):
    A = sim.adjacency.astype(bool)
    var0 = np.diag(sim.Omega[0]) ** 2
    ratios = []
    for k, t in enumerate(sim.params["targets"]):
        ref = 0 if sim.params["targets"][0] == [] else None
        if ref is None:
            continue
        ratios += [float((sim.Omega[k][i, i] ** 2) / var0[i]) for i in t]
    return _record(A, sim.W[0][A], var0, sim.params["targets"], ratios, sim.X, A.shape[0])


# ------------------------------------------------------------------- authors' draws
def _lincd_authors(repo, seed):
    import causaldag as cd

    if repo not in sys.path:
        sys.path.insert(0, repo)
    from src.rand import rand_model

    np.random.seed(seed)  # noqa: NPY002 (their generator draws from the global stream)
    dag = cd.rand.directed_erdos(D, density=0.75, random_order=False)
    ds = rand_model(dag, {i: 1 for i in range(D)}, nnodes_obs=P, seed=seed)
    B0 = ds.B_obs
    A = np.zeros((D, D), dtype=bool)
    weights = []
    for i in range(D):
        for j in range(D):
            if i != j and B0[i, j] != 0:
                A[j, i] = True
                weights.append(-B0[i, j] / B0[i, i])
    rng = np.random.default_rng(seed)
    X = []
    for B in [B0, *ds.Bs]:
        Ck = B @ ds.P @ ds.H
        cov = np.linalg.pinv(Ck.T @ Ck)
        X.append(rng.multivariate_normal(np.zeros(P), (cov + cov.T) / 2, size=N,
                                         method="eigh"))
    targets = [[]] + [[int(ds.ix2target[k])] for k in range(D)]
    var0 = 1 / np.diag(B0) ** 2
    ratios = [float((1 / ds.Bs[k][t, t] ** 2) / var0[t]) for k, t in ds.ix2target.items()]
    return _record(A, weights, var0, targets, ratios, X, D)


def _scorecrl_import(repo):
    _stubs()
    for name in [m for m in sys.modules if m == "utils" or m.startswith("utils.")]:
        if name != "utils.util_analysis":
            del sys.modules[name]
    for path in (repo, str(Path(repo) / "UMNI-CRL")):
        if path not in sys.path:
            sys.path.insert(0, path)
    import utils
    from scm.linear import LinearSCM

    return utils, LinearSCM


def _scorecrl_model(repo, seed, kind):
    """Their generator as their test scripts set it up; ``kind``: lscale_i or umni_crl."""
    utils, LinearSCM = _scorecrl_import(repo)
    rng = np.random.default_rng(seed)
    decoder, _ = utils.generate_mixing(n=D, d=P, np_rng=rng, DECODER_MIN_COND_NUM=0.1)
    scm = LinearSCM(D, 0.5, randomize_top_order=False, np_rng=rng)
    if kind == "lscale_i":
        envs, var_change = [[]] + [[i] for i in range(D)], 5.0
        Dm = None
    else:
        perm = rng.permutation(D)  # the test script permutes D's columns after drawing it
        Dm = np.eye(D, dtype=bool) | np.triu(rng.random((D, D)) <= 0.5)
        while np.linalg.det(Dm) == 0:
            Dm = np.eye(D, dtype=bool) | np.triu(rng.random((D, D)) <= 0.5)
        Dm = Dm[:, perm]
        envs, var_change = [[]] + [[i for i in range(D) if Dm[i, j]] for j in range(D)], 0.25
    return utils, scm, decoder, envs, var_change, Dm, rng


def _scorecrl_authors(repo, seed, kind, hard):
    utils, scm, decoder, envs, var_change, _, _ = _scorecrl_model(repo, seed, kind)
    type_int = "hard int" if hard else "soft int"
    z = np.stack([scm.sample((N,), nodes_int=e, type_int=type_int, var_change_mech="scale",
                             var_change=var_change) for e in envs])
    x = decoder @ z
    A = scm.adj_mat.astype(bool)
    ratios = [var_change] * sum(len(e) for e in envs)
    return _record(A, scm._weight_mat.T[A], scm.variances, envs, ratios,
                   [x[k, :, :, 0] for k in range(len(envs))], D)


def _mncrl_authors(repo, seed):
    import logging

    logging.disable(logging.WARNING)  # its sampler warns at every interventional draw
    _stubs()
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from multi_node_crl.data import get_scm
    from multi_node_crl.utils import get_rand_A, rand_weight_matrix

    d = 6
    scm, ivs, _ = get_scm(scm_id="rand_d_6", seed=seed)
    Z = [scm.intervent_sample(iv=iv, n=N) for iv in ivs]
    L = get_rand_A(d, seed=seed)
    W = rand_weight_matrix(seed=seed, nodes=d, connect_prob=0.75)
    A = W != 0
    targets = [sorted(int(t) for t in iv.targets) for iv in ivs]
    return _record(A, W[A], [0.01] * d, [[0]] + targets, [], [z @ L for z in Z], d) | {
        "targets": targets, "target_sizes": [len(t) for t in targets]}


def _ours_mncrl(seed):
    sim = simulate_multi_node_crl(6, random_state=seed)
    r = _ours(sim)
    W0 = sum(sim.W)  # each node's incoming weights are kept in the one environment it is free
    r["weights"] = list(W0[sim.adjacency.astype(bool)])
    r["var_obs"] = [0.01] * 6  # noise SD 0.1 at the free node
    r["target_sizes"] = [len(t) for t in sim.params["targets"]]
    return r


def generators(args) -> pd.DataFrame:
    specs = {
        "lincd": (lambda s: _lincd_authors(args.lincd_repo, s),
                  lambda s: _ours(simulate_lincd(D, n_samples=N, n_features=P, random_state=s))),
        "lscale_i": (lambda s: _scorecrl_authors(args.scorecrl_repo, s, "lscale_i", True),
                     lambda s: _ours(simulate_lscale_i(D, n_samples=N, n_features=P,
                                                       random_state=s))),
        "umni_crl": (lambda s: _scorecrl_authors(args.scorecrl_repo, s, "umni_crl", False),
                     lambda s: _ours(simulate_umni_crl(D, n_samples=N, n_features=P,
                                                       random_state=s))),
        "multi_node_crl": (lambda s: _mncrl_authors(args.mncrl_repo, s), _ours_mncrl),
    }
    rows = []
    for fam, (theirs, ours) in specs.items():
        if fam == "lincd" and not args.lincd_repo or fam in ("lscale_i", "umni_crl") and not \
                args.scorecrl_repo or fam == "multi_node_crl" and not args.mncrl_repo:
            continue
        # different seeds for the two sides: independent draws of the two laws
        t = [theirs(s) for s in range(args.draws)]
        o = [ours(100_000 + s) for s in range(args.draws)]
        for stat in ("edges", "weights", "abs_weights", "positive", "var_obs", "target_sizes",
                     "ratios", "log_top", "log_bottom", "kurt"):
            def values(recs, stat=stat):
                if stat == "edges":
                    return [r["edges"] for r in recs]
                if stat == "abs_weights":
                    return list(np.abs(np.concatenate([r["weights"] for r in recs])))
                if stat == "positive":
                    return list(np.concatenate([r["weights"] for r in recs]) > 0)
                return list(np.concatenate([np.ravel(r[stat]) for r in recs])) if any(
                    len(r[stat]) for r in recs) else []
            a, b = np.asarray(values(t), float), np.asarray(values(o), float)
            if stat == "weights" or not len(a) or not len(b):
                continue
            p = ks_2samp(a, b).pvalue if np.ptp(np.r_[a, b]) > 0 else 1.0
            rows.append(dict(family=fam, statistic=stat, authors_mean=a.mean(),
                             ours_mean=b.mean(), authors_sd=a.std(), ours_sd=b.std(),
                             ks_pvalue=p, draws=args.draws))
        print(pd.DataFrame([r for r in rows if r["family"] == fam]).to_string(index=False),
              flush=True)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------- UMNI-CRL
UMNI_COLUMNS = ["intervention", "seed", "authors_ok", "mcc_authors", "shd_authors", "ours_ok",
                "mcc_ours", "shd_ours", "same_outcome", "same_graph", "authors_error",
                "ours_error", "seconds_authors", "seconds_ours"]


def _umni_pair(X_list, truth, Z, hard) -> dict:
    """The authors' ``umni_crl`` and ``fit_umni_crl`` on the same environments, scored."""
    from umni_crl import umni_crl

    # Gaussian score estimates on the same rows, in the column space of the
    # pooled data (what fit_umni_crl computes)
    pooled = sum(np.cov(xx.T) for xx in X_list)
    basis = np.linalg.eigh(pooled)[1][:, ::-1][:, :D]
    red = [xx @ basis for xx in X_list]
    prec = [np.linalg.inv(np.cov(r.T, bias=True)) for r in red]
    x0 = red[0]
    dsx = np.stack([(x0 @ (pk - prec[0]).T) @ basis.T for pk in prec[1:]])[..., None]
    x = np.stack([xx[..., None] for xx in X_list])
    row = {}
    start = time.perf_counter()
    try:
        res = umni_crl(x.copy(), dsx, hard_intervention=hard, hard_graph_postprocess=hard,
                       atol_eigv=0.05, atol_ci_test=0.05, kappa=2)
        g_t = (res[5][1] if hard else res[4]).astype(int)
        enc_t = res[5][0] if hard else res[3]
        s_t = correlation_scores(truth, Z, g_t, [xx @ enc_t.T for xx in X_list])
        row.update(authors_ok=True, mcc_authors=s_t["mcc"], shd_authors=s_t["shd_corr"])
    except Exception as exc:
        g_t = None
        row.update(authors_ok=False, authors_error=f"{type(exc).__name__}: {exc}"[:120])
    row["seconds_authors"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        adj, lat, _, _ = fit_umni_crl(X_list, D, hard=hard)
        s_o = correlation_scores(truth, Z, adj, lat)
        row.update(ours_ok=True, mcc_ours=s_o["mcc"], shd_ours=s_o["shd_corr"])
    except Exception as exc:
        adj = None
        row.update(ours_ok=False, ours_error=f"{type(exc).__name__}: {exc}"[:120])
    row["seconds_ours"] = time.perf_counter() - start
    row["same_outcome"] = row["authors_ok"] == row["ours_ok"]
    row["same_graph"] = (g_t is not None and adj is not None
                         and bool(np.array_equal(g_t, adj)))
    return row


def _append(out: Path, row: dict, columns: list[str]) -> None:
    pd.DataFrame([row]).reindex(columns=columns).to_csv(
        out, mode="a", header=not out.exists(), index=False, float_format="%.6g")
    print(row, flush=True)


def umni(args, out: Path) -> None:
    """Rows appended to ``out`` as each seed finishes; rows already there are kept."""
    done = set()
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(old.intervention, old.seed))
    for hard in [kind == "hard" for kind in args.interventions]:
        for seed in range(args.seeds):
            if ("hard" if hard else "soft", seed) in done:
                continue
            utils, scm, decoder, envs, var_change, Dm, rng = _scorecrl_model(
                args.scorecrl_repo, 200_000 + seed, "umni_crl")
            type_int = "hard int" if hard else "soft int"
            z = np.stack([scm.sample((N,), nodes_int=e, type_int=type_int,
                                     var_change_mech="scale", var_change=var_change)
                          for e in envs])
            x = decoder @ z
            X_list = [x[k, :, :, 0].copy() for k in range(D + 1)]
            Z = [z[k, :, :, 0] for k in range(D + 1)]
            row = dict(intervention="hard" if hard else "soft", seed=seed,
                       **_umni_pair(X_list, scm.adj_mat.astype(int), Z, hard))
            _append(out, row, UMNI_COLUMNS)


def umni_field(args, out: Path) -> None:
    """The two UMNI-CRLs on the package's field families (the peers table's data, seeds
    0..``--seeds``-1): does the authors' code fail where the reconstruction does?"""
    _scorecrl_import(args.scorecrl_repo)
    done = set()
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(old.generator, old.intervention, old.seed))
    for fam in ("lincd", "lscale_i", "umni_crl"):
        for noise in ("gaussian", "laplace"):
            for seed in range(args.seeds):
                todo = [h for h in args.interventions
                        if (f"{fam}-{noise}", h, seed) not in done]
                if not todo:
                    continue
                sim = simulate_family(fam, D, None, N, n_features=P, noise=noise,
                                      random_state=50_000 + seed)
                for kind in todo:
                    row = dict(generator=f"{fam}-{noise}", intervention=kind, seed=seed,
                               **_umni_pair(sim.X, sim.adjacency, sim.Y, kind == "hard"))
                    _append(out, row, ["generator", *UMNI_COLUMNS])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lincd-repo")
    ap.add_argument("--scorecrl-repo")
    ap.add_argument("--mncrl-repo")
    ap.add_argument("--generators", action="store_true")
    ap.add_argument("--umni", action="store_true")
    ap.add_argument("--umni-field", action="store_true")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--interventions", nargs="+", choices=["soft", "hard"],
                    default=["soft", "hard"], help="UMNI-CRL part: which kinds to run")
    ap.add_argument("--out", default="benchmarks/results/peers/field_validation")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.generators:
        generators(args).to_csv(f"{out}_generators.csv", index=False, float_format="%.4g")
    if args.umni:
        umni(args, Path(f"{out}_umni.csv"))
    if args.umni_field:
        umni_field(args, Path(f"{out}_umni_field.csv"))


if __name__ == "__main__":
    main()
