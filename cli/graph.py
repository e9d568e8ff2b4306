"""`memdeck entities`, `memdeck related NAME`, `memdeck path A B`: the graph of entities and relations."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from memdeck.cli._common import add_json, open_store, positive_int, principal, print_json, safe, scope_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("entities", help="entities per principal, most mentioned first")
    p.add_argument(
        "--principal",
        action="append",
        type=principal,
        help="whose entities (repeatable; default every principal)",
    )
    add_json(p)
    p.set_defaults(func=cmd_entities)

    p = sub.add_parser("related", help="the entities within N relations of an entity")
    p.add_argument("name", help="the entity, as written (case-insensitive)")
    p.add_argument("--principal", required=True, type=principal, help="whose graph")
    p.add_argument("--depth", type=positive_int, default=1, help="relations to follow (1-6, default 1)")
    add_json(p)
    p.set_defaults(func=cmd_related)

    p = sub.add_parser("path", help="the shortest chain of relations between two entities")
    p.add_argument("a", help="the first entity, as written (case-insensitive)")
    p.add_argument("b", help="the second entity, as written (case-insensitive)")
    p.add_argument("--principal", required=True, type=principal, help="whose graph")
    add_json(p)
    p.set_defaults(func=cmd_path)


def _relation(via: Mapping[str, Any] | None) -> str:
    if not via:
        return ""
    text = f"{via['subject']} {'not ' if via['negated'] else ''}{via['predicate']} {via['object']}"
    when = [
        f"from {via['valid_from']}" if via["valid_from"] else "",
        f"until {via['valid_until']}" if via["valid_until"] else "",
    ]
    when_text = " ".join(w for w in when if w)
    return safe(text + (f" ({when_text})" if when_text else ""))


def cmd_entities(args: argparse.Namespace) -> int:
    rows = open_store(args).entities(scope_of(args))
    if args.json:
        print_json(rows)
        return 0
    for e in rows:
        print(
            f"{safe(e['principal']):<14} {safe(e['name']):<32} {e['kind']:<12} "
            f"{e['mentions']:>5} memories {e['relations']:>4} relations"
        )
    if not rows:
        print("no entities")
    return 0


def cmd_related(args: argparse.Namespace) -> int:
    from memdeck.core.graph.memory.query import check_depth

    found = open_store(args).related(args.principal, args.name, check_depth(args.depth))
    if args.json:
        print_json(found)
        return 0
    print(f"{safe(found['entity']['name'])} ({found['entity']['kind']}), depth {found['depth']}:")
    for item in found["related"]:
        print(f"  {item['depth']}  {safe(item['name']):<32} {_relation(item['via'])}")
    if not found["related"]:
        print("  no related entities")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    found = open_store(args).path(args.principal, args.a, args.b)
    if args.json:
        print_json(found)
        return 0
    if not found["found"]:
        print(f"no path from {safe(found['from']['name'])} to {safe(found['to']['name'])}")
        return 0
    for step in found["path"]:
        print(f"{safe(step['entity']['name'])}" + (f"    <- {_relation(step['via'])}" if step["via"] else ""))
    return 0
