"""Another data set in LoCoMo's layout is read, not refused: other date shapes (ISO 8601, '2023/05/20 (Sat)
02:21', '8 May 2023'), a session whose date cannot be read (dated after the one before it, and counted),
category names instead of numbers, one evidence string instead of a list, turns without a dia_id."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.tuning.locomo import load_locomo, parse_session_date


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08T13:56:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("8 May 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("May 8, 2023", datetime(2023, 5, 8, tzinfo=UTC)),
    ],
)
def test_session_dates_in_other_shapes(raw: str, expected: datetime) -> None:
    assert parse_session_date(raw) == expected


def _sample() -> list[dict[str, object]]:
    return [
        {
            "sample_id": "other-1",
            "conversation": {
                "speaker_a": "Ines",
                "speaker_b": "Tariq",
                "session_1_date_time": "2023/05/20 (Sat) 02:21",
                "session_1": [
                    {"speaker": "Ines", "text": "I adopted a grey cat called Pixel last week."},
                    {"speaker": "Tariq", "text": "Lovely! I am training for the Porto marathon."},
                ],
                "session_2_date_time": "sometime in spring",
                "session_2": [
                    {"speaker": "Ines", "dia_id": "D2:1", "text": "Pixel knocked my coffee off the desk."},
                    {
                        "speaker": "Tariq",
                        "dia_id": "D2:2",
                        "text": "My marathon time was 3 hours 41 minutes.",
                    },
                ],
            },
            "qa": [
                {"question": "What is the name of Ines's cat?", "evidence": "D1:1", "category": "single-hop"},
                {"question": "Which race is Tariq training for?", "evidence": ["D1:2"], "category": "4"},
                {"question": "What did the cat do?", "evidence": ["D2:1"], "category": "mystery"},
            ],
        }
    ]


def test_a_file_in_the_layout_with_other_shapes_loads_and_counts_what_it_repaired(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(_sample()), encoding="utf-8")
    conversations, defects = load_locomo(path)
    (conv,) = conversations
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert conv.turns[0].session_at == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert conv.turns[2].session_at == datetime(2023, 5, 21, 2, 21, tzinfo=UTC)  # the day after session 1
    assert [(q.category, q.evidence) for q in conv.questions] == [(4, ["D1:1"]), (4, ["D1:2"]), (0, ["D2:1"])]
    report = defects.to_json()
    assert report["undated"]["count"] == 1 and report["undated"]["cases"][0]["raw"] == "sometime in spring"
    assert report["uncategorised"]["count"] == 1


def test_eval_locomo_runs_on_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], real_embedder) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(_sample()), encoding="utf-8")
    assert main(["eval", "locomo", "--data", str(path), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["results"]["categories 1-4"]["questions"] == 2
    assert (
        body["results"]["categories 1-4"]["R@10"] == 1.0
    )  # four turns: every evidence turn is in the top 10
