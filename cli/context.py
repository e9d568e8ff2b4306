"""`memdeck context QUERY --principal P --budget N`: the working tier, a context pack for a prompt; and
`memdeck ledger`: what each agent was given, in which session (the injection ledger)."""

from __future__ import annotations

import argparse

from memdeck.cli._common import (
    add_json,
    memory_id,
    note_unknown_principals,
    open_store,
    positive_int,
    principal,
    print_json,
    safe,
    scope_of,
    tier,
)


def _budget(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"budget must be a whole number of tokens, got {value!r}") from None
    if not 0 <= number <= 1_000_000:
        raise argparse.ArgumentTypeError(f"budget must be from 0 to 1,000,000 tokens, got {value!r}")
    return number


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "context",
        help="the context pack for a query: pinned first, then recalled, never over the token budget",
    )
    p.add_argument("query", help="what the prompt is about, in words")
    p.add_argument("--principal", required=True, type=principal, help="whose memories")
    p.add_argument(
        "--budget",
        type=_budget,
        default=1000,
        help="tokens of the embedding model's tokenizer (default 1000)",
    )
    p.add_argument(
        "--agent", type=principal, help="the agent the pack is for (recorded in the injection ledger)"
    )
    p.add_argument("--session", help="the agent's session (recorded in the injection ledger)")
    p.add_argument("--tier", action="append", type=tier, help="tier to draw from (repeatable; default all)")
    p.add_argument(
        "-k", "--k", type=positive_int, default=20, help="recalled candidates to fill the pack from"
    )
    add_json(p)
    p.set_defaults(func=cmd_context)

    p = sub.add_parser(
        "ledger", help="what agents were given (context packs, agent recalls), by session or memory"
    )
    p.add_argument("--agent", type=principal, help="only what this agent was given")
    p.add_argument("--session", help="only what was given in this session")
    p.add_argument("--memory", type=memory_id, help="the sessions that were given this memory id")
    p.add_argument(
        "--principal", action="append", type=principal, help="only this principal's memories (repeatable)"
    )
    p.add_argument(
        "--limit", type=positive_int, default=100, help="injections to show, newest first (default 100)"
    )
    add_json(p)
    p.set_defaults(func=cmd_ledger)


def cmd_context(args: argparse.Namespace) -> int:
    store = open_store(args, embeds=True)
    pack = store.context(
        args.query,
        principal=args.principal,
        budget_tokens=args.budget,
        agent=args.agent,
        session=args.session,
        tiers=args.tier,
        k=args.k,
        source="cli-context",
    )
    if not pack.included and not pack.left_out:
        note_unknown_principals(store, [args.principal])
    if args.json:
        print_json(pack.to_json())
        return 0
    if pack.text:
        print(safe(pack.text, keep_newlines=True))
    left = pack.left_out
    note = f", {len(left)} left out for budget: {', '.join(e.memory.id for e in left)}" if left else ""
    print(f"-- {pack.used} of {pack.budget} tokens, {len(pack.included)} memories{note}")
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from memdeck.core.recall.traces import injections, sessions_using

    store = open_store(args)
    scope = scope_of(args)
    if args.memory and not (args.agent or args.session):
        rows = sessions_using(store.engine, args.memory, scope)
        if args.json:
            print_json(rows)
        else:
            for r in rows:
                print(
                    f"{safe(r['agent'] or '-'):<16} session {safe(r['session'] or '-'):<24} {r['times']}x, last {r['last']}"
                )
            if not rows:
                print("no session was given this memory")
        return 0
    given = injections(
        store.engine,
        scope=scope,
        agent=args.agent,
        session=args.session,
        memory_id=args.memory,
        limit=args.limit,
    )
    if args.json:
        print_json(given)
        return 0
    for g in given:
        print(
            f"{g['given_at']}  {safe(g['agent'] or '-')}  session {safe(g['session'] or '-')}  {g['kind']}: "
            f"{', '.join(g['ids']) or '(nothing)'}"
        )
    if not given:
        print("nothing recorded")
    return 0
