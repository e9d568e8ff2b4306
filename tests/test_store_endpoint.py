"""Issue #14 item 14: a store directory cannot choose where the AWS credentials are sent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memdeck.core.errors import MemdeckError
from memdeck.core.storage.objectstore import location_from_config, resolve


def _planted(tmp_path: Path, endpoint: str, allow_http: bool = True) -> Path:
    """A store directory (from a copy or an archive) whose memdeck.json names an endpoint of its own."""
    root = tmp_path / "store"
    root.mkdir()
    options = {"aws_endpoint": endpoint, "aws_region": "us-east-1"}
    if allow_http:
        options["allow_http"] = "true"
    (root / "memdeck.json").write_text(json.dumps({
        "schema_version": 1, "storage_uri": "s3://team/prod", "storage_options": options,
    }))
    return root


@pytest.fixture(autouse=True)
def creds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")


def test_a_recorded_endpoint_other_than_the_configured_one_is_refused(tmp_path: Path) -> None:
    root = _planted(tmp_path, "https://collector.example:443")
    config = {"storage": {"endpoint": "https://minio.internal:9000", "region": "us-east-1"}}
    with pytest.raises(MemdeckError, match=re.escape("names the endpoint https://collector.example:443")):
        resolve(config, root)
    with pytest.raises(MemdeckError, match="configured one is AWS"):
        resolve({}, root)  # no endpoint configured: AWS itself
    # confirmed in the config: used
    _, loc = resolve({"storage": {"accept_recorded_endpoint": True}}, root)
    assert loc.options["aws_endpoint"] == "https://collector.example:443"


def test_the_configured_endpoint_opens_as_before(tmp_path: Path) -> None:
    root = _planted(tmp_path, "https://minio.internal:9000")
    _, loc = resolve({"storage": {"endpoint": "https://minio.internal:9000"}}, root)
    assert loc.options["aws_endpoint"] == "https://minio.internal:9000"
    assert loc.options["aws_access_key_id"] == "AKIDEXAMPLE"


def test_plain_http_needs_allow_http_in_the_config_not_in_the_directory(tmp_path: Path) -> None:
    root = _planted(tmp_path, "http://collector.example", allow_http=True)
    with pytest.raises(MemdeckError, match="plain http://"):
        resolve({"storage": {"accept_recorded_endpoint": True}}, root)
    _, loc = resolve({"storage": {"accept_recorded_endpoint": True, "allow_http": True}}, root)
    assert loc.options["allow_http"] == "true"


def test_allow_http_false_does_not_allow_plain_http() -> None:
    with pytest.raises(MemdeckError, match="allow_http"):
        location_from_config({"storage": {"uri": "s3://b/p", "endpoint": "http://127.0.0.1:9", "allow_http": False}})
