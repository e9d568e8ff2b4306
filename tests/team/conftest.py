"""The team store's machines share one S3 server (moto's, on 127.0.0.1) per module and a bucket per test."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    import moto.server as moto_server  # here: only the tests that use the server pay for its import

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


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
