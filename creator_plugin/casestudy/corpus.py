"""A story corpus whose latent features and causal DAG are known.

Every story has three parts -- a background (BG), a condition (CD) and an
ending (ED) -- told in one of three styles (news, fairy tale, plain), the
K = 3 environments. Each part carries one graded feature, written as the
*number of marked sentences* among the part's ``n_sentences`` sentences: the
background tells of rain, the condition of grain stored in the barns, the
ending of a festival; the other sentences of the part are neutral about that
feature. The grades follow a linear structural equation model over the DAG
BG -> CD, CD -> ED, BG -> ED whose weights and noise laws depend on the style.

Why the feature is a count of sentences: a mean over token states is an
average over the part's sentences, so the share of marked sentences enters it
linearly (up to context effects), while a single graded phrase ("a poor / fair
/ rich harvest") moves the encoder along a curve dominated by lexical identity,
and words of praise or blame share one direction across parts. Each part has
its own topic, so the three feature directions differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "PARTS",
    "STYLES",
    "TRUE_ADJACENCY",
    "STYLE_WEIGHTS",
    "Corpus",
    "generate_corpus",
    "part_texts",
]

PARTS = ("BG", "CD", "ED")
STYLES = ("news", "fairy tale", "plain")

# [i, j] == 1 iff part i -> part j: BG -> CD, CD -> ED, BG -> ED.
TRUE_ADJACENCY = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])

# Per style: weights W[i, j] of grade i on grade j (grades as shares of the
# part's sentences) and the law of each part's own variation. Strengths and
# signs differ across styles (in a fairy tale rain spoils the harvest): edges
# are identified only through weights that are not proportional across
# environments.
STYLE_WEIGHTS = {
    "news": np.array([[0.0, 0.45, 0.15], [0.0, 0.0, 0.35], [0.0, 0.0, 0.0]]),
    "fairy tale": np.array([[0.0, -0.30, -0.35], [0.0, 0.0, 0.15], [0.0, 0.0, 0.0]]),
    "plain": np.array([[0.0, 0.15, 0.30], [0.0, 0.0, -0.35], [0.0, 0.0, 0.0]]),
}
STYLE_NOISE = {
    "news": ("beta(0.5,0.5)", "beta(0.4,0.8)", "beta(0.3,0.3)"),
    "fairy tale": ("beta(0.4,0.8)", "beta(0.5,0.5)", "beta(0.25,0.4)"),
    "plain": ("beta(0.3,0.3)", "beta(0.8,0.4)", "beta(0.5,0.5)"),
}
# Laws on [0, 1], all far from Gaussian: U-shaped, some skewed. The ending
# has two parents and so the least room of its own; its laws are the most spread.
_NOISE_LAWS = {
    "beta(0.3,0.3)": lambda rng, n: rng.beta(0.3, 0.3, n),
    "beta(0.25,0.4)": lambda rng, n: rng.beta(0.25, 0.4, n),
    "beta(0.5,0.5)": lambda rng, n: rng.beta(0.5, 0.5, n),
    "beta(0.4,0.8)": lambda rng, n: rng.beta(0.4, 0.8, n),
    "beta(0.8,0.4)": lambda rng, n: rng.beta(0.8, 0.4, n),
}

_SLOTS = {
    "town": ["Elmsford", "Brackenridge", "Millbrook", "Ashdale", "Thornbury", "Greywater",
             "Oakhollow", "Fennick", "Larkspur", "Stonemere", "Willowby", "Redcliff",
             "Hartwell", "Copperfield", "Marlow", "Dunmore"],
    "month": ["March", "April", "May", "June", "July", "August", "September", "October"],
    "land": ["the fields", "the meadows", "the orchards", "the hills", "the valley",
             "the farms", "the pastures", "the vineyards", "the plains", "the slopes"],
    "when": ["again", "all week", "that morning", "for days", "all night", "each afternoon",
             "once more", "before dawn", "until dusk", "that spring"],
    "rain": ["rain", "heavy rain", "steady rain", "warm rain", "soft rain", "cold rain",
             "long rain", "fresh rain", "spring rain"],
    "fell": ["fell on", "poured over", "drenched", "soaked", "swept over", "drummed on",
             "washed over", "flooded"],
    "grain": ["wheat", "barley", "oats", "rye", "corn", "grain", "millet"],
    "store": ["barn", "granary", "storehouse", "silo", "loft", "grain shed"],
    "filled": ["filled", "was packed", "overflowed", "was stacked high", "was crammed",
               "was heaped"],
    "music": ["fiddles", "drums", "flutes", "pipes", "horns", "bells", "lutes", "songs"],
    "danced": ["danced", "sang", "feasted", "celebrated", "made merry", "cheered"],
    "folk": ["the villagers", "the townsfolk", "the families", "the neighbours", "everyone",
             "the children", "the farmers", "young and old"],
    "animal": ["sheep", "goats", "cows", "geese", "ponies", "hens", "ducks"],
    "grazed": ["grazed", "wandered", "rested", "roamed", "dozed"],
    "place": ["by the mill", "near the brook", "under the oaks", "by the old wall",
              "near the bridge", "behind the church"],
    "trade": ["a merchant", "a blacksmith", "a baker", "a weaver", "a cobbler", "a potter",
              "a carpenter", "a tailor"],
    "worked": ["mended a cart", "fixed a fence", "counted coins", "sold tools", "swept the road",
               "painted a door", "wrote a letter", "opened a shop"],
}

# Marked sentences carry the part's feature; neutral ones only fill the part.
# Short sentences of similar length: the pooled state averages many of them.
_MARKED = {
    "BG": [
        "{Rain} {fell} {land} {when}.",
        "{Rain} {fell} {land}.",
        "The rivers rose with {rain}.",
        "{Rain} fell {when}.",
        "Clouds brought {rain} {when}.",
        "Puddles grew as {rain} fell.",
    ],
    "CD": [
        "The {store} {filled} with {grain}.",
        "The {store} {filled} with {grain} {when}.",
        "Sacks of {grain} filled the {store}.",
        "Carts brought {grain} to the {store}.",
        "More {grain} went into the {store}.",
        "Every {store} {filled} with {grain}.",
    ],
    "ED": [
        "{Folk} {danced} at the festival.",
        "The festival {music} played {when}.",
        "The festival went on {when}.",
        "A festival feast had {music}.",
        "{Folk} {danced} at the festival {when}.",
        "The festival {music} played in the square.",
    ],
}
_NEUTRAL = {
    "BG": [
        "{Animal} {grazed} {place}.",
        "{Animal} {grazed} on {land}.",
        "A path ran {place}.",
        "{Animal} {grazed} {place} {when}.",
        "Old walls stood {place}.",
        "A cottage stood {place}.",
    ],
    "CD": [
        "{Trade} {worked}.",
        "{Trade} {worked} {when}.",
        "{Trade} {worked} {place}.",
        "The council met {when}.",
        "{Trade} {worked} at the market.",
        "{Trade} and {trade} {worked}.",
    ],
    "ED": [
        "The lamps went out {when}.",
        "Dogs slept by the doors.",
        "The doors were locked {when}.",
        "The streets were quiet {when}.",
        "Smoke rose from the chimneys.",
        "The shutters were closed {when}.",
    ],
}
_FRAME = {
    "news": (
        ["{Town} Gazette, {month} edition.", "Report from {town}, {month}.",
         "Local news from {town} this {month}.", "The {town} Herald, {month} issue.",
         "From our correspondent in {town}, {month}.", "News desk, {town}, {month}."],
        ["Officials confirmed these details.", "Our reporter writes as follows.",
         "Witnesses described the season.", "Sources gave this account.",
         "Records show the following.", "The council reported this."],
        ["Reporters then followed events.", "The council later issued a statement.",
         "Further details emerged.", "Officials then gave an update.",
         "A second report followed.", "Sources added more details."],
        ["A full report will follow.", "More coverage in our next issue.",
         "Readers may write to the editor.", "The council will comment next week.",
         "Our reporter will follow up.", "Updates will appear online."],
    ),
    "fairy tale": (
        ["Once upon a time, in the kingdom of {town}, lived an old king.",
         "Long ago, in the enchanted land of {town}, a wise queen ruled.",
         "Once upon a time, beyond seven mountains, lay the realm of {town}.",
         "Long, long ago, a gentle giant guarded {town}.",
         "Once upon a time, a fairy lived near {town}.",
         "In a land far away, there was a kingdom called {town}."],
        ["And so the tale begins.", "Listen to how the story goes.",
         "The fairies watched from the woods.", "A magic mirror saw it all.",
         "The old wizard remembered it well.", "An elf whispered the tale."],
        ["Then, as if by magic, the seasons turned.", "Soon the good fairy came to visit.",
         "A talking owl told what followed.", "The enchanted bells rang once.",
         "A dragon flew over the castle.", "The wizard waved his wand."],
        ["And that is the end of the tale.", "And so the story ends.",
         "The fairies kept the memory of that year.", "And the king told this tale forever.",
         "Thus ends the tale of {town}.", "And the owl flew away."],
    ),
    "plain": (
        ["This is about {town}.", "Here is what happened in {town}.", "{Town} is a small place.",
         "This happened in {town}.", "A story from {town}.", "{Town}, in {month}."],
        ["It started like this.", "First, the background.", "Here is how it began.",
         "This is how it went.", "It began simply.", "So, first things first."],
        ["Then things went on.", "After that, the season turned.", "Later, more happened.",
         "Next came the rest.", "Time went by.", "Then came the next part."],
        ["That was the year.", "That is all.", "So it went.", "The end.",
         "Nothing more to say.", "That was it."],
    ),
}

_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, rng: np.random.Generator, town: str) -> str:
    """Replace every ``{slot}`` by a random variant (``{Slot}`` capitalised);
    ``{town}`` is the story's one town."""

    def pick(match: re.Match) -> str:
        name = match.group(1)
        options = _SLOTS[name.lower()]
        word = town if name.lower() == "town" else options[rng.integers(len(options))]
        return word[0].upper() + word[1:] if name[0].isupper() else word

    return _SLOT.sub(pick, template)


def part_texts(part: str, n_marked: int, n_sentences: int, rng: np.random.Generator,
               town: str = "Elmsford") -> str:
    """One part of a story: ``n_marked`` marked sentences among ``n_sentences``.

    Parameters
    ----------
    part : {"BG", "CD", "ED"}
    n_marked : int
        Grade of the part, ``0 <= n_marked <= n_sentences``.
    n_sentences : int
        Sentences in the part.
    rng : numpy Generator
        Chooses the sentences' templates, their words and their order.
    town : str, default="Elmsford"
        The story's town, for the sentences that name it.

    Returns
    -------
    str
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}.")
    if not 0 <= n_marked <= n_sentences:
        raise ValueError(f"n_marked must be in [0, {n_sentences}], got {n_marked}.")
    kinds = np.zeros(n_sentences, dtype=bool)
    kinds[:n_marked] = True
    rng.shuffle(kinds)
    pools = [_NEUTRAL[part], _MARKED[part]]
    return " ".join(_fill(pools[int(k)][rng.integers(len(pools[int(k)]))], rng, town)
                    for k in kinds)


@dataclass
class Corpus:
    """Stories of K = 3 styles with their parts and their true grades.

    Attributes
    ----------
    stories : list of list of str
        ``stories[k][i]``: story i of style k.
    parts : list of list of tuple of str
        ``parts[k][i]``: its (BG, CD, ED) parts, each as it appears in the story.
    grades : list of ndarray (n, 3) of int
        The true latent features: marked sentences in BG, CD, ED.
    styles : tuple of str
        Environment names.
    adjacency : ndarray (3, 3)
        True DAG, ``[i, j] == 1`` iff part i -> part j.
    weights : list of ndarray (3, 3)
        Per-style weights of the grade SEM (same convention).
    noise_laws : list of tuple of str
        Per style, the law of each part's own variation.
    params : dict
        Arguments of :func:`generate_corpus`.
    """

    stories: list[list[str]]
    parts: list[list[tuple[str, str, str]]]
    grades: list[np.ndarray]
    styles: tuple[str, ...] = STYLES
    adjacency: np.ndarray = field(default_factory=lambda: TRUE_ADJACENCY.copy())
    weights: list[np.ndarray] = field(default_factory=list)
    noise_laws: list[tuple[str, ...]] = field(default_factory=list)
    params: dict = field(default_factory=dict)


def _grades(weights: np.ndarray, laws: tuple[str, ...], n: int, n_sentences: int,
            rng: np.random.Generator) -> np.ndarray:
    """Draw the marked-sentence counts of ``n`` stories from the style's SEM.

    With ``f_i = count_i / n_sentences``, part j's share is
    ``u_j = sum_i w_ij g_ij + (1 - sum_i |w_ij|) v_j`` where ``g_ij = f_i`` for
    ``w_ij > 0`` and ``1 - f_i`` otherwise, so ``u_j`` stays in [0, 1] and is
    linear in the parents' *realised* shares with slopes ``w_ij``; ``v_j`` is
    the part's own non-Gaussian variation. The count is ``u_j * n_sentences``
    rounded at random (up with probability equal to its fractional part), which
    keeps its mean linear.
    """
    F = np.zeros((n, len(PARTS)))
    for j in range(len(PARTS)):
        w = weights[:, j]
        u = (1.0 - np.abs(w).sum()) * _NOISE_LAWS[laws[j]](rng, n)
        for i in np.flatnonzero(w):
            u += abs(w[i]) * (F[:, i] if w[i] > 0 else 1.0 - F[:, i])
        scaled = u * n_sentences
        counts = np.floor(scaled) + (rng.random(n) < scaled - np.floor(scaled))
        F[:, j] = np.clip(counts, 0, n_sentences) / n_sentences
    return np.rint(F * n_sentences).astype(int)


def generate_corpus(n_per_style: int = 900, n_sentences: int = 8,
                    random_state=None) -> Corpus:
    """Generate the three-style story corpus from one seed.

    Parameters
    ----------
    n_per_style : int, default=900
        Stories per style (the paper used 900).
    n_sentences : int, default=8
        Sentences per part; a part's grade is in ``0 .. n_sentences``.
    random_state : int, numpy Generator or None
        Seeds the grades, the templates, the words and the sentence order.

    Returns
    -------
    Corpus

    Examples
    --------
    >>> c = generate_corpus(n_per_style=5, random_state=0)
    >>> [g.shape for g in c.grades]
    [(5, 3), (5, 3), (5, 3)]
    >>> c.stories[1][0].startswith(("Once upon", "Long ago"))
    True
    """
    if isinstance(n_per_style, bool) or not isinstance(n_per_style, (int, np.integer)) \
            or n_per_style < 2:
        raise ValueError(f"n_per_style must be an integer >= 2, got {n_per_style!r}.")
    if isinstance(n_sentences, bool) or not isinstance(n_sentences, (int, np.integer)) \
            or n_sentences < 1:
        raise ValueError(f"n_sentences must be a positive integer, got {n_sentences!r}.")
    rng = np.random.default_rng(random_state)
    stories, parts, grades, weights, laws = [], [], [], [], []
    for style in STYLES:
        W = STYLE_WEIGHTS[style]
        G = _grades(W, STYLE_NOISE[style], n_per_style, n_sentences, rng)
        opening, intro, turn, closing = _FRAME[style]
        towns = _SLOTS["town"]
        story_k, parts_k = [], []
        for g in G:
            # One town per story, so that the frame and the parts agree.
            name = towns[rng.integers(len(towns))]
            p = tuple(part_texts(part, int(c), n_sentences, rng, name)
                      for part, c in zip(PARTS, g))
            frame = [_fill(s[rng.integers(len(s))], rng, name)
                     for s in (opening, intro, turn, closing)]
            story_k.append(" ".join([frame[0], frame[1], p[0], frame[2], p[1], p[2], frame[3]]))
            parts_k.append(p)
        stories.append(story_k)
        parts.append(parts_k)
        grades.append(G)
        weights.append(W.copy())
        laws.append(STYLE_NOISE[style])
    return Corpus(stories=stories, parts=parts, grades=grades, weights=weights,
                  noise_laws=laws,
                  params={"n_per_style": int(n_per_style), "n_sentences": int(n_sentences),
                          "random_state": random_state if isinstance(random_state, int)
                          else None})
