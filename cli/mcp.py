"""The Model Context Protocol server: ``memdeck mcp --principal P --agent A`` on stdio.

Whose memories an agent reaches is fixed when the server is launched (``--principal``/``--agent`` or
``MEMDECK_PRINCIPAL``/``MEMDECK_AGENT``), never by a tool argument: the tools take no principal, every
read is scoped to the launch principal, every write is stamped with the launch agent, and ``forget``
reaches only ids in that principal's scope (any other id is "not found", whoever owns it).

Start-up is kept short so the client's ``initialize`` is answered at once: once it is (the client's
``notifications/initialized``), the store opens and the embedding model loads in background threads, and
the first tool call waits for them if it must.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.names import MEMORY_TYPES, check_principal
from memdeck.core.sessions import AgentSession, new_session_id

if TYPE_CHECKING:
    from memdeck.core.store import Store

log = logging.getLogger("memdeck.mcp")

SERVER_NAME = "memdeck"
PINNED_URI = "memdeck://pinned"
CONTEXT_URI = "memdeck://context/{query}"
INSTRUCTIONS = (
    "memdeck is this user's long-term memory. Call `recall` before answering questions that may depend on "
    "what you were told earlier; call `remember` for durable facts (tier semantic), session summaries "
    "(episodic) or routines (procedural). Pinned memories are in the resource memdeck://pinned. "
    "`context` gives a ready-to-use context pack for a query within a token budget (pinned first). "
    "Call `close_session` when a conversation ends so its episodes are consolidated into facts; the "
    "`reflect` prompt gives you the session's episodes to distil into a summary, facts and procedures first. "
    "`forget` purges memories for good and returns a signed deletion receipt."
)


SCHEDULER_DELAY_S = 5.0


class _Backend:
    """The store for one launch principal, opened off the protocol thread."""

    def __init__(
        self, principal: str, agent: str, store_path: str | Path | None, preload: bool = True
    ) -> None:
        self.principal = check_principal(principal)
        self.agent = check_principal(agent)
        self.scope = Scope.of(self.principal)
        self.store_path = store_path
        self._store: Store | None = None
        self._session: AgentSession | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._started = False
        # The session this server's episodes and injections belong to (MEMDECK_SESSION, else one per launch).
        self.session = os.environ.get("MEMDECK_SESSION") or new_session_id("mcp")
        self.scheduler: Any = None
        if preload:
            self.start()

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._open, name="memdeck-mcp-open", daemon=True).start()

    def _open(self) -> None:
        try:
            from memdeck.cli._common import model_loading

            # The model loads in its own thread while the store's modules import and it opens.
            config, embedder = model_loading(None if self.store_path is None else str(self.store_path))
            from memdeck.core.store import Store

            self._store = Store.open(self.store_path, create=True, config=config, embedder=embedder)
            self._session = AgentSession(self._store, self.principal, self.agent, self.session)
        except BaseException as exc:  # noqa: BLE001 - reported to the first tool call
            self._error = exc
        finally:
            self._ready.set()
        if self._store is None:
            return
        # The model loads now rather than inside the first recall (the packaged one in well under a second),
        # and before the maintenance scheduler's modules import: the first recall waits for the model only.
        try:
            self._store.engine.embedder.load()
        except Exception as exc:  # noqa: BLE001 - recall then says it is keyword-only
            log.warning("embedding model unavailable: %s", exc)
        self._start_scheduler()

    @property
    def store(self) -> Store:
        return self.agent_session.store

    @property
    def agent_session(self) -> AgentSession:
        """This server's principal, agent and session on the opened store (waits for the store to open)."""
        self.start()
        self._ready.wait()
        if self._error is not None:
            if isinstance(self._error, MemdeckError):
                raise self._error
            raise MemdeckError(f"cannot open the memory store: {self._error}")
        assert self._session is not None  # set with the store, or _error is
        return self._session

    def _start_scheduler(self) -> None:
        """Maintenance on its own while the server runs (expiry, sessions, sync, index upkeep)."""
        if self._store is None:
            return
        try:
            from memdeck.core.maintenance.scheduler import Scheduler

            # Its first run waits a few seconds, so it never delays the first answers.
            self.scheduler = Scheduler(self._store.engine, start_delay_s=SCHEDULER_DELAY_S).start()
        except Exception as exc:  # noqa: BLE001 - a bad [maintenance] setting must not stop the tools
            log.warning("maintenance scheduler not started: %s", exc)

    # --- the operations, as plain methods (tested directly and through the protocol) ---------------

    def remember(
        self,
        text: str,
        tier: str = "semantic",
        tags: list[str] | None = None,
        importance: float = 0.5,
        name: str | None = None,
        session: str | None = None,
        force: bool = False,
        expires_in: str | None = None,
        expires_at: str | None = None,
        entities: list[Any] | None = None,
        relations: list[dict[str, Any]] | None = None,
        type: str | None = None,
    ) -> dict[str, Any]:
        from memdeck.core.records import STORED_TIERS

        if tier not in STORED_TIERS:
            raise MemdeckError(f"unknown tier {tier!r}; use one of: {', '.join(STORED_TIERS)}")
        tags = _bounded("tags", tags, MAX_TAGS)
        from memdeck.core.storage.expiry import expiry_time

        expires = expiry_time(expires_in, expires_at)
        extra: dict[str, Any] = {}
        if name and tier == "procedural":
            extra["name"] = name
        if entities:
            extra["entities"] = _bounded_list("entities", entities, MAX_GRAPH_ITEMS)
        if relations:
            extra["relations"] = _bounded_list("relations", relations, MAX_GRAPH_ITEMS)
        if type is not None:
            extra["type"] = type
        # An episode of a session stays open until close_session (or the idle timeout) closes it.
        result = self.agent_session.remember(
            text,
            tier=tier,
            session=session,
            tags=tags or [],
            importance=importance,
            force=force,
            expires_at=expires,
            **extra,
        )
        out: dict[str, Any] = {"action": result.action}
        if result.reason:
            out["reason"] = result.reason
        if result.memory is not None:
            out.update(id=result.memory.id, tier=result.memory.tier, text=result.memory.text)
            if result.memory.type is not None:
                out["type"] = result.memory.type
            if result.memory.tier == "semantic":
                out["evidence_count"] = result.memory.evidence_count
            if result.memory.tier == "procedural":
                out["version"] = result.memory.proc_version
            if result.memory.expires_at is not None:
                out["expires_at"] = result.memory.to_json()["expires_at"]
            if result.memory.tier == "episodic":
                out["session"] = result.memory.session
        return out

    def recall(
        self,
        query: str,
        k: int = 10,
        tiers: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        tags: list[str] | None = None,
        written_by: str | None = None,
        min_importance: float | None = None,
        types: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        from memdeck.core.filters import RecallFilter

        tiers = _bounded("tiers", tiers, MAX_TIERS)
        tags = _bounded("tags", tags, MAX_TAGS) if tags is not None else None
        filters = RecallFilter.of(since, until, tags, written_by, min_importance, types=types)
        result = self.agent_session.recall(
            query, k=k, tiers=tiers, filters=filters, source="mcp", ledger_kind="mcp-recall"
        )
        out: dict[str, Any] = {"results": result.to_json()}
        if result.trace_id:
            out["trace_id"] = result.trace_id  # for feedback on the recall as a whole
        if result.notice:
            out["notice"] = result.notice
        return out

    def feedback(self, target: str, useful: bool) -> dict[str, Any]:
        """Record that a recalled memory (its id) or a whole recall (its trace id) was useful or wrong; it counts
        toward the trust of the agents that wrote those memories. Only this principal's ids are found."""
        from memdeck.core.recall.feedback import feedback

        return feedback(
            self.store.engine, target, self.agent, useful=bool(useful), scope=self.scope
        ).to_json()

    def context(self, query: str, budget: int = 1000, tiers: Sequence[str] | None = None) -> dict[str, Any]:
        tiers = _bounded("tiers", tiers, MAX_TIERS)
        pack = self.agent_session.context(query, budget_tokens=budget, tiers=tiers, source="mcp-context")
        return {**pack.to_json(), "text": pack.text, "session": self.session}

    def close_session(
        self,
        session: str | None = None,
        summary: str | None = None,
        facts: list[Any] | None = None,
        procedures: list[Any] | None = None,
    ) -> dict[str, Any]:
        """Close a session (default: this server's). This server's own session closes even when the agent
        wrote no episode in it: nothing is consolidated. A named session that has no episodes is not found.

        With ``summary``, ``facts`` or ``procedures``, what the agent distilled from the session is checked
        and stored first (:func:`memdeck.core.consolidate.digest.accept_digest`)."""
        out = self.agent_session.close_with_digest(
            session,
            summary=summary,
            facts=_plain_args(facts) or [],
            procedures=_plain_args(procedures) or [],
        )
        if self.scheduler is not None and out.get("queued"):
            self.scheduler.wake()
        return dict(out)

    def reflect(self, session: str | None = None) -> str:
        """The reflection prompt for a session (default: this server's): its episodes and what to send back
        through close_session (:func:`memdeck.core.consolidate.digest.reflection_prompt`)."""
        from memdeck.core.consolidate.digest import reflection_prompt

        return reflection_prompt(self.store.engine, self.principal, session or self.session)

    def forget(self, ids: list[str], reason: str) -> dict[str, Any]:
        ids = _bounded("ids", ids, MAX_IDS)
        if not ids:
            raise MemdeckError("give at least one memory id to forget")
        if not isinstance(reason, str) or not reason.strip():
            raise MemdeckError("a reason is required (it goes into the deletion receipt)")
        store = self.store
        for mem_id in ids:
            store.get(mem_id, self.scope)  # NotFound for ids outside this principal's scope
        from memdeck.core.forget import raise_unverified

        receipt = store.forget(list(ids), reason=reason, scope=self.scope)
        raise_unverified(receipt)  # erased but not proven: the agent must not report the memory as gone
        return dict(receipt)

    def list(
        self,
        tier: str | None = None,
        limit: int = 20,
        offset: int = 0,
        pinned_only: bool = False,
        tag: str | None = None,
        type: str | None = None,
    ) -> dict[str, Any]:
        if not 1 <= limit <= 500:
            raise MemdeckError("limit must be between 1 and 500")
        memories = _retry_panics(
            lambda: self.store.list(
                self.scope,
                tier=tier,
                tag=tag,
                pinned=True if pinned_only else None,
                limit=limit,
                offset=offset,
                type=type,
            )
        )
        return {"memories": [_brief(m) for m in memories], "offset": offset, "limit": limit}

    def pinned(self) -> builtins.list[dict[str, Any]]:
        memories = _retry_panics(lambda: self.store.list(self.scope, pinned=True, state="active", limit=500))
        return [_brief(m) for m in memories]

    # --- the graph: always this server's principal ---

    def entities(self) -> dict[str, Any]:
        return {"entities": self.store.entities(self.scope)}

    def related(self, name: str, depth: int = 1) -> dict[str, Any]:
        return dict(self.store.related(self.principal, name, depth))

    def path(self, a: str, b: str) -> dict[str, Any]:
        return dict(self.store.path(self.principal, a, b))

    def add_entity(
        self, name: str, kind: str = "other", aliases: builtins.list[str] | None = None
    ) -> dict[str, Any]:
        aliases = _bounded("aliases", aliases, MAX_GRAPH_ITEMS)
        return dict(self.store.add_entity(self.principal, name, kind=kind, aliases=aliases).to_json())

    def add_relation(
        self,
        subject: str,
        predicate: str,
        object: str,
        negated: bool = False,
        valid_from: str | None = None,
        valid_until: str | None = None,
        sources: builtins.list[str] | None = None,
    ) -> dict[str, Any]:
        sources = _bounded("sources", sources, MAX_GRAPH_ITEMS)
        edge = self.store.add_relation(
            self.principal,
            subject,
            predicate,
            object,
            negated=negated,
            valid_from=valid_from,
            valid_until=valid_until,
            sources=sources,
        )
        return dict(edge.to_json())


MAX_TIERS = 16  # bounds on an agent's list arguments: past them the call is refused, not run
MAX_TAGS = 64
MAX_IDS = 1000
MAX_GRAPH_ITEMS = 100
MAX_K = 1000  # as core's recall
MAX_LIMIT = 500
MAX_BUDGET = 1_000_000  # tokens, as core's context pack
MAX_DEPTH = 6  # relations, as core's graph queries
MAX_TAG_CHARS = 128  # as records.check_tags
MAX_NAME_CHARS = 200  # an entity name, alias or predicate, as the graph's check_name
MAX_WHEN_CHARS = 64  # a relation's valid_from / valid_until
MAX_AGENT_CHARS = 256  # an agent is named like a principal
MAX_FACTS = 100  # what close_session takes from an agent, as core.consolidate.digest
MAX_PROCEDURES = 20
MAX_STEPS = 50

# The tools' argument types: what the SDK publishes as each tool's input schema (enums, ranges, lengths) and
# checks before a tool runs. Module-level names, because the SDK resolves the tools' annotations here.
Tier = Literal["episodic", "semantic", "procedural"]  # records.STORED_TIERS
MemType = Literal[
    "preference", "decision", "fact", "error", "observation", "event", "instruction"
]  # memtypes
EntityKind = Literal["person", "place", "organisation", "product", "date", "handle", "title", "other"]
Text = Annotated[str, Field(min_length=1)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
When = Annotated[str, Field(max_length=MAX_WHEN_CHARS)]
Unit = Annotated[float, Field(ge=0, le=1)]
Tiers = Annotated[list[Tier], Field(max_length=MAX_TIERS)]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
Ids = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=MAX_IDS)]
Names = Annotated[list[Name], Field(max_length=MAX_GRAPH_ITEMS)]
SourceIds = Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=MAX_GRAPH_ITEMS)]
K = Annotated[int, Field(ge=1, le=MAX_K)]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]
Offset = Annotated[int, Field(ge=0)]
Budget = Annotated[int, Field(ge=0, le=MAX_BUDGET)]
Depth = Annotated[int, Field(ge=1, le=MAX_DEPTH)]
Agent = Annotated[str, Field(min_length=1, max_length=MAX_AGENT_CHARS)]


class EntityArg(BaseModel):
    """An entity named in ``remember``: a name, its kind and other names for it."""

    model_config = ConfigDict(extra="forbid", title="entity")
    name: Name
    kind: EntityKind = "other"
    aliases: Names = []


class RelationArg(BaseModel):
    """A relation named in ``remember``: subject, predicate, object (entities), when it held."""

    model_config = ConfigDict(extra="forbid", title="relation")
    subject: Name
    predicate: Name
    object: Name
    negated: bool = False
    valid_from: When | None = None
    valid_until: When | None = None


class FactArg(BaseModel):
    """A durable fact distilled from a session, with the episodes it comes from."""

    model_config = ConfigDict(extra="forbid", title="fact")
    text: Text
    sources: SourceIds | None = None


class ProcedureArg(BaseModel):
    """A routine learned in a session: its name, its steps and when to use it."""

    model_config = ConfigDict(extra="forbid", title="procedure")
    name: Name
    steps: Annotated[list[Text], Field(min_length=1, max_length=MAX_STEPS)]
    when: Text | None = None


EntityArgs = Annotated[list[Name | EntityArg], Field(max_length=MAX_GRAPH_ITEMS)]
FactArgs = Annotated[list[Text | FactArg], Field(max_length=MAX_FACTS)]
ProcedureArgs = Annotated[list[ProcedureArg], Field(max_length=MAX_PROCEDURES)]
RelationArgs = Annotated[list[RelationArg], Field(max_length=MAX_GRAPH_ITEMS)]


def _plain_args(items: list[Any] | None) -> list[Any] | None:
    """The entities or relations as the store takes them: names and dicts (unset fields left out)."""
    if items is None:
        return None
    return [i.model_dump(exclude_unset=True) if isinstance(i, BaseModel) else i for i in items]


def _bounded_list(name: str, values: Any, limit: int) -> list[Any]:
    if not isinstance(values, list):
        raise MemdeckError(f"{name} must be a list")
    if len(values) > limit:
        raise MemdeckError(f"{name} has {len(values)} items; the limit is {limit}")
    return values


def _bounded(name: str, values: Any, limit: int) -> list[str]:
    """A list argument from an agent: strings only, duplicates dropped (first kept), at most ``limit``."""
    if values is None:
        return []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise MemdeckError(f"{name} must be a list of strings")
    unique = list(dict.fromkeys(values))
    if len(unique) > limit:
        raise MemdeckError(f"{name} has {len(unique)} distinct entries; at most {limit} are allowed")
    return unique


def _retry_panics(fn: Any, attempts: int = 3) -> Any:
    """Run a read again if the storage engine panicked (a commit landed between two steps of a paged
    read, e.g. the access counts a recall updates in the background). A panic is a BaseException, which
    would otherwise take the whole server down instead of failing one call."""
    for attempt in range(attempts):
        try:
            return fn()
        except Exception:
            raise
        except BaseException as exc:
            if type(exc).__name__ != "PanicException":
                raise
            if attempt == attempts - 1:
                raise MemdeckError("the store changed while it was being read; try again") from None
    return None


def _brief(memory: Any) -> dict[str, Any]:
    data = memory.to_json()
    keep = (
        "id",
        "tier",
        "text",
        "agent",
        "tags",
        "importance",
        "pinned",
        "state",
        "created_at",
        "updated_at",
        "name",
        "proc_version",
        "session",
        "evidence_count",
        "type",
    )
    return {k: data[k] for k in keep if k in data and data[k] not in (None, [], "")}


def _server_class() -> Any:
    """The SDK's server, with argument errors reported as one line (imported on serve: the SDK is slow to
    import)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class MemdeckServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                    raise
                # The SDK's text is pydantic's multi-line report; an agent gets one line per call instead.
                raise ToolError(
                    f"Error executing tool {name}: invalid arguments: {_argument_errors(cause)}"
                ) from cause

    return MemdeckServer


_UNION_BRANCHES = {"str", "constrained-str"}  # how pydantic names a union's string branch in an error's place
_TYPE_ERRORS = {"string_type", "model_type", "dict_type", "list_type"}


def _argument_errors(error: Any) -> str:
    """A validation error as one line: each wrong argument, what it must be, and what was given. Where a
    value may take one of two shapes (an entity: a name or an object), only the shape it has is reported."""
    found: list[tuple[str, str, str]] = []
    for err in error.errors(include_url=False):
        loc = [
            p for p in err["loc"] if not (isinstance(p, str) and (p in _UNION_BRANCHES or p[:1].isupper()))
        ]
        where = "".join(
            f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc)
        )
        kind, given = err["type"], err.get("input")
        if kind == "missing":
            text = f"{where} is required"
        elif kind == "extra_forbidden":
            text = (
                f"{where} is not a field it takes"
                if len(loc) > 1
                else f"{where} is not an argument this tool takes"
            )
        elif kind == "literal_error":
            # `tier`, or an item of `tiers`: "unknown tier 'x'"
            label = next((str(p) for p in reversed(loc) if isinstance(p, str)), "value")
            if loc and isinstance(loc[-1], int) and label.endswith("s"):
                label = label[:-1]
            text = f"{where}: unknown {label} {_shown(given)}; use one of: {err['ctx']['expected']}"
        elif kind in ("model_type", "dict_type"):
            text = f"{where}: should be an object"
        else:
            text = f"{where}: {err['msg'][:1].lower()}{err['msg'][1:]}"
            if isinstance(given, (int, float, bool)) or given is None:
                text += f", got {_shown(given)}"
        found.append((where, kind, text))
    messages: list[str] = []
    for where, kind, text in found:
        if kind in _TYPE_ERRORS and any(
            w != where or k not in _TYPE_ERRORS
            for w, k, _ in found
            if w == where or w.startswith((f"{where}.",))
        ):
            continue  # the other shape's complaint: this value has the shape reported beside it
        if text not in messages:
            messages.append(text)
    return "; ".join(messages)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _tool_error_class() -> type[Exception]:
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError


class _ExpectedErrors:
    """Turn memdeck's own errors into the SDK's "expected" tool error: the agent reads the one-line
    message, and the server logs no traceback (anything else is a bug and is logged as one)."""

    def __init__(self) -> None:
        self.tool_error = _tool_error_class()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> Literal[False]:
        if exc is not None and isinstance(exc, MemdeckError):
            raise self.tool_error(str(exc)) from None
        if exc is not None and type(exc).__name__ == "PanicException":
            # A storage-engine panic is a BaseException: left alone it ends the whole session.
            raise self.tool_error(
                "the store could not be read just now (storage engine error); try again"
            ) from None
        return False


def build_server(
    principal: str, agent: str, store_path: str | Path | None = None, *, preload: bool = True
) -> Any:
    """An MCP server bound to one principal and agent. ``server.run("stdio")`` serves it."""
    # The store opens (and the model loads) in the background once the client has its answer to
    # `initialize`: both are mostly Python imports that take turns on one interpreter lock with the SDK's
    # handshake, which needs neither. A tool called before that opens it then (``agent_session``).
    backend = _Backend(principal, agent, store_path, preload=False)
    expected = _ExpectedErrors()
    server = _server_class()(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    if preload:

        async def open_after_initialize(ctx: Any, call_next: Any) -> Any:
            try:
                return await call_next(ctx)
            finally:
                if ctx.method == "notifications/initialized":
                    backend.start()

        server.middleware.append(open_after_initialize)

    @server.tool(
        name="remember",
        description=(
            "Store a memory for this user. tier: semantic (a durable fact; an identical fact is reinforced, "
            "not duplicated), episodic (an event or session summary), procedural (a routine; give `name`, "
            "the text's lines are the steps, and a new text makes a new version). Low-value text (e.g. "
            "'ok thanks') may be skipped with a reason unless force is true. expires_in ('7d', '12h') or "
            "expires_at (ISO 8601) sets when it is forgotten. Entities and relations are "
            "extracted from the text; add others with `entities` (names, or {name, kind, aliases}) and "
            "`relations` ({subject, predicate, object, negated, valid_from, valid_until}; each endpoint named "
            "in `entities` or already known). Returns {action: added | reinforced | versioned | skipped, "
            "id, tier, text, type?, reason?}. type (preference, decision, fact, error, observation, event, "
            "instruction) says what the memory is; when not given it is inferred from the text, or left unset."
        ),
    )
    def remember(
        text: Text,
        tier: Tier = "semantic",
        tags: Tags | None = None,
        importance: Unit = 0.5,
        name: Text | None = None,
        session: Text | None = None,
        force: bool = False,
        expires_in: Text | None = None,
        expires_at: Text | None = None,
        entities: EntityArgs | None = None,
        relations: RelationArgs | None = None,
        type: MemType | None = None,
    ) -> dict[str, Any]:
        with expected:
            return backend.remember(
                text,
                tier,
                tags,
                importance,
                name,
                session,
                force,
                expires_in,
                expires_at,
                _plain_args(entities),
                _plain_args(relations),
                type,
            )

    @server.tool(
        name="recall",
        description=(
            "Recall this user's memories relevant to a query, best first. Each result has its score and the "
            "score's components (relevance, recency, frequency, importance, pinned, trust, graph) and its "
            "rank in the vector, keyword and graph searches, and the source (file, heading, lines) it was "
            "imported from. Narrow it with since/until (ISO 8601 dates), tags (all must be present), "
            "written_by (the writing agent), min_importance and types (memory types: any of them). "
            "Returns {results: [...], notice?}."
        ),
    )
    def recall(
        query: Text,
        k: K = 10,
        tiers: Tiers | None = None,
        since: Text | None = None,
        until: Text | None = None,
        tags: Tags | None = None,
        written_by: Agent | None = None,
        min_importance: Unit | None = None,
        types: Annotated[list[MemType], Field(max_length=len(MEMORY_TYPES))] | None = None,
    ) -> dict[str, Any]:
        with expected:
            return backend.recall(query, k, tiers, since, until, tags, written_by, min_importance, types)

    @server.tool(
        name="context",
        description=(
            "A context pack for a query: this user's pinned memories first, then the most relevant ones, "
            "deduplicated, each line '[id · tier · age · source] text', never more than `budget` tokens. "
            "Returns items (id, tier, text, tokens, pinned, score, source), the ready `text`, the tokens used "
            "and what was left out for budget."
        ),
    )
    def context(query: Text, budget: Budget = 1000, tiers: Tiers | None = None) -> dict[str, Any]:
        with expected:
            return backend.context(query, budget, tiers)

    @server.tool(
        name="list",
        description=(
            "List this user's memories, newest first; optionally one tier, one tag, one memory type, or pinned only. "
            "Returns {memories: [...], offset, limit}."
        ),
    )
    def list_memories(
        tier: Tier | None = None,
        limit: Limit = 20,
        offset: Offset = 0,
        pinned_only: bool = False,
        tag: Tag | None = None,
        type: MemType | None = None,
    ) -> dict[str, Any]:
        with expected:
            return backend.list(tier, limit, offset, pinned_only, tag, type)

    @server.tool(
        name="forget",
        description=(
            "Permanently forget memories by id (from recall or list): removed from every version and index, "
            "then verified. Only this user's memories can be forgotten. Returns the signed deletion receipt "
            "(memdeck.deletion-receipt/1)."
        ),
    )
    def forget(ids: Ids, reason: Text) -> dict[str, Any]:
        with expected:
            return backend.forget(ids, reason)

    @server.tool(
        name="feedback",
        description=(
            "Say whether a recalled memory (its id) or a whole recall (the trace_id recall returned) was useful "
            "or wrong; for a procedure you followed, whether it worked. The verdict counts toward the trust of "
            "the agents that wrote those memories, and trust weighs in every later recall's score; a procedure "
            "that keeps failing goes to the person's review queue. Returns {target, useful, agents, memory_ids}."
        ),
    )
    def feedback(id: Text, useful: bool) -> dict[str, Any]:
        with expected:
            return backend.feedback(id, useful)

    @server.tool(
        name="close_session",
        description=(
            "Close a conversation session (default: this server's session): its episodes are marked closed "
            "and consolidated into durable facts by the background maintenance. Call it when a conversation "
            "ends, whether or not you wrote episodes: with none, nothing is consolidated (queued false and a "
            "message say so). Give what you learned, judged by you: `summary` (a few sentences), `facts` "
            "(durable statements about the user, each a text or {text, sources: episode ids}; without sources "
            "the session's episodes are their provenance) and `procedures` ({name, steps, when}). They are "
            "redacted, checked and stored as yours; a fact that contradicts a known one goes to the person's "
            "review queue. Returns {session, principal, episodes, closed, queued, why, message?, digest?}."
        ),
    )
    def close_session(
        session: Text | None = None,
        summary: Text | None = None,
        facts: FactArgs | None = None,
        procedures: ProcedureArgs | None = None,
    ) -> dict[str, Any]:
        with expected:
            return backend.close_session(session, summary, facts, procedures)

    @server.tool(
        name="entities",
        description="This user's entities (people, places, ...) with how many memories mention each. "
        "Returns {entities: [...]}.",
    )
    def entities() -> dict[str, Any]:
        with expected:
            return backend.entities()

    @server.tool(
        name="related",
        description="The entities within `depth` steps of an entity, nearest first, with what reaches each: a "
        "relation, or a memory that names both (via.kind co-mention).",
    )
    def related(name: Name, depth: Depth = 1) -> dict[str, Any]:
        with expected:
            return backend.related(name, depth)

    @server.tool(
        name="path",
        description="The shortest chain between two of this user's entities: relations "
        "first, else also memories that name two entities together.",
    )
    def path(a: Name, b: Name) -> dict[str, Any]:
        with expected:
            return backend.path(a, b)

    @server.tool(
        name="add_entity",
        description="Add an entity of a kind, or aliases of one. Returns the entity.",
    )
    def add_entity(name: Name, kind: EntityKind = "other", aliases: Names | None = None) -> dict[str, Any]:
        with expected:
            return backend.add_entity(name, kind, aliases)

    @server.tool(
        name="add_relation",
        description=(
            "Relate two existing entities: subject, predicate, object; negated for 'does not'; valid_from / "
            "valid_until for when it held ('worked at X until 2019'); sources: memory ids that support it. "
            "Returns the relation."
        ),
    )
    def add_relation(
        subject: Name,
        predicate: Name,
        object: Name,
        negated: bool = False,
        valid_from: When | None = None,
        valid_until: When | None = None,
        sources: SourceIds | None = None,
    ) -> dict[str, Any]:
        with expected:
            return backend.add_relation(subject, predicate, object, negated, valid_from, valid_until, sources)

    @server.resource(
        PINNED_URI,
        name="pinned",
        description="Memories this user pinned: always worth having in context.",
        mime_type="application/json",
    )
    def pinned() -> str:
        with expected:
            return json.dumps(backend.pinned(), ensure_ascii=False)

    @server.resource(
        CONTEXT_URI,
        name="context",
        mime_type="text/plain",
        description="The context pack for a query (1000 tokens, pinned first), ready to put in a prompt.",
    )
    def context_resource(query: str) -> str:
        with expected:
            return str(backend.context(query)["text"])

    @server.prompt(
        name="reflect",
        description=(
            "Hands you this session's episodes (or a named session's) and asks for what is worth keeping: a "
            "summary, durable facts with the episodes they come from, and procedures, sent back through "
            "`close_session`."
        ),
    )
    def reflect(session: str | None = None) -> str:
        try:
            return backend.reflect(session)
        except MemdeckError as exc:
            # A prompt's own error reaches the client as the request's error, with this one line.
            from mcp.shared.exceptions import MCPError
            from mcp_types import INVALID_PARAMS

            raise MCPError(INVALID_PARAMS, str(exc)) from None

    server.memdeck_backend = backend  # for tests and embedding applications
    return server


def launch_identity(principal: str | None, agent: str | None) -> tuple[str, str]:
    """The principal and agent from the command line, else the environment. The principal is required."""
    principal = principal or os.environ.get("MEMDECK_PRINCIPAL")
    agent = agent or os.environ.get("MEMDECK_AGENT") or "agent"
    if not principal:
        raise MemdeckError(
            "memdeck mcp needs --principal (or MEMDECK_PRINCIPAL): whose memories the agent may use"
        )
    return check_principal(principal), check_principal(agent)


def serve(
    principal: str | None = None, agent: str | None = None, store_path: str | Path | None = None
) -> int:
    """Run the server on stdio until the client closes it."""
    principal, agent = launch_identity(principal, agent)
    server = build_server(principal, agent, store_path)
    try:
        server.run("stdio")
    finally:
        backend = server.memdeck_backend
        if backend.scheduler is not None:
            backend.scheduler.stop()
        if backend._store is not None:
            backend._store.close()
    return 0


__all__ = ["build_server", "launch_identity", "render_tool_table", "serve", "tool_table"]


# --- the manual's tool table (docs/mcp.md), rendered from the server's own tool list -------------------------------------

TABLE_START = "<!-- mcp-tools: generated by `python -m memdeck.cli.mcp --tool-table`; do not edit by hand -->"
TABLE_END = "<!-- /mcp-tools -->"


def tool_table() -> str:
    """The Markdown table of every tool, its arguments (types, enums, bounds, defaults) and what it does,
    from the schemas ``tools/list`` answers with (no store is opened)."""
    import anyio

    server = build_server("alice", "agent", preload=False)
    return render_tool_table(anyio.run(server.list_tools))


def render_tool_table(tools: list[Any]) -> str:
    rows = ["| tool | arguments | what it does |", "|---|---|---|"]
    for tool in tools:
        schema = tool.input_schema
        required = set(schema.get("required", ()))
        args = [
            _render_argument(name, spec, name in required, schema.get("$defs", {}))
            for name, spec in schema.get("properties", {}).items()
        ]
        rows.append(
            f"| `{tool.name}` | {_cell(', '.join(args) or 'none')} | {_cell(tool.description or '')} |"
        )
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _render_argument(name: str, spec: dict[str, Any], required: bool, defs: dict[str, Any]) -> str:
    notes = [_render_type(spec, defs)]
    if required:
        notes.append("required")
    elif spec.get("default") not in (None, [], ""):
        default = spec["default"]
        notes.append(f"default {default if isinstance(default, str) else json.dumps(default)}")
    return f"`{name}` ({', '.join(n for n in notes if n)})"


def _render_type(spec: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in spec:
        spec = defs[spec["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in spec:
        kinds = [s for s in spec["anyOf"] if s.get("type") != "null"]
        return " or ".join(_render_type(s, defs) for s in kinds)
    if "enum" in spec:
        return " / ".join(str(v) for v in spec["enum"])
    kind = spec.get("type")
    if kind == "array":
        items = _render_type(spec.get("items", {}), defs).replace("string", "strings", 1)
        size = _range(spec.get("minItems"), spec.get("maxItems"), "item")
        return f"list of {items}" + (f", {size}" if size else "")
    if kind == "object":
        fields = [
            f"{k}: {_render_type(v, defs)}" if "enum" in v else k
            for k, v in spec.get("properties", {}).items()
        ]
        return "{" + ", ".join(fields) + "}"
    if kind in ("integer", "number"):
        low, high = spec.get("minimum"), spec.get("maximum")
        bounds = (
            f"{_num(low)}-{_num(high)}"
            if low is not None and high is not None
            else (f">= {_num(low)}" if low is not None else (f"<= {_num(high)}" if high is not None else ""))
        )
        return f"{kind} {bounds}".strip()
    if kind == "string":
        return "string" + (f" ≤ {_num(spec['maxLength'])} chars" if spec.get("maxLength") is not None else "")
    return str(kind or "any")


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and value >= 10_000 else str(value)


def _range(low: int | None, high: int | None, unit: str) -> str:
    if high is None:
        return ""
    if low:
        return f"{low}-{_num(high)} {unit}s"
    return f"at most {_num(high)} {unit}s"


def _update_readme(path: Path) -> bool:
    """Write the table between the markers in ``path``; True if the file changed."""
    text = path.read_text(encoding="utf-8")
    if TABLE_START not in text or TABLE_END not in text:
        raise MemdeckError(f"{path} has no {TABLE_START} ... {TABLE_END} markers")
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    new = f"{head}{TABLE_START}\n{tool_table()}{TABLE_END}{tail}"
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def _main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m memdeck.cli.mcp", description="The MCP server's tool table, as docs/mcp.md shows it."
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--tool-table", action="store_true", help="print the Markdown table of the tools")
    group.add_argument(
        "--update",
        "--update-readme",
        dest="update",
        metavar="PATH",
        help="rewrite the table between the markers in PATH (docs/mcp.md)",
    )
    args = parser.parse_args(argv)
    try:
        if args.tool_table:
            sys.stdout.write(tool_table())
        else:
            changed = _update_readme(Path(args.update))
            print(f"{args.update}: {'updated' if changed else 'already current'}")
    except (MemdeckError, OSError) as exc:
        print(f"memdeck: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
