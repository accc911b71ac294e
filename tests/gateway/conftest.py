from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

import harness


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def shared_garage():
    """One Garage node for the tests run on each backend (a fresh bucket each)."""
    from s3_stores import start_garage

    node = start_garage()
    yield node
    node.stop()


@pytest.fixture(scope="session")
def shared_postgres():
    """One PostgreSQL for the tests run on each backend (a fresh database each)."""
    from s3_stores import start_postgres

    instance = start_postgres()
    yield instance
    instance.close()


@pytest.fixture
def postgres():
    """A PostgreSQL of the test's own (replicas.Postgres), closed after it."""
    from replicas import Postgres

    instance = Postgres()
    yield instance
    instance.close()


@pytest.fixture(params=["local", "s3"])
def storage_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a test (marked `harness.each_backend`) on SQLite + the data dir,
    then on PostgreSQL + Garage: every gateway it starts gets that `storage`
    section, and `Served.inbox_file` reads files back from the bucket."""
    if request.param == "local":
        yield "local"
        return
    for variable in ("PORTER_SKIP_S3", "PORTER_SKIP_POSTGRES"):
        if os.environ.get(variable) == "1":
            pytest.skip(f"the PostgreSQL + Garage run of this test is skipped: {variable}=1")
    from replicas import S3_SECRET_ENV, s3_section, storage_config

    garage = request.getfixturevalue("shared_garage")
    postgres = request.getfixturevalue("shared_postgres")
    bucket = garage.fresh_bucket()
    prefix = "gw/each"
    harness.BACKEND = harness.Backend(
        storage=storage_config("s3", "${PORTER_TEST_PG_URL}", s3_section(garage.endpoint, bucket, garage.key_id, prefix=prefix)),
        env={"PORTER_TEST_PG_URL": postgres.fresh_database(), S3_SECRET_ENV: garage.secret},
        s3=garage.client(),
        bucket=bucket,
        prefix=prefix,
    )
    try:
        yield "s3"
    finally:
        harness.BACKEND = None
