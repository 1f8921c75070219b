"""Graph exports: networkx adjacencies and DOT files from any names.

``adjacency_from_networkx`` returned edge counts (2) for a ``MultiDiGraph``
and let networkx's own error through for repeated names; ``to_pydot`` wrote
broken DOT for a name ending in a backslash, and a crafted name could add
DOT attributes (or become an HTML label, which Graphviz interprets).
"""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pydot
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import CREATOR, simulate
from creator_plugin.adapters import adjacency_from_networkx
from creator_plugin.adapters.causallearn import to_pydot

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUICK = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
FEW = settings(max_examples=10, deadline=None, derandomize=True, database=None,
               suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def model():
    sim = simulate(3, 3, 200, n_features=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(3, random_state=0, quality=False).fit(sim.X)


def test_multidigraph_parallel_edges_are_one_edge():
    g = nx.MultiDiGraph([("a", "b"), ("a", "b"), ("b", "c")])
    A = adjacency_from_networkx(g, ["a", "b", "c"])
    np.testing.assert_array_equal(A, [[0, 1, 0], [0, 0, 1], [0, 0, 0]])


@pytest.mark.parametrize("names, error, pattern", [
    (["a", "a", "b"], ValueError, r"names repeats \['a'\]"),
    (["a", "b"], ValueError, r"graph nodes not in names \['c'\]"),
    (["a", "b", "c", "d"], ValueError, r"names not in graph \['d'\]"),
    ("abc", TypeError, "names must be a list"),
    ([["a"], "b", "c"], TypeError, "hashable"),
])
def test_bad_names_get_our_error_not_networkx(names, error, pattern):
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(error, match=pattern):
        adjacency_from_networkx(g, names)


def _labels(dot: pydot.Dot) -> list[str]:
    (parsed,) = pydot.graph_from_dot_data(dot.to_string())
    nodes = [n for n in parsed.get_nodes() if n.get_name() not in ("node", "graph", "edge")]
    for n in nodes:
        assert sorted(n.get_attributes()) == ["label", "shape"], n.get_attributes()
    return [_unquote(n.get("label")) for n in sorted(nodes, key=lambda n: int(n.get_name()))]


def _unquote(label: str) -> str:
    """The text Graphviz shows for a quoted label written by :func:`dot_quoted`."""
    assert label.startswith('"') and label.endswith('"'), label
    body, out, i = label[1:-1], [], 0
    while i < len(body):
        if body[i] == "\\":
            nxt = body[i + 1]
            out.append("\n" if nxt == "n" else nxt)
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


@pytest.mark.parametrize("names", [
    ["ends\\", "b", "c"],
    ['x" shape=box fontcolor="red', 'y\\" color=red label=\\"pwn', "c"],
    ["<b>html</b>", "<<img src='/etc/passwd'/>>", "c"],
    ["line\nbreak", "tab\there", "nul\x00"],
])
def test_to_pydot_writes_valid_dot_with_the_names_as_text(model, names):
    dot = to_pydot(model, names, title='t"itle\\')
    shown = _labels(dot)
    expected = [n.replace("\x00", "\\x00").replace("\t", "\\x09") for n in names]
    assert shown == expected
    (parsed,) = pydot.graph_from_dot_data(dot.to_string())
    assert len(parsed.get_edges()) == int(model.adjacency_matrix_.sum())


names_and_titles = dict(
    names=st.lists(st.text(min_size=1, max_size=8).filter(lambda t: t.isprintable()),
                   min_size=3, max_size=3, unique=True),
    title=st.text(max_size=8).filter(lambda t: t.isprintable()))


@FEW
@given(**names_and_titles)
def test_any_printable_names_round_trip_through_dot(model, names, title):
    assert _labels(to_pydot(model, names, title=title)) == names


@pytest.mark.slow
@SLOW
@given(**names_and_titles)
def test_any_printable_names_round_trip_through_dot_thoroughly(model, names, title):
    """Budget: 150 DOT parses, about 15 s."""
    assert _labels(to_pydot(model, names, title=title)) == names


@QUICK
@given(edges=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12),
       copies=st.integers(1, 3))
def test_multidigraph_adjacency_is_the_digraph_adjacency(edges, copies):
    dag = [(u, v) for u, v in edges if u < v]
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(5))
    for _ in range(copies):
        g.add_edges_from(dag)
    simple = nx.DiGraph(g)
    order = list(np.random.default_rng(len(dag)).permutation(5))
    A = adjacency_from_networkx(g, order)
    assert set(np.unique(A)) <= {0, 1}
    np.testing.assert_array_equal(A, nx.to_numpy_array(simple, nodelist=order, weight=None))
