"""In-memory BM25 for the recall index: the full-text index's tokens, postings per term, per-principal scores.

Texts are tokenised as the LanceDB full-text index is configured (``storage/indexing.ensure_fts``): split on
anything that is not a letter or digit, tokens of 40 bytes or more dropped, lower case, English Snowball
stem, English stop words dropped, then ASCII folding. Scores are standard BM25 with statistics from the
rows a recall may see (one principal's, after the state and recall filters), exactly as
``scoring.principal_bm25`` computes them, so nothing another principal wrote can move a score.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain

import numpy as np
import snowballstemmer

from memdeck.core.recall.scoring import BM25_B, BM25_K1, STOP_WORDS, index_length

MAX_TOKEN_BYTES = 40  # LanceDB's default max_token_length: longer tokens are not indexed
MAX_TERM_MATCHES = 50_000  # as the LanceDB path: a term in more of a tier's rows counts as in this many
_TOKEN = re.compile(r"[^\W_]+")
_STEMMER = snowballstemmer.stemmer(
    "english"
)  # PyStemmer's C stemmer when installed (a dependency), same output


@lru_cache(maxsize=200_000)
def _term(word: str) -> str | None:
    """One lower-cased word as the index stores it, or None when the index drops it."""
    if len(word.encode("utf-8")) >= MAX_TOKEN_BYTES:
        return None
    stem = _STEMMER.stemWord(word)
    if stem in STOP_WORDS:
        return None
    if stem.isascii():
        return stem
    folded = unicodedata.normalize("NFKD", stem)
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def terms(text: str) -> list[str]:
    """The index terms of a text, in order, repeats kept."""
    out = []
    for word in _TOKEN.findall(text.lower()):
        term = _term(word)
        if term is not None:
            out.append(term)
    return out


def query_words(query: str) -> list[tuple[str, str | None]]:
    """The query's distinct words as the LanceDB path searches them (one search per word), with each
    word's term (None: a stop word, which matches nothing)."""
    words = sorted(set(" ".join(re.findall(r"\w+", query)).lower().split()))
    out = []
    for word in words:
        found = terms(word)
        out.append((word, found[0] if len(found) == 1 else None))
    return out


class Postings:
    """term -> the rows holding it and how often, appended in chunks as rows arrive."""

    def __init__(self) -> None:
        self._chunks: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.lengths = np.zeros(
            0, dtype=np.float64
        )  # each row's length as ``scoring.index_length`` counts it
        self.entries = 0

    def add(self, first_row: int, texts: Sequence[str | None]) -> None:
        """Index rows ``first_row``, ``first_row + 1``, ... holding ``texts``.

        One regex pass per text and one dictionary lookup per word; the counting is numpy's (a loop per
        word in Python made a partition's first load take seconds per 10,000 rows).
        """
        lowered = [(t or "").lower() for t in texts]
        words = [_TOKEN.findall(t) for t in lowered]
        flat = [w for ws in words for w in ws]
        unique = list(dict.fromkeys(flat))
        names = list(dict.fromkeys(t for w in unique if (t := _term(w)) is not None))
        ids = {term: i for i, term in enumerate(names)}
        term_id = {w: ids.get(_term(w) or "", -1) for w in unique}
        tokens = np.fromiter((term_id[w] for w in flat), np.int64, len(flat))
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), [len(ws) for ws in words])
        keep = tokens >= 0
        keys, counts = np.unique(tokens[keep] * len(texts) + rows[keep], return_counts=True)
        term_of, row_of = np.divmod(keys, len(texts))
        starts = (
            np.flatnonzero(np.r_[True, term_of[1:] != term_of[:-1]]) if keys.size else np.zeros(0, np.int64)
        )
        ends = np.r_[starts[1:], keys.size] if keys.size else np.zeros(0, np.int64)  # no indexed word at all
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            term = names[int(term_of[start])]
            chunk = ((row_of[start:end] + first_row).astype(np.int32), counts[start:end].astype(np.float32))
            chunks = self._chunks.setdefault(term, [])
            chunks.append(chunk)
            if len(chunks) > 8:  # many small appends (one per access-count commit): merge them
                self._chunks[term] = [
                    (np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]))
                ]
        self.entries += int(keys.size)
        # Lengths as the LanceDB path counts them (scoring.index_length: \w+ words, stop words out); only a
        # text with an underscore splits differently from the words above.
        lengths = np.fromiter(
            (
                index_length(t) if "_" in t else sum(1 for w in ws if w not in STOP_WORDS)
                for t, ws in zip(lowered, words, strict=True)
            ),
            np.float64,
            len(texts),
        )
        self.lengths = np.concatenate([self.lengths, lengths])

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        chunks = self._chunks.get(term)
        if not chunks:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        if len(chunks) > 1:
            chunks[:] = [(np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]))]
        return chunks[0]

    def nbytes(self) -> int:
        return int(
            self.lengths.nbytes
            + sum(r.nbytes + c.nbytes for cs in self._chunks.values() for r, c in cs)
            + sum(len(t) + 50 for t in self._chunks)
        )


class QueryPostings:
    """``Postings`` for some terms only: each row's length as ``Postings`` counts it and, for these terms, the
    rows holding each and how often. What a one-off BM25 over texts read for one query needs (LanceDB's path
    reads the previous memory's words this way): no work per distinct word of the texts."""

    def __init__(self, texts: Sequence[str | None], terms: Iterable[str]) -> None:
        wanted = set(terms)
        lows = [(text or "").lower() for text in texts]
        words = [_TOKEN.findall(low) for low in lows]
        # Each distinct word's term once, and only the words whose term is wanted are looked for in a text.
        hit_words = {w: t for w in set(chain.from_iterable(words)) if (t := _term(w)) in wanted}
        stop = STOP_WORDS.__contains__
        self.lengths = np.fromiter(
            (
                index_length(low) if "_" in low else len(mine) - sum(map(stop, mine))
                for low, mine in zip(lows, words, strict=True)
            ),
            np.float64,
            len(lows),
        )
        rows: dict[str, list[int]] = {t: [] for t in wanted}
        counts: dict[str, list[float]] = {t: [] for t in wanted}
        for row, mine in enumerate(words):
            if hit_words.keys().isdisjoint(mine):
                continue
            here: dict[str, int] = {}
            for word in mine:
                term = hit_words.get(word)
                if term is not None:
                    here[term] = here.get(term, 0) + 1
            for term, count in here.items():
                rows[term].append(row)
                counts[term].append(count)
        self._hits = {
            t: (np.asarray(rows[t], dtype=np.int32), np.asarray(counts[t], dtype=np.float32)) for t in wanted
        }

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        return self._hits.get(term) or (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))

    def nbytes(self) -> int:
        return int(self.lengths.nbytes + sum(r.nbytes + c.nbytes for r, c in self._hits.values()))


def principal_scores(
    parts: Sequence[tuple[Postings | QueryPostings, np.ndarray]], words: Sequence[tuple[str, str | None]]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """BM25 of every row holding a query term, per part (a tier's rows and the mask of the rows the
    recall may see), with the statistics of those rows over all the parts together.

    Returns, per part, the rows with a score above 0 (ascending) and their scores. The formula, the order
    of the sum over words and the statistics are those of ``scoring.principal_bm25`` as the LanceDB path
    feeds it (document frequency per word capped at MAX_TERM_MATCHES per tier).
    """
    rows_total = 0
    length_total = 0.0
    df: dict[str, float] = {w: 0.0 for w, _ in words}
    hits: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
    for postings, mask in parts:
        every = bool(mask.all())  # the common case (no filter, nothing deprecated): no row to leave out
        rows_total += mask.size if every else int(mask.sum())
        lengths = postings.lengths[: len(mask)]
        length_total += float(lengths.sum() if every else lengths[mask].sum())
        mine: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for word, term in words:
            if term is None:
                continue
            rows, counts = postings.get(term)
            if not every:
                keep = mask[rows]
                rows, counts = rows[keep], counts[keep]
            mine[word] = (rows, counts)
            df[word] += min(rows.size, MAX_TERM_MATCHES)
        hits.append(mine)
    mean = length_total / rows_total if rows_total else 0.0
    out = []
    for (postings, _mask), mine in zip(parts, hits, strict=True):
        # The rows holding any term, ascending: marked in a flag array (np.unique sorts or hashes, ten
        # times slower on a 10k-row partition).
        flag = np.zeros(len(postings.lengths), dtype=bool)
        for r, _ in mine.values():
            flag[r] = True
        touched = np.flatnonzero(flag)
        if not touched.size:
            out.append((touched.astype(np.int64), np.zeros(0)))
            continue
        lengths = postings.lengths[touched]
        avg = mean or float(lengths.mean()) or 1.0
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths / avg)
        score = np.zeros(touched.size, dtype=np.float64)
        for word, _term in words:
            if word not in mine or df[word] <= 0:
                continue
            rows, counts = mine[word]
            idf = float(np.log1p((max(rows_total, df[word]) - df[word] + 0.5) / (df[word] + 0.5)))
            at = np.searchsorted(touched, rows)
            tf = counts.astype(np.float64)
            score[at] += idf * tf * (BM25_K1 + 1.0) / (tf + norm[at])
        out.append((touched.astype(np.int64), score))
    return out


def with_previous_scores(
    parts: Sequence[tuple[Postings | QueryPostings, np.ndarray, np.ndarray, np.ndarray]],
    words: Sequence[tuple[str, str | None]],
) -> list[np.ndarray]:
    """BM25 of each row's text read together with the text of the row before it in its session.

    ``parts`` gives, per part, its postings, the mask of the rows the recall may see, each row's previous
    row (``Partition.previous``: -1 for none; a row without one is read alone) and the rows wanted. The
    statistics (document frequency of each word over these joined texts, row count, mean joined length)
    are those of the masks' rows over all the parts together, as ``principal_scores``. Returns each part's
    wanted rows' scores (0 for a row holding no term). Dense numpy over each part's rows, no loop per row.
    """
    rows_total = 0
    length_total = 0.0
    df: dict[str, float] = {w: 0.0 for w, _ in words}
    made: list[tuple[dict[str, np.ndarray], np.ndarray]] = []
    for postings, mask, prev, _wanted in parts:
        n = mask.size
        has_prev = prev[:n] >= 0
        before = np.where(has_prev, prev[:n], 0)
        own = postings.lengths[:n]
        length = own + np.where(has_prev, own[before], 0.0) if n else own
        rows_total += int(mask.sum())
        length_total += float(length[mask].sum())
        tfs: dict[str, np.ndarray] = {}
        for word, term in words:
            if term is None:
                continue
            rows, counts = postings.get(term)
            keep = rows < n
            tf = np.zeros(n, dtype=np.float64)
            tf[rows[keep]] = counts[keep]
            tf = np.where(mask, tf + np.where(has_prev, tf[before], 0.0), 0.0)
            tfs[word] = tf
            df[word] += min(int(np.count_nonzero(tf)), MAX_TERM_MATCHES)
        made.append((tfs, length))
    mean = length_total / rows_total if rows_total else 0.0
    out = []
    for (_postings, _mask, _prev, wanted), (tfs, length) in zip(parts, made, strict=True):
        score = np.zeros(wanted.size, dtype=np.float64)
        if not wanted.size:
            out.append(score)
            continue
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length[wanted] / (mean or 1.0))
        for word, _term in words:
            if word not in tfs or df[word] <= 0:
                continue
            idf = float(np.log1p((max(rows_total, df[word]) - df[word] + 0.5) / (df[word] + 0.5)))
            tf = tfs[word][wanted]
            score += idf * tf * (BM25_K1 + 1.0) / (tf + norm)
        out.append(score)
    return out
