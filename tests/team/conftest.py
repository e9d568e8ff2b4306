"""The team store's machines share one S3 server (moto's, on 127.0.0.1) per module and a bucket per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from tests.teamkit import s3_server  # here: only the tests that use the server pay for moto's import

    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture
def bucket(s3_endpoint: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    import boto3

    from tests.teamkit import CREDS

    for key, value in CREDS.items():
        monkeypatch.setenv(key, value)
    name = "team-" + request.node.name.replace("_", "-").replace("[", "-").replace("]", "").lower()[
        :40
    ].strip("-")
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=name)
    return name
