"""A local S3 server (moto in server mode, on loopback) with a fresh bucket, and the AWS variables that
reach it. Credentials are made up: the server accepts any."""

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

MOTO = Path(sys.executable).parent / "moto_server"
FAKE_SECRET = "s3cr3t-never-logged-7f2c"  # the secret key: the tests look for it in what a run leaves


class S3Server:
    def __init__(self, endpoint: str, bucket: str):
        self.endpoint, self.bucket = endpoint, bucket
        self.env = {
            "AWS_ACCESS_KEY_ID": "AKIAFACTORYTEST",
            "AWS_SECRET_ACCESS_KEY": FAKE_SECRET,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
        }

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_SECRET,
            region_name="us-east-1",
        )

    def keys(self, prefix: str = "") -> list[str]:
        out, token = [], None
        while True:
            kw = {"Bucket": self.bucket, "Prefix": prefix, **({"ContinuationToken": token} if token else {})}
            page = self.client().list_objects_v2(**kw)
            out += [o["Key"] for o in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return out
            token = page["NextContinuationToken"]

    def get(self, key: str) -> bytes:
        return self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    if not MOTO.exists():
        pytest.fail(f"{MOTO} missing: install the dev extra (moto[server] is pinned in pyproject.toml)")
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=out)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{endpoint}/moto-api/", timeout=2)
                break
            except httpx.HTTPError as e:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto server did not start: {log.read_text(errors='replace')[-2000:]}") from e
                time.sleep(0.2)
        server = S3Server(endpoint, "factory-data")
        server.client().create_bucket(Bucket=server.bucket)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    """The AWS variables of the local server in this process (pyarrow, LanceDB and boto3 read them)."""
    for k, v in s3_server.env.items():
        monkeypatch.setenv(k, v)
    for k in ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION"):
        monkeypatch.delenv(k, raising=False)
    return s3_server
