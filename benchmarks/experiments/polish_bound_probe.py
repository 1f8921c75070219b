"""The polish at many latents: one evaluation's cost and the limited-memory form, on one fit.

Three steps (one BLAS thread, CPU time)::

    # the polish's input of a default fit (its ordering's directions and
    # reduced data), written to PREFIX_polish.npz; the fit stops there
    OMP_NUM_THREADS=1 python benchmarks/experiments/polish_bound_probe.py capture \\
        --d 40 --seed 500002 --prefix /tmp/d40s2
    # the polish of that input, dense BFGS or the limited-memory form forced
    # (``lbfgsM``: M correction pairs) or two stages, the first on N rows per
    # environment (``rowsN``); prints CPU s and the polish's record,
    # and the largest difference from a saved dense result
    OMP_NUM_THREADS=1 python benchmarks/experiments/polish_bound_probe.py polish \\
        /tmp/d40s2_polish.npz dense --save /tmp/dense.npy
    OMP_NUM_THREADS=1 python benchmarks/experiments/polish_bound_probe.py polish \\
        /tmp/d40s2_polish.npz lbfgs100 --against /tmp/dense.npy
    # one evaluation of the polish's contrast at d = 40 (40 environments of
    # 5,000 Laplace rows), allocating or in kept arrays, best of three
    OMP_NUM_THREADS=1 python benchmarks/experiments/polish_bound_probe.py evaluation

It reads the package's internal functions (the polish, the contrast, the
BFGS bound), as ``benchmarks/optimiser_policy.py`` does.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def capture(d: int, seed: int, prefix: str) -> None:
    import creator_plugin.ordering as ordering
    from creator_plugin import CREATOR
    from creator_plugin.simulation import simulate

    sim = simulate(d, d, 5000, edge_prob=3.0 / d, random_state=seed)

    def polish(X_red, alphas, **kwargs):
        np.savez(f"{prefix}_polish.npz", alphas=alphas,
                 **{f"X{k}": x for k, x in enumerate(X_red)})
        print("captured after", round(time.process_time(), 1), "CPU s", flush=True)
        raise SystemExit(0)

    ordering.polish_directions = polish
    CREATOR(d, random_state=seed).fit(sim.X)


def polish(path: str, mode: str, save: str | None, against: str | None) -> None:
    import creator_plugin._bfgs as bfgs
    from creator_plugin import joint_ica

    f = np.load(path)
    X = [f[k] for k in sorted((k for k in f.files if k.startswith("X")), key=lambda s: int(s[1:]))]
    if mode.startswith("lbfgs"):
        bfgs.LIMITED_MEMORY_CORRECTIONS = int(mode[5:])
        original = bfgs.minimize_bfgs

        def forced(*args, **kwargs):
            kwargs["max_dense_bytes"] = 0
            return original(*args, **kwargs)

        joint_ica.minimize_bfgs = forced
    elif mode != "dense" and not mode.startswith("rows"):
        raise SystemExit("mode: dense, lbfgsM or rowsN")
    # rowsN: the two-stage polish, its first stage on N rows per environment
    max_rows = int(mode[4:]) if mode.startswith("rows") else joint_ica.POLISH_MAX_ROWS
    c = time.process_time()
    out, info = joint_ica.polish_directions(X, f["alphas"], max_rows=max_rows)
    print(mode, f"CPU s {time.process_time() - c:.1f}",
          {k: v for k, v in info.items() if k != "subsample"},
          {k: v for k, v in info.get("subsample", {}).items() if k != "rows"})
    if save:
        np.save(save, out)
    if against:
        print("largest difference from", against, float(np.abs(np.load(against) - out).max()))


def evaluation() -> None:
    from creator_plugin import joint_ica

    rng = np.random.default_rng(0)
    d, K, n = 40, 40, 5000
    X = [rng.laplace(size=(n, d)) for _ in range(K)]
    scatters = [x.T @ x for x in X]
    g = np.eye(d).ravel() + 0.01 * rng.normal(size=d * d)

    def best(f, repeats=3):
        times = []
        for _ in range(repeats):
            c = time.process_time()
            f()
            times.append(time.process_time() - c)
        return min(times)

    work = {}
    a = joint_ica._ordered_contrast(g, X, d, scatters)
    b = joint_ica._ordered_contrast(g, X, d, scatters, None, work)
    print("same numbers:", a[0] == b[0] and bool(np.array_equal(a[1], b[1])))
    plain = best(lambda: joint_ica._ordered_contrast(g, X, d, scatters))
    kept = best(lambda: joint_ica._ordered_contrast(g, X, d, scatters, None, work))
    print(f"allocating CPU s {plain:.3f}, kept arrays CPU s {kept:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--d", type=int, default=40)
    c.add_argument("--seed", type=int, default=500002)
    c.add_argument("--prefix", required=True)
    p = sub.add_parser("polish")
    p.add_argument("path")
    p.add_argument("mode", help="dense, lbfgsM (M correction pairs) or rowsN (two stages)")
    p.add_argument("--save")
    p.add_argument("--against")
    sub.add_parser("evaluation")
    args = parser.parse_args()
    if args.command == "capture":
        capture(args.d, args.seed, args.prefix)
    elif args.command == "polish":
        polish(args.path, args.mode, args.save, args.against)
    else:
        evaluation()


if __name__ == "__main__":
    main()
