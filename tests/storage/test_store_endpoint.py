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
    (root / "memdeck.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "storage_uri": "s3://team/prod",
                "storage_options": options,
            }
        )
    )
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
        location_from_config(
            {"storage": {"uri": "s3://b/p", "endpoint": "http://127.0.0.1:9", "allow_http": False}}
        )


# Every spelling of the endpoint Lance takes (its S3 option names are matched case-insensitively), and
# every spelling of allow_http (Lance allows plain HTTP for any option whose name contains it).
ENDPOINT_SPELLINGS = [
    "aws_endpoint",
    "aws_endpoint_url",
    "endpoint",
    "endpoint_url",
    "AWS_ENDPOINT",
    "Endpoint_URL",
]
ALLOW_SPELLINGS = ["allow_http", "aws_allow_http", "AWS_ALLOW_HTTP", "client_allow_http"]


def _planted_as(tmp_path: Path, endpoint_key: str, endpoint: str, allow_key: str | None) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    options = {endpoint_key: endpoint, "aws_region": "us-east-1"}
    if allow_key:
        options[allow_key] = "true"
    (root / "memdeck.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "storage_uri": "s3://team/prod",
                "storage_options": options,
            }
        )
    )
    return root


@pytest.mark.parametrize("endpoint_key", ENDPOINT_SPELLINGS)
@pytest.mark.parametrize("allow_key", ALLOW_SPELLINGS)
def test_a_planted_plain_http_endpoint_is_refused_however_it_is_spelled(
    tmp_path: Path, endpoint_key: str, allow_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")
    root = _planted_as(tmp_path, endpoint_key, "http://collector.example", allow_key)
    with pytest.raises(MemdeckError, match=re.escape("names the endpoint http://collector.example")):
        resolve({}, root)
    # even with the directory's endpoint confirmed, plain HTTP is the config's decision alone
    with pytest.raises(MemdeckError, match="plain http://"):
        resolve({"storage": {"accept_recorded_endpoint": True}}, root)


@pytest.mark.parametrize("endpoint_key", ENDPOINT_SPELLINGS)
def test_a_planted_endpoint_other_than_the_configured_one_is_refused_however_it_is_spelled(
    tmp_path: Path, endpoint_key: str
) -> None:
    root = _planted_as(tmp_path, endpoint_key, "https://collector.example", None)
    config = {"storage": {"endpoint": "https://minio.internal:9000"}}
    with pytest.raises(MemdeckError, match=re.escape("names the endpoint https://collector.example")):
        resolve(config, root)
    _, loc = resolve({"storage": {"accept_recorded_endpoint": True}}, root)
    assert loc.options["aws_endpoint"] == "https://collector.example"
    assert not any(k.lower() in ("endpoint", "endpoint_url", "aws_endpoint_url") for k in loc.options)


def test_an_upper_case_http_scheme_is_plain_http(tmp_path: Path) -> None:
    root = _planted_as(tmp_path, "endpoint", "HTTP://collector.example", "aws_allow_http")
    with pytest.raises(MemdeckError, match="plain http://"):
        resolve({"storage": {"accept_recorded_endpoint": True}}, root)


def test_two_spellings_of_the_endpoint_with_different_values_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "memdeck.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "storage_uri": "s3://team/prod",
                "storage_options": {
                    "aws_endpoint": "https://minio.internal:9000",
                    "endpoint_url": "http://collector.example",
                },
            }
        )
    )
    with pytest.raises(MemdeckError, match="aws_endpoint twice"):
        resolve({"storage": {"endpoint": "https://minio.internal:9000"}}, root)


def test_planted_credentials_of_any_spelling_are_not_used(tmp_path: Path) -> None:
    root = _planted_as(tmp_path, "aws_endpoint", "https://minio.internal:9000", None)
    meta = json.loads((root / "memdeck.json").read_text())
    meta["storage_options"].update({"token": "planted", "aws_token": "planted"})
    (root / "memdeck.json").write_text(json.dumps(meta))
    _, loc = resolve({"storage": {"endpoint": "https://minio.internal:9000"}}, root)
    assert "token" not in loc.options and "aws_token" not in loc.options


@pytest.mark.parametrize("endpoint_key", ["endpoint", "endpoint_url", "aws_endpoint_url"])
def test_the_configs_own_options_follow_the_same_rule(endpoint_key: str) -> None:
    with pytest.raises(MemdeckError, match="not https://"):
        location_from_config(
            {"storage": {"uri": "s3://b/p", "options": {endpoint_key: "http://127.0.0.1:9"}}}
        )
    loc = location_from_config(
        {"storage": {"uri": "s3://b/p", "allow_http": True, "options": {endpoint_key: "http://127.0.0.1:9"}}}
    )
    assert loc.options["aws_endpoint"] == "http://127.0.0.1:9" and loc.options["allow_http"] == "true"
