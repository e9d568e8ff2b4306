"""An agent's forget reason is printed as text by `receipts show` (Markdown) and `--json`: a terminal
control (an OSC 52 clipboard write), a C1 control or a bidi override never reaches the terminal raw."""

from __future__ import annotations

import json

import pytest

from memdeck.cli import main as cli_main
from memdeck.core.forget import forget

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
HOSTILE = f"user asked {OSC52} \u009b31m red \u202egnp.exe"


@pytest.mark.parametrize("form", [[], ["--json"]])
def test_a_hostile_reason_is_shown_never_sent(store, capsys, form):
    m = store.remember("a note to forget about the Tarnwick ferry", tier="episodic", principal="alice").memory
    receipt = forget(store.engine, [m.id], HOSTILE)
    capsys.readouterr()
    assert cli_main(["--store", str(store.root), "receipts", "show", receipt["receipt_id"], *form]) == 0
    out = capsys.readouterr().out
    for raw in ("\x1b", "\x07", "\u009b", "\u202e"):
        assert raw not in out
    if form:
        assert json.loads(out)["reason"] == receipt["reason"]  # the same value, escaped
    else:
        assert "\\x1b]52" in out and "\\u202e" in out
