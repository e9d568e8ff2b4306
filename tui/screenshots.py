"""Regenerate the screenshots: an SVG and a PNG of every main screen, from a fresh demo store, headless.

    python -m memdeck.tui.screenshots [OUTDIR] [--fast]

OUTDIR defaults to ./screenshots. ``--fast`` builds the demo store with the hash embedder (no model, so
search and the inspector's scores mean nothing); by default the real packaged model is used.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input, Select, TabbedContent

SIZE = (140, 42)
# Textual's SVG asks for Fira Code from the web; a converter with no network needs a local monospace font.
_FONT = re.compile(r"font-family:\s*Fira Code,\s*monospace")


def to_png(svg_path: Path) -> Path:
    import cairosvg  # type: ignore[import-untyped]

    # DejaVu Sans Mono advances 0.602 em where the SVG lays cells out at 0.61 em: widen by the difference,
    # or long runs (borders, rules) drift left of the cells after them.
    svg = _FONT.sub(
        "font-family: DejaVu Sans Mono, monospace; letter-spacing: 0.16px",
        svg_path.read_text(encoding="utf-8"),
    )
    png = svg_path.with_suffix(".png")
    cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=str(png), output_width=1600)
    return png


def build_store(root: Path, fast: bool) -> Any:
    """The demo store, plus a few things the screenshots should show (a cascade, an edit history)."""
    from memdeck.core.demo import build_demo
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.store import Store

    path = root / "store"
    embedder = HashEmbedder() if fast else None
    build_demo(path, total=1200, store=Store.open(path, embedder=embedder))
    store = Store.open(path, embedder=embedder)
    episode = store.list(tier="episodic", limit=1)[0]
    store.remember(
        f"{episode.principal} agreed to own the follow-up from this session",
        tier="semantic",
        principal=episode.principal,
        agent=episode.agent,
        sources=[episode.id],
        created_at=episode.created_at,
    )
    return store


async def shoot(store: Any, outdir: Path, log: Callable[[str], None]) -> list[Path]:
    from textual.worker import WorkerCancelled

    from memdeck.core.filters import Scope

    from .app import MemdeckApp
    from .screens.analytics import AnalyticsScreen
    from .screens.browse import BrowseScreen
    from .screens.detail import DetailScreen
    from .screens.inspector import InspectorScreen
    from .screens.receipts import ReceiptsScreen
    from .widgets.memory_table import MemoryTable

    app = MemdeckApp(store=store, scope=Scope.everyone())
    written: list[Path] = []
    async with app.run_test(size=SIZE) as pilot:

        async def settle() -> None:
            for _ in range(6):
                try:
                    await app.workers.wait_for_complete()
                except WorkerCancelled:
                    pass  # replaced by a newer worker of its exclusive group, awaited in the next round
                await pilot.pause(0.05)

        async def snap(name: str, setup: Callable[[], Awaitable[Any]] | None = None) -> None:
            if setup is not None:
                await setup()
            await settle()
            svg = Path(app.save_screenshot(f"{name}.svg", str(outdir)))
            written.append(to_png(svg))
            log(f"  {name}")

        await settle()
        while app.model_state == "loading":
            await pilot.pause(0.2)
        app.sub_title = "demo store · all principals"  # not the temporary directory's name
        await settle()
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        table = browse.query_one(MemoryTable)
        principal: Select[str] = browse.query_one("#filter-principal", Select)

        await snap("01-browse", lambda: pilot.press("down", "down", "down"))

        async def semantic_tier() -> None:
            browse.show_tier("semantic")
            await settle()
            principal.value = "alice"
            await settle()
            await pilot.press("down", "space", "down", "space")

        await snap("02-browse-semantic", semantic_tier)

        async def search() -> None:
            table.clear_selection()
            browse.show_tier(None)
            principal.clear()
            await settle()
            await pilot.press("slash", *"when is the deadline", "enter")

        await snap("03-search", search)
        await pilot.press("escape", "escape")
        await settle()

        edited = next(m for m in store.list(tier="semantic", state="deprecated", limit=50) if m.superseded_by)
        store.edit(edited.id, edited.text + " (as of the spring)", agent="assistant")
        await snap("04-detail", lambda: app.push_screen(DetailScreen(edited.id)))
        await snap("05-edit", lambda: pilot.press("e"))
        await pilot.press("escape")
        await snap("06-deprecate", lambda: pilot.press("d"))
        await pilot.press("escape", "escape")
        await settle()

        async def forget() -> None:
            browse.show_tier("episodic")
            await settle()
            await pilot.press("home", "x")

        await snap("07-forget", forget)
        await snap("08-receipt", lambda: pilot.click("#ok"))
        await pilot.press("escape")
        await settle()
        browse.show_tier(None)
        await snap("09-help", lambda: pilot.press("question_mark"))
        await pilot.press("escape")

        # The inspector in use: a recall, then a heavier recency weight that moves results (no new
        # search), with the cursor on one that moved up so its score bars show.
        async def inspector_recall() -> None:
            app.switch_mode("inspector")
            await settle()
            screen = app.screen
            assert isinstance(screen, InspectorScreen)
            screen.query_one("#inspector-query", Input).value = "when is the project deadline"
            screen.query_one("#inspector-principal", Input).value = "alice"
            await pilot.press("ctrl+r")
            await settle()
            screen.query_one("#inspector-weight-recency-input", Input).value = "0.6"
            await settle()
            moved = [
                i
                for i, mem_id in enumerate(screen.ranked_ids)
                if screen.moves.get(mem_id, "").startswith("▲")
            ]
            table = screen.query_one("#inspector-results", DataTable)
            table.move_cursor(row=moved[0] if moved else 0)
            table.focus()

        await snap("10-inspector", inspector_recall)

        # Why a memory just below the top k was not returned, and the weight change that would return it.
        async def explain_below_k() -> None:
            screen = app.screen
            assert isinstance(screen, InspectorScreen) and screen.result is not None
            deeper = screen.result.rerank(screen.profile, k=len(screen.ranked) + 5)
            below = deeper[len(screen.ranked)].memory.id
            await pilot.press("w")
            await pilot.pause()
            app.screen.query_one("#inspector-prompt-input", Input).value = below
            await pilot.press("enter")

        await snap("11-inspector-explain", explain_below_k)

        async def context_pack() -> None:
            await pilot.press(
                "ctrl+n", "ctrl+n"
            )  # explain -> results -> context pack: what the recall injects

        await snap("16-inspector-pack", context_pack)  # numbered after the first fifteen, whose names stay

        # Every analytics tab: the overview, then the others in order (ctrl+n steps through them).
        app.switch_mode("analytics")
        await snap("12-analytics")
        analytics = app.screen
        assert isinstance(analytics, AnalyticsScreen)
        tabs = analytics.query_one(TabbedContent)
        for n, pane in enumerate(analytics.TABS[1:]):
            tabs.active = pane
            await snap(f"{17 + n}-analytics-{pane.removeprefix('analytics-tab-')}")

        async def verified_receipt() -> None:
            app.switch_mode("receipts")
            await settle()
            assert isinstance(app.screen, ReceiptsScreen)
            app.screen.query_one(
                "#receipts-export-dir", Input
            ).value = "~/receipts"  # not this machine's path
            await pilot.press("v")  # the receipt the forget above wrote: signature, key and chain link

        await snap("13-receipts", verified_receipt)

        async def review_queue() -> None:
            app.switch_mode("review")  # contradictions side by side, near-duplicates, stale, due for TTL

        await snap("14-review", review_queue)

        async def entities() -> None:
            app.switch_mode("entities")  # entities per principal, one entity's relations and memories

        await snap("15-entities", entities)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memdeck.tui.screenshots", description=__doc__.split("\n")[0]
    )
    parser.add_argument("outdir", nargs="?", default="screenshots")
    parser.add_argument("--fast", action="store_true", help="hash embedder instead of the real model")
    args = parser.parse_args(argv)
    outdir = Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="memdeck-shots-") as tmp:
        os.environ["MEMDECK_HOME"] = str(Path(tmp) / "home")  # no user config or keymap in the pictures
        log("building the demo store…")
        store = build_store(Path(tmp), args.fast)
        log(f"writing screenshots to {outdir}/")
        written = asyncio.run(shoot(store, outdir, log))
        store.close()
    log(f"{len(written)} screenshots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
