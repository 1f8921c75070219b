"""Check that a restructuring of the fit changes no result, to the last bit.

Fits a fixed set of configurations on fixed simulated data and records every
number a fitted model shows (its fitted attributes and every number in
``diagnostics_``) as a SHA-256 digest of the array's bytes, and, for the
small cases, the arrays themselves. ``reference.npz`` next to this file
holds what the package computed at commit f741e1b; ``check`` computes the
same with the package on ``sys.path`` and compares, digest by digest.

Configurations are written in the current constructor's spelling
(:data:`CONFIGS`) and translated by :func:`old_keywords` when the package on
the path has the earlier constructor (19 parameters), so one file states
which configuration of the earlier estimator each row stands for:

=============================================  ==========================================
current spelling                               earlier spelling
=============================================  ==========================================
``ordering=OrderingOptions(n_reestimate=k)``   ``n_refine=k``
``ordering=...(reestimate_min_sources=m)``     ``refine_min_sources=m``
``ordering=...(polish=b)``                     ``polish=b``
``ordering=...(ica_max_iter=, ica_tol=,``      ``ica_options={"max_iter":, "tol":,``
``ica_fun=)``                                  ``"fun":}``
``ordering=...(scorer_options=o)``             ``scorer_options=o``
``ordering=...(weak_evidence_level=v)``        ``weak_evidence_level=v``
``refine=RefineOptions(revise_graph=v)``       ``revise_graph=v``
``refine=...(order_branches=v)``               ``order_branches=v``
``refine=...(search_graph=v)``                 ``search_graph=v``
``refine=...(measurement_noise=True)``         ``measurement_noise="auto"``
``refine=...(disentangle=True)``               ``disentangle="likelihood"``
``refine=...(disentangle=False)``              ``disentangle="evidence"``
``disentangle="evidence"`` (refine "auto")     ``disentangle="auto"``
``disentangle="subspace"``                     ``disentangle="subspace"``
``refine=None``                                ``revise_graph=False, order_branches=0,``
                                               ``search_graph=False, measurement_noise=None``
                                               and ``disentangle="evidence"``
=============================================  ==========================================

Diagnostics keys are compared under their names at f741e1b
(:data:`DIAGNOSTICS_RENAMES` maps a current name to that one; empty: none
was renamed).

Usage::

    # the reference, from a checkout of f741e1b
    git worktree add /tmp/wt-f741 f741e1b
    PYTHONPATH=/tmp/wt-f741 python tests/identity/refactor_identity.py reference
    # one part computed again, the others kept (a stated change of rounding)
    python tests/identity/refactor_identity.py rebaseline --parts d20
    # this checkout against it (exit status 1 on any difference)
    python tests/identity/refactor_identity.py check --parts small sim d10 d20

Parts: ``small`` (d = 3 and 4, n = 300, every configuration; about 15 s),
``sim`` (``simulate(d, K=d)`` at d = 5 and 7, n = 1000; a few seconds),
``d10`` (d = 10, n = 2000; about 30 s) and ``d20`` (d = 20, n = 5000; about
70 s: at f741e1b two of its three seeds fail in the reduction, and must
fail with the same message).

The reference held f741e1b's numbers until two stated optimiser changes
moved rounding: the rank-two BFGS update in place through BLAS from 256
variables on (the ``d20`` part re-baselined) and then SciPy's public calls
for the private ones (below 256 variables SciPy's ``minimize`` BFGS, where
the graph revision's refinements had run the own rank-two loop; SciPy's
public line search above; ``minimize``'s L-BFGS-B for the factor fit, the
same iterates): every part computed again at that commit. Neither moved an
adjacency, an order or an error of any configuration here; the ``sim``
part's d = 5 fits stayed the same to the bit.
``tests/test_refactor_identity.py`` checks
``small`` and ``sim`` in the test suite; ``d10`` and ``d20`` are this
script's lab check (one thread: ``OMP_NUM_THREADS=1``).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import lzma
import sys
import warnings
from pathlib import Path

import numpy as np

REFERENCE = Path(__file__).with_name("reference.npz")

#: name -> keywords in the current spelling ("paper": CREATOR.paper).
CONFIGS = {
    "default": {},
    "paper": "paper",
    "rank": {"pruning": "rank"},
    "rank_raw": {"pruning": "rank_raw"},
    "likelihood": {"refine": {"disentangle": True}},
    "evidence_only": {"refine": {"disentangle": False}},
    "subspace": {"disentangle": "subspace"},
    "hsic_rff": {"scorer": "hsic_rff"},
    "resamples2": {"quality_resamples": 2},
    "auto": {"n_latent": "auto"},
    "refine_none": {"refine": None},
    "revise_on": {"refine": {"revise_graph": True}},
    "search_on": {"refine": {"search_graph": True}},
    "branches2": {"refine": {"order_branches": 2}},
    "noise": {"refine": {"measurement_noise": True}},
    "ordering": {"ordering": {"n_reestimate": 1, "reestimate_min_sources": 2, "polish": False,
                              "ica_max_iter": 200, "weak_evidence_level": 0.05}},
    "no_quality": {"quality": False},
}

#: Configurations fitted on every data set of the ``small`` part (the others
#: on the data set named).
SMALL_ONLY = {"paper": ("square", 0), "noise": ("p>d", None)}

SMALL_DATA = {  # (d, K, p, n)
    "square": (3, 4, 3, 300),
    "K<d": (4, 3, 4, 300),
    "p>d": (3, 4, 7, 300),
}
LARGE_DATA = {  # part -> [(d, n)], K = d, p = d
    "sim": [(5, 1000), (7, 1000)],
    "d10": [(10, 2000)],
    "d20": [(20, 5000)],
}
#: Configurations of the simulate(d, K=d) parts.
LARGE_CONFIGS = ("default", "refine_none")
SEEDS = (0, 1, 2)
PARTS = ("small", "sim", "d10", "d20")

#: current diagnostics key -> its name at f741e1b.
DIAGNOSTICS_RENAMES: dict[str, str] = {}

#: Diagnostics added since the reference: paths containing one of these are
#: reported only when missing from the fits of a configuration that has them,
#: never as NEW (every earlier number must still be bit-identical).
ADDED_PATHS = ("|diagnostics/edge_confidence/", "|diagnostics/quality/checks/undecided_edges/")

#: Records added to ``diagnostics_`` since the reference was computed (new evidence beside
#: the fit; no earlier number may move): recorded names under these paths are not compared
#: ("NEW" is not a difference there, and nothing else may be new).
ADDED_SINCE = ("diagnostics/mechanism_changes",)

#: Fitted attributes recorded (``latents_`` per environment).
ATTRIBUTES = ("adjacency_matrix_", "components_", "mixing_", "mean_", "feature_sd_",
              "feature_latent_cov_", "weights_", "intercepts_", "noise_scales_",
              "causal_order_", "n_latent_")


def earlier_constructor() -> bool:
    """Whether the package on the path has the constructor of f741e1b."""
    from creator_plugin import CREATOR

    return "n_refine" in inspect.signature(CREATOR.__init__).parameters


def old_keywords(config: dict) -> dict:
    """The keywords of the f741e1b constructor for a configuration in the current spelling."""
    out = {k: v for k, v in config.items() if k not in ("ordering", "refine", "disentangle")}
    core = config.get("disentangle", "evidence")
    for name, value in (config.get("ordering") or {}).items():
        if name == "n_reestimate":
            out["n_refine"] = value
        elif name == "reestimate_min_sources":
            out["refine_min_sources"] = value
        elif name.startswith("ica_"):
            out.setdefault("ica_options", {})[name[4:]] = value
        else:  # polish, scorer_options, weak_evidence_level
            out[name] = value
    refine = config.get("refine", "auto")
    if refine is None:
        refine = {"revise_graph": False, "order_branches": 0, "search_graph": False,
                  "disentangle": False, "measurement_noise": False}
    elif refine == "auto":
        refine = {}
    likelihood = refine.get("disentangle", "auto")
    if core == "subspace":
        out["disentangle"] = "likelihood" if likelihood is True else "subspace"
    else:
        out["disentangle"] = {"auto": "auto", True: "likelihood", False: "evidence"}[likelihood]
    for name in ("revise_graph", "order_branches", "search_graph"):
        if name in refine:
            out[name] = refine[name]
    if refine.get("measurement_noise"):
        out["measurement_noise"] = "auto"
    return out


def estimator(config, d: int, seed: int):
    """The estimator of ``config`` for ``d`` latents, in the spelling of the package on the path."""
    from creator_plugin import CREATOR

    if config == "paper":
        return CREATOR.paper(d, random_state=seed)
    if earlier_constructor():
        return CREATOR(**{"n_latent": d, **old_keywords(config)}, random_state=seed)
    from creator_plugin import OrderingOptions, RefineOptions

    kw = dict(config)
    if isinstance(kw.get("ordering"), dict):
        kw["ordering"] = OrderingOptions(**kw["ordering"])
    if isinstance(kw.get("refine"), dict):
        kw["refine"] = RefineOptions(**kw["refine"])
    return CREATOR(**{"n_latent": d, **kw}, random_state=seed)


def digest(a) -> str:
    """SHA-256 of an array's dtype, shape and bytes (float64 for numbers)."""
    a = np.ascontiguousarray(np.asarray(a, dtype=float))
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def _numbers(obj, prefix: str, out: dict) -> None:
    """Every number in a nested diagnostics structure, keyed by its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            _numbers(v, f"{prefix}/{DIAGNOSTICS_RENAMES.get(k, k)}", out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _numbers(v, f"{prefix}/{i}", out)
    elif isinstance(obj, np.ndarray) and obj.dtype.kind in "fiub":
        out[prefix] = obj.astype(float)
    elif isinstance(obj, (bool, int, float, np.number, np.bool_)):
        out[prefix] = np.asarray(float(obj))


def _record(est, key: str, out: dict) -> None:
    for name in ATTRIBUTES:
        out[f"{key}|{name}"] = np.asarray(getattr(est, name), dtype=float)
    for k, z in enumerate(est.latents_):
        out[f"{key}|latents/{k}"] = np.asarray(z)
    _numbers(est.diagnostics_, f"{key}|diagnostics", out)


def _fit(est, X, key: str, out: dict, log) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X)
    except Exception as exc:  # a failure must fail the same way in both
        message = f"{type(exc).__name__}: {exc}"
        out[f"{key}|error"] = np.frombuffer(message.encode(), dtype=np.uint8)
        log(f"{key} error: {message[:100]}")
        return
    _record(est, key, out)
    log(key)


def _small(out: dict, log) -> None:
    from creator_plugin.simulation import simulate

    for data_name, (d, K, p, n) in SMALL_DATA.items():
        for seed in SEEDS:
            sim = simulate(d, K, n, n_features=p, random_state=seed)
            out[f"small|{data_name}|{seed}|data"] = np.concatenate(sim.X)
            inputs = {"numpy": sim.X}
            if data_name == "p>d" and seed == 0:
                import dask.array as da
                import pandas as pd

                inputs["pandas"] = [pd.DataFrame(x) for x in sim.X]
                inputs["dask"] = [da.from_array(x, chunks=(100, p)) for x in sim.X]
            for cfg_name, cfg in CONFIGS.items():
                only = SMALL_ONLY.get(cfg_name)
                if only and (data_name != only[0] or (only[1] is not None and seed != only[1])):
                    continue
                for in_name, X in inputs.items():
                    if in_name != "numpy" and cfg_name not in ("default", "paper"):
                        continue
                    key = f"small|{data_name}|{seed}|{cfg_name}|{in_name}"
                    _fit(estimator(cfg, d, seed), X, key, out, log)


def _large(part: str, out: dict, log) -> None:
    from creator_plugin.simulation import simulate

    for d, n in LARGE_DATA[part]:
        for seed in SEEDS:
            sim = simulate(d, d, n, random_state=seed)
            out[f"{part}|d{d}|{seed}|data"] = np.concatenate(sim.X)
            for cfg_name in LARGE_CONFIGS:
                key = f"{part}|d{d}|{seed}|{cfg_name}|numpy"
                _fit(estimator(CONFIGS[cfg_name], d, seed), sim.X, key, out, log)


def compute(parts=PARTS, log=print) -> dict[str, np.ndarray]:
    """Every recorded array of the parts named, keyed ``part|data|seed|config|input|name``."""
    out: dict[str, np.ndarray] = {}
    for part in parts:
        if part == "small":
            _small(out, log)
        else:
            _large(part, out, log)
    return out


def _stored(key: str, a: np.ndarray) -> bool:
    """Whether the reference keeps the values themselves: every scalar, and the arrays of
    the small cases but their latents, data and error messages."""
    return a.size == 1 or (key.startswith(("small|", "sim|")) and "|latents/" not in key
                           and not key.endswith(("|data", "|error")))


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=float).view(np.uint64).ravel()


def write_reference(path: Path = REFERENCE, parts=PARTS, log=print) -> None:
    """Compute the parts and save them to ``path``.

    Every array gets a 128-bit prefix of its :func:`digest` (arrays of more
    than one number) and the values themselves where :func:`_stored` says
    so; the index (key, shape, offset of the values, row of the digest) is
    LZMA-compressed JSON.
    """
    arrays = compute(parts, log)
    _write({k: _entry(k, a) for k, a in arrays.items()}, path)


def _entry(key: str, a) -> tuple:
    """``(shape, values or None, 16-byte digest or None)`` of one computed array."""
    a = np.asarray(a, dtype=float)
    return (a.shape, a.ravel() if _stored(key, a) else None,
            bytes.fromhex(digest(a))[:16] if a.size != 1 else None)


def rebaseline(parts, path: Path = REFERENCE, log=print) -> None:
    """Compute the parts named again and replace their entries of ``path``, keeping the others.

    For a stated change that moves rounding in some parts only (an
    optimiser's form used from some problem size on): the other parts still
    hold f741e1b's numbers.
    """
    prefixes = tuple(f"{p}|" for p in parts)
    kept = {k: v for k, v in load_reference(path).items() if not k.startswith(prefixes)}
    kept.update({k: _entry(k, a) for k, a in compute(parts, log).items()})
    _write(kept, path)


def _write(entries: dict, path: Path) -> None:
    index, values, digests, offset = [], [], [], 0
    for k in sorted(entries):
        shape, vals, dig = entries[k]
        entry = [k, list(shape), -1, -1]
        if vals is not None:
            entry[2] = offset
            values.append(np.asarray(vals, dtype=float).ravel())
            offset += int(np.prod(shape))
        if dig is not None:
            entry[3] = len(digests)
            digests.append(np.frombuffer(dig, dtype=np.uint8))
        index.append(entry)
    blob = lzma.compress(json.dumps(index, separators=(",", ":")).encode())
    np.savez_compressed(path, index=np.frombuffer(blob, dtype=np.uint8),
                        values=np.concatenate(values) if values else np.zeros(0),
                        digests=np.stack(digests) if digests else np.zeros((0, 16), np.uint8))


def load_reference(path: Path = REFERENCE) -> dict[str, tuple]:
    """``{key: (shape, values or None, 16-byte digest or None)}`` of a reference file."""
    with np.load(path) as f:
        index = json.loads(lzma.decompress(f["index"].tobytes()))
        values, digests = f["values"], f["digests"]
    out = {}
    for key, shape, off, row in index:
        size = int(np.prod(shape))
        out[key] = (tuple(shape),
                    values[off:off + size].reshape(shape) if off >= 0 else None,
                    digests[row].tobytes() if row >= 0 else None)
    return out


def differs(reference: tuple, a) -> str | None:
    """Why ``a`` is not bit-identical to a reference entry (None when it is)."""
    shape, values, dig = reference
    a = np.asarray(a, dtype=float)
    if a.shape != shape:
        return f"shape {shape} -> {a.shape}"
    same = dig is None or bytes.fromhex(digest(a))[:16] == dig
    if same and values is not None:
        same = np.array_equal(_bits(values), _bits(a))
    if same:
        return None
    if values is None:
        return "digest differs"
    with np.errstate(invalid="ignore"):
        return f"max |diff| {float(np.nanmax(np.abs(values - a))):.3g}"


def added_since(key: str) -> bool:
    """Whether a recorded name lies under one of :data:`ADDED_SINCE`'s paths."""
    name = key.rpartition("|")[2]
    return any(name == path or name.startswith(path + "/") for path in ADDED_SINCE)


def compare(parts=PARTS, path: Path = REFERENCE, log=print) -> list[str]:
    """Compute the parts with the package on the path; every difference from the reference."""
    reference = load_reference(path)
    prefixes = tuple(f"{p}|" for p in parts)
    expected = {k: v for k, v in reference.items() if k.startswith(prefixes)}
    got = compute(parts, log)
    problems = []
    for k in sorted(set(expected) | set(got)):
        if k not in got:
            problems.append(f"MISSING {k}")
        elif k not in expected:
            if not any(a in k for a in ADDED_PATHS) and not added_since(k):
                problems.append(f"NEW {k}")
        elif (why := differs(expected[k], got[k])) is not None:
            problems.append(f"DIFFERS {k} ({why})")
    log(f"{len(expected)} reference arrays of parts {list(parts)}: {len(problems)} differences")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("reference", "rebaseline", "check"))
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--file", type=Path, default=REFERENCE)
    args = parser.parse_args(argv)
    if args.command == "reference":
        write_reference(args.file, args.parts)
        return 0
    if args.command == "rebaseline":
        rebaseline(args.parts, args.file)
        return 0
    problems = compare(args.parts, args.file)
    for line in problems[:100]:
        print(line)
    print("bit-identical" if not problems else f"{len(problems)} arrays differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
