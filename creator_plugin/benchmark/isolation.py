"""Run one fit in a separate process that is killed when it exceeds a time limit.

A thread cannot be stopped from outside, and a joblib or Dask worker should
not be, so a fit with a time limit runs in a fresh Python process
(:mod:`subprocess`, which works inside daemonic joblib and Dask workers too):
the function and its arguments are sent with cloudpickle through a temporary
file, and on timeout the whole process group is killed. The limit counts the
child's start-up (Python and the imports, about a second) as well as the fit;
the ``seconds`` returned are the fit's alone, measured in the child.

Run as ``python -m creator_plugin.benchmark.isolation IN OUT``, this module
is the child.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

__all__ = ["FitTimeout", "call_with_time_limit"]


class FitTimeout(Exception):
    """A fit did not finish within its time limit and was killed."""


def call_with_time_limit(
    fn: Callable, args: tuple, kwargs: dict, time_limit: float
) -> tuple[object, float]:
    """``fn(*args, **kwargs)`` in a child process, killed after ``time_limit`` seconds.

    Parameters
    ----------
    fn : callable
        Must be picklable by cloudpickle (functions defined in ``__main__``
        or in a test module are pickled by value or found through the
        parent's ``sys.path``, which the child inherits).
    args, kwargs
        Its arguments.
    time_limit : float
        Seconds of wall time, start-up included.

    Returns
    -------
    result : object
        What ``fn`` returned.
    seconds : float
        Wall time of the call alone, measured in the child.

    Raises
    ------
    FitTimeout
        If the child was still running after ``time_limit`` seconds (it is
        killed, with every process it started).
    Exception
        Whatever ``fn`` raised, re-raised in the parent (a ``RuntimeError``
        with the child's message if the exception cannot be pickled, or if
        the child died without a result).
    """
    try:  # a dependency of joblib >= 1.5; vendored inside older joblib
        import cloudpickle
    except ImportError:  # pragma: no cover
        from joblib.externals import cloudpickle

    with tempfile.TemporaryDirectory(prefix="creator-bench-") as tmp:
        inp, out = Path(tmp) / "in.pkl", Path(tmp) / "out.pkl"
        inp.write_bytes(cloudpickle.dumps((fn, args, kwargs)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        posix = os.name == "posix"
        proc = subprocess.Popen(
            [sys.executable, "-m", "creator_plugin.benchmark.isolation", str(inp), str(out)],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=posix,
        )
        try:
            _, err = proc.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            if posix:
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # pragma: no cover
                proc.kill()
            proc.communicate()
            raise FitTimeout(f"no result within the time limit of {time_limit:g} s; "
                             "the fit was killed") from None
        if not out.exists():
            tail = err.decode(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"the fit's process died (exit code {proc.returncode}): "
                               + " | ".join(tail))
        status, payload, seconds = pickle.loads(out.read_bytes())
    if status == "ok":
        return payload, seconds
    raise payload


def _child(inp: str, out: str) -> None:
    import pickle as _pickle

    fn, args, kwargs = _pickle.loads(Path(inp).read_bytes())
    start = time.perf_counter()
    try:
        result = fn(*args, **kwargs)
        record = ("ok", result, time.perf_counter() - start)
    except Exception as exc:  # sent back to the parent, which raises it
        try:
            _pickle.dumps(exc)
            payload = exc
        except Exception:
            payload = RuntimeError(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        record = ("error", payload, time.perf_counter() - start)
    tmp = Path(out).with_suffix(".partial")
    tmp.write_bytes(_pickle.dumps(record))
    tmp.replace(out)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
