"""The LoCoMo benchmark harness on a tiny file made here: loading, defect handling, metrics, a real run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.tuning.locomo import (
    aggregate,
    evaluate_locomo,
    load_locomo,
    parse_session_date,
    question_metrics,
)

SAMPLE = [
    {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Ana",
                    "dia_id": "D1:1",
                    "text": "I adopted a grey kitten from the shelter yesterday.",
                },
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! What did you name it?"},
                {
                    "speaker": "Ana",
                    "dia_id": "D1:3",
                    "text": "Her name is Pepper, after my grandmother's cat.",
                },
                {
                    "speaker": "Ben",
                    "dia_id": "D1:4",
                    "text": "I just finished building a wooden bookshelf.",
                    "blip_caption": "a photo of a pine bookshelf",
                },
            ],
            "session_2_date_time": "10:04 am on 2 June, 2023",
            "session_2": [
                {
                    "speaker": "Ben",
                    "dia_id": "D2:1",
                    "text": "My marathon training is going well, 30 km a week now.",
                },
                {"speaker": "Ana", "dia_id": "D2:2", "text": "I started learning the cello last month."},
            ],
            "session_3_date_time": "9:00 am on 9 June, 2023",
            "session_3": [],
        },
        "qa": [
            {
                "question": "What is the name of Ana's kitten?",
                "answer": "Pepper",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {
                "question": "What did Ben build?",
                "answer": "a bookshelf",
                "evidence": ["D1:4; D1:2"],
                "category": 1,
            },
            {
                "question": "Which instrument is Ana learning?",
                "answer": "cello",
                "evidence": ["D:2:2"],
                "category": 2,
            },
            {
                "question": "How far does Ben run a week?",
                "answer": "30 km",
                "evidence": ["D2:01", "D9:9"],
                "category": 5,
            },
            {"question": "Is Ana an ally?", "answer": "yes", "evidence": [], "category": 3},
            {
                "question": "What is Ana's favourite film?",
                "answer": "?",
                "evidence": ["D", "D7:7"],
                "category": 4,
            },
        ],
    },
    {
        "sample_id": "conv-b",
        "conversation": {
            "speaker_a": "Cleo",
            "speaker_b": "Dan",
            "session_1_date_time": "4:04 pm on 20 January, 2023",
            "session_1": [
                {"speaker": "Cleo", "dia_id": "D1:1", "text": "We are moving to Lisbon in the spring."},
                {"speaker": "Dan", "dia_id": "D1:2", "text": "I got promoted to team lead at the bakery."},
            ],
        },
        "qa": [
            {"question": "Where is Cleo moving?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 4}
        ],
    },
]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(SAMPLE), encoding="utf-8")
    return path


def test_loader_repairs_splits_drops_and_counts(tiny: Path) -> None:
    conversations, defects = load_locomo(tiny)
    a, b = conversations
    assert [t.dia_id for t in a.turns] == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2"]
    assert a.turns[0].text == 'Ana said, "I adopted a grey kitten from the shelter yesterday."'
    assert a.turns[3].text.endswith(" and shared a photo of a pine bookshelf")
    assert a.turns[0].session_at == parse_session_date("1:56 pm on 8 May, 2023")
    assert a.turns[1].at > a.turns[0].at  # order kept within a session
    evidence = {q.question: q.evidence for q in a.questions}
    assert evidence["What did Ben build?"] == ["D1:4", "D1:2"]
    assert evidence["Which instrument is Ana learning?"] == ["D2:2"]
    assert evidence["How far does Ben run a week?"] == ["D2:1"]
    assert "Is Ana an ally?" not in evidence
    assert "What is Ana's favourite film?" not in evidence
    d = defects.to_json()
    assert d["empty_evidence"]["count"] == 1
    assert d["split"]["count"] == 1
    assert {c["raw"] for c in d["repaired"]["cases"]} == {"D:2:2", "D2:01"}
    assert {c["id"] for c in d["dropped"]["cases"]} == {"D9:9", "D7:7"}
    assert d["unparseable"]["count"] == 1
    assert d["left_without_evidence"]["count"] == 1
    assert len(b.questions) == 1


def test_metric_arithmetic_on_a_known_ranking() -> None:
    ranked = ["D1:2", "D1:9", "D1:4", "D2:1", "D2:2", "D3:1"]
    m = question_metrics(ranked, ["D1:4", "D2:2", "D5:5"])
    assert m["R@1"] == 0.0
    assert m["R@5"] == pytest.approx(2 / 3)
    assert m["R@10"] == pytest.approx(2 / 3)
    assert m["MRR"] == pytest.approx(1 / 3)
    dcg = 1 / math.log2(4) + 1 / math.log2(6)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["nDCG@10"] == pytest.approx(dcg / ideal)
    rows = [
        {"category": 1, "metrics": question_metrics(["x"], ["x"])},
        {"category": 5, "metrics": question_metrics(["y"], ["x"])},
    ]
    agg = aggregate(rows)
    assert agg["categories 1-4"]["R@1"] == 1.0
    assert agg["all 1-5"]["R@1"] == 0.5
    assert agg["by category"]["5 adversarial"]["questions"] == 1


def test_known_questions_rank_their_evidence_first_with_the_real_model(tiny: Path, real_embedder) -> None:
    result = evaluate_locomo(tiny, embedder=real_embedder)
    assert result["conversations"] == 2 and result["turns"] == 8 and result["questions"] == 5
    by_q = {r["question"]: r for r in result["per_question"]}
    assert "D1:3" in by_q["What is the name of Ana's kitten?"]["ranked"][:2]
    assert by_q["Where is Cleo moving?"]["ranked"][0] == "D1:1"
    assert by_q["Which instrument is Ana learning?"]["ranked"][0] == "D2:2"
    # Each question is asked against its own conversation only.
    assert set(by_q["Where is Cleo moving?"]["ranked"]) <= {"D1:1", "D1:2"}
    # The aggregate is the mean of the per-question figures.
    rows = result["per_question"]
    assert result["results"]["all 1-5"]["R@10"] == pytest.approx(
        sum(r["metrics"]["R@10"] for r in rows) / len(rows), abs=1e-4
    )
    cat14 = [r for r in rows if r["category"] <= 4]
    assert result["results"]["categories 1-4"]["MRR"] == pytest.approx(
        sum(r["metrics"]["MRR"] for r in cat14) / len(cat14), abs=1e-4
    )
    assert result["defects"]["dropped"]["count"] == 2


def test_eval_locomo_cli(tiny: Path, capsys: pytest.CaptureFixture[str], real_embedder) -> None:
    assert main(["eval", "locomo", "--data", str(tiny), "--limit-conversations", "1", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["conversations"] == 1 and "per_question" not in body
    assert body["results"]["categories 1-4"]["questions"] == 3
    assert main(["eval", "locomo", "--data", str(tiny), "--limit-conversations", "1"]) == 0
    out = capsys.readouterr().out
    assert "categories 1-4" in out and "how each was handled" in out and "run time" in out
    assert main(["eval", "locomo"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["eval", "locomo", "--data", str(tiny.with_name("missing.json"))]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tiny.with_name("bad.json")
    bad.write_text("{not json", encoding="utf-8")
    assert main(["eval", "locomo", "--data", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
