"""A replica killed mid-capture: two gateway replicas on PostgreSQL and one
Garage bucket behind nginx (set up to fail over, as a production balancer
would be), the Python `mcp` client capturing a 40 MiB file through nginx,
and the replica doing the upload killed with SIGKILL half-way. The client
gets an error and a retry through the other replica succeeds; the bucket
holds nothing under a real name for the broken capture, and the records
agree with the bucket (`check_blobs` lists both) before and after the killed
replica starts again and clears what it left in staging.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import STUB, all_text, http_client, pseudo_random, sha256, start_http
from replicas import S3_SECRET_ENV, Postgres, Replicas, check_blobs, s3_section, start_replicas
from s3_stores import Garage

pytestmark = pytest.mark.anyio

KEY = "alice-faults-key-0123456789"
KEYS = [{"name": "alice", "key": KEY, "tenant": "acme", "role": "user"}]
BIG = 40 * 1024 * 1024
PREFIX = "gw/faults"


@pytest.fixture
def garage(shared_garage: Garage) -> Garage:
    return shared_garage


@pytest.fixture
def postgres() -> Iterator[Postgres]:
    if os.environ.get("PORTER_SKIP_POSTGRES") == "1":
        pytest.skip("PostgreSQL tests skipped: PORTER_SKIP_POSTGRES=1")
    pg = Postgres()
    yield pg
    pg.close()


@pytest.fixture
def on_s3(tmp_path: Path, garage: Garage, postgres: Postgres) -> Iterator[tuple[Replicas, str]]:
    bucket = garage.fresh_bucket()
    started = start_replicas(
        tmp_path / "gw",
        postgres,
        backend="s3",
        keys=KEYS,
        env={S3_SECRET_ENV: garage.secret},
        s3=s3_section(garage.endpoint, bucket, garage.key_id, prefix=PREFIX),
        failover=True,
    )
    yield started, bucket
    started.close()


def keys_under(garage: Garage, bucket: str, prefix: str) -> list[str]:
    s3 = garage.client()
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found += [item["Key"] for item in page.get("Contents", [])]
    return found


def open_uploads(garage: Garage, bucket: str) -> list[str]:
    listed = garage.client().list_multipart_uploads(Bucket=bucket)
    return [upload["Key"] for upload in listed.get("Uploads", [])]


def uploading_pid(garage: Garage, bucket: str) -> int | None:
    """The pid that wrote an upload marker
    (`staging/<run>/<host>.<pid>.<instance>.<unique>.upload`), if one is there."""
    for key in keys_under(garage, bucket, f"{PREFIX}/staging/"):
        if key.endswith(".upload"):
            _host, pid, _instance, _unique, _ext = key.rsplit("/", 1)[1].rsplit(".", 4)
            return int(pid)
    return None


@functools.cache
def big_sha() -> str:
    return sha256(pseudo_random(BIG, 5))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_replica_killed_mid_capture_leaves_no_object_under_a_name_and_a_retry_succeeds_through_the_other(
    on_s3: tuple[Replicas, str], garage: Garage, mode: str
) -> None:
    replicas, bucket = on_s3
    pids = [p.pid for p in replicas.processes]
    expected = big_sha()
    killed: int | None = None
    async with http_client(replicas.nginx.url, KEY, mode=mode) as client:
        call = asyncio.create_task(client.call_tool("mcp__fixtures__big-blob", {"size": BIG}))
        deadline = time.monotonic() + 120
        # Kill whichever replica is uploading, once its upload has begun.
        while killed is None:
            assert time.monotonic() < deadline, "no upload began"
            assert not call.done(), f"the capture finished before it could be interrupted: {call.result()}"
            killed = uploading_pid(garage, bucket)
            await asyncio.sleep(0.02)
        assert killed in pids, (killed, pids)
        os.kill(killed, signal.SIGKILL)
        victim = pids.index(killed)
        replicas.processes[victim].wait(timeout=10)

        # The client hears of it at once: an error, not a hang (a legacy
        # session's client would otherwise try to resume the call's stream
        # on the other replica for ever) and not a stub.
        killed_at = time.monotonic()
        try:
            result = await asyncio.wait_for(call, timeout=30)
        except TimeoutError:
            raise AssertionError("the call hung after its replica was killed") from None
        except Exception as error:  # noqa: BLE001 - any error is the right answer here
            failure = f"{type(error).__name__}: {error}"
        else:
            assert result.is_error and not STUB.search(all_text(result)), all_text(result)
            failure = all_text(result)
        assert failure
        assert time.monotonic() - killed_at < 15, time.monotonic() - killed_at

        # A retry in the same session goes to the other replica (nginx
        # skips the dead one) and is kept there.
        retried = await client.call_tool("mcp__fixtures__big-blob", {"size": BIG})
    stub = STUB.search(all_text(retried))
    assert stub, all_text(retried)
    assert stub["sha"] == expected[:12]
    survivor = replicas.urls[1 - victim].removeprefix("http://")
    posts = [line for line in replicas.nginx.log() if line["method"] == "POST"]
    assert posts[-1]["upstream"] == survivor, posts

    # Nothing of the broken capture under a real name: the only object
    # under runs/ is the retry's, whole, and the records agree with it.
    named = keys_under(garage, bucket, f"{PREFIX}/runs/")
    assert len(named) == 1 and named[0].endswith(f"/inbox/{stub['path']}"), named
    body = garage.client().get_object(Bucket=bucket, Key=named[0])["Body"].read()
    assert sha256(body) == expected
    check = check_blobs(replicas.postgres, garage.client(), bucket, PREFIX)
    assert check.clean, check
    # What the killed replica was writing is still in staging: its marker
    # and its open multipart upload.
    assert open_uploads(garage, bucket), "the killed upload is open until a gateway on this machine starts"

    # The killed replica starts again: it aborts the upload and removes the
    # marker; the records still agree with the bucket.
    home = replicas.root / f"replica-{victim}"
    process, _ = start_http(home, replicas.config, env={S3_SECRET_ENV: garage.secret})
    replicas.processes[victim] = process
    assert open_uploads(garage, bucket) == []
    assert keys_under(garage, bucket, f"{PREFIX}/staging/") == []
    check = check_blobs(replicas.postgres, garage.client(), bucket, PREFIX)
    assert check.clean, check
    assert keys_under(garage, bucket, f"{PREFIX}/runs/") == named


def test_the_blob_check_reports_strays_both_ways(on_s3: tuple[Replicas, str], garage: Garage) -> None:
    """The check itself can fail: an object no record names, a record
    whose object is gone, and a size that differs are each reported."""
    replicas, bucket = on_s3
    s3 = garage.client()
    # A run and a file record written straight into the database.
    replicas.postgres.psql(
        "INSERT INTO porter_runs (id, key_name, tenant, started_at) VALUES ('r1', 'alice', 'acme', 0);"
        "INSERT INTO porter_files (run, path, size, media_type, sha256, origin, call, created_at) VALUES "
        "('r1', 'kept.bin', 3, 'application/octet-stream', '', 'test', 'c', 0),"
        "('r1', 'gone.bin', 5, 'application/octet-stream', '', 'test', 'c', 0),"
        "('r1', 'short.bin', 9, 'application/octet-stream', '', 'test', 'c', 0)"
    )
    assert check_blobs(replicas.postgres, s3, bucket, PREFIX).missing == [
        f"{PREFIX}/runs/r1/inbox/gone.bin",
        f"{PREFIX}/runs/r1/inbox/kept.bin",
        f"{PREFIX}/runs/r1/inbox/short.bin",
    ]
    s3.put_object(Bucket=bucket, Key=f"{PREFIX}/runs/r1/inbox/kept.bin", Body=b"abc")
    s3.put_object(Bucket=bucket, Key=f"{PREFIX}/runs/r1/inbox/short.bin", Body=b"abc")
    s3.put_object(Bucket=bucket, Key=f"{PREFIX}/runs/r1/inbox/stray.bin", Body=b"abc")
    check = check_blobs(replicas.postgres, s3, bucket, PREFIX)
    assert (check.unrecorded, check.missing, check.wrong_size) == (
        [f"{PREFIX}/runs/r1/inbox/stray.bin"],
        [f"{PREFIX}/runs/r1/inbox/gone.bin"],
        [f"{PREFIX}/runs/r1/inbox/short.bin"],
    )
    assert not check.clean
