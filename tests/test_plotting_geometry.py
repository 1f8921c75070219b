"""The graph layout's geometry: no edge crosses a box it does not join, edges stay apart.

Checked on the computed geometry itself (the drawing uses the same paths), so
no rendering is needed: the complete DAG at d = 3 and 6, and random DAGs
(edge probability 0.3, seeds 0-19) at d = 11 and 20, every name 24
characters long.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import cKDTree

from creator_plugin.graph_layout import ELLIPSIS, layered_layout

BOX_MARGIN = 2.0  # points a path keeps off every box it does not join
APART = 3.0  # points two paths keep between them ...
SHARE = 0.9  # ... along this share of the shorter one
SAMPLE_STEP = 1.0  # points between samples (at least 50 samples a path)
FAR = 20.0  # clearances are measured up to this many points


def _name(i: int, rng: np.random.Generator) -> str:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"))
    return f"node{i:02d}_" + "".join(rng.choice(letters, 24 - 7))


def _graphs():
    for d in (3, 6):
        yield f"complete d={d}", d, [(i, j) for i in range(d) for j in range(i + 1, d)]
    for d in (11, 20):
        for seed in range(20):
            rng = np.random.default_rng(seed)
            upper = np.triu(rng.random((d, d)) < 0.3, 1)
            perm = rng.permutation(d)  # node indices not in causal order
            A = upper[np.ix_(np.argsort(perm), np.argsort(perm))]
            yield f"random d={d} seed={seed}", d, [(int(i), int(j)) for i, j in np.argwhere(A)]


def _resample(path: np.ndarray) -> np.ndarray:
    seg = np.hypot(*np.diff(path, axis=0).T)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    m = max(50, int(np.ceil(s[-1] / SAMPLE_STEP)) + 1)
    u = np.linspace(0.0, s[-1], m)
    return np.column_stack([np.interp(u, s, path[:, 0]), np.interp(u, s, path[:, 1])])


def _point_polyline_distance(points: np.ndarray, path: np.ndarray) -> np.ndarray:
    a, b = path[:-1], path[1:]
    ab = b - a
    ll = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-12)
    ap = points[:, None, :] - a[None, :, :]
    t = np.clip(np.einsum("pij,ij->pi", ap, ab) / ll, 0.0, 1.0)
    closest = a[None] + t[..., None] * ab[None]
    return np.sqrt(((points[:, None, :] - closest) ** 2).sum(-1)).min(axis=1)


def _point_box_distance(point: np.ndarray, box: np.ndarray) -> float:
    x0, y0, x1, y1 = box
    return float(np.hypot(max(x0 - point[0], point[0] - x1, 0.0),
                          max(y0 - point[1], point[1] - y1, 0.0)))


def _polyline_box_distances(path: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Least distance from a polyline to each rectangle (0 where they touch or cross)."""
    a, b = path[:-1, None, :], path[1:, None, :]  # segments x 1 x 2
    lo, hi = boxes[None, :, :2], boxes[None, :, 2:]  # 1 x boxes x 2
    # Liang-Barsky: the part of each segment inside each box, per axis.
    d = b - a
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (a >= lo) & (a <= hi)  # decides an axis the segment does not move along
        t_lo = np.where(d != 0, (lo - a) / d, np.where(inside, -np.inf, np.inf))
        t_hi = np.where(d != 0, (hi - a) / d, np.inf)
    t0 = np.maximum(np.minimum(t_lo, t_hi).max(-1), 0.0)
    t1 = np.minimum(np.maximum(t_lo, t_hi).min(-1), 1.0)
    crossed = (t0 <= t1).any(0)
    # Otherwise the least distance is between a vertex and a box, or a corner and a segment.
    gap = np.maximum(np.maximum(lo - path[:, None, :], path[:, None, :] - hi), 0.0)
    vertex = np.hypot(gap[..., 0], gap[..., 1]).min(0)
    corners = np.concatenate([boxes[:, [0, 1]], boxes[:, [0, 3]], boxes[:, [2, 1]],
                              boxes[:, [2, 3]]])
    corner = _point_polyline_distance(corners, path).reshape(4, -1).min(0)
    return np.where(crossed, 0.0, np.minimum(vertex, corner))


def _measure(d, edges):
    """Least box clearance and least share of the shorter path kept APART, over all pairs."""
    rng = np.random.default_rng(d)
    names = [_name(i, rng) for i in range(d)]
    lay = layered_layout(names, edges)
    assert len(lay.paths) == len(edges)
    # Names: in full, or cut with an ellipsis, and then in the legend.
    legend = dict(lay.legend)
    for full, label in zip(names, lay.labels):
        shown = label.split("\n")[0]
        assert shown == full or (shown.endswith(ELLIPSIS) and legend[shown] == full)
    # Paths run from the tail's box to the head's box.
    for (i, j), p in zip(edges, lay.paths):
        assert p.shape[1] == 2 and len(p) >= 2
        assert _point_box_distance(p[0], lay.boxes[i]) < 1e-9
        assert _point_box_distance(p[-1], lay.boxes[j]) < 1e-9
    # No path meets a box it does not join, enlarged by BOX_MARGIN (boxes more
    # than FAR from a path's extent are farther than that from it).
    clearance = FAR
    for (i, j), p in zip(edges, lay.paths):
        lo, hi = p.min(0) - FAR, p.max(0) + FAR
        b = lay.boxes
        near = ((b[:, 0] <= hi[0]) & (b[:, 2] >= lo[0]) & (b[:, 1] <= hi[1]) & (b[:, 3] >= lo[1]))
        near[[i, j]] = False
        if near.any():
            clearance = min(clearance, float(_polyline_box_distances(p, b[near]).min()))
    # Two paths are more than APART away along SHARE of the shorter one. Every
    # point of a path lies within SAMPLE_STEP / 2 of one of its samples, so
    # sample pairs closer than APART + SAMPLE_STEP / 2 find every sample that
    # may be near another path; its distance to that polyline is then computed.
    samples = [_resample(p) for p in lay.paths]
    owner = np.concatenate([np.full(len(sm), e) for e, sm in enumerate(samples)])
    pairs = cKDTree(np.concatenate(samples)).query_pairs(APART + SAMPLE_STEP / 2,
                                                         output_type="ndarray")
    pairs = pairs[owner[pairs[:, 0]] != owner[pairs[:, 1]]]
    # (sample, other edge) for both directions of every pair
    cand = np.concatenate([np.column_stack([pairs[:, 0], owner[pairs[:, 1]]]),
                           np.column_stack([pairs[:, 1], owner[pairs[:, 0]]])])
    cand = np.unique(cand, axis=0)
    lengths = np.array([np.hypot(*np.diff(p, axis=0).T).sum() for p in lay.paths])
    # keep the samples of the shorter path of each pair
    mine = owner[cand[:, 0]]
    cand = cand[(lengths[mine] < lengths[cand[:, 1]])
                | ((lengths[mine] == lengths[cand[:, 1]]) & (mine < cand[:, 1]))]
    points = np.concatenate(samples)
    worst = 1.0
    keys = owner[cand[:, 0]] * len(edges) + cand[:, 1]
    for key in np.unique(keys):
        s, other = divmod(int(key), len(edges))
        idx = cand[keys == key, 0]
        near = _point_polyline_distance(points[idx], lay.paths[other]) <= APART
        worst = min(worst, 1.0 - near.sum() / len(samples[s]))
    return clearance, worst


GRAPHS = list(_graphs())


@pytest.mark.parametrize("d", [3, 6, 11, pytest.param(20, marks=pytest.mark.slow)])
def test_edges_clear_boxes_and_each_other(d):
    for label, dd, edges in GRAPHS:
        if dd == d:
            clearance, share = _measure(dd, edges)
            assert clearance > BOX_MARGIN, (label, clearance)
            assert share >= SHARE, (label, share)


def test_cut_names_end_with_an_ellipsis_and_stay_distinct():
    names = ["temperature_sensor_north_01", "temperature_sensor_north_02", "short",
             "x" * 40]
    lay = layered_layout(names, [(0, 1), (1, 2), (0, 3)], details=[
        ["a_very_long_measurement_name", "b"], ["c"], [], ["a_very_long_measurement_name"]])
    shown = [lab.split("\n")[0] for lab in lay.labels]
    assert shown[2] == "short"
    assert len(set(shown)) == 4
    legend = dict(lay.legend)
    for full, s in zip(names, shown):
        assert s == full or (s.endswith(ELLIPSIS) and legend[s] == full)
    assert shown[3].endswith(ELLIPSIS)
    detail = lay.labels[0].split("\n")[1].split(", ")
    assert detail[0].endswith(ELLIPSIS) and legend[detail[0]] == "a_very_long_measurement_name"
    assert detail[1] == "b"


def test_cycles_and_both_directions_are_drawn():
    lay = layered_layout(["a", "b", "c"], [(0, 1), (1, 0), (1, 2), (2, 0)], order=[0, 1, 2])
    boxes = lay.boxes
    for (i, j), p in zip(lay.edges, lay.paths):
        assert _point_box_distance(p[0], boxes[i]) < 1e-9
        assert _point_box_distance(p[-1], boxes[j]) < 1e-9
    # The two arrows between a and b are apart.
    assert _point_polyline_distance(_resample(lay.paths[0]), lay.paths[1]).min() > APART


@pytest.mark.parametrize("bad, match", [
    (dict(names=[], edges=[]), "names is empty"),
    (dict(names=["a", "b"], edges=[(0, 0)]), "distinct nodes"),
    (dict(names=["a", "b"], edges=[(0, 2)]), "distinct nodes"),
    (dict(names=["a", "b"], edges=[(0, 1), (0, 1)]), "twice"),
    (dict(names=["a", "b"], edges=[(0, 1)], order=[0, 0]), "permutation"),
])
def test_bad_input_is_named(bad, match):
    with pytest.raises(ValueError, match=match):
        layered_layout(**bad)


def test_the_measures_see_a_crossing_and_a_near_miss():
    """The distances the checks above rely on, on paths whose answer is known."""
    box = np.array([[0.0, 0.0, 10.0, 10.0]])
    through = np.array([[-5.0, 5.0], [15.0, 5.0]])  # crosses, no vertex inside
    beside = np.array([[12.0, -5.0], [12.0, 15.0]])  # 2 points right of the box
    corner = np.array([[13.0, 14.0], [20.0, 14.0]])  # 5 from the corner (10, 10)
    assert _polyline_box_distances(through, box)[0] == 0.0
    assert _polyline_box_distances(beside, box)[0] == pytest.approx(2.0)
    assert _polyline_box_distances(corner, box)[0] == pytest.approx(5.0)
    line = np.array([[0.0, 0.0], [100.0, 0.0]])
    assert _point_polyline_distance(np.array([[50.0, 3.5], [120.0, 0.0]]), line) == \
        pytest.approx([3.5, 20.0])
    samples = _resample(line)
    assert len(samples) >= 50 and np.allclose(np.diff(samples[:, 0]).max(), 1.0, atol=0.02)
