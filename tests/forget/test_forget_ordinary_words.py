"""Forgetting ordinary English always verifies: no dictionary word is taken for a leftover.

Texts are made of the 5,000 most common English words (wordfreq's list) mixed with the words that memdeck's and
Lance's own files are made of (manifests, transaction files, key files, configuration, journals, the trace
log), the principal's and the agent's names, and the names of the score components the trace log stores.
Every receipt must say ``verified``. The seed is fixed so a failure reproduces; MEMDECK_TEST_SEED varies it.
"""

from __future__ import annotations

import os
import random

import pytest
from wordfreq import top_n_list

from memdeck.core.forget import forget, forget_principal

# Words of memdeck's and Lance's own files: schema fields, index and format names, PEM headers, JSON keys.
_FORMAT = (
    "table private key version schema index fragment manifest data vector delete transaction begin end field "
    "column principal receipt tier lance arrow uuid tokenizer ngram btree bitmap inverted utf8 sha256 ed25519 "
    "pkcs8 memdeck journal tombstone tombstones vault salt episodic semantic procedural trace traces ledger purge "
    "compact cleanup reindex signature public format issued outcome verified checks cascade history deletion "
    "deletions transactions versions indices manifest_path fragment_id row_id text session events agent tags "
    "meta importance recency frequency trust graph similarity keyword pinned score relevance injections "
    "judgments feedback candidates returned profile weights expires created updated accessed sources "
    "learned_from superseded_by mentions entities relations aliases kind config lock lease writer"
)
FORMAT_WORDS = _FORMAT.split()
PRINCIPAL = "zoravelle"  # a principal name no dictionary holds: the trace log stores it in its own columns
AGENT = "quillbrook"


def _texts(rng: random.Random, n: int) -> list[str]:
    common = top_n_list("en", 5000)
    assert len(common) == 5000 and {"table", "private", "version", "index", "data"} <= set(common)
    out = []
    for _ in range(n):
        words = [
            rng.choice(FORMAT_WORDS) if rng.random() < 0.4 else rng.choice(common)
            for _ in range(rng.randint(1, 16))
        ]
        if rng.random() < 0.2:
            words.insert(
                rng.randrange(len(words) + 1), rng.choice([PRINCIPAL, AGENT, PRINCIPAL.capitalize()])
            )
        if rng.random() < 0.15:
            words.append(str(rng.randint(0, 2100)))  # short numbers: years, counts
        text = " ".join(words)
        out.append(text[0].upper() + text[1:] + rng.choice([".", "!", "?", ""]))
    return out


@pytest.fixture
def seed() -> int:
    return int(os.environ.get("MEMDECK_TEST_SEED", "20261127"))


@pytest.mark.timeout(600)  # many forgets, each verified: 2.5 min with four workers
def test_forgetting_ordinary_english_always_verifies(store, seed):
    rng = random.Random(seed)
    # Traces and the ledger exist, naming the principal and the agent, as they do on any used store.
    store.remember("warm up note about the garden", tier="episodic", principal=PRINCIPAL, agent=AGENT)
    store.recall("garden note", principal=PRINCIPAL, agent=AGENT)
    store.context("garden", principal=PRINCIPAL, agent=AGENT)
    texts = _texts(rng, 240)
    tiers = ["episodic", "semantic", "procedural"]
    failed = []
    receipts = 0
    at = 0
    while at < len(texts):
        batch = texts[at : at + rng.randint(1, 8)]
        at += len(batch)
        ids = []
        for text in batch:
            got = store.remember(text, tier=rng.choice(tiers), principal=PRINCIPAL, agent=AGENT)
            if got.memory is not None:
                ids.append(got.memory.id)
        if not ids:
            continue
        if rng.random() < 0.3:
            store.recall(" ".join(batch[0].split()[:3]), principal=PRINCIPAL, agent=AGENT)
        receipt = forget(store.engine, ids, "user request")
        receipts += 1
        if receipt["outcome"] != "verified":
            failed.append((batch, [(c["name"], c["detail"]) for c in receipt["checks"] if not c["passed"]]))
    assert receipts >= 40
    assert not failed, failed[:3]


def test_forgetting_a_whole_principal_of_ordinary_english_verifies(store, seed):
    rng = random.Random(seed + 1)
    for text in _texts(rng, 60):
        store.remember(text, tier=rng.choice(["episodic", "semantic"]), principal=PRINCIPAL, agent=AGENT)
    store.remember("the other principal keeps this table of data", tier="semantic", principal="bob")
    store.recall("table version index", principal=PRINCIPAL, agent=AGENT)
    receipt = forget_principal(store.engine, PRINCIPAL, "user request")
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
