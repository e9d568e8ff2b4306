"""An agent's session with a store: one principal, one agent, one session id.

Whose memories an agent reaches, and under which name it writes, is fixed when the session is made, never by
a call's arguments: every read is scoped to the principal, every write is stamped with the agent, an episode
belongs to the session (open until :meth:`AgentSession.close` or the idle timeout closes it), and what a
recall or context pack puts in front of the agent is recorded in the injection ledger under the session.
The MCP server and the framework integrations act through one.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import NotFound
from memdeck.core.filters import RecallFilter, Scope
from memdeck.core.names import check_principal

if TYPE_CHECKING:
    from memdeck.core.recall.context import ContextPack
    from memdeck.core.recall.search import RecallResult
    from memdeck.core.records import WriteResult
    from memdeck.core.storage.sessions import SessionClosed
    from memdeck.core.store import Store


def new_session_id(prefix: str) -> str:
    """A fresh session id such as ``mcp-1a2b3c4d5e6f``."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass
class AgentSession:
    """One agent acting for one principal in one session of ``store``."""

    store: Store
    principal: str
    agent: str
    session: str
    scope: Scope = field(init=False)

    def __post_init__(self) -> None:
        self.principal = check_principal(self.principal)
        self.scope = Scope.of(self.principal)

    def session_extra(self, tier: str, session: str | None = None) -> dict[str, Any]:
        """The fields a write of ``tier`` carries for its session: an episode belongs to ``session`` (this
        session by default) and stays open until the session is closed."""
        if tier != "episodic":
            return {}
        return {"session": session or self.session, "closed": False}

    def remember(
        self,
        text: str,
        *,
        tier: str = "semantic",
        session: str | None = None,
        tags: Sequence[str] = (),
        importance: float = 0.5,
        force: bool = False,
        expires_at: datetime | str | None = None,
        screen: bool | None = None,
        **extra: Any,
    ) -> WriteResult:
        """Write a memory of the principal, stamped with the agent (an episode in the session). An agent's
        noise ("ok thanks") is skipped by the formation filter unless ``screen`` or ``force`` says otherwise
        (``formation_filter.agents``, on by default)."""
        if screen is None:
            screen = self.store.settings.formation_filter.agents
        return self.store.remember(
            text,
            tier=tier,
            principal=self.principal,
            agent=self.agent,
            tags=list(tags),
            importance=importance,
            force=force,
            expires_at=expires_at,
            screen=screen,
            **{**extra, **self.session_extra(tier, session)},
        )

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        tiers: Sequence[str] | None = None,
        filters: RecallFilter | None = None,
        source: str,
        ledger_kind: str,
    ) -> RecallResult:
        """Recall within the principal's memories; what it returns is recorded in the injection ledger as
        ``ledger_kind`` under this session."""
        from memdeck.core.recall.traces import log_injection

        result = self.store.recall(
            query,
            scope=self.scope,
            agent=self.agent,
            tiers=tiers or None,
            k=k,
            source=source,
            filters=filters,
        )
        log_injection(
            self.store.engine,
            principal=self.principal,
            agent=self.agent,
            session=self.session,
            kind=ledger_kind,
            ids=[i.memory.id for i in result.items],
            trace_id=result.trace_id,
        )
        return result

    def context(
        self, query: str, *, budget_tokens: int = 1000, tiers: Sequence[str] | None = None, source: str
    ) -> ContextPack:
        """A context pack for ``query`` (pinned first), recorded in the injection ledger under this session."""
        return self.store.context(
            query,
            principal=self.principal,
            budget_tokens=budget_tokens,
            agent=self.agent,
            session=self.session,
            tiers=tiers or None,
            source=source,
        )

    def close(self, session: str | None = None) -> SessionClosed:
        """Close a session of the principal (this one by default) and queue its consolidation."""
        return self.store.close_session(session or self.session, self.principal)

    def reflection_prompt(self, session: str | None = None) -> str:
        """The prompt the agent answers at the end of a session (this one by default): its episodes, marked
        as data, and the digest to hand back through :meth:`close_with_digest`
        (:func:`memdeck.core.consolidate.digest.reflection_prompt`; NotFound when it has no episode)."""
        from memdeck.core.consolidate.digest import reflection_prompt

        return reflection_prompt(self.store.engine, self.principal, session or self.session)

    def close_with_digest(
        self,
        session: str | None = None,
        *,
        summary: str | None = None,
        facts: Sequence[Any] = (),
        procedures: Sequence[Any] = (),
        require_episodes: bool | None = None,
    ) -> SessionClosed:
        """What the agent distilled from a session (this one by default), checked and stored as the MCP
        ``close_session`` tool does (:func:`memdeck.core.consolidate.digest.accept_digest`: the write path
        and its redaction, sources that must be this principal's episodes, contradictions to the review
        queue; nothing is stored when any part is refused), then the session closed and queued for
        consolidation. ``facts``: texts or ``{"text", "sources": [episode ids]}``; ``procedures``:
        ``{"name", "steps", "when"}``. Returns the close's answer with ``digest`` (when anything was handed
        over): each stored memory's id and action. Another session must have an episode (NotFound, before
        anything is stored); this one may have none yet, and then nothing is queued (``require_episodes``
        overrides which applies)."""
        from memdeck.core.consolidate.digest import accept_digest

        target = session or self.session
        digest: dict[str, Any] | None = None
        if summary is not None or facts or procedures:
            digest = accept_digest(
                self.store.engine,
                self.principal,
                self.agent,
                target,
                summary=summary,
                facts=list(facts),
                procedures=list(procedures),
                written=target != self.session if require_episodes is None else require_episodes,
            )
        out: SessionClosed
        try:
            out = self.close(target)
        except NotFound:
            if target != self.session or require_episodes:
                raise
            out = {
                "session": target,
                "principal": self.principal,
                "episodes": 0,
                "closed": 0,
                "queued": False,
                "why": "closed",
                "message": "no episode was written in this session: nothing to consolidate",
            }
        if digest is not None:
            out["digest"] = digest
        return out
