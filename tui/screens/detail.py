"""One memory in full: every field, its provenance as links you can follow, its edit history and recalls."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Header, Label, OptionList, Static
from textual.widgets.option_list import Option

from memdeck.core.config import expiry_rules
from memdeck.core.errors import MemdeckError
from memdeck.core.privacy.reveal import reveal_memory
from memdeck.core.recall import traces

from ..format import age, expiry_text, one_line, stamp
from ..widgets.key_footer import KeyFooter
from .actions import MemoryActionsScreen

TOKEN_PATTERN = r"<[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)?_\d+>"

MAX_LINKS = 200


@dataclass
class Link:
    relation: str  # "source episode", "derived fact", "superseded by", "learned from"
    memory_id: str
    memory: Any | None  # None: not found (forgotten, or outside the scope)


@dataclass
class DetailData:
    memory: Any
    history: list[dict[str, Any]] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    recalls: list[dict[str, Any]] | None = None  # None: no recall log to read
    recalls_error: str | None = None
    entities: list[dict[str, Any]] = field(default_factory=list)  # the entities it mentions (chips)
    outcomes: tuple[int, int] | None = None  # a procedure's (worked, failed) when followed


def load_detail(store: Any, memory_id: str, scope: Any) -> DetailData:
    """Everything the detail screen shows (blocking: run it in a worker)."""
    memory = store.get(memory_id, scope)
    data = DetailData(memory, history=store.history(memory_id, scope))
    wanted: list[tuple[str, str]] = [("source episode", s) for s in memory.sources]
    wanted += [("learned from", s) for s in memory.learned_from]
    if memory.superseded_by:
        wanted.append(("superseded by", memory.superseded_by))
    for relation, other_id in wanted[:MAX_LINKS]:
        try:
            data.links.append(Link(relation, other_id, store.get(other_id, scope)))
        except Exception:  # noqa: BLE001 - a missing source is shown as such, not as a failure
            data.links.append(Link(relation, other_id, None))
    data.links += [Link("derived fact", m.id, m) for m in derived_facts(store, memory, scope)]
    data.entities = store.memory_entities(memory.principal, memory.id)
    if memory.tier == "procedural":
        from memdeck.core.recall.feedback import outcomes

        data.outcomes = outcomes(store, [memory.id]).get(memory.id, (0, 0))
    try:
        data.recalls = recalls_of(store, memory_id, scope)
    except Exception as exc:  # noqa: BLE001 - an unreadable trace log must not hide the memory
        data.recalls_error = f"{type(exc).__name__}: {exc}"
    return data


def derived_facts(store: Any, memory: Any, scope: Any) -> list[Any]:
    """Facts that name this memory as a source (what forgetting it would delete or update)."""
    if memory.tier != "episodic":
        return []
    plan = store.plan_forget([memory.id], scope)
    return [m for m, _why in [*plan.cascade_delete, *plan.cascade_update]][:MAX_LINKS]


RECALL_WINDOW = 5000  # newest traces searched for a memory when the trace log has no index by memory


def recalls_of(store: Any, memory_id: str, scope: Any) -> list[dict[str, Any]] | None:
    """When, by which agent and for which query this memory was returned, newest first."""
    out = []
    # The engine, not the Store: the log's reader writes the engine's queued traces first (a Store is no key
    # of its writers, and a recall made just before would then be missing).
    for trace in traces.list_traces(store.engine, scope=scope, limit=RECALL_WINDOW):
        if memory_id in trace.returned:
            out.append(
                {
                    "at": trace.at,
                    "agent": trace.agent,
                    "query": trace.query,
                    "source": trace.source,
                    "rank": trace.returned.index(memory_id) + 1,
                }
            )
    return out


class DetailScreen(MemoryActionsScreen):
    """Every field of one memory; select a link to open that memory."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "back", "Back", id="detail.back"),
        Binding("l", "links", "Links", id="detail.links", tooltip="Move to the provenance links"),
        Binding(
            "n",
            "entities",
            "Entities",
            id="detail.entities",
            tooltip="Move to the entities it mentions (Enter opens one on the Entities screen)",
        ),
        Binding(
            "v",
            "reveal",
            "Reveal",
            id="detail.reveal",
            tooltip="Show the original values behind redaction tokens (this memory's principal only)",
        ),
    ]

    @dataclass
    class Revealed(Message):
        """The memory's text with its redaction tokens replaced by the originals."""

        text: str
        count: int

    @dataclass
    class EntityChosen(Message):
        """An entity chip was chosen: open it on the Entities screen."""

        principal: str
        entity_id: str

    @dataclass
    class Loaded(Message):
        """The memory and its surroundings were read."""

        data: DetailData

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.data: DetailData | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Horizontal(id="detail"):
            with VerticalScroll(id="detail-main"):
                yield Static(Text(f"Loading {self.memory_id}…"), id="detail-title")
                yield Static("", id="detail-text")
                yield Static("", id="detail-fields")
            with VerticalScroll(id="detail-side"):
                yield Label("Provenance", classes="section")
                yield OptionList(id="detail-links")
                yield Label("Entities", classes="section")
                yield OptionList(id="detail-entities")
                yield Label("History", classes="section")
                yield Static("", id="detail-history")
                yield Label("Recalls", classes="section")
                yield Static("", id="detail-recalls")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._load(self.memory_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail", description="Reading the memory")
    def _load(self, memory_id: str) -> None:
        self.post_message(self.Loaded(load_detail(self.store, memory_id, self.scope)))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.data = data = message.data
        m = data.memory
        now = self.now()
        title = Text()
        title.append(f"{m.tier} memory ", style="bold")
        title.append(m.id, style="bold")
        badges = [m.state] + (["pinned"] if m.pinned else []) + [f"version {m.version}"]
        title.append("   " + " · ".join(badges), style="italic")
        self.query_one("#detail-title", Static).update(title)
        text = Text(m.text)
        # Redaction tokens stand out, so a person sees at once what was taken out at write time.
        text.highlight_regex(TOKEN_PATTERN, style="bold magenta")
        if m.tier == "procedural" and m.steps:
            text = Text(f"{m.name} (v{m.proc_version})\n", style="bold")
            for n, step in enumerate(m.steps, 1):
                text.append(f"{n}. {step}\n", style="")
        self.query_one("#detail-text", Static).update(text)
        self.query_one("#detail-fields", Static).update(
            _fields_table(m, now, self._tier_ttl(m.tier), data.outcomes)
        )
        self._show_links(data.links)
        self._show_entities(data.entities, m.principal)
        self.query_one("#detail-history", Static).update(_history_text(data.history, m))
        self.query_one("#detail-recalls", Static).update(_recalls_text(data.recalls, m, data.recalls_error))
        self.refresh_bindings()

    def _tier_ttl(self, tier: str) -> tuple[float, str] | None:
        try:
            return expiry_rules(self.store.settings).get(tier)
        except MemdeckError:  # a bad [ttl_from] setting: maintenance reports it; the detail still shows
            return None

    def _show_links(self, links: list[Link]) -> None:
        option_list = self.query_one("#detail-links", OptionList)
        option_list.clear_options()
        if not links:
            option_list.add_option(
                Option(Text("No links: no sources, derived facts or successor.", style="dim"), disabled=True)
            )
            return
        for link in links:
            label = Text()
            label.append(f"{link.relation:<15}", style="bold")
            if link.memory is None:
                label.append(f"{link.memory_id} (not found: forgotten or outside this scope)", style="dim")
                option_list.add_option(Option(label, id=None, disabled=True))
                continue
            label.append(f"{link.memory.tier[:3]} ", style="italic")
            label.append(one_line(link.memory.text)[:80])
            option_list.add_option(Option(label, id=link.memory_id))

    def _show_entities(self, entities: list[dict[str, Any]], principal: str) -> None:
        """A chip per entity the memory mentions; selecting one opens it on the Entities screen."""
        chips = self.query_one("#detail-entities", OptionList)
        chips.clear_options()
        if not entities:
            chips.add_option(Option(Text("No entities.", style="dim"), disabled=True))
        for e in entities:
            label = Text()
            label.append(f" {e['name']} ", style="reverse")
            label.append(f" {e['kind']} · {e['mentions']} memories", style="italic")
            chips.add_option(Option(label, id=f"{principal}\x00{e['id']}"))

    @on(OptionList.OptionSelected, "#detail-links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.app.push_screen(DetailScreen(event.option.id))

    @on(OptionList.OptionSelected, "#detail-entities")
    def _open_entity(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            principal, entity_id = event.option.id.split("\x00", 1)
            self.post_message(self.EntityChosen(principal, entity_id))  # the app opens the Entities screen

    def action_back(self) -> None:
        self.dismiss()

    def action_reveal(self) -> None:
        if self.data is not None:
            self._reveal(self.data.memory.id, self.data.memory.principal)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail", description="Revealing values")
    def _reveal(self, memory_id: str, principal: str) -> None:
        shown = reveal_memory(self.store.engine, memory_id, principal)
        self.post_message(self.Revealed(shown.text, shown.revealed))

    @on(Revealed)
    def _revealed(self, message: Revealed) -> None:
        if not message.count:
            self.notify("Nothing to reveal: this memory holds no redaction tokens.")
            return
        text = Text(message.text, style="")
        text.append(
            f"\n(revealed {message.count} redacted value(s); leave this screen to hide them)",
            style="italic yellow",
        )
        self.query_one("#detail-text", Static).update(text)

    def action_links(self) -> None:
        links = self.query_one("#detail-links", OptionList)
        links.focus()
        if links.highlighted is None and links.option_count:
            links.action_first()

    def action_entities(self) -> None:
        chips = self.query_one("#detail-entities", OptionList)
        chips.focus()
        if chips.highlighted is None and chips.option_count:
            chips.action_first()

    def action_targets(self) -> list[Any]:
        return [self.data.memory] if self.data is not None else []

    def after_change(self, ids: list[str], removed: bool) -> None:
        if removed and self.memory_id in ids:
            self.dismiss()
            return
        self._load(self.memory_id)


def _fields_table(
    m: Any, now: Any, ttl: tuple[float, str] | None = None, outcomes: tuple[int, int] | None = None
) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    when_age = f"  ({age(m.created_at, now)} ago)" if now is not None and m.created_at else ""
    rows: list[tuple[str, Any]] = [
        ("id", m.id),
        ("tier", m.tier),
        ("type", m.type or "—"),
        ("principal", m.principal),
        ("agent", m.agent),
        ("state", m.state),
        ("deprecation reason", m.deprecation_reason),
        ("superseded by", m.superseded_by),
        ("pinned", "yes" if m.pinned else "no"),
        ("importance", f"{m.importance:.2f}"),
        ("tags", ", ".join(m.tags) or "—"),
        ("version", str(m.version)),
        ("created", stamp(m.created_at) + when_age),
        ("updated", stamp(m.updated_at)),
        ("recalled", f"{m.access_count or 0:,}×"),
        ("last recalled", stamp(m.last_accessed)),
        ("expires", expiry_text(m.expires_at, now, ttl) if now is not None else stamp(m.expires_at)),
        ("content sha256", m.content_sha256),
    ]
    if m.tier == "episodic":
        rows += [
            ("session", m.session),
            ("started", stamp(m.started_at)),
            ("ended", stamp(m.ended_at)),
            ("closed", "yes" if m.closed else "no"),
        ]
        if m.events:
            rows.append(("events", "\n".join(_event_text(e) for e in m.events)))
        if m.derived_facts:
            rows.append(("derived facts", "\n".join(m.derived_facts)))
    elif m.tier == "semantic":
        rows += [
            ("sources", ", ".join(m.sources) or "—"),
            ("confidence", _opt(m.confidence)),
            ("evidence", f"{m.evidence_count or 1:,}"),
            ("last reinforced", stamp(m.last_reinforced_at)),
        ]
    elif m.tier == "procedural":
        rows += [
            ("name", m.name),
            ("procedure version", str(m.proc_version or 1)),
            ("learned from", ", ".join(m.learned_from) or "—"),
            ("when to use", m.meta.get("when_to_use") or "—"),
        ]
        if outcomes is not None:
            rows.append(("outcomes", f"worked {outcomes[0]}, failed {outcomes[1]}"))
    if m.meta:
        rows.append(("meta", json.dumps(m.meta, ensure_ascii=False, sort_keys=True)))
    for key, value in rows:
        if value not in (None, ""):
            grid.add_row(key, Text(str(value)))
    return grid


def _opt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _event_text(event: Any) -> str:
    return event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)


def _history_text(history: list[dict[str, Any]], m: Any) -> Text:
    if not history:
        return Text("Never edited.", style="dim")
    out = Text()
    for row in history:
        out.append(f"v{row.get('version')} ", style="bold")
        out.append(f"until {stamp(row.get('edited_at'))} by {row.get('agent') or '?'}\n", style="italic")
        out.append(f"  {one_line(row.get('text'))}\n")
    out.append(f"v{m.version} ", style="bold")
    out.append("current\n", style="italic")
    return out


def _recalls_text(recalls: list[dict[str, Any]] | None, m: Any, error: str | None = None) -> Text:
    count = m.access_count or 0
    if count:
        summary = Text(
            f"Recalled {count:,} time{'' if count == 1 else 's'}; last {stamp(m.last_accessed)}.\n"
        )
    else:
        summary = Text("Never recalled.\n")
    if error:
        summary.append(f"The recall log could not be read: {error}", style="red")
        return summary
    if recalls is None:
        summary.append("This store keeps no recall log, so who recalled it is not known.", style="dim")
        return summary
    if not recalls and not count:
        return summary
    if not recalls:
        summary.append(
            f"None of the last {RECALL_WINDOW:,} logged recalls returned it (recalls from before the log "
            "began, or pruned from it, are not listed).",
            style="dim",
        )
        return summary
    for r in recalls[:50]:
        when = r.get("at")
        summary.append(f"{stamp(when) if isinstance(when, datetime) else when}  ", style="italic")
        summary.append(f"{r.get('agent') or '—'}", style="bold")
        if r.get("rank"):
            summary.append(f"  #{r['rank']}")
        if r.get("query"):
            summary.append(f"  “{one_line(r['query'])[:50]}”")
        if r.get("source"):
            summary.append(f"  ({r['source']})", style="dim")
        summary.append("\n")
    if len(recalls) > 50:
        summary.append(f"… and {len(recalls) - 50} earlier\n", style="dim")
    return summary
