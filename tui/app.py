"""The memdeck app: modes for browsing, the recall inspector, analytics and receipts over one store.

Start-up paints before anything slow happens: the store module (LanceDB) is imported and the store opened
in a worker when the app is started by :func:`run`. The embedding model loads in another worker once the
first rows are on screen (or another screen is asked for, or at the latest ``MODEL_LOAD_AT_LATEST_S`` after
the store opened): its load holds the interpreter for long stretches, so started earlier it delays the
rows. Until it has loaded, search is by keyword and the status bar says so. What only later keys need (the
dialogs, a memory's detail, the maintenance scheduler) is imported when first used or after the first rows.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.paths import config_file

from . import model
from .failures import failure_text, report_failure
from .host import MemdeckHost
from .keys import is_text_field
from .screens.base import MemdeckScreen
from .screens.opening import OpeningScreen
from .widgets.status_bar import maintenance_line

if TYPE_CHECKING:
    from memdeck.core.maintenance.scheduler import Scheduler, TaskStatus
    from memdeck.core.store import Store

log = logging.getLogger("memdeck.tui")

# mode, key, title, module, class: the other screens are imported only when first shown.
MODES: list[tuple[str, str, str, str, str]] = [
    ("browse", "1", "Browse", "memdeck.tui.screens.browse", "BrowseScreen"),
    ("inspector", "2", "Recall inspector", "memdeck.tui.screens.inspector", "InspectorScreen"),
    ("analytics", "3", "Analytics", "memdeck.tui.screens.analytics", "AnalyticsScreen"),
    ("receipts", "4", "Receipts", "memdeck.tui.screens.receipts", "ReceiptsScreen"),
    ("review", "5", "Review", "memdeck.tui.screens.review", "ReviewScreen"),
    ("entities", "6", "Entities", "memdeck.tui.screens.entities", "EntitiesScreen"),
]

Opener = Callable[[], tuple["Store", Scope]]
# Nothing of maintenance runs in the first seconds: the first rows and the model's load come first.
MAINTENANCE_DELAY_S = 3.0
# The model starts loading when the first rows are on screen, and at the latest this long after the store
# opened (a very large store may take longer to count than the model takes to load).
MODEL_LOAD_AT_LATEST_S = 2.0
# Imported in the background once the first rows are shown, so that the first Enter or dialog opens at once.
WARM_MODULES = ("memdeck.tui.screens.detail", "memdeck.tui.screens.dialogs")
STYLESHEET = Path(__file__).with_name("app.tcss")


class MemdeckApp(MemdeckHost):
    """The app over one store and scope. Pass ``store`` (tests) or ``opener`` (start-up from the CLI)."""

    CSS_PATH = STYLESHEET
    TITLE = "memdeck"
    BINDINGS: ClassVar[list[BindingType]] = [
        *[
            Binding(
                key,
                f"mode('{mode}')",
                title.split()[-1].capitalize(),
                id=f"app.mode.{mode}",
                show=False,
                tooltip=f"Show {title.lower()}",
            )
            for mode, key, title, _, _ in MODES
        ],
        Binding("question_mark", "help", "Help", id="app.help", tooltip="Every key on this screen"),
        Binding("q", "quit", "Quit", id="app.quit"),
        # A screen's own Escape comes first; this one leaves a text field on screens that have none.
        Binding(
            "escape",
            "leave_field",
            "Leave the field",
            show=False,
            id="app.leave_field",
            tooltip="Stop typing in this field, so the screen's keys work again",
        ),
    ]

    def __init__(
        self,
        store: Store | None = None,
        scope: Scope | None = None,
        *,
        opener: Opener | None = None,
        clock: Callable[[], datetime] | None = None,
        load_model: bool = True,
        maintenance: bool = False,
    ) -> None:
        if store is None and opener is None:
            raise ValueError("MemdeckApp needs a store or an opener")
        super().__init__(store, scope, clock)
        self._opener = opener
        self.load_model = load_model
        # The maintenance scheduler runs in the app a person opens (memdeck, memdeck demo), not in tests.
        self.run_maintenance = maintenance
        self.scheduler: Scheduler | None = None
        self.open_error: str | None = None
        self.keymap_config: dict[str, str] = {}
        self._model_load_started = False
        self._warmed = False
        for mode, _key, _title, _module, _cls in MODES:
            self.add_mode(mode, partial(self._make_screen, mode))

    # --- start-up -----------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        return OpeningScreen()

    def on_mount(self) -> None:
        if self.store is None:
            self._open_store()
        else:
            self._store_ready()

    @work(thread=True, exclusive=True, exit_on_error=False, group="open", description="Opening the store")
    def _open_store(self) -> None:
        assert self._opener is not None
        store, scope = self._opener()
        self.call_from_thread(self._opened, store, scope)

    def _opened(self, store: Store, scope: Scope) -> None:
        self.store, self.scope = store, scope
        self._store_ready()

    def _store_ready(self) -> None:
        assert self.store is not None
        if self.scope is None:
            self.scope = Scope.everyone()
        scope = self.scope
        who = "all principals" if scope.principals is None else ", ".join(scope.principals)
        self.sub_title = f"{self.store.root} · {who}"
        self._apply_keymap(dict(self.store.engine.settings.keys))
        for line in self.store.engine.settings.unknown:
            self.notify(f"config.toml: {line}; it is ignored", severity="warning", timeout=8, markup=False)
        self.switch_mode("browse")
        if self.run_maintenance:
            self._start_maintenance()
        if self.load_model:
            # Normally started by first_rows_shown(); this is the latest it starts.
            self.set_timer(MODEL_LOAD_AT_LATEST_S, self._start_model_load)
        else:
            self.model_state = "ready" if model.is_loaded(self.store.engine.embedder) else "loading"

    def first_rows_shown(self) -> None:
        """The browse screen's first rows (or its empty message) are on screen: once that frame is painted,
        the model starts loading and the modules of the next keys are imported in the background."""
        self.call_after_refresh(self._after_first_rows)

    def _after_first_rows(self) -> None:
        self._start_model_load()
        if not self._warmed:
            self._warmed = True
            self._warm_up()

    def _start_model_load(self) -> None:
        if self.load_model and not self._model_load_started and self.store is not None:
            self._model_load_started = True
            self._load_model()

    @work(thread=True, exit_on_error=False, group="warm-up", description="Importing the other screens")
    def _warm_up(self) -> None:
        for name in WARM_MODULES:
            importlib.import_module(name)

    def _start_maintenance(self) -> None:
        """Start the scheduler (its own daemon thread: a keypress never waits on it)."""
        assert self.store is not None
        from memdeck.core.maintenance.scheduler import Scheduler

        try:
            self.scheduler = Scheduler(
                self.store.engine, on_change=self._maintenance_ran, start_delay_s=MAINTENANCE_DELAY_S
            ).start()
        except MemdeckError as exc:  # a bad [maintenance] setting: shown, the app still opens
            self.maintenance_ok, self.maintenance_detail = False, str(exc)
            self.maintenance = "maintenance: off (see config)"
            return
        if self.scheduler.enabled:
            self._show_maintenance()

    def _maintenance_ran(self, _task: TaskStatus) -> None:
        # Called in the scheduler's thread.
        self.call_from_thread(self._show_maintenance)

    def _show_maintenance(self) -> None:
        if self.scheduler is None:
            return
        text, ok, detail = maintenance_line(self.scheduler.status(), self.clock())
        self.maintenance_ok, self.maintenance_detail = ok, detail
        self.maintenance = text
        self.mutate_reactive(
            MemdeckHost.maintenance
        )  # a repeated text still refreshes the tooltip and colour

    def stop_maintenance(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stop(timeout=10)
            self.scheduler = None

    def on_unmount(self) -> None:
        self.stop_maintenance()

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="model",
        description="Loading the embedding model",
    )
    def _load_model(self) -> None:
        assert self.store is not None
        embedder = self.store.engine.embedder
        outcome: dict[str, str | None] = {}
        done = threading.Event()

        def load() -> None:
            try:
                outcome["error"] = model.load(embedder)
            finally:
                done.set()

        # The load runs in a daemon thread so that quitting while torch imports does not wait for it.
        threading.Thread(target=load, name="memdeck-model", daemon=True).start()
        worker = get_current_worker()
        while not done.wait(0.1):
            if worker.is_cancelled:
                return
        self.call_from_thread(self._model_loaded, outcome["error"] is None, outcome["error"])

    def _model_loaded(self, ok: bool, error: str | None) -> None:
        self.model_error = error
        self.model_state = "ready" if ok else "unavailable"
        if not ok:
            self.notify(
                f"Semantic search is off: {error}. Keyword search still works.", severity="warning", timeout=8
            )

    def _apply_keymap(self, keys: dict[str, Any]) -> None:
        if not keys:
            return  # no [keys] in the config: nothing to check, and no screen to import for it
        from .screens.help import _own_bindings

        known = {b.id for cls in _binding_classes() for b in _own_bindings(cls) if b.id}
        if set(keys) - known:  # maybe a binding of another mode's screen: only then import those
            known |= {b.id for cls in _mode_classes() for b in _own_bindings(cls) if b.id}
        keymap = {}
        for binding_id, key in keys.items():
            if binding_id not in known or not isinstance(key, str) or not key.strip():
                self.notify(
                    f"config [keys]: ignoring {binding_id!r} = {key!r} (unknown binding id or empty key)",
                    severity="warning",
                    timeout=8,
                    markup=False,  # the text holds brackets and the user's own words
                )
                continue
            keymap[binding_id] = key.strip()
        self.keymap_config = keymap
        self.set_keymap(keymap)

    # --- modes --------------------------------------------------------------------------------------

    def _make_screen(self, mode: str) -> Screen[Any]:
        # Imported when first shown (start-up stays fast); a screen that cannot import is a broken build.
        _mode, _key, _title, module_name, class_name = next(m for m in MODES if m[0] == mode)
        screen_class: type[MemdeckScreen] = getattr(importlib.import_module(module_name), class_name)
        return screen_class(self.store, self.scope)

    def on_detail_screen_entity_chosen(self, message: Any) -> None:
        """An entity chip in a memory's detail: the Entities screen on top, that entity selected."""
        entities = importlib.import_module("memdeck.tui.screens.entities")
        self.push_screen(entities.EntitiesScreen(focus=(message.principal, message.entity_id)))

    def action_leave_field(self) -> None:
        screen = self.screen
        if isinstance(screen, MemdeckScreen):
            screen.leave_field()
        elif is_text_field(self.focused):
            screen.set_focus(None)

    def action_mode(self, mode: str) -> None:
        if self.store is None:
            return
        self._start_model_load()  # another screen asked for before the first rows: it may need the model
        # A dialog or detail screen on top belongs to the current mode; switching keeps it there.
        self.switch_mode(mode)

    # --- help, palette, errors ----------------------------------------------------------------------

    def action_help(self) -> None:
        from .screens.help import HelpScreen, binding_rows

        if isinstance(self.screen, HelpScreen):
            return
        title = self.screen.title or type(self.screen).__name__.removesuffix("Screen")
        rows = binding_rows(self, self.screen, self.keymap_config)
        self.push_screen(HelpScreen(str(title), rows, str(config_file())))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for mode, key, title, _module, _cls in MODES:
            yield SystemCommand(
                f"Go to {title.lower()}",
                f"Switch to the {title.lower()} screen ({key})",
                partial(self.action_mode, mode),
            )
        yield SystemCommand(
            "Help: keys", "List every key on this screen and how to remap it", self.action_help
        )
        if isinstance(screen, MemdeckScreen):
            yield from screen.palette_commands()
        yield from super().get_system_commands(screen)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The app's own workers (opening the store, loading the model); screens report their own."""
        if event.state != WorkerState.ERROR:
            return
        if event.worker.group == "open":
            # run() prints it on stderr once the terminal is restored: one line, no traceback.
            self.open_error = failure_text(event.worker.error)
            log.error("opening the store failed: %s", self.open_error)
            self.call_after_refresh(self.exit, return_code=1)
            return
        report_failure(self, event.worker)


def _binding_classes() -> list[type]:
    from .screens.browse import BrowseScreen
    from .screens.detail import DetailScreen
    from .screens.dialogs import ConfirmDialog, DeprecateDialog, EditDialog, ForgetDialog, ReceiptDialog
    from .screens.help import HelpScreen
    from .widgets.memory_table import MemoryTable

    return [
        MemdeckApp,
        BrowseScreen,
        DetailScreen,
        MemoryTable,
        ConfirmDialog,
        DeprecateDialog,
        EditDialog,
        ForgetDialog,
        ReceiptDialog,
        HelpScreen,
    ]


def _mode_classes() -> list[type]:
    classes: list[type] = []
    for _mode, _key, _title, module_name, _cls in MODES:
        module = importlib.import_module(module_name)
        classes += [v for v in vars(module).values() if isinstance(v, type) and "BINDINGS" in v.__dict__]
    return classes


def run(store_path: str | None, principals: list[str] | None) -> int:
    """Open the store at ``store_path`` (scoped to ``principals`` if given) in the app; the exit code."""

    def opener() -> tuple[Store, Scope]:
        from memdeck.core.store import Store

        scope = Scope.of(*principals) if principals else Scope.everyone()
        store = Store.open(store_path)
        if store.engine.local_tables:
            # The browse screen's first count reads the tables through pylance. Opening them now (pylance's
            # import, each table's latest version), while the opening frame is up and this thread has the
            # interpreter mostly to itself, takes that off the path to the first rows; on object storage
            # each table would be a request, so there the count opens them itself.
            try:
                store.count()
            except Exception as exc:  # noqa: BLE001 - the browse screen's own count reports what is wrong
                log.debug("the tables were not opened ahead of the first count: %s", exc)
        return store, scope

    app = MemdeckApp(opener=opener, maintenance=True)
    try:
        app.run()
    finally:
        if app.store is not None:
            app.store.close()
    if app.open_error:
        print(f"memdeck: error: {app.open_error}", file=sys.stderr)
    return int(app.return_code or 0)
