"""A LangGraph store backed by memdeck: ``MemdeckStore``.

Install the framework with ``pip install 'memdeck[langgraph]'``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # the optional framework, never memdeck's own modules
    raise ImportError(
        "memdeck.integrations.langgraph needs LangGraph: pip install 'memdeck[langgraph]'"
    ) from exc

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.forget import raise_unverified
from memdeck.core.records import check_principal, now
from memdeck.core.sessions import AgentSession
from memdeck.core.storage.expiry import live_where

if TYPE_CHECKING:
    from memdeck.core.receipts import Receipt
    from memdeck.core.records import Memory, WriteResult
    from memdeck.core.store import Store

__all__ = ["MARKER_TAG", "MemdeckStore", "render_value"]

MARKER_TAG = "langgraph"
"""Every memory this store writes carries this tag (``memdeck list --tag langgraph``)."""
_NOINDEX_TAG = "lg-noindex"
_MAX_K = 1000
_COLUMNS = ["id", "principal", "text", "tags", "meta", "created_at"]


@dataclass
class _Row:
    """What the store reads of a memory it wrote (listing and lookups read only these columns)."""

    id: str
    principal: str
    text: str
    tags: list[str]
    meta: dict[str, Any]
    created_at: datetime


_SEPARATORS = ("\x1f", "\x1e")  # what joins a namespace's labels and its key before they are hashed


def _digest(parts: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]


def _plain(parts: Sequence[str]) -> bool:
    return not any(sep in part for part in parts for sep in _SEPARATORS)


def _json_digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=True).encode("ascii")).hexdigest()[:24]


def _ns_tag(prefix: Sequence[str]) -> str:
    """The tag of every item under ``prefix``. Labels joined with the separator are one string only when no
    label holds it: ("a\\x1fb",) and ("a", "b") would share a tag. A prefix with a separator in a label is
    hashed as a JSON list instead, under its own tag name, so it can meet no other prefix's tag (and the
    tags of plain prefixes, which stores already hold, stay as they were)."""
    if _plain(prefix):
        return f"lg-ns:{_digest(prefix)}"
    return f"lg-nsj:{_json_digest(list(prefix))}"


def _key_tag(namespace: Sequence[str], key: str) -> str:
    """The key memdeck holds for one item: unique per (namespace, key), as :func:`_ns_tag`."""
    if _plain([*namespace, key]):
        return "lg-key:" + _digest([*namespace, "\x1e", key])
    return "lg-keyj:" + _json_digest([list(namespace), key])


def _aware(value: datetime | None) -> datetime:
    if value is None:
        return now()
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def render_value(value: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """The text memdeck embeds and shows for a LangGraph value.

    With ``fields`` (LangGraph's index paths such as ``"memory"``, ``"a.b"``, ``"items[*].text"``), the texts
    at those paths, one per line. Otherwise (or when the paths find nothing, or for ``"$"``): a value with a
    single string field is that string; any other value is one ``field: value`` line per top-level field,
    non-strings as compact JSON.
    """
    if fields and list(fields) != ["$"]:
        texts: list[str] = []
        for path in fields:
            texts.extend(t for t in get_text_at_path(dict(value), path) if t and t.strip())
        if texts:
            return "\n".join(texts)
    if len(value) == 1:
        only = next(iter(value.values()))
        if isinstance(only, str) and only.strip():
            return only
    lines = [
        f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)}"
        for k, v in value.items()
    ]
    return "\n".join(lines) if lines else "{}"


def _check_value(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"a LangGraph store value must be a dict, got {type(value).__name__}")
    for k in value:
        if not isinstance(k, str):
            raise TypeError(f"a LangGraph store value must have string keys, got {k!r}")
    try:
        checked: dict[str, Any] = json.loads(json.dumps(dict(value), ensure_ascii=False, allow_nan=False))
        return checked
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a LangGraph store value must be JSON-serialisable: {exc}") from None


def _matches(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: equality (nested dicts and lists compared as JSON) or operators
    ``$eq $ne $gt $gte $lt $lte``."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {op!r}; use $eq, $ne, $gt, $gte, $lt or $lte")
    try:
        a, b = float(value), float(arg)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"unsupported namespace match type {condition.match_type!r}")
    return all(p == "*" or n == p for n, p in pairs)


class MemdeckStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are memdeck memories.

    Namespaces: ``(principal,)`` or ``(principal, agent, *rest)``. The first label is the memdeck principal
    (whose memory it is, the unit of scoping and of forgetting), the second the agent the memory is stamped
    with (``default_agent`` for one-label namespaces), and any further labels are kept as tags. The whole
    namespace and the key are kept in the memory's meta (``meta["langgraph"]``), so an item comes back
    under exactly the namespace and key it was put with.

    Values: a JSON dict, kept as ``meta["value"]``; the memory's text, which memdeck embeds, searches and
    shows, is :func:`render_value` of it (the index fields of ``index={"fields": [...]}`` or of
    ``put(..., index=[...])`` if given). ``index=False`` on a put keeps the item out of searches with a
    query (it is still found by key, by filter and by listing). Redaction applies: a value holding an
    e-mail address or a secret is stored and returned with the vault token in its place.

    Writes go to one tier (``tier``, default ``"semantic"``). ``put`` upserts: an unchanged value leaves the
    memory as it is; a changed one forgets the old memory (purged, with a signed receipt) and remembers the
    new one, keeping the item's ``created_at``. ``delete`` forgets with a signed receipt (``last_receipt``,
    and every receipt in ``receipts``). ``search`` with a query is :meth:`Store.recall` over the principal's
    memories in that namespace prefix (scores, components and the recall trace as for any recall; the
    item's ``score`` is memdeck's), narrowed to the namespace inside the query, then ``filter``, ``offset``
    and ``limit``; without a query it lists the
    namespace newest first. TTLs are not supported (memdeck's own expiry is ``expires_at`` and the tier TTL).

    Sessions: with ``tier="episodic"`` and ``session=...``, each put is an open episode of that memdeck
    session. :meth:`reflection_prompt` gives the prompt for a session's end (its episodes, as the MCP
    ``reflect`` prompt does) and :meth:`close_session` stores the model's digest (summary, facts with their
    source episodes, procedures) through the same checks as the MCP ``close_session`` tool, then closes the
    session so it is consolidated.
    """

    supports_ttl = False

    def __init__(
        self,
        store: Store,
        *,
        default_agent: str = "langgraph",
        tier: str = "semantic",
        index: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        forget_reason: str = "deleted through LangGraph",
        session: str | None = None,
    ) -> None:
        if tier not in ("semantic", "episodic", "procedural"):
            raise ValueError(f"tier must be semantic, episodic or procedural, got {tier!r}")
        if index is not None:
            unknown = set(index) - {"fields", "dims", "embed"}
            if unknown or "embed" in index:
                raise ValueError(
                    "memdeck embeds with its own model: index takes only 'fields' (and 'dims', ignored), "
                    f"got {sorted(index)}"
                )
        self.store = store
        self.default_agent = default_agent
        self.tier = tier
        self.fields: list[str] | None = list(index["fields"]) if index and index.get("fields") else None
        self.importance = importance
        self.forget_reason = forget_reason
        if session is not None and (not isinstance(session, str) or not session.strip() or "\x00" in session):
            raise ValueError(f"a session id must be a non-empty string, got {session!r}")
        self.session = session
        self.receipts: list[Receipt] = []
        self.last_recall: Any = None
        self._lock = threading.RLock()

    @property
    def last_receipt(self) -> Receipt | None:
        return self.receipts[-1] if self.receipts else None

    # --- BaseStore ---------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = []
        with self._lock:
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, PutOp):
                    self._put(op)
                    results.append(None)
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                else:
                    raise TypeError(f"unknown LangGraph store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # --- operations --------------------------------------------------------------------------------

    def _agent(self, namespace: tuple[str, ...]) -> str:
        return namespace[1] if len(namespace) > 1 else self.default_agent

    def _rows(self, principal: str | None, tag: str) -> list[_Row]:
        """The live, active memories of this tier with ``tag`` (of ``principal``, or of everyone), meta
        included, in one read."""
        where = F.all_of(
            F.eq("principal", check_principal(principal)) if principal is not None else None,
            F.eq("state", "active"),
            F.tag_contains(tag),
            live_where(self.store.engine, self.tier),
        )
        return self._to_rows(self.store.engine.scan(self.tier, _COLUMNS, where))

    @staticmethod
    def _to_rows(table: Any) -> list[_Row]:
        return [
            _Row(
                r["id"],
                r["principal"],
                r["text"],
                list(r["tags"] or ()),
                json.loads(r["meta"]) if r["meta"] else {},
                _aware(r["created_at"]),
            )
            for r in table.to_pylist()
        ]

    def _find(self, namespace: tuple[str, ...], key: str) -> _Row | None:
        found = [
            r
            for r in self._rows(namespace[0], _key_tag(namespace, key))
            if tuple((r.meta.get("langgraph") or {}).get("namespace") or ()) == namespace
            and (r.meta.get("langgraph") or {}).get("key") == key
        ]
        return max(found, key=lambda r: r.created_at) if found else None

    def _item(self, memory: Memory | _Row, score: float | None = None, search: bool = False) -> Item:
        lg = memory.meta.get("langgraph") or {}
        updated: datetime = memory.created_at or now()
        # A number, not a timestamp string: strings in meta are what a forget's checks search the store for.
        ts = lg.get("created_ts")
        created = datetime.fromtimestamp(ts, UTC) if isinstance(ts, (int, float)) else updated
        value = dict(memory.meta.get("value") or {})
        namespace = tuple(lg.get("namespace") or ())
        if search:
            return SearchItem(namespace, str(lg.get("key")), value, created, updated, score)
        return Item(
            value=value, key=str(lg.get("key")), namespace=namespace, created_at=created, updated_at=updated
        )

    def _get(self, op: GetOp) -> Item | None:
        if not op.namespace:
            return None
        memory = self._find(tuple(op.namespace), str(op.key))
        return self._item(memory) if memory is not None else None

    def _forget(self, memory: Memory | _Row) -> Receipt:
        receipt = self.store.forget([memory.id], self.forget_reason, Scope.of(memory.principal))
        self.receipts.append(receipt)
        raise_unverified(receipt)
        return receipt

    def _put(self, op: PutOp) -> None:
        namespace, key = tuple(op.namespace), str(op.key)
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if namespace[0] == "langgraph":
            raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {namespace}')
        if op.ttl is not None:
            raise NotImplementedError(
                "MemdeckStore does not support LangGraph TTLs; set an expiry in memdeck"
            )
        principal = check_principal(namespace[0])
        if op.value is None:
            found = self._find(namespace, key)
            if found is not None:
                self._forget(found)
            return
        value = _check_value(op.value)
        fields = None if op.index is False else (list(op.index) if op.index else self.fields)
        text = render_value(value, fields)
        tags = [MARKER_TAG, *namespace[2:], *(_ns_tag(namespace[:n]) for n in range(1, len(namespace) + 1))]
        if op.index is False:
            tags.append(_NOINDEX_TAG)
        lg = {"namespace": list(namespace), "key": key, "created_ts": now().timestamp()}
        # The key's lookup is part of the write (Store.remember(key=...)): a new key costs one write. A taken
        # key comes back as "exists" with the memory holding it, which is compared and, if changed, replaced.
        result = self._remember(text, namespace, key, principal, tags, {"langgraph": lg, "value": value})
        if result.action != "exists":
            return
        existing = result.memory
        assert existing is not None
        if (
            existing.meta.get("value") == self.store.engine.redact_value(value, principal)
            and existing.text == self.store.engine.redact(text, principal)
            and (_NOINDEX_TAG in existing.tags) == (op.index is False)
        ):
            return  # unchanged: nothing to replace
        lg["created_ts"] = (existing.meta.get("langgraph") or {}).get("created_ts") or lg["created_ts"]
        self._forget(existing)
        result = self._remember(text, namespace, key, principal, tags, {"langgraph": lg, "value": value})
        if result.action == "exists":
            raise MemdeckError(f"could not store {namespace}/{key}: another write holds its key")

    def _remember(
        self,
        text: str,
        namespace: tuple[str, ...],
        key: str,
        principal: str,
        tags: list[str],
        meta: dict[str, Any],
    ) -> WriteResult:
        for attempt in (text, f"{text}\n({'/'.join(namespace)}/{key})"):
            result = self.store.remember(
                attempt,
                tier=self.tier,
                principal=principal,
                agent=self._agent(namespace),
                tags=tags,
                importance=self.importance,
                meta=meta,
                force=True,
                key=_key_tag(namespace, key),
                **self._session_extra(principal, namespace),
            )
            if result.action in ("added", "exists"):
                return result
            # The same text already is another memory of this principal (semantic facts upsert by content):
            # write this item's own memory with its namespace and key added to the text.
        raise MemdeckError(f"could not store {namespace}/{key}: memdeck answered {result.action!r}")

    def _session_extra(self, principal: str, namespace: tuple[str, ...]) -> dict[str, Any]:
        if self.session is None:
            return {}
        return self.agent_session(principal, agent=self._agent(namespace)).session_extra(self.tier)

    # --- a session's digest --------------------------------------------------------------------------

    def agent_session(
        self, principal: str, session: str | None = None, *, agent: str | None = None
    ) -> AgentSession:
        """``principal``'s memdeck session ``session`` (default: this store's ``session``) as ``agent``
        (default: ``default_agent``)."""
        target = session or self.session
        if target is None:
            raise ValueError(
                "name the session: this store was made without one (MemdeckStore(..., session=...))"
            )
        return AgentSession(self.store, principal, agent or self.default_agent, target)

    def reflection_prompt(self, principal: str, session: str | None = None) -> str:
        """The prompt to give the model when a session ends: the session's episodes (this store's puts in
        tier ``episodic`` with ``session=``, or any episode of that memdeck session), marked as data, and
        the digest to hand back through :meth:`close_session` (the same prompt as the MCP ``reflect``
        prompt). NotFound when the session has no episode."""
        return self.agent_session(principal, session).reflection_prompt()

    def close_session(
        self,
        principal: str,
        session: str | None = None,
        *,
        agent: str | None = None,
        summary: str | None = None,
        facts: Sequence[Any] = (),
        procedures: Sequence[Any] = (),
    ) -> dict[str, Any]:
        """Store what the model distilled from ``principal``'s session (default: this store's), checked as
        the MCP ``close_session`` tool checks it (the write path and redaction, fact sources that must be
        the principal's episodes, contradictions to the review queue; nothing stored when any part is
        refused), stamped with ``agent`` (default ``default_agent``), then close the session so it is
        consolidated. ``facts``: texts or ``{"text", "sources": [episode ids]}``; ``procedures``:
        ``{"name", "steps", "when"}``. Returns the close's answer with ``digest``. A session other than this
        store's own must have an episode (NotFound, and nothing is stored)."""
        with self._lock:
            closed = self.agent_session(principal, session, agent=agent).close_with_digest(
                summary=summary,
                facts=facts,
                procedures=procedures,
                require_episodes=self.session is None or (session or self.session) != self.session,
            )
        return dict(closed)

    async def areflection_prompt(self, principal: str, session: str | None = None) -> str:
        return await asyncio.to_thread(self.reflection_prompt, principal, session)

    async def aclose_session(
        self,
        principal: str,
        session: str | None = None,
        *,
        agent: str | None = None,
        summary: str | None = None,
        facts: Sequence[Any] = (),
        procedures: Sequence[Any] = (),
    ) -> dict[str, Any]:
        return await asyncio.to_thread(
            lambda: self.close_session(
                principal, session, agent=agent, summary=summary, facts=facts, procedures=procedures
            )
        )

    def _scope(self, prefix: tuple[str, ...]) -> Scope:
        return Scope.of(check_principal(prefix[0])) if prefix else Scope.everyone()

    def _listed(self, prefix: tuple[str, ...]) -> list[_Row]:
        """The items under ``prefix`` (every principal's for ``()``), newest first."""
        rows = self._rows(prefix[0] if prefix else None, _ns_tag(prefix) if prefix else MARKER_TAG)
        rows.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return rows

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if op.limit < 0 or op.offset < 0:
            raise ValueError("search limit and offset must not be negative")
        want = op.offset + op.limit
        tag = _ns_tag(prefix) if prefix else MARKER_TAG

        def keep(memory: Memory | _Row) -> bool:
            if MARKER_TAG not in memory.tags or tag not in memory.tags:
                return False
            value = memory.meta.get("value") or {}
            return all(_matches(value.get(k), v) for k, v in (op.filter or {}).items())

        if (op.query is None or not op.query.strip()) and not op.filter:
            # A page of the store's own listing (ordered, cached per table version), meta in the same read.
            page = self.store.list(
                self._scope(prefix),
                tier=self.tier,
                tag=tag,
                state="active",
                offset=op.offset,
                limit=op.limit,
                with_meta=True,
            )
            return [self._item(m, search=True) for m in page]  # type: ignore[misc]
        if op.query is None or not op.query.strip():
            kept = []
            for memory in self._listed(prefix):
                if keep(memory):
                    kept.append(memory)
                    if len(kept) >= want:
                        break
            return [self._item(m, search=True) for m in kept[op.offset : want]]  # type: ignore[misc]
        # The namespace (its tag) and index=False (a tag) are narrowed inside the LanceDB queries, so recall
        # scores only this namespace's indexed items and k of them are k hits. A value filter cannot be
        # pushed down (values are JSON in meta): only then is the recall widened until enough pass it.
        narrowed = F.RecallFilter.of(tags=[MARKER_TAG, tag], without_tags=[_NOINDEX_TAG])
        k = min(_MAX_K, max(want, 1))
        while True:
            result = self.store.recall(
                op.query,
                scope=self._scope(prefix),
                agent=prefix[1] if len(prefix) > 1 else self.default_agent,
                tiers=[self.tier],
                k=k,
                source="langgraph",
                filters=narrowed,
            )
            self.last_recall = result
            hits = [i for i in result.items if keep(i.memory)]
            if not op.filter or len(hits) >= want or len(result.items) < k or k >= _MAX_K:
                break
            k = min(_MAX_K, k * 4)
        return [self._item(i.memory, float(i.score), search=True) for i in hits[op.offset : want]]  # type: ignore[misc]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for memory in self._listed(()):
            namespace = tuple((memory.meta.get("langgraph") or {}).get("namespace") or ())
            if not namespace or MARKER_TAG not in memory.tags:
                continue
            if op.match_conditions and not all(_namespace_matches(c, namespace) for c in op.match_conditions):
                continue
            seen.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return sorted(seen)[op.offset : op.offset + op.limit]
