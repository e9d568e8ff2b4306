"""add, recall, list, show, pin, unpin, edit, deprecate, undeprecate."""

from __future__ import annotations

import argparse
from typing import Any

from memdeck.cli._common import (
    DURATION_HELP,
    add_json,
    importance,
    memory_id,
    model_loading,
    non_negative_int,
    note,
    note_unknown_principals,
    open_store,
    parse_csv,
    positive_int,
    principal,
    print_json,
    print_memory,
    print_memory_line,
    scope_of,
    short,
    since,
    sort_field,
    text_arg,
    tier,
    until,
)
from memdeck.core.config import load_profile, parse_weights
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.names import MEMORY_TYPES

TYPE_HELP = ", ".join(MEMORY_TYPES)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("add", help="remember one memory")
    p.add_argument("text", help="the memory's text ('-' reads standard input)")
    p.add_argument("--tier", required=True, type=tier, help="episodic, semantic or procedural")
    p.add_argument("--principal", required=True, type=principal, help="whose memory this is")
    p.add_argument("--agent", default="user", type=principal, help="who wrote it (default: user)")
    p.add_argument("--tags", help="comma-separated tags, e.g. work,travel")
    p.add_argument("--importance", default=0.5, type=importance, help="0 to 1 (default 0.5)")
    p.add_argument("--pinned", action="store_true", help="pin it: always first in a context pack")
    p.add_argument(
        "--type",
        choices=MEMORY_TYPES,
        metavar="TYPE",
        help=f"what it is: {TYPE_HELP} (default: inferred from the text, or none)",
    )
    p.add_argument("--name", help="procedure name (procedural tier; default: the first line)")
    p.add_argument("--when", help="when to use it (procedural tier)")
    p.add_argument("--session", help="session id (episodic tier)")
    p.add_argument(
        "--source", action="append", type=memory_id, help="source episode id (semantic tier; repeatable)"
    )
    p.add_argument("--force", action="store_true", help="store even if the formation filter would skip it")
    p.add_argument("--expires-in", help="forget it after this long, e.g. 90s, 30m, 12h, 7d, 2w")
    p.add_argument("--expires-at", help="forget it at this ISO 8601 time")
    add_json(p)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("recall", help="recall memories for a query, with score components")
    p.add_argument("query", help="what to recall, in words")
    p.add_argument(
        "--principal", required=True, action="append", type=principal, help="whose memories (repeatable)"
    )
    p.add_argument("--agent", type=principal, help="the recalling agent (logged in the trace)")
    p.add_argument("--tier", action="append", type=tier, help="tier to search (repeatable; default all)")
    p.add_argument("-k", "--k", type=positive_int, default=10, help="how many results (default 10)")
    p.add_argument("--weights", help="e.g. relevance=0.6,recency=0.2,half_life.episodic=14")
    p.add_argument("--profile", help="a saved weight profile")
    p.add_argument("--include-deprecated", action="store_true", help="recall deprecated memories too")
    p.add_argument("--since", type=since, help=f"only memories written at or after this: {DURATION_HELP}")
    p.add_argument(
        "--until",
        type=until,
        help="only memories written at or before this (as --since; a bare date includes that day)",
    )
    p.add_argument("--tag", action="append", help="only memories with this tag (repeatable: all of them)")
    p.add_argument("--written-by", type=principal, help="only memories written by this agent")
    p.add_argument(
        "--min-importance", type=importance, help="only memories with at least this importance (0-1)"
    )
    p.add_argument(
        "--type",
        action="append",
        choices=MEMORY_TYPES,
        metavar="TYPE",
        help=f"only memories of this type (repeatable: any of them): {TYPE_HELP}",
    )
    add_json(p)
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("list", help="list memories, newest first")
    p.add_argument("--principal", action="append", type=principal, help="only this principal's (repeatable)")
    p.add_argument("--tier", type=tier, help="only this tier: episodic, semantic or procedural")
    p.add_argument("--agent", type=principal, help="only memories written by this agent")
    p.add_argument("--tag", help="only memories with this tag")
    p.add_argument("--state", choices=["active", "deprecated"], help="active or deprecated (default: both)")
    p.add_argument("--pinned", action="store_true", help="only pinned memories")
    p.add_argument("--type", choices=MEMORY_TYPES, metavar="TYPE", help=f"only this type: {TYPE_HELP}")
    p.add_argument("--since", type=since, help=f"only memories written at or after this: {DURATION_HELP}")
    p.add_argument(
        "--until",
        type=until,
        help="only memories written at or before this (as --since; a bare date includes that day)",
    )
    p.add_argument(
        "--sort",
        default="created_at",
        type=sort_field,
        help="created_at (default), updated_at, importance, access_count, last_accessed",
    )
    p.add_argument("--asc", action="store_true", help="oldest / smallest first")
    p.add_argument("--limit", type=positive_int, default=50, help="rows to show (default 50)")
    p.add_argument("--offset", type=non_negative_int, default=0, help="rows to skip first (default 0)")
    add_json(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="show one memory with its history")
    p.add_argument("id", type=memory_id, help="the memory's id")
    p.add_argument(
        "--principal", action="append", type=principal, help="only if it is this principal's (repeatable)"
    )
    add_json(p)
    p.set_defaults(func=cmd_show)

    for name, helptext in (
        ("pin", "pin a memory"),
        ("unpin", "unpin a memory"),
        ("undeprecate", "restore a deprecated memory"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("ids", nargs="+", metavar="ID", type=memory_id, help="the memories' ids")
        p.add_argument(
            "--principal",
            action="append",
            type=principal,
            help="only if they are this principal's (repeatable)",
        )
        add_json(p)
        p.set_defaults(func=cmd_simple, action=name)

    p = sub.add_parser("edit", help="replace a memory's text (a new version; the old one goes to history)")
    p.add_argument("id", type=memory_id, help="the memory's id")
    p.add_argument("text", help="the new text ('-' reads standard input)")
    p.add_argument("--agent", default="user", type=principal, help="who made the edit (default: user)")
    p.add_argument(
        "--principal", action="append", type=principal, help="only if it is this principal's (repeatable)"
    )
    add_json(p)
    p.set_defaults(func=cmd_edit)

    p = sub.add_parser("deprecate", help="deprecate a memory (left out of recall, reversible)")
    p.add_argument("ids", nargs="+", metavar="ID", type=memory_id, help="the memories' ids")
    p.add_argument("--reason", required=True, help="why (kept with the memory)")
    p.add_argument("--superseded-by", type=memory_id, help="the memory that replaces it")
    p.add_argument(
        "--principal", action="append", type=principal, help="only if they are this principal's (repeatable)"
    )
    add_json(p)
    p.set_defaults(func=cmd_deprecate)


def cmd_add(args: argparse.Namespace) -> int:
    from memdeck.core.records import check_tags
    from memdeck.core.storage.expiry import expiry_time

    text = text_arg(args.text)
    tags = check_tags(parse_csv(args.tags))
    extra: dict[str, Any] = {}
    if args.name:
        extra["name"] = args.name
    if args.session:
        extra["session"] = args.session
    if args.source:
        extra["sources"] = args.source
    if args.type:
        extra["type"] = args.type
    if args.when is not None and args.tier != "procedural":
        raise MemdeckError("--when is for procedures (--tier procedural)")
    meta = {"when_to_use": text_arg(args.when, "--when")} if args.when is not None else None
    expires = expiry_time(args.expires_in, args.expires_at)
    store = open_store(args, create=True, embeds=True)
    result = store.remember(
        text,
        tier=args.tier,
        principal=args.principal,
        agent=args.agent,
        tags=tags,
        importance=args.importance,
        pinned=args.pinned,
        force=args.force,
        expires_at=expires,
        meta=meta,
        **extra,
    )
    if args.json:
        body = result.memory.to_json() if result.memory else {}
        print_json({"action": result.action, "reason": result.reason, "memory": body})
    elif result.action == "skipped" or result.memory is None:
        print(f"skipped: {result.reason} (use --force to store it anyway)")
    else:
        m = result.memory
        print(f"{result.action} {m.id} ({m.tier}, {m.principal})")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    # The model loads in a thread from the start: reading the filters below imports the store's records
    # (pyarrow), which the load then overlaps.
    loading = model_loading(getattr(args, "store", None))
    from memdeck.core.filters import RecallFilter
    from memdeck.core.recall.scoring import source_label

    profile = load_profile(args.profile) if args.profile else None
    if args.weights:
        profile = parse_weights(args.weights, profile or load_profile(None))
    filters = RecallFilter.of(
        args.since, args.until, args.tag, args.written_by, args.min_importance, types=args.type
    )
    store = open_store(args, loading=loading)
    result = store.recall(
        args.query,
        principal=args.principal,
        agent=args.agent,
        tiers=args.tier,
        k=args.k,
        profile=profile,
        include_deprecated=args.include_deprecated,
        source="cli",
        filters=filters,
    )
    if result.notice:
        note(result.notice)
    if not result.items:
        note_unknown_principals(store, args.principal)
    if args.json:
        # Each item names the model whose vectors scored it (the store's, `memdeck model use`).
        print_json([{**item, "model": store.engine.embedding_model} for item in result.to_json()])
        return 0
    if not result.items:
        print("no memories matched")
    for n, item in enumerate(result.items, start=1):
        c = item.components
        ranks = item.ranks
        print(
            f"{n:>2}. {item.score:.3f}  {item.memory.id}  [{item.memory.tier}]  {short(item.memory.text, 70)}"
        )
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
    from memdeck.core.storage.browse import BrowseQuery, page_with_total

    if args.since is not None and args.until is not None and args.since > args.until:
        raise MemdeckError("--since is after --until: nothing could match")
    query = BrowseQuery(
        tier=args.tier,
        state=args.state,
        agent=args.agent,
        tag=args.tag,
        pinned=True if args.pinned else None,
        since=args.since,
        until=args.until,
        order_by=args.sort,
        descending=not args.asc,
        type=args.type,
    )
    store = open_store(args)
    # --json prints whole records (as show and export do); the table needs only the listing's columns.
    memories, total = page_with_total(
        store.engine, scope_of(args), query, args.offset, args.limit, with_meta=args.json
    )
    if args.json:
        print_json([m.to_json() for m in memories])
    else:
        for m in memories:
            print_memory_line(m)
    after = total - args.offset - len(memories)
    if after > 0:
        shown = f"rows {args.offset + 1}-{args.offset + len(memories)}" if memories else "no rows"
        note(
            f"{shown} of {total}; {after} more: see them with --offset {args.offset + len(memories)} "
            f"or a larger --limit (e.g. --limit {min(total, args.offset + len(memories) + max(args.limit, 50))})"
        )
    elif not memories and not note_unknown_principals(store, args.principal):
        note("no memory matches these filters" if total == 0 else f"no rows after --offset {args.offset}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from memdeck.core.recall.feedback import outcomes

    store = open_store(args)
    scope = scope_of(args)
    memory = store.get(args.id, scope)
    history = store.history(args.id, scope)
    # A procedure shows how often it worked and failed when followed (memdeck feedback ID --worked/--failed);
    # the feedback log is read for procedures only, the only memories whose outcomes are shown.
    worked, failed = (
        outcomes(store.engine, [memory.id]).get(memory.id, (0, 0)) if memory.tier == "procedural" else (0, 0)
    )
    if args.json:
        body = memory.to_json()
        body["history"] = [
            {"version": h["version"], "text": h["text"], "agent": h["agent"], "edited_at": h["edited_at"]}
            for h in history
        ]
        if memory.tier == "procedural":
            body["outcomes"] = {"worked": worked, "failed": failed}
        print_json(body)
    else:
        print_memory(memory)
        if memory.tier == "procedural":
            when = memory.meta.get("when_to_use")
            print(f"when to use  {short(str(when), 200) if when else '(not given)'}")
            print(f"outcomes     worked {worked}, failed {failed}")
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
    text = text_arg(args.text)
    store = open_store(args)
    memory = store.edit(args.id, text, agent=args.agent, scope=scope_of(args))
    if args.json:
        print_json(memory.to_json())
    else:
        print(f"edited {memory.id} (now version {memory.version})")
    return 0


def cmd_deprecate(args: argparse.Namespace) -> int:
    reason = text_arg(args.reason, "reason")
    store = open_store(args)
    scope: Scope = scope_of(args)
    done = [store.deprecate(i, reason, superseded_by=args.superseded_by, scope=scope) for i in args.ids]
    if args.json:
        print_json([m.to_json() for m in done])
    else:
        for m in done:
            print(f"deprecated {m.id}" + (f" (superseded by {m.superseded_by})" if m.superseded_by else ""))
    return 0
