"""add, recall, list, show, pin, unpin, edit, deprecate, undeprecate."""

from __future__ import annotations

import argparse
import sys

from memdeck.cli._common import (
    add_json,
    open_store,
    parse_csv,
    positive_int,
    print_json,
    print_memory,
    print_memory_line,
    scope_of,
    short,
)
from memdeck.core.config import load_profile, parse_weights
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("add", help="remember one memory")
    p.add_argument("text", help="the memory's text ('-' reads standard input)")
    p.add_argument("--tier", required=True, help="episodic, semantic or procedural")
    p.add_argument("--principal", required=True, help="whose memory this is")
    p.add_argument("--agent", default="user", help="who wrote it")
    p.add_argument("--tags", help="comma-separated tags")
    p.add_argument("--importance", default=0.5, help="0 to 1 (default 0.5)")
    p.add_argument("--pinned", action="store_true")
    p.add_argument("--name", help="procedure name (procedural tier)")
    p.add_argument("--session", help="session id (episodic tier)")
    p.add_argument("--source", action="append", help="source episode id (semantic tier; repeatable)")
    p.add_argument("--force", action="store_true", help="store even if the formation filter would skip it")
    p.add_argument("--expires-in", help="forget it after this long, e.g. 90s, 30m, 12h, 7d, 2w")
    p.add_argument("--expires-at", help="forget it at this ISO 8601 time")
    add_json(p)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("recall", help="recall memories for a query, with score components")
    p.add_argument("query")
    p.add_argument("--principal", required=True, action="append", help="whose memories (repeatable)")
    p.add_argument("--agent", help="the recalling agent (logged in the trace)")
    p.add_argument("--tier", action="append", help="tier to search (repeatable; default all)")
    p.add_argument("--k", type=positive_int, default=10)
    p.add_argument("--weights", help="e.g. relevance=0.6,recency=0.2,half_life.episodic=14")
    p.add_argument("--profile", help="a saved weight profile")
    p.add_argument("--include-deprecated", action="store_true")
    p.add_argument("--since", help="only memories written at or after this ISO 8601 date or time")
    p.add_argument("--until", help="only memories written at or before this ISO 8601 date or time")
    p.add_argument("--tag", action="append", help="only memories with this tag (repeatable: all of them)")
    p.add_argument("--written-by", help="only memories written by this agent")
    p.add_argument("--min-importance", help="only memories with at least this importance (0-1)")
    add_json(p)
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("list", help="list memories, newest first")
    p.add_argument("--principal", action="append")
    p.add_argument("--tier")
    p.add_argument("--agent")
    p.add_argument("--tag")
    p.add_argument("--state", help="active, deprecated (default: both)")
    p.add_argument("--pinned", action="store_true", help="only pinned memories")
    p.add_argument("--since", help="ISO date or time")
    p.add_argument("--until", help="ISO date or time")
    p.add_argument("--sort", default="created_at", help="created_at, updated_at, importance, access_count")
    p.add_argument("--asc", action="store_true", help="oldest / smallest first")
    p.add_argument("--limit", type=positive_int, default=50)
    p.add_argument("--offset", type=int, default=0)
    add_json(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="show one memory with its history")
    p.add_argument("id")
    p.add_argument("--principal", action="append")
    add_json(p)
    p.set_defaults(func=cmd_show)

    for name, helptext in (("pin", "pin a memory"), ("unpin", "unpin a memory"), ("undeprecate", "restore a deprecated memory")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("ids", nargs="+", metavar="ID")
        p.add_argument("--principal", action="append")
        add_json(p)
        p.set_defaults(func=cmd_simple, action=name)

    p = sub.add_parser("edit", help="replace a memory's text (a new version; the old one goes to history)")
    p.add_argument("id")
    p.add_argument("text")
    p.add_argument("--agent", default="user")
    p.add_argument("--principal", action="append")
    add_json(p)
    p.set_defaults(func=cmd_edit)

    p = sub.add_parser("deprecate", help="deprecate a memory (left out of recall, reversible)")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--reason", required=True)
    p.add_argument("--superseded-by", help="the memory that replaces it")
    p.add_argument("--principal", action="append")
    add_json(p)
    p.set_defaults(func=cmd_deprecate)


def _read_text(value: str) -> str:
    if value == "-":
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise MemdeckError("standard input is not valid UTF-8") from None
    return value


def cmd_add(args: argparse.Namespace) -> int:
    from memdeck.core.records import STORED_TIERS

    if args.tier not in STORED_TIERS:
        raise MemdeckError(f"unknown tier {args.tier!r}; use one of: {', '.join(STORED_TIERS)}")
    extra = {}
    if args.name:
        extra["name"] = args.name
    if args.session:
        extra["session"] = args.session
    if args.source:
        extra["sources"] = args.source
    from memdeck.core.storage.expiry import expiry_time

    expires = expiry_time(args.expires_in, args.expires_at)
    store = open_store(args, create=True)
    result = store.remember(
        _read_text(args.text), tier=args.tier, principal=args.principal, agent=args.agent,
        tags=parse_csv(args.tags), importance=args.importance, pinned=args.pinned, force=args.force,
        expires_at=expires, **extra,
    )
    if args.json:
        body = result.memory.to_json() if result.memory else {}
        print_json({"action": result.action, "reason": result.reason, "memory": body})
    elif result.action == "skipped":
        print(f"skipped: {result.reason} (use --force to store it anyway)")
    else:
        m = result.memory
        print(f"{result.action} {m.id} ({m.tier}, {m.principal})")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    from memdeck.core.recall.scoring import source_label

    profile = load_profile(args.profile) if args.profile else None
    if args.weights:
        profile = parse_weights(args.weights, profile or load_profile(None))
    from memdeck.core.filters import RecallFilter

    filters = RecallFilter.of(args.since, args.until, args.tag, args.written_by, args.min_importance)
    store = open_store(args)
    result = store.recall(
        args.query, principal=args.principal, agent=args.agent, tiers=args.tier, k=args.k, profile=profile,
        include_deprecated=args.include_deprecated, source="cli", filters=filters,
    )
    if result.notice:
        print(f"memdeck: note: {result.notice}", file=sys.stderr)
    if args.json:
        print_json(result.to_json())
        return 0
    if not result.items:
        print("no memories matched")
    for n, item in enumerate(result.items, start=1):
        c = item.components
        ranks = item.ranks
        print(f"{n:>2}. {item.score:.3f}  {item.memory.id}  [{item.memory.tier}]  {short(item.memory.text, 70)}")
        print(
            f"     rel {c['relevance']:.2f}  rec {c['recency']:.2f}  freq {c['frequency']:.2f}  "
            f"imp {c['importance']:.2f}  pin {c['pinned']:.0f}  trust {c['trust']:.2f}  graph {c['graph']:.2f}  "
            f"| vector #{ranks['vector'] or '-'}  keyword #{ranks['keyword'] or '-'}  graph #{ranks.get('graph') or '-'}"
        )
        where = source_label(item.memory)
        if where:
            print(f"     from {where}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from memdeck.core.records import parse_time

    if args.offset < 0:
        raise MemdeckError("--offset must not be negative")
    store = open_store(args)
    memories = store.list(
        scope_of(args), tier=args.tier, state=args.state, agent=args.agent, tag=args.tag,
        pinned=True if args.pinned else None, since=parse_time(args.since), until=parse_time(args.until),
        limit=args.limit, offset=args.offset, order_by=args.sort, descending=not args.asc,
    )
    if args.json:
        print_json([m.to_json() for m in memories])
    else:
        for m in memories:
            print_memory_line(m)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    store = open_store(args)
    scope = scope_of(args)
    memory = store.get(args.id, scope)
    history = store.history(args.id, scope)
    if args.json:
        body = memory.to_json()
        body["history"] = [
            {"version": h["version"], "text": h["text"], "agent": h["agent"], "edited_at": h["edited_at"]}
            for h in history
        ]
        print_json(body)
    else:
        print_memory(memory)
        for h in history:
            print(f"  v{h['version']} (replaced {h['edited_at']:%Y-%m-%d %H:%M}): {short(h['text'], 70)}")
    return 0


def cmd_simple(args: argparse.Namespace) -> int:
    store = open_store(args)
    scope = scope_of(args)
    done = []
    for mem_id in args.ids:
        if args.action == "pin":
            done.append(store.pin(mem_id, scope))
        elif args.action == "unpin":
            done.append(store.unpin(mem_id, scope))
        else:
            done.append(store.undeprecate(mem_id, scope))
    if args.json:
        print_json([m.to_json() for m in done])
    else:
        for m in done:
            print(f"{args.action}ned {m.id}" if args.action != "undeprecate" else f"restored {m.id}")
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    store = open_store(args)
    memory = store.edit(args.id, _read_text(args.text), agent=args.agent, scope=scope_of(args))
    if args.json:
        print_json(memory.to_json())
    else:
        print(f"edited {memory.id} (now version {memory.version})")
    return 0


def cmd_deprecate(args: argparse.Namespace) -> int:
    store = open_store(args)
    scope: Scope = scope_of(args)
    done = [store.deprecate(i, args.reason, superseded_by=args.superseded_by, scope=scope) for i in args.ids]
    if args.json:
        print_json([m.to_json() for m in done])
    else:
        for m in done:
            print(f"deprecated {m.id}" + (f" (superseded by {m.superseded_by})" if m.superseded_by else ""))
    return 0
