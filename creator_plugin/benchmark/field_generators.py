"""The field's own data generators, as workload families of the benchmark.

The generators live in :mod:`creator_plugin.field_generators` (the zoo's
:func:`creator_plugin.simulation.simulate_family` draws them by name:
``"lincd"``, ``"lscale_i"``, ``"umni_crl"``, ``"multi_node_crl"``); this
module is the benchmark's name for them, with the noise laws a cell of
``creator bench`` may ask for (:data:`NOISES`).
"""

from __future__ import annotations

from ..field_generators import FIELD_GENERATORS as FIELD_FAMILIES
from ..field_generators import (
    NOISES,
    simulate_lincd,
    simulate_lscale_i,
    simulate_multi_node_crl,
    simulate_umni_crl,
)

__all__ = [
    "FIELD_FAMILIES",
    "NOISES",
    "simulate_lincd",
    "simulate_lscale_i",
    "simulate_multi_node_crl",
    "simulate_umni_crl",
]
