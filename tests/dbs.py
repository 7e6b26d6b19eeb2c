"""Database URLs the store and end-to-end tests run against: SQLite always, PostgreSQL when
GPUPLAN_TEST_POSTGRES_URL names a server (`.ci/run` starts one and sets it)."""

from __future__ import annotations

import os
import uuid

import pytest
import sqlalchemy as sa

POSTGRES = os.environ.get("GPUPLAN_TEST_POSTGRES_URL", "")
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres", marks=pytest.mark.skipif(not POSTGRES, reason="no PostgreSQL: set GPUPLAN_TEST_POSTGRES_URL")
    ),
]


def fresh_url(backend: str, tmp_path) -> str:
    """An empty database of the given kind, private to one test."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'gpuplan.db'}"
    name = "gpuplan_test_" + uuid.uuid4().hex[:10]
    admin = sa.create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return POSTGRES.rsplit("/", 1)[0] + "/" + name
