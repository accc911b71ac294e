"""The inbox's bytes in S3-compatible storage: `porter gateway serve` with
`storage: {blobs: s3, records: postgres}` on a real Garage node and a real
PostgreSQL, the Python `mcp` SDK as the client, and boto3 (a client of its
own) reading the bucket back.

The tests that hold for any store run once per backend: `local` (the
embedded SQLite + data dir) and `s3` (PostgreSQL + Garage).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from harness import STUB, all_text, http_client, porter_bin, pseudo_random, sha256, start_http, texts, tiny_image, write_config
from replicas import PG_PASSWORD, S3_SECRET_ENV, s3_section, storage_config
from s3_stores import Garage, Postgres, start_postgres

pytestmark = pytest.mark.anyio

KEY = "alice-s3-key-0123456789"
KEYS = [{"name": "alice", "key": KEY, "tenant": "acme", "role": "user", "profile": "files"}]
BIG = 40 * 1024 * 1024
PREFIX = "gw/prod"


class Stores:
    """The storage section of one backend, and how to see what it holds."""

    def __init__(self, backend: str, request: pytest.FixtureRequest) -> None:
        self.backend = backend
        self.garage: Garage | None = None
        self.postgres: Postgres | None = None
        self.bucket = ""
        self.db = ""
        if backend == "s3":
            # The Garage node and PostgreSQL the whole run shares (conftest.py).
            self.garage = request.getfixturevalue("shared_garage")
            self.postgres = request.getfixturevalue("shared_postgres")
            self.bucket = self.garage.fresh_bucket()
            self.db = self.postgres.fresh_database()

    def storage(self) -> dict:
        if self.backend == "local":
            return {}
        assert self.garage
        s3 = s3_section(self.garage.endpoint, self.bucket, self.garage.key_id, prefix=PREFIX)
        return storage_config("s3", "${PORTER_TEST_PG_URL}", s3)

    def env(self) -> dict[str, str]:
        if self.backend == "local":
            return {}
        assert self.garage
        return {"PORTER_TEST_PG_URL": self.db, S3_SECRET_ENV: self.garage.secret}

    def objects(self, prefix: str = "") -> dict[str, int]:
        """Every key in the bucket under `prefix`, with its size."""
        assert self.garage
        s3 = self.garage.client()
        found: dict[str, int] = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                found[item["Key"]] = item["Size"]
        return found

    def object_bytes(self, key: str) -> bytes:
        assert self.garage
        return self.garage.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def uploads(self) -> list[str]:
        assert self.garage
        listed = self.garage.client().list_multipart_uploads(Bucket=self.bucket)
        return [upload["Key"] for upload in listed.get("Uploads", [])]

    def recorded(self) -> dict[tuple[str, str], int]:
        """The file records, (run, path) → size."""
        assert self.postgres
        rows = self.postgres.rows(self.db, "SELECT run, path, size FROM porter_files")
        return {(run, path): int(size) for run, path, size in rows}


def config_for(root: Path, stores: Stores, **extra) -> Path:
    out = root / "out"
    out.mkdir(parents=True, exist_ok=True)
    return write_config(
        root,
        keys=KEYS,
        extra={
            "storage": stores.storage(),
            "volumes": {"out": {"path": str(out), "mode": "rw"}},
            "profiles": {"files": {"grants": ["File", "Read", "Write"], "volumes": ["out"]}},
            **extra,
        },
    )


@pytest.fixture(params=["local", "s3"])
def stores(request: pytest.FixtureRequest) -> Stores:
    return Stores(request.param, request)


def only_run(url: str) -> str:
    runs = httpx2.get(f"{url}/v1/runs", headers={"Authorization": f"Bearer {KEY}"}).json()["runs"]
    assert len(runs) == 1, runs
    return runs[0]["id"]


def stub_of(result) -> dict[str, str]:
    [match] = [m.groupdict() for text in texts(result) for m in STUB.finditer(text)]
    return match


def get(url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.get(url, headers={"Authorization": f"Bearer {KEY}", **(headers or {})}, timeout=120)


# The headers a file is served with, the same for every backend.
SERVED_HEADERS = {
    "content-type",
    "content-disposition",
    "content-length",
    "x-content-type-options",
    "content-security-policy",
    "cache-control",
    "accept-ranges",
    "x-porter-sha256",
    "x-porter-producer",
}


async def test_captures_are_stored_served_whole_and_by_range_and_read_by_the_file_tool(
    tmp_path: Path, stores: Stores
) -> None:
    config = config_for(tmp_path, stores)
    process, url = start_http(tmp_path, config, env=stores.env())
    try:
        async with http_client(url, KEY) as client:
            tiny = stub_of(await client.call_tool("mcp__everything__get-tiny-image", {}))
            big = stub_of(await client.call_tool("mcp__fixtures__big-blob", {"size": BIG}))
            run = only_run(url)
            originals = {tiny["path"]: tiny_image(), big["path"]: pseudo_random(BIG, 5)}

            if stores.backend == "s3":
                # In the bucket, under the prefix and the run, compared by a
                # client of its own; nothing left in staging, no upload open.
                objects = stores.objects()
                assert objects == {
                    f"{PREFIX}/runs/{run}/inbox/{path}": len(data) for path, data in originals.items()
                }, objects
                for path, data in originals.items():
                    got = stores.object_bytes(f"{PREFIX}/runs/{run}/inbox/{path}")
                    assert sha256(got) == sha256(data), path
                assert stores.uploads() == []
                assert not list((tmp_path / "data").glob("runs/*/inbox/*")), "no bytes on the local disk"

            # The run API serves them whole, with the record's headers.
            for path, data in originals.items():
                whole = get(f"{url}/v1/runs/{run}/inbox/{path}")
                assert whole.status_code == 200, whole.text
                assert whole.content == data
                assert SERVED_HEADERS <= set(whole.headers), whole.headers
                assert whole.headers["x-porter-sha256"] == sha256(data)
                assert whole.headers["accept-ranges"] == "bytes"
                assert int(whole.headers["content-length"]) == len(data)

            # One range of the big one, a suffix, and one past the end.
            data = originals[big["path"]]
            part = get(f"{url}/v1/runs/{run}/inbox/{big['path']}", {"Range": "bytes=20000000-29999999"})
            assert part.status_code == 206
            assert part.headers["content-range"] == f"bytes 20000000-29999999/{BIG}"
            assert part.content == data[20000000:30000000]
            tail = get(f"{url}/v1/runs/{run}/inbox/{big['path']}", {"Range": "bytes=-17"})
            assert tail.status_code == 206 and tail.content == data[-17:]
            beyond = get(f"{url}/v1/runs/{run}/inbox/{big['path']}", {"Range": f"bytes={BIG}-"})
            assert beyond.status_code == 416
            assert beyond.headers["content-range"] == f"bytes */{BIG}"

            # The File tool reads the inbox from the store: keep copies the
            # bytes out to a volume, list shows the files.
            kept = await client.call_tool("File", {"op": "keep", "path": big["path"], "to": "volume:out:big.bin"})
            assert not kept.is_error, all_text(kept)
            assert sha256((tmp_path / "out" / "big.bin").read_bytes()) == sha256(data)
            listing = await client.call_tool("File", {"op": "ls"})
            assert not listing.is_error, all_text(listing)
            for path in originals:
                assert path in all_text(listing)

            # Removing a file removes its object.
            removed = await client.call_tool("File", {"op": "rm", "path": tiny["path"]})
            assert not removed.is_error, all_text(removed)
            assert get(f"{url}/v1/runs/{run}/inbox/{tiny['path']}").status_code == 404
            if stores.backend == "s3":
                assert list(stores.objects()) == [f"{PREFIX}/runs/{run}/inbox/{big['path']}"]
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_an_expired_inbox_is_purged_from_the_bucket_at_the_next_start(tmp_path: Path, request) -> None:
    stores = Stores("s3", request)
    config = config_for(tmp_path, stores, limits={"inbox_ttl": "1s"})
    process, url = start_http(tmp_path, config, env=stores.env())
    try:
        # A legacy session is a run of its own, which ends with the session.
        async with http_client(url, KEY, mode="legacy") as client:
            stub_of(await client.call_tool("mcp__everything__get-tiny-image", {}))
        run = only_run(url)
        assert list(stores.objects(f"{PREFIX}/runs/{run}/"))
        transcript = tmp_path / "data" / "runs" / run / "transcript.jsonl"
        deadline = time.monotonic() + 10
        while '"kind":"run_ended"' not in transcript.read_text().replace(" ", ""):
            assert time.monotonic() < deadline, "the session's run never ended"
            time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=30)
    time.sleep(1.5)
    process, url = start_http(tmp_path, config, env=stores.env())
    try:
        deadline = time.monotonic() + 30
        while stores.objects(f"{PREFIX}/runs/{run}/") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stores.objects() == {}, "the run's prefix is gone"
        runs = httpx2.get(f"{url}/v1/runs", headers={"Authorization": f"Bearer {KEY}"}).json()["runs"]
        assert [r["purged"] for r in runs if r["id"] == run] == [True]
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_a_gateway_killed_mid_capture_leaves_no_object_under_a_name_and_the_next_start_aborts_the_upload(
    tmp_path: Path, request
) -> None:
    stores = Stores("s3", request)
    config = config_for(tmp_path, stores)
    process, url = start_http(tmp_path, config, env=stores.env())
    killed = False
    try:
        async with http_client(url, KEY) as client:
            call = asyncio.create_task(client.call_tool("mcp__fixtures__big-blob", {"size": BIG}))
            deadline = time.monotonic() + 120
            # Kill as soon as the upload has begun (its marker is there).
            while not any(key.endswith(".upload") for key in stores.objects(f"{PREFIX}/staging/")):
                assert time.monotonic() < deadline, "the upload never started"
                assert not call.done(), "the capture finished before it could be interrupted"
                await asyncio.sleep(0.02)
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            killed = True
            with pytest.raises(BaseException):
                await asyncio.wait_for(call, timeout=60)
    except BaseException:
        if not killed:
            raise
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    # Nothing under a real name, the records agree with the bucket, and
    # the upload is still open until the next start.
    named = {key: size for key, size in stores.objects(f"{PREFIX}/runs/").items()}
    assert named == {}, named
    assert stores.recorded() == {}
    assert stores.uploads(), "the interrupted upload is still open before the next start"

    process, url = start_http(tmp_path, config, env=stores.env())
    try:
        assert stores.uploads() == [], "the next start aborted the stale upload"
        assert stores.objects() == {}, "and removed its marker"
        records = stores.recorded()
        bucket = stores.objects(f"{PREFIX}/runs/")
        assert {f"{PREFIX}/runs/{run}/inbox/{path}": size for (run, path), size in records.items()} == bucket
    finally:
        process.terminate()
        process.wait(timeout=30)


def doctor(config: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(porter_bin()), "gateway", "doctor", "--config", str(config)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_doctor_passes_on_good_stores_and_names_what_to_fix_otherwise(tmp_path: Path, request) -> None:
    stores = Stores("s3", request)
    # A database of its own: this test stops it.
    stores.postgres = start_postgres()
    request.addfinalizer(stores.postgres.close)
    stores.db = stores.postgres.fresh_database()
    config = config_for(tmp_path, stores)
    good = doctor(config, stores.env())
    assert good.returncode == 0, good.stdout + good.stderr
    lines = good.stdout.splitlines()
    assert lines[0].startswith("records: ok: PostgreSQL at postgres://porter:***@"), lines
    assert lines[1].startswith(f"blobs: ok: s3://{stores.bucket}/{PREFIX} at {stores.garage.endpoint} wrote, read back and deleted"), lines
    # Garage overwrites despite If-None-Match; with records in PostgreSQL
    # names are still unique across replicas, and the line says how.
    assert lines[1].endswith("the store ignores If-None-Match, so each name is claimed in PostgreSQL before it is written, which keeps names unique across replicas"), lines
    assert "every check passed" in lines[-1]
    assert stores.objects() == {}, "the probe object is gone"
    assert stores.postgres.rows(stores.db, "SELECT to_regclass('porter_schema') IS NULL") == [["t"]], "doctor migrates nothing"

    # A gateway ran: the schema is there, at this build's version.
    process, _ = start_http(tmp_path, config, env=stores.env())
    process.terminate()
    process.wait(timeout=30)
    migrated = doctor(config, stores.env())
    assert migrated.returncode == 0
    assert "as this build expects" in migrated.stdout

    secret = stores.garage.secret
    wrong_key = doctor(config, {**stores.env(), "PORTER_TEST_S3_SECRET": "0" * 64})
    assert wrong_key.returncode == 1
    assert "blobs: FAILED:" in wrong_key.stdout and "access key" in wrong_key.stdout, wrong_key.stdout
    assert "0" * 64 not in wrong_key.stdout + wrong_key.stderr and secret not in wrong_key.stdout

    missing = json.loads(config.read_text())
    missing["storage"]["s3"]["bucket"] = "no-such-bucket-py"
    other = tmp_path / "missing-bucket.yaml"
    other.write_text(json.dumps(missing))
    no_bucket = doctor(other, stores.env())
    assert no_bucket.returncode == 1
    assert "blobs: FAILED:" in no_bucket.stdout and "no-such-bucket-py" in no_bucket.stdout, no_bucket.stdout
    assert "bucket" in no_bucket.stdout.split("blobs: FAILED:")[1]

    stores.postgres.stop()
    down = doctor(config, stores.env())
    assert down.returncode == 1
    assert "records: FAILED:" in down.stdout and "check that it is up" in down.stdout, down.stdout
    assert PG_PASSWORD not in down.stdout + down.stderr
    assert "blobs: ok:" in down.stdout, "the bucket is still checked"
