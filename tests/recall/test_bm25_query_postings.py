"""``bm25.QueryPostings`` (what LanceDB's path builds from the texts it reads for one query) holds, for the
query's terms, exactly what ``bm25.Postings`` (the in-memory index's) holds: each row's length and each
term's rows and counts, so both engines score the previous memory's words alike."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memdeck.core.recall import bm25

TEXTS = [
    "The lakeside lodge in Keswick, it has room for twenty",
    "Which venue did we choose for the team offsite? The venue, the VENUE!",
    "snake_case_names and the_underscore count differently",
    "Café crème at the café near Zürich; caffè latte",
    "a" * 45 + " word past the index's token length",
    "",
    None,
    "the and of to in",  # stop words only
    "running runs ran runner: one stem, or two?",
    "offsite offsites off-site",
]


def _same(texts: list[str | None], query: str) -> None:
    full = bm25.Postings()
    full.add(0, texts)
    terms = [t for _w, t in bm25.query_words(query) if t is not None]
    mine = bm25.QueryPostings(texts, terms)
    assert np.array_equal(mine.lengths, full.lengths)
    for term in terms:
        rows, counts = full.get(term)
        got_rows, got_counts = mine.get(term)
        assert got_rows.tolist() == rows.tolist(), term
        assert got_counts.tolist() == counts.tolist(), term
    assert mine.get("notaqueryterm")[0].size == 0


def test_the_same_rows_counts_and_lengths_as_the_index_postings() -> None:
    for query in [
        "venue offsite",
        "café Zürich",
        "running runner",
        "snake_case_names",
        "the",
        "Keswick lodge",
    ]:
        _same(TEXTS, query)


WORDS = st.sampled_from(
    [
        "venue",
        "Venue",
        "the",
        "of",
        "café",
        "cafe",
        "snake_case",
        "run",
        "running",
        "runs",
        "x" * 41,
        "Ünïcode",
        "42",
    ]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=8),
    st.lists(WORDS, min_size=1, max_size=4).map(" ".join),
)
def test_any_texts_and_query(texts: list[str], query: str) -> None:
    _same(list(texts), query)
