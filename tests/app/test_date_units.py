"""The app's date filter and the command line read an age the same way: m is minutes in both (as the
tables' ages show it), and the app's months are mo."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memdeck.core.storage.expiry import parse_duration
from memdeck.tui.format import parse_date

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("text", ["30m", "12h", "7d", "2w"])
def test_the_app_and_the_command_line_agree_on_an_age(text):
    assert NOW - parse_date(text, NOW) == parse_duration(text)


def test_months_and_years_in_the_app():
    assert NOW - parse_date("3mo", NOW) == timedelta(days=90)
    assert NOW - parse_date("1y", NOW) == timedelta(days=365)
    with pytest.raises(ValueError, match="3mo"):
        parse_date("3 months", NOW)
