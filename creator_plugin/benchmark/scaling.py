"""Time and memory of one CREATOR fit as the data grow."""

from __future__ import annotations

import resource
import time
import tracemalloc
import warnings

from .. import CREATOR, simulate

__all__ = ["scaling_rows"]


def scaling_rows(sizes: list[int], d: int = 5, K: int = 5, **creator_kwargs) -> list[dict]:
    """Fit once per sample size and record time and memory.

    Parameters
    ----------
    sizes : list of int
        Rows per environment.
    d, K : int
        Latents and environments (setting 1, ``random_state=0``).
    **creator_kwargs
        Passed to :class:`creator_plugin.CREATOR`.

    Returns
    -------
    list of dict
        Per size: ``n``, ``seconds`` (the fit alone), ``peak_traced_mb``
        (``tracemalloc``'s peak during the fit, numpy buffers included) and
        ``peak_rss_mb`` (the process's peak resident set so far, data and
        interpreter included).
    """
    rows = []
    for n in sizes:
        sim = simulate(d, K, n, random_state=0)
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            CREATOR(d, random_state=0, **creator_kwargs).fit(sim.X)
            seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append({"n": n, "seconds": seconds, "peak_traced_mb": peak / 2**20,
                     "peak_rss_mb": rss})
        del sim
    return rows
