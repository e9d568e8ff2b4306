"""A realistic demo store: several principals and agents, every tier, months of history.

Built from templates shipped here, deterministic for a given seed, about 2,000 memories by default.
Its history follows the product's rules: each episode's derived facts become semantic facts whose
``sources`` are the episodes they were derived from (as consolidation derives them); an agent that
writes a new value of something it recorded before (another deadline for the same project, another
favourite coffee) supersedes its own older fact, the pair read by contradiction detection; what
different writers disagree on stays for a person to review.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memdeck.core import filters as F
from memdeck.core.consolidate import AGENT as CONSOLIDATION_AGENT
from memdeck.core.consolidate import contradicting_pairs, deprecate_many, differing_spans, parse_statement
from memdeck.core.records import MemoryInput
from memdeck.core.store import Store

PEOPLE: dict[str, dict[str, Any]] = {
    "alice": {
        "role": "product manager",
        "agents": ["assistant", "scheduler"],
        "city": "Lisbon",
        "projects": ["Atlas onboarding", "billing revamp", "mobile beta", "Q3 roadmap"],
        "people": ["Dana", "Marco", "Priya", "Tom"],
        "tools": ["Linear", "Figma", "Notion", "Slack"],
    },
    "bob": {
        "role": "backend developer",
        "agents": ["coder", "assistant"],
        "city": "Berlin",
        "projects": ["payments service", "search indexer", "auth gateway", "metrics pipeline"],
        "people": ["Ines", "Kenji", "Lena", "Sam"],
        "tools": ["Postgres", "Kafka", "Grafana", "GitHub Actions"],
    },
    "carol": {
        "role": "research scientist",
        "agents": ["researcher", "assistant"],
        "city": "Montreal",
        "projects": ["retrieval study", "grant proposal", "reading group", "benchmark paper"],
        "people": ["Ade", "Hiro", "Maya", "Olu"],
        "tools": ["Zotero", "Overleaf", "Jupyter", "W&B"],
    },
    "dev-team": {
        "role": "shared team memory",
        "agents": ["coder", "scheduler"],
        "city": "Remote",
        "projects": ["release train", "incident review", "on-call rota", "API v2"],
        "people": ["Ines", "Kenji", "Dana", "Hiro"],
        "tools": ["PagerDuty", "Sentry", "Terraform", "Kubernetes"],
    },
}

FACTS = [
    "{name} prefers {pref} for {thing}",
    "{person} is the owner of {project}",
    "{project} depends on {tool}",
    "The deadline for {project} is {month}",
    "{name} works as a {role} in {city}",
    "{person} should be contacted about {project} on {tool}",
    "The free tier allows {n} contacts per workspace",
    "Credentials for the {project} service are kept in the team vault",
    "{name} does not want meetings on {day}",
    "{tool} is the source of truth for {project} status",
    "{person} is out of office until {month}",
    "{name}'s favourite coffee is {coffee}",
    "Standup for {project} happens at {hour}:00 every {day}",
    "{project} budget is capped at {n}k euros",
    "{person} reviews every change to {project}",
]
EPISODES = [
    "Discussed {project} with {person}; agreed to move the deadline to {month}",
    "Debugged a failure in {project}: {tool} timed out under load",
    "Planned the week: focus on {project}, skip meetings on {day}",
    "Reviewed feedback on {project} from {person}",
    "Set up {tool} access for {person} on {project}",
    "Summarised the {project} retro: too many late changes, need earlier reviews",
    "Booked a call with {person} about {project} next {day}",
    "Drafted notes on {project} risks and shared them in {tool}",
    "{person} asked for a status update on {project}",
    "Investigated why {project} metrics dropped after the {tool} upgrade",
]
EVENTS = [
    "user: can you remind me what we decided about {project}?",
    "agent: looked up notes in {tool}",
    "user: loop in {person} please",
    "agent: drafted a message to {person}",
    "user: move it to {day}",
]
PROCEDURES = {
    "weekly report": [
        "collect status from {tool}",
        "summarise progress on {project}",
        "flag risks and owners",
        "send to {person} by {day}",
    ],
    "deploy {project}": [
        "run the test suite",
        "check {tool} dashboards are green",
        "tag the release",
        "roll out to 10% then 100%",
    ],
    "onboard a teammate": [
        "grant {tool} access",
        "share the {project} overview",
        "pair with {person} for a day",
    ],
    "triage an incident": [
        "acknowledge in {tool}",
        "open an incident channel",
        "assign an owner for {project}",
        "write the timeline",
    ],
}
PREFS = [
    ("dark mode", "the editor"),
    ("short summaries", "reports"),
    ("email", "follow-ups"),
    ("morning slots", "meetings"),
    ("bullet points", "notes"),
    ("metric units", "estimates"),
]
COFFEE = ["flat white", "espresso", "oat latte", "filter coffee"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]
# A few writes that carry personal data or secrets, as agents really produce them; redaction
# replaces the values with tokens before anything is stored.
SENSITIVE = [
    "{name}'s work email is {slug}@example.com",
    "Call {person} on +1 415 555 01{n2} about {project}",
    "The staging API key for {project} is sk_live_{hex}",
]


def _fill(template: str, who: str, info: dict[str, Any], rng: random.Random) -> str:
    pref, thing = rng.choice(PREFS)
    return template.format(
        name=who.capitalize() if who != "dev-team" else "The team",
        slug=who.replace("-", ""),
        person=rng.choice(info["people"]),
        project=rng.choice(info["projects"]),
        tool=rng.choice(info["tools"]),
        role=info["role"],
        city=info["city"],
        pref=pref,
        thing=thing,
        month=rng.choice(MONTHS),
        day=rng.choice(DAYS),
        hour=rng.choice([9, 10, 11, 14]),
        n=rng.choice([5, 10, 25, 50]),
        n2=f"{rng.randint(0, 99):02d}",
        coffee=rng.choice(COFFEE),
        hex="".join(rng.choice("0123456789abcdef") for _ in range(24)),
    )


def demo_items(total: int = 2000, seed: int = 7, now: datetime | None = None) -> list[MemoryInput]:
    """The demo's memories, oldest first: ~45% episodic, ~45% semantic, the rest procedural."""
    rng = random.Random(seed)
    now = now or datetime.now(UTC)
    start = now - timedelta(days=240)
    items: list[MemoryInput] = []
    who_list = list(PEOPLE)
    n_proc = max(total // 20, 8)
    n_epi = (total - n_proc) // 2
    n_sem = total - n_proc - n_epi
    for i in range(n_epi):
        who = who_list[i % len(who_list)]
        info = PEOPLE[who]
        when = start + timedelta(minutes=rng.randint(0, 240 * 24 * 60))
        summary = _fill(rng.choice(EPISODES), who, info, rng)
        items.append(
            MemoryInput(
                text=summary,
                tier="episodic",
                principal=who,
                agent=rng.choice(info["agents"]),
                tags=[rng.choice(["meeting", "planning", "debugging", "review", "chat"])],
                importance=round(rng.uniform(0.2, 0.9), 2),
                created_at=when,
                extra={
                    "session": f"s-{who}-{i // 6:04d}",
                    "started_at": when,
                    "ended_at": when + timedelta(minutes=rng.randint(5, 90)),
                    "events": [_fill(rng.choice(EVENTS), who, info, rng) for _ in range(rng.randint(2, 4))],
                    "derived_facts": [_fill(rng.choice(FACTS), who, info, rng)] if rng.random() < 0.3 else [],
                },
            )
        )
    for i in range(n_sem):
        who = who_list[i % len(who_list)]
        info = PEOPLE[who]
        when = start + timedelta(minutes=rng.randint(0, 240 * 24 * 60))
        template = rng.choice(SENSITIVE) if rng.random() < 0.03 else rng.choice(FACTS)
        items.append(
            MemoryInput(
                text=_fill(template, who, info, rng),
                tier="semantic",
                principal=who,
                agent=rng.choice(info["agents"]),
                tags=[rng.choice(["preference", "project", "people", "ops"])],
                importance=round(rng.uniform(0.3, 1.0), 2),
                pinned=rng.random() < 0.03,
                created_at=when,
                extra={"confidence": round(rng.uniform(0.5, 0.99), 2)},
            )
        )
    names = list(PROCEDURES)
    for i in range(n_proc):
        who = who_list[i % len(who_list)]
        info = PEOPLE[who]
        # Each principal gets every routine, several in more than one version.
        which = (i // len(who_list)) % len(names)
        name = _fill(names[which], who, info, random.Random(f"{who}{which}"))
        steps = [_fill(s, who, info, rng) for s in PROCEDURES[names[which]]]
        if rng.random() < 0.5:
            steps.append(
                rng.choice(["double-check with the owner", "log it in the tracker", "post a summary"])
            )
        when = start + timedelta(days=rng.randint(0, 239))
        items.append(
            MemoryInput(
                text=f"{name}: " + "; ".join(steps),
                tier="procedural",
                principal=who,
                agent=rng.choice(info["agents"]),
                tags=["routine"],
                importance=0.7,
                created_at=when,
                extra={"name": name, "steps": steps},
            )
        )
    items.sort(key=lambda it: it.created_at or now)
    return items


def build_demo(
    path: str | Path,
    *,
    total: int = 2000,
    seed: int = 7,
    store: Store | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Store:
    """Write the demo memories into a store at ``path`` (which should be new or empty)."""
    store = store or Store.open(path)
    items = demo_items(total, seed)
    batch = 256
    for start in range(0, len(items), batch):
        store.remember_many(items[start : start + batch])
        if progress:
            progress(min(start + batch, len(items)), len(items))
    store.remember_many(derived_facts(store))
    for principal in sorted(PEOPLE):
        supersede_own_updates(store, principal)
    _curate(store, seed)
    for tier in ("episodic", "semantic", "procedural"):
        store.engine.compact(tier)
        store.engine.ensure_indexes(tier)
    return store


def derived_facts(store: Store) -> list[MemoryInput]:
    """One semantic fact per statement the store's episodes derived, per principal: its sources the
    episodes that derived it (one evidence each), as old as the first of them, reinforced by the last."""
    episodes = (
        store.engine.table("episodic")
        .to_lance()
        .to_table(
            columns=["id", "principal", "derived_facts", "started_at", "created_at"],
            filter=F.eq("state", "active"),
        )
        .to_pylist()
    )
    found: dict[tuple[str, str], list[tuple[datetime, str]]] = {}
    for ep in episodes:
        when = ep.get("started_at") or ep["created_at"]
        for text in ep.get("derived_facts") or []:
            if text and text.strip():
                found.setdefault((ep["principal"], text.strip()), []).append((when, ep["id"]))
    inputs = []
    for (principal, text), seen in sorted(found.items()):
        seen.sort()
        inputs.append(
            MemoryInput(
                text=text,
                tier="semantic",
                principal=principal,
                agent=CONSOLIDATION_AGENT,
                force=True,
                tags=["derived"],
                created_at=seen[0][0],
                meta={"origin": "consolidation", "kinds": ["derived"]},
                extra={
                    "sources": [ep_id for _, ep_id in seen],
                    "evidence_count": len(seen),
                    "last_reinforced_at": seen[-1][0],
                },
            )
        )
    return inputs


_LINKS = {"about", "for", "to", "on", "in", "at", "of", "with", "from", "by", "and", "or", "but", "into"}


def new_value(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` say the same thing up to their last words, which differ and are one value
    each: one subject and relation given two values ("The deadline for X is March" / "... is May"), not
    two statements about different things ("... about X on Slack" / "... about Y on Email")."""
    first, second = differing_spans(a, b)
    if not first or not second:
        return False
    if any(w.casefold() in _LINKS for w in (*first.split(), *second.split())):
        return False
    wa, wb = a.split(), b.split()
    same_end = wa[-1].strip(".,;:!").casefold() == wb[-1].strip(".,;:!").casefold()
    common = min(len(wa) - len(first.split()), len(wb) - len(second.split()))
    return not same_end and common >= 2


def supersede_own_updates(store: Store, principal: str) -> list[tuple[str, str]]:
    """Each active fact of ``principal`` that a newer fact by the same agent contradicts is deprecated,
    superseded by the first such newer fact: the agent recorded a new value of the same thing. Pairs by
    different writers are left alone (a person decides those). Returns (deprecated, successor) pairs."""
    facts = (
        store.engine.table("semantic")
        .to_lance()
        .to_table(
            columns=["id", "text", "agent", "created_at", "pinned", "meta", "vector"],
            filter=F.all_of(F.eq("principal", principal), F.eq("state", "active")),
        )
        .to_pylist()
    )
    by_id = {f["id"]: f for f in facts}
    parsed = {f["id"]: parse_statement(f["text"] or "") for f in facts}
    newer: dict[str, list[dict[str, Any]]] = {}
    for a_id, b_id in contradicting_pairs(facts, parsed):
        a, b = by_id[a_id], by_id[b_id]
        if a.get("agent") != b.get("agent") or a["created_at"] == b["created_at"]:
            continue
        if not new_value(a["text"] or "", b["text"] or ""):
            continue  # they clash somewhere in the middle: not one value replacing another
        old, new = (a, b) if (a["created_at"], a["id"]) < (b["created_at"], b["id"]) else (b, a)
        newer.setdefault(old["id"], []).append(new)
    done: list[tuple[str, str]] = []
    for old_id, successors in sorted(newer.items()):
        if by_id[old_id].get("pinned"):
            continue  # a pinned fact is a person's choice
        successor = min(successors, key=lambda f: (f["created_at"], f["id"]))
        done.append((old_id, successor["id"]))
    deprecate_many(store.engine, principal, [(old, "replaced by a newer value", new) for old, new in done])
    return done


def _curate(store: Store, seed: int) -> None:
    """A little more history, as a real store has: some edits and recalls."""
    rng = random.Random(seed + 1)
    facts = store.list(tier="semantic", state="active", limit=60, order_by="created_at", descending=False)
    for memory in [m for m in facts if not m.sources][:6]:
        store.edit(memory.id, memory.text + " (confirmed)", agent="assistant")
    queries = ["project deadline", "meeting preferences", "who owns the service", "deploy steps", "coffee"]
    for principal in ("alice", "bob", "carol"):
        for q in rng.sample(queries, 3):
            store.recall(q, principal=principal, agent="assistant", k=5, source="demo")
    store.close()
