"""Layered drawing of a directed graph, computed in points (numpy only).

The layout is Sugiyama-style, as Graphviz's ``dot`` does it, without a
binary:

1. every edge is oriented along an order of the nodes (a topological order
   of an acyclic graph; edges against the order are drawn pointing up);
2. layers by longest path, then nodes with more children than parents move
   down towards their children (shorter edges);
3. an edge spanning several layers gets a dummy node in every layer it
   crosses, so it is routed around the nodes in between;
4. the order within each layer minimises crossings (barycentre sweeps and
   adjacent transpositions, the best order seen is kept);
5. horizontal positions minimise the squared horizontal run of every edge
   segment (long edges weighted most) under the minimum separations of a
   layer (one isotonic regression per layer), then the dummy nodes of a
   long edge move onto one vertical where their neighbours allow;
6. every edge leaves its tail from a port of its own and enters its head
   through a port of its own (ports ordered by where the edges go, so edges
   of one node never cross at it); between two layers an edge is a cubic
   curve with vertical ends, inside a layer a vertical line through its
   dummy node. A gap between layers is high enough that no curve runs more
   than MAX_SLOPE points sideways per point down, and that an edge crossing
   another is at least CROSSING_ROOM long.

Node boxes lie inside their layer's band and curves in the gaps between
bands; inside a band every line keeps the separation from every box it does
not join: no edge crosses a box it does not join, by construction.
Everything is in points (1/72 inch); the text widths come from the advance
widths of DejaVu Sans (matplotlib's bundled font), so the geometry is known
without rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ELLIPSIS", "GraphLayout", "layered_layout", "shorten", "text_width"]

ELLIPSIS = "…"

# Advance widths of DejaVu Sans, in 1/1000 em, of the characters 32..126 (space to ~).
_ADVANCE = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698,
    770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732,
    684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635,
    634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,
    525, 636, 337, 636, 838,
)
_ELLIPSIS_ADVANCE = 1000
_WIDE = 1200  # any other character (a glyph from a fallback font may be wider than an em)

FONT_FAMILY = "DejaVu Sans"
LINE_SPACING = 1.2  # matplotlib's default line spacing of a multi-line text
PAD_X, PAD_Y = 5.0, 4.0  # text to box edge, points
NODE_GAP = 22.0  # between the boxes of one layer
DUMMY_GAP = 12.0  # between two edges passing through a layer
MIXED_GAP = 14.0  # between an edge passing through a layer and a box
PORT_MIN, PORT_MAX, PORT_INSET = 10.0, 16.0, 7.0  # port spacing, and distance from a corner
MIN_GAP = 42.0  # least height between two layers' bands
MAX_SLOPE = 2.5  # steepest horizontal run per unit of height of a curve
CURVE_POINTS = 24  # points per curve between two layers
CROSSING_ROOM = 100.0  # least length of an edge crossing another, per crossing


def text_width(text: str, font_size: float) -> float:
    """Width in points of one line of ``text`` in DejaVu Sans, without kerning.

    Characters outside printable ASCII other than "…" count 1.2 em (a
    glyph drawn from a fallback font may be wider than an em).

    Parameters
    ----------
    text : str
        One line.
    font_size : float
        In points.

    Returns
    -------
    float
    """
    units = sum(_ADVANCE[o - 32] if 32 <= (o := ord(c)) <= 126
                else (_ELLIPSIS_ADVANCE if c == ELLIPSIS else _WIDE) for c in text)
    return units * font_size / 1000.0


def shorten(text: str, width: float, font_size: float) -> str:
    """``text`` if it fits in ``width`` points, else its longest prefix that fits with "…".

    At least one character is kept before the ellipsis.

    Parameters
    ----------
    text : str
    width : float
        In points.
    font_size : float
        In points.

    Returns
    -------
    str
    """
    if text_width(text, font_size) <= width:
        return text
    k = len(text) - 1
    while k > 1 and text_width(text[:k] + ELLIPSIS, font_size) > width:
        k -= 1
    return text[:k] + ELLIPSIS


def _shorten_unique(widths: dict[str, float], font_size: float) -> dict[str, str]:
    """Every text cut to its width; two texts never share a cut form (longer cuts then)."""
    shown = {t: shorten(t, w, font_size) for t, w in widths.items()}
    while True:
        by_shown: dict[str, list[str]] = {}
        for t, s in shown.items():
            by_shown.setdefault(s, []).append(t)
        clashes = [t for ts in by_shown.values() if len(ts) > 1 for t in ts]
        if not clashes:
            return shown
        for t in clashes:
            k = len(shown[t]) if shown[t] != t else len(t)  # characters kept, plus one
            shown[t] = t if k >= len(t) else t[:k] + ELLIPSIS


def _common_cap(widths: list[float], room: float, least: float) -> float:
    """The largest c with sum(min(w, c)) <= room (infinite if all fit), at least ``least``."""
    if sum(widths) <= room:
        return np.inf
    rest, n = room, len(widths)
    for i, w in enumerate(sorted(widths)):
        if w * (n - i) > rest:
            return max(rest / (n - i), least)
        rest -= w
    return np.inf


@dataclass(frozen=True)
class GraphLayout:
    """Geometry of a drawn graph, in points, y pointing up.

    Attributes
    ----------
    boxes : ndarray of shape (n_nodes, 4)
        ``x0, y0, x1, y1`` of every node's label box.
    labels : list of str
        The text inside every box (lines separated by ``"\\n"``), names cut
        with "…" where they would be wider than the width allowed.
    edges : list of (int, int)
        The edges, in the order given.
    paths : list of ndarray of shape (m, 2)
        The polyline of every edge, from the border of its tail's box to the
        border of its head's box, where the tip of its arrowhead is.
    legend : list of (str, str)
        ``(shown, full)`` for every name that was cut.
    width, height : float
        The extent of the drawing, from ``(0, 0)``.
    font_size : float
        Of the box texts, in points.
    """

    boxes: np.ndarray
    labels: list[str]
    edges: list[tuple[int, int]]
    paths: list[np.ndarray]
    legend: list[tuple[str, str]]
    width: float
    height: float
    font_size: float


def _orientation(n: int, edges: list[tuple[int, int]], order) -> np.ndarray:
    """Rank of every node: a topological order if acyclic, else ``order`` or a greedy one."""
    if order is not None:
        order = [int(v) for v in order]
        if sorted(order) != list(range(n)):
            raise ValueError(f"order must be a permutation of 0..{n - 1}; got {order}.")
    else:
        indeg = np.zeros(n, dtype=int)
        children: list[list[int]] = [[] for _ in range(n)]
        for u, v in edges:
            children[u].append(v)
            indeg[v] += 1
        ready = sorted(v for v in range(n) if indeg[v] == 0)
        topo = []
        while ready:
            u = ready.pop(0)
            topo.append(u)
            for v in children[u]:
                indeg[v] -= 1
                if indeg[v] == 0:
                    ready.append(v)
            ready.sort()
        order = topo if len(topo) == n else _greedy_order(n, edges)
    rank = np.empty(n, dtype=int)
    rank[np.asarray(order, dtype=int)] = np.arange(n)
    return rank


def _greedy_order(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Eades, Lin and Smyth's greedy order: few edges point backwards."""
    out = [set() for _ in range(n)]
    inn = [set() for _ in range(n)]
    for u, v in edges:
        out[u].add(v)
        inn[v].add(u)
    left, right, alive = [], [], set(range(n))
    while alive:
        changed = True
        while changed:
            changed = False
            for v in sorted(alive):
                if not (out[v] & alive):
                    right.append(v)
                    alive.discard(v)
                    changed = True
                elif not (inn[v] & alive):
                    left.append(v)
                    alive.discard(v)
                    changed = True
        if alive:
            v = max(sorted(alive), key=lambda u: len(out[u] & alive) - len(inn[u] & alive))
            left.append(v)
            alive.discard(v)
    return left + right[::-1]


def _layers(n: int, oriented: list[tuple[int, int]], rank: np.ndarray) -> np.ndarray:
    """Longest-path layers; then a node with more children than parents moves down to them."""
    parents: list[list[int]] = [[] for _ in range(n)]
    children: list[list[int]] = [[] for _ in range(n)]
    for u, v in oriented:
        parents[v].append(u)
        children[u].append(v)
    topo = list(np.argsort(rank, kind="stable"))
    layer = np.zeros(n, dtype=int)
    for v in topo:
        layer[v] = max((layer[u] + 1 for u in parents[v]), default=0)
    changed = True
    while changed:
        changed = False
        for v in reversed(topo):
            if children[v] and len(children[v]) > len(parents[v]):
                room = min(layer[c] for c in children[v]) - 1
                if room > layer[v]:
                    layer[v] = room
                    changed = True
    return layer


def _isotonic(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-decreasing fit to ``q`` (pool adjacent violators)."""
    vals, wts, cnts = [], [], []
    for qi, wi in zip(q.tolist(), w.tolist()):
        vals.append(qi)
        wts.append(wi)
        cnts.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            wsum = wts[-2] + wts[-1]
            vals[-2] = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / wsum
            wts[-2] = wsum
            cnts[-2] += cnts[-1]
            del vals[-1], wts[-1], cnts[-1]
    return np.repeat(vals, cnts)


class _Layered:
    """Items (nodes and dummy nodes) by layer, and the segments between adjacent layers."""

    def __init__(self, n, oriented, layer, widths):
        self.n = n
        self.item_layer = list(layer.tolist())
        self.width = list(widths)
        self.dummy = [False] * n
        self.chains = []  # per edge: its items from top to bottom
        for u, v in oriented:
            chain = [u]
            for k in range(layer[u] + 1, layer[v]):
                self.item_layer.append(k)
                self.width.append(0.0)
                self.dummy.append(True)
                chain.append(len(self.item_layer) - 1)
            chain.append(v)
            self.chains.append(chain)
        m = len(self.item_layer)
        self.n_layers = int(max(self.item_layer)) + 1 if m else 0
        self.up: list[list[int]] = [[] for _ in range(m)]  # neighbours in the layer above
        self.down: list[list[int]] = [[] for _ in range(m)]
        for chain in self.chains:
            for a, b in zip(chain[:-1], chain[1:]):
                self.down[a].append(b)
                self.up[b].append(a)
        self.order: list[list[int]] = [[] for _ in range(self.n_layers)]
        for it in range(m):
            self.order[self.item_layer[it]].append(it)
        self.pos = [0] * m

    def _set_pos(self):
        for items in self.order:
            for r, it in enumerate(items):
                self.pos[it] = r

    def crossings(self) -> int:
        total = 0
        for k in range(self.n_layers - 1):
            seg = np.array([(self.pos[a], self.pos[b])
                            for a in self.order[k] for b in self.down[a]])
            if len(seg) < 2:
                continue
            da = seg[:, 0][:, None] - seg[:, 0][None, :]
            db = seg[:, 1][:, None] - seg[:, 1][None, :]
            total += int(np.sum(da * db < 0)) // 2
        return total

    def _pair_crossings(self, x: int, y: int) -> int:
        """Crossings among the segments of x and y when x is left of y."""
        c = 0
        for side in (self.up, self.down):
            for a in side[x]:
                pa = self.pos[a]
                for b in side[y]:
                    c += pa > self.pos[b]
        return c

    def _transpose(self) -> None:
        for _ in range(8):
            improved = False
            for items in self.order:
                for i in range(len(items) - 1):
                    x, y = items[i], items[i + 1]
                    if self._pair_crossings(x, y) > self._pair_crossings(y, x):
                        items[i], items[i + 1] = y, x
                        self.pos[x], self.pos[y] = i + 1, i
                        improved = True
            if not improved:
                return

    def reduce_crossings(self, sweeps: int = 24) -> None:
        # Initial order: a layer after the one above by barycentre, nodes by index.
        self._set_pos()
        best = [list(items) for items in self.order]
        best_c = self.crossings()
        for s in range(sweeps):
            if best_c == 0:
                break
            down = s % 2 == 0
            ks = range(1, self.n_layers) if down else range(self.n_layers - 2, -1, -1)
            for k in ks:
                nb = self.up if down else self.down
                key = {}
                for it in self.order[k]:
                    ps = [self.pos[a] for a in nb[it]]
                    key[it] = sum(ps) / len(ps) if ps else self.pos[it]
                self.order[k].sort(key=lambda it: (key[it], self.pos[it]))
                for r, it in enumerate(self.order[k]):
                    self.pos[it] = r
            self._transpose()
            c = self.crossings()
            if c < best_c:
                best_c, best = c, [list(items) for items in self.order]
        self.order = best
        self._set_pos()

    def _sep(self, a: int, b: int) -> float:
        da, db = self.dummy[a], self.dummy[b]
        gap = DUMMY_GAP if da and db else (MIXED_GAP if da or db else NODE_GAP)
        return (self.width[a] + self.width[b]) / 2 + gap

    def assign_x(self, rounds: int = 80) -> np.ndarray:
        m = len(self.item_layer)
        x = np.zeros(m)
        offsets, rows, nbs, wts, sizes = [], [], [], [], []
        for items in self.order:
            c = np.zeros(len(items))
            for i in range(1, len(items)):
                c[i] = c[i - 1] + self._sep(items[i - 1], items[i])
            offsets.append(c)
            x[items] = c - c[-1] / 2 if len(items) else c
            # Weighted neighbours of every item: a segment between dummies weighs most.
            r, nb, w = [], [], []
            for i, it in enumerate(items):
                for b in self.up[it] + self.down[it]:
                    r.append(i)
                    nb.append(b)
                    both = self.dummy[it] + self.dummy[b]
                    w.append(8.0 if both == 2 else (2.0 if both == 1 else 1.0))
            rows.append(np.array(r, dtype=int))
            nbs.append(np.array(nb, dtype=int))
            wts.append(np.array(w))
            sizes.append(np.bincount(rows[-1], weights=wts[-1], minlength=len(items)))
        for r in range(rounds):
            ks = range(self.n_layers) if r % 2 == 0 else range(self.n_layers - 1, -1, -1)
            moved = 0.0
            for k in ks:
                items = self.order[k]
                wsum = sizes[k]
                pull = np.bincount(rows[k], weights=wts[k] * x[nbs[k]], minlength=len(items))
                free = wsum == 0  # no edges: stays where it is, lightly
                p = np.where(free, x[items], pull / np.where(free, 1.0, wsum))
                w = np.where(free, 1e-3, wsum)
                new = _isotonic(p - offsets[k], w) + offsets[k]
                moved = max(moved, float(np.max(np.abs(new - x[items]))))
                x[items] = new
            if moved < 0.05:
                break
        self._straighten(x)
        return x

    def _straighten(self, x: np.ndarray) -> None:
        """Move the dummy nodes of every long edge onto one vertical where their layers allow."""
        where = {}
        for items in self.order:
            for i, it in enumerate(items):
                where[it] = (items, i)
        chains = sorted((ch[1:-1] for ch in self.chains if len(ch) > 3), key=len, reverse=True)
        for _ in range(3):
            for dummies in chains:
                target = float(np.median(x[dummies]))
                for it in dummies:
                    items, i = where[it]
                    lo = x[items[i - 1]] + self._sep(items[i - 1], it) if i > 0 else -np.inf
                    hi = (x[items[i + 1]] - self._sep(it, items[i + 1])
                          if i + 1 < len(items) else np.inf)
                    x[it] = min(max(target, lo), hi)


def _room_for_crossings(g: _Layered, xs: list[list[float]], gap_h: np.ndarray,
                        band_h: np.ndarray) -> None:
    """Raise the gaps a crossed edge runs through until it is CROSSING_ROOM long.

    Two crossing curves come within a few points of each other for a few
    points of their length: an edge is made CROSSING_ROOM long for every
    time it crosses one other edge, so that it is clear of each other edge
    along most of its length.
    """
    times = [dict() for _ in g.chains]  # other edge -> crossings with it
    for k in range(g.n_layers - 1):
        seg = [(e, g.pos[ch[s]], g.pos[ch[s + 1]]) for e, ch in enumerate(g.chains)
               for s in range(len(ch) - 1) if g.item_layer[ch[s]] == k]
        if len(seg) < 2:
            continue
        seg = np.array(seg)
        da = seg[:, 1][:, None] - seg[:, 1][None, :]
        db = seg[:, 2][:, None] - seg[:, 2][None, :]
        for a, b in np.argwhere(da * db < 0):
            ea, eb = int(seg[a, 0]), int(seg[b, 0])
            times[ea][eb] = times[ea].get(eb, 0) + 1
    crossings = np.array([max(t.values(), default=0) for t in times], dtype=float)
    for _ in range(20):
        short = False
        for e, ch in enumerate(g.chains):
            if crossings[e] == 0:
                continue
            first = g.item_layer[ch[0]]
            gaps = np.arange(first, first + len(ch) - 1)
            dx = np.diff(xs[e])
            length = np.hypot(gap_h[gaps], dx).sum() + band_h[gaps[1:]].sum()
            deficit = CROSSING_ROOM * crossings[e] - length
            if deficit > 0.5:
                gap_h[gaps] += deficit / len(gaps)
                short = True
        if not short:
            return


def layered_layout(
    names: Sequence[str],
    edges: Sequence[tuple[int, int]],
    *,
    details: Sequence[Sequence[str]] | None = None,
    order: Sequence[int] | None = None,
    font_size: float = 8.0,
    max_text_width: float = 110.0,
) -> GraphLayout:
    """Lay out a directed graph by layers, causes on top, and route its edges.

    Parameters
    ----------
    names : sequence of str
        One per node, the first line of its box.
    edges : sequence of (int, int)
        ``(tail, head)`` pairs of distinct nodes; both directions of a pair
        may be given (two separate arrows).
    details : sequence of sequence of str, optional
        Per node, names shown on a second line, separated by commas.
    order : sequence of int, optional
        Used when the edges have a cycle: edges against this order of the
        nodes point up (default: a greedy order with few such edges). An
        acyclic graph is always drawn with every edge pointing down.
    font_size : float, default=8.0
        Of the box texts, in points.
    max_text_width : float, default=110.0
        Widest line of a box, in points; longer names are cut with "…"
        (the second line shares the width among its names), and
        :attr:`GraphLayout.legend` holds the full names.

    Returns
    -------
    GraphLayout
    """
    names = [str(s) for s in names]
    n = len(names)
    edge_list = _checked_edges(n, edges, details, font_size, max_text_width)
    labels, lines, legend = _box_texts(names, details, font_size, max_text_width)

    rank = _orientation(n, edge_list, order)
    flipped = [rank[u] > rank[v] for u, v in edge_list]
    oriented = [(v, u) if f else (u, v) for (u, v), f in zip(edge_list, flipped)]
    layer = _layers(n, oriented, rank)
    out_deg = np.bincount([u for u, _ in oriented], minlength=n)
    in_deg = np.bincount([v for _, v in oriented], minlength=n)
    text_w = np.array([max(text_width(s, font_size) for s in ls) for ls in lines])
    ports = np.maximum(out_deg, in_deg)
    box_w = np.maximum(np.maximum(text_w + 2 * PAD_X, 3 * font_size),
                       (ports - 1).clip(0) * PORT_MIN + 2 * PORT_INSET)
    box_h = np.array([len(ls) * LINE_SPACING * font_size + 2 * PAD_Y for ls in lines])

    g = _Layered(n, oriented, layer, box_w)
    g.reduce_crossings()
    x = g.assign_x()
    start_x, end_x = _port_positions(g, x, box_w)

    def seg_ends(chain_i):
        ch = g.chains[chain_i]
        return [start_x[chain_i]] + [x[it] for it in ch[1:-1]] + [end_x[chain_i]]

    top, bottom, total_h = _bands(g, layer, box_h, seg_ends)
    cy = (top + bottom) / 2
    boxes = np.column_stack([x[:n] - box_w / 2, cy[layer] - box_h / 2,
                             x[:n] + box_w / 2, cy[layer] + box_h / 2])
    paths = [_edge_path(g, e, seg_ends(e), boxes, top, bottom, flipped[e])
             for e in range(len(g.chains))]

    left = min(float(boxes[:, 0].min()), min((float(p[:, 0].min()) for p in paths), default=0))
    right = max(float(boxes[:, 2].max()), max((float(p[:, 0].max()) for p in paths), default=0))
    boxes[:, [0, 2]] -= left
    for p in paths:
        p[:, 0] -= left
    return GraphLayout(boxes=boxes, labels=labels, edges=edge_list, paths=paths, legend=legend,
                       width=right - left, height=total_h, font_size=float(font_size))


def _checked_edges(n: int, edges, details, font_size: float,
                   max_text_width: float) -> list[tuple[int, int]]:
    """The edges as ``(int, int)`` pairs, after checking the arguments of :func:`layered_layout`."""
    if n == 0:
        raise ValueError("names is empty: a graph needs at least one node.")
    edge_list = []
    for e in edges:
        u, v = (int(e[0]), int(e[1]))
        if not (0 <= u < n and 0 <= v < n) or u == v:
            raise ValueError(f"edge {tuple(e)} must join two distinct nodes of 0..{n - 1}.")
        edge_list.append((u, v))
    if len(set(edge_list)) != len(edge_list):
        raise ValueError("edges holds the same edge twice.")
    if details is not None and len(details) != n:
        raise ValueError(f"details has {len(details)} entries; names has {n}.")
    if not (font_size > 0 and max_text_width > 0):
        raise ValueError("font_size and max_text_width must be positive.")
    return edge_list


def _box_texts(names: list[str], details, font_size: float, max_text_width: float):
    """Every box's text (``labels``, and its ``lines``) and the legend of the names cut."""
    # A name gets the width of its line; the names of a second line too wide for
    # it are cut to one common width, the widest that lets the line fit.
    widths = dict.fromkeys(names, float(max_text_width))
    rows = [[str(t) for t in row] for row in details] if details is not None else []
    for row in rows:
        room = max_text_width - (len(row) - 1) * text_width(", ", font_size)
        cap = _common_cap([text_width(t, font_size) for t in row], room, 4 * font_size)
        for t in row:
            widths[t] = min(widths.get(t, cap), cap)
    shown = _shorten_unique(widths, font_size)
    legend = [(shown[t], t) for t in widths if shown[t] != t]
    lines = [[shown[s]] for s in names]
    for i, row in enumerate(rows):
        if row:
            lines[i].append(", ".join(shown[t] for t in row))
    return ["\n".join(ls) for ls in lines], lines, legend


def _port_positions(g: _Layered, x: np.ndarray, box_w: np.ndarray):
    """x of every chain's start and end port.

    Out-ports on the bottom of a box are ordered by where the edges go next,
    in-ports on the top by where they come from.
    """
    start_x = np.zeros(len(g.chains))
    end_x = np.zeros(len(g.chains))
    for node in range(g.n):
        outs = sorted((e for e, ch in enumerate(g.chains) if ch[0] == node),
                      key=lambda e: (x[g.chains[e][1]], x[g.chains[e][-1]], e))
        ins = sorted((e for e, ch in enumerate(g.chains) if ch[-1] == node),
                     key=lambda e: (x[g.chains[e][-2]], x[g.chains[e][0]], e))
        for group, target in ((outs, start_x), (ins, end_x)):
            k = len(group)
            if k == 0:
                continue
            room = box_w[node] - 2 * PORT_INSET
            step = min(PORT_MAX, room / (k - 1)) if k > 1 else 0.0
            for r, e in enumerate(group):
                target[e] = x[node] + (r - (k - 1) / 2) * step
    return start_x, end_x


def _bands(g: _Layered, layer: np.ndarray, box_h: np.ndarray, seg_ends):
    """y (up) of the top and bottom of every layer's band, and the drawing's height.

    The gaps between bands leave every segment a slope of at most
    ``MAX_SLOPE`` and room where segments cross.
    """
    band_h = np.zeros(g.n_layers)
    for v in range(g.n):
        band_h[layer[v]] = max(band_h[layer[v]], box_h[v])
    gap_h = np.full(max(g.n_layers - 1, 0), MIN_GAP)
    for e, ch in enumerate(g.chains):
        xs = seg_ends(e)
        for s, (xa, xb) in enumerate(zip(xs[:-1], xs[1:])):
            k = g.item_layer[ch[s]]
            gap_h[k] = max(gap_h[k], 1.5 * abs(xb - xa) / MAX_SLOPE)
    _room_for_crossings(g, [seg_ends(e) for e in range(len(g.chains))], gap_h, band_h)
    # From the top down (y measured downwards), then flipped to y up.
    band_top = np.zeros(g.n_layers)
    y = 0.0
    for k in range(g.n_layers):
        band_top[k] = y
        y += band_h[k] + (gap_h[k] if k < g.n_layers - 1 else 0.0)
    top = y - band_top
    return top, top - band_h, y


def _edge_path(g: _Layered, e: int, xs: list[float], boxes: np.ndarray, top: np.ndarray,
               bottom: np.ndarray, flipped: bool) -> np.ndarray:
    """The polyline of chain ``e``: cubic curves across the gaps, straight through bands."""
    t = np.linspace(0.0, 1.0, CURVE_POINTS)
    s_curve = 3 * t ** 2 - 2 * t ** 3  # horizontal share of a cubic with vertical ends
    ch = g.chains[e]
    pts = [(xs[0], boxes[ch[0], 1])]
    for s in range(len(ch) - 1):
        k = g.item_layer[ch[s]]
        ya, yb = bottom[k], top[k + 1]
        xa, xb = xs[s], xs[s + 1]
        if pts[-1][1] > ya + 1e-6:
            pts.append((xa, ya))
        pts.extend(zip((xa + (xb - xa) * s_curve[1:]).tolist(),
                       (ya + (yb - ya) * t[1:]).tolist()))
        if s + 1 < len(ch) - 1:  # through a dummy node's band
            pts.append((xb, bottom[k + 1]))
    end_y = boxes[ch[-1], 3]
    if pts[-1][1] > end_y + 1e-6:
        pts.append((xs[-1], end_y))
    path = np.array(pts, dtype=float)
    return path[::-1].copy() if flipped else path
