"""The OpenAI Agents SDK backed by memdeck: ``MemdeckSession`` and ``context_instructions``.

Install the framework with ``pip install 'memdeck[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

try:
    from agents.memory.session import SessionABC
except ImportError as exc:  # the optional framework, never memdeck's own modules
    raise ImportError(
        "memdeck.integrations.openai_agents needs the OpenAI Agents SDK: pip install 'memdeck[openai-agents]'"
    ) from exc

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.forget import raise_unverified
from memdeck.core.records import MemoryInput, check_principal
from memdeck.core.sessions import AgentSession
from memdeck.core.storage.expiry import live_where

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from memdeck.core.receipts import Receipt
    from memdeck.core.records import Memory
    from memdeck.core.store import Store

__all__ = ["MARKER_TAG", "MemdeckSession", "context_instructions", "render_item"]

MARKER_TAG = "openai-agents"
"""Every episode a session writes carries this tag (``memdeck list --tag openai-agents``)."""


@dataclass(frozen=True)
class Episode:
    """One stored item of a session: the memory's id and text, its position, the item."""

    id: str
    text: str
    seq: int
    item: dict[str, Any]


def _session_tag(session_id: str) -> str:
    return "oa-session:" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text") or part.get("refusal") or part.get("transcript")
                if isinstance(text, str):
                    parts.append(text)
                elif part.get("type"):
                    parts.append(f"[{part['type']}]")
        return " ".join(parts)
    return ""


def render_item(item: dict[str, Any]) -> str:
    """The text memdeck embeds and shows for one conversation item: ``role: text`` for messages,
    ``tool call name(arguments)`` and ``tool output: ...`` for function calls, compact JSON otherwise."""
    kind = item.get("type")
    if "role" in item and kind in (None, "message"):
        text = _content_text(item.get("content"))
        if text.strip():
            return f"{item['role']}: {text}"
    if kind == "function_call":
        return f"tool call {item.get('name')}({item.get('arguments', '')})"
    if kind == "function_call_output":
        output = item.get("output")
        return f"tool output: {output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)}"
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


class MemdeckSession(SessionABC):
    """An Agents SDK session whose items are the episodes of one memdeck session.

    Each item becomes an episodic memory of ``principal``, stamped with ``agent``, in session
    ``session_id``: its text is :func:`render_item` of the item (so the conversation is recallable by
    meaning), the item itself is kept in ``meta["openai_agents"]["item"]`` with its position
    (``"seq"``), and ``get_items`` returns the items in the order they were added. Redaction applies: an
    item holding an e-mail address or a secret comes back with the vault token in its place.

    ``pop_item`` and ``clear_session`` forget through memdeck (purged, verified, a signed receipt in
    ``receipts``). ``close()`` closes the memdeck session (``Store.close_session``), so the maintenance
    scheduler consolidates it into facts; adding items afterwards opens it again.
    """

    session_settings = None

    def __init__(
        self,
        store: Store,
        session_id: str,
        *,
        principal: str,
        agent: str = "openai-agents",
        importance: float = 0.5,
        forget_reason: str = "removed from an Agents SDK session",
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip() or "\x00" in session_id:
            raise ValueError(f"a session id must be a non-empty string, got {session_id!r}")
        if not isinstance(agent, str) or not agent.strip():
            raise ValueError(f"agent must be a non-empty string, got {agent!r}")
        self.store = store
        self.session_id = session_id
        self.principal = check_principal(principal)
        self.agent = agent
        self.importance = importance
        self.forget_reason = forget_reason
        self.receipts: list[Receipt] = []
        self.agent_session = AgentSession(store, self.principal, agent, session_id)
        self._tag = _session_tag(session_id)
        self._next_seq: int | None = None
        self._known: dict[str | None, int | None] = {}  # a row's meta text -> its position (see _positions)
        self._lock = threading.RLock()

    @property
    def last_receipt(self) -> Receipt | None:
        return self.receipts[-1] if self.receipts else None

    # --- synchronous API (what the async methods run in a worker thread) ----------------------------

    def episodes(self) -> list[Episode]:
        """This session's live episodes, in the order their items were added (one read)."""
        return self._episodes(None, with_text=True)

    def _episodes(self, limit: int | None, *, with_text: bool = False) -> list[Episode]:
        """The last ``limit`` (None: every one) of this session's live episodes, in order, in one read.

        Only the returned episodes' meta is parsed into items. The others' positions come from
        :meth:`_positions`, so a session read again and again (``get_items`` at every turn) parses each row
        once rather than the whole session every time. ``text`` is read only ``with_text`` (else "")."""
        where = F.all_of(
            F.eq("principal", self.principal),
            F.eq("session", self.session_id),
            F.eq("state", "active"),
            F.tag_contains(self._tag),
            live_where(self.store.engine, "episodic"),
        )
        with self._lock:
            if not self.store.engine.has_table("episodic"):
                return []
            table = self.store.engine.scan(
                "episodic", ["id", "meta", *(["text"] if with_text else [])], where
            )
            metas: list[str | None] = table.column("meta").to_pylist()
            seqs = self._positions(metas)
        rows = [i for i, seq in enumerate(seqs) if seq is not None]
        rows.sort(
            key=lambda i: cast("int", seqs[i])
        )  # stable: rows of one position stay in the order they were read
        if limit is not None:
            rows = rows[len(rows) - limit :] if limit else []
        if not rows:
            return []
        taken = table.take(rows)
        ids = taken.column("id").to_pylist()
        texts = taken.column("text").to_pylist() if with_text else [""] * len(rows)
        return [
            Episode(
                ids[n], texts[n], cast("int", seqs[i]), json.loads(metas[i] or "{}")["openai_agents"]["item"]
            )
            for n, i in enumerate(rows)
        ]

    def _positions(self, metas: list[str | None]) -> list[int | None]:
        """Each row's position (``seq``), None for a row that is not an item of this session's, by the row's
        meta text: a row's meta changes only with its text, so a position read once is kept (for the rows
        still there)."""
        known = self._known
        out: list[int | None] = []
        for meta in metas:
            if meta in known:
                out.append(known[meta])
                continue
            oa = (json.loads(meta) if meta else {}).get("openai_agents") or {}
            seq = oa["seq"] if isinstance(oa.get("seq"), int) and isinstance(oa.get("item"), dict) else None
            known[meta] = seq
            out.append(seq)
        if len(known) > 2 * len(metas) + 64:  # forgotten rows' entries go
            self._known = {meta: known[meta] for meta in metas}
        return out

    def get_items_sync(self, limit: int | None = None) -> list[TResponseInputItem]:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be a whole number >= 0 or None, got {limit!r}")
        return [cast("TResponseInputItem", e.item) for e in self._episodes(limit)]

    def add_items_sync(self, items: list[TResponseInputItem]) -> list[Memory]:
        checked: list[dict[str, Any]] = []
        for item in items:
            if not isinstance(item, dict):
                raise TypeError(f"a session item must be a dict, got {type(item).__name__}")
            try:
                checked.append(json.loads(json.dumps(item, ensure_ascii=False, allow_nan=False)))
            except (TypeError, ValueError) as exc:
                raise TypeError(f"a session item must be JSON-serialisable: {exc}") from None
        if not checked:
            return []
        with self._lock:
            if self._next_seq is None:
                last = self._episodes(1)
                self._next_seq = last[-1].seq + 1 if last else 0
            inputs = []
            for n, entry in enumerate(checked):
                inputs.append(
                    MemoryInput(
                        text=render_item(entry),
                        tier="episodic",
                        principal=self.principal,
                        agent=self.agent,
                        tags=[MARKER_TAG, self._tag],
                        importance=self.importance,
                        force=True,
                        meta={"openai_agents": {"seq": self._next_seq + n, "item": entry}},
                        extra=self.agent_session.session_extra("episodic"),
                    )
                )
            results = self.store.remember_many(inputs)
            self._next_seq += len(inputs)
        return [r.memory for r in results if r.memory is not None]

    def _forget(self, memories: list[Episode]) -> Receipt | None:
        if not memories:
            return None
        receipt = self.store.forget([m.id for m in memories], self.forget_reason, Scope.of(self.principal))
        self.receipts.append(receipt)
        raise_unverified(receipt)
        return receipt

    def pop_item_sync(self) -> TResponseInputItem | None:
        with self._lock:
            episodes = self._episodes(1)
            if not episodes:
                return None
            last = episodes[-1]
            self._forget([last])
            self._next_seq = last.seq
            return cast("TResponseInputItem", last.item)

    def clear_session_sync(self) -> Receipt | None:
        """Forget every item of this session; the receipt, or None if there was nothing to forget."""
        with self._lock:
            receipt = self._forget(self._episodes(None))
            self._next_seq = 0
            return receipt

    def close(self) -> dict[str, Any] | None:
        """Close the memdeck session so the maintenance scheduler consolidates it; None if it has no
        episodes."""
        with self._lock:
            try:
                return dict(self.agent_session.close())
            except NotFound:
                return None

    def reflection_prompt(self) -> str:
        """The prompt to give the agent's model when the conversation ends: this session's episodes, marked
        as data, and the digest to hand back through :meth:`close_with_digest` (the same prompt as the MCP
        ``reflect`` prompt). NotFound when the session has no episode."""
        return self.agent_session.reflection_prompt()

    def close_with_digest(
        self,
        *,
        summary: str | None = None,
        facts: Sequence[Any] = (),
        procedures: Sequence[Any] = (),
    ) -> dict[str, Any]:
        """Store what the model distilled from this session, checked as the MCP ``close_session`` tool
        checks it (the write path and redaction, fact sources that must be this principal's episodes,
        contradictions to the review queue; nothing stored when any part is refused), then close the
        session so it is consolidated. ``facts``: texts or ``{"text", "sources": [episode ids]}`` (the ids
        the reflection prompt shows, :attr:`Episode.id`); ``procedures``: ``{"name", "steps", "when"}``.
        Returns the close's answer with ``digest`` (each stored memory's id and action)."""
        with self._lock:
            return dict(
                self.agent_session.close_with_digest(summary=summary, facts=facts, procedures=procedures)
            )

    async def areflection_prompt(self) -> str:
        return await asyncio.to_thread(self.reflection_prompt)

    async def aclose_with_digest(
        self,
        *,
        summary: str | None = None,
        facts: Sequence[Any] = (),
        procedures: Sequence[Any] = (),
    ) -> dict[str, Any]:
        return await asyncio.to_thread(
            lambda: self.close_with_digest(summary=summary, facts=facts, procedures=procedures)
        )

    # --- the SDK's Session -------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        return await asyncio.to_thread(self.get_items_sync, limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await asyncio.to_thread(self.add_items_sync, list(items))

    async def pop_item(self) -> TResponseInputItem | None:
        return await asyncio.to_thread(self.pop_item_sync)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self.clear_session_sync)

    async def aclose(self) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.close)


def _last_user_text(items: list[Any]) -> str | None:
    for item in reversed(items):
        if item.get("role") == "user":
            text = _content_text(item.get("content"))
            if text.strip():
                return text
    return None


def context_instructions(
    store: Store,
    *,
    principal: str,
    instructions: str = "",
    query: str | Callable[[Any], str] | None = None,
    session: MemdeckSession | None = None,
    budget_tokens: int = 1000,
    agent: str | None = None,
    tiers: tuple[str, ...] | None = None,
    heading: str = "What you remember about this person (memdeck):",
) -> Callable[[Any, Any], Awaitable[str]]:
    """Dynamic instructions for an Agents SDK ``Agent``: ``instructions`` followed by a memdeck context pack
    (:meth:`Store.context`: pinned memories, then recalled ones by score, within ``budget_tokens``).

    The pack's query is ``query`` (a string, or a callable given the run's ``RunContextWrapper``), else the
    latest user message in ``session``. ``tiers`` limits what the pack draws on (the session's own turns are
    episodic and already in the conversation: ``tiers=("semantic", "procedural")`` leaves episodes out). The
    injection is recorded in memdeck's ledger with ``agent`` (the
    session's agent by default) and the session id. Use as ``Agent(instructions=context_instructions(...))``.
    """
    check_principal(principal)
    if query is None and session is None:
        raise ValueError(
            "context_instructions needs a query or a session to take the latest user message from"
        )
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
        raise ValueError(f"budget_tokens must be a whole number >= 0, got {budget_tokens!r}")

    def build(run_context: Any) -> str:
        if callable(query):
            text = query(run_context)
        elif isinstance(query, str):
            text = query
        else:
            assert session is not None
            text = _last_user_text(session.get_items_sync()) or ""
        if not text or not text.strip():
            return instructions
        pack = store.context(
            text,
            principal=principal,
            budget_tokens=budget_tokens,
            agent=agent or (session.agent if session else None),
            session=session.session_id if session else None,
            tiers=tiers,
        )
        if not pack.included:
            return instructions
        return "\n\n".join(p for p in (instructions, heading + "\n" + pack.text) if p)

    async def dynamic(run_context: Any, _agent: Any) -> str:
        try:
            return await asyncio.to_thread(build, run_context)
        except MemdeckError as exc:
            raise MemdeckError(f"memdeck context for the agent's instructions failed: {exc}") from exc

    return dynamic
