"""Checking parsed JSON against a typed shape (TypedDict, list, dict, union, Literal): the declared types and
what memdeck really writes cannot drift apart unnoticed."""

from __future__ import annotations

import types
from typing import (
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)


def _optional_keys(hint: Any) -> set[str]:
    """Keys a TypedDict may lack: declared with total=False or NotRequired (read from the annotations too, since
    a module with postponed annotations leaves NotRequired out of ``__optional_keys__`` on Python 3.11)."""
    extras = get_type_hints(hint, include_extras=True)
    optional = set(hint.__optional_keys__)
    for key, value in extras.items():
        if get_origin(value) is NotRequired:
            optional.add(key)
        elif get_origin(value) is Required:
            optional.discard(key)
    return optional


def mismatches(value: Any, hint: Any, where: str = "value") -> list[str]:
    """Where ``value`` departs from the type ``hint``: missing or undeclared keys, wrong value types."""
    if hint is Any:
        return []
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        hints = get_type_hints(hint)
        required = set(hints) - _optional_keys(hint)
        out = [f"{where}: required key {k!r} missing" for k in sorted(required - value.keys())]
        out += [f"{where}: key {k!r} is not declared" for k in sorted(value.keys() - hints.keys())]
        for key in sorted(value.keys() & hints.keys()):
            out += mismatches(value[key], hints[key], f"{where}.{key}")
        return out
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        tries = [mismatches(value, arm, where) for arm in get_args(hint)]
        return [] if any(not t for t in tries) else [f"{where}: {value!r} fits none of {hint}"]
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} is not one of {get_args(hint)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        (item,) = get_args(hint)
        return [p for n, v in enumerate(value) for p in mismatches(v, item, f"{where}[{n}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        key_type, item = get_args(hint)
        return [
            p for k, v in value.items() for p in mismatches(k, key_type, where) + mismatches(v, item, where)
        ]
    if hint is type(None):
        return [] if value is None else [f"{where}: expected null, got {value!r}"]
    if hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected an integer, got {value!r}"]
    if hint is float:  # JSON writes 1.0 as 1.0, but a whole number computed as int stays int
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected a number, got {value!r}"]
    if hint in (str, bool):
        return [] if isinstance(value, hint) else [f"{where}: expected {hint.__name__}, got {value!r}"]
    raise AssertionError(f"{where}: no rule to check {hint!r}")
