"""The xdist controller's shared pool (`engine.shared_pool`) through its client, in one process:
a stage asked for again after it ran is answered, not run again; a failed one runs again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_doceval.engine.answers import RanForAnother
from pytest_doceval.engine.pool_client import SharedPoolClient
from pytest_doceval.engine.shared_pool import SharedPool
from tests.shared_pool_stages import count_run, fail_once


@pytest.fixture
def client() -> Iterator[SharedPoolClient]:
    pool = SharedPool(workers=1)
    asker = SharedPoolClient(pool.address, threads=2)
    try:
        yield asker
    finally:
        asker.shutdown()
        pool.close()


def test_a_stage_asked_for_after_it_ran_is_answered_not_run_again(
    client: SharedPoolClient, tmp_path: Path
) -> None:
    """As when an xdist worker takes over a test whose stage the other worker had run, before
    that worker's store held it: once, in the pool."""
    log = tmp_path / "runs.txt"
    first, cost = client.submit_keyed("k1", count_run, (str(log), "tide")).result(timeout=120)
    again = client.submit_keyed("k1", count_run, (str(log), "tide")).result(timeout=120)
    # The second ask is told the run was made for another: its engine counts no CPU for it.
    assert isinstance(again, RanForAnother) and (again.output, again.cost) == (first, cost)
    assert first == "TIDE" and cost.cpu_seconds >= 0
    assert log.read_text(encoding="utf-8").splitlines() == ["tide"]
    other, _ = client.submit_keyed("k2", count_run, (str(log), "ebb")).result(timeout=120)
    assert other == "EBB" and log.read_text(encoding="utf-8").splitlines() == ["tide", "ebb"]


def test_a_stage_that_failed_runs_again_when_asked_again(
    client: SharedPoolClient, tmp_path: Path
) -> None:
    log = tmp_path / "ran.txt"
    with pytest.raises(ValueError, match="first run fails"):
        client.submit_keyed("k", fail_once, (str(log),)).result(timeout=120)
    output, _ = client.submit_keyed("k", fail_once, (str(log),)).result(timeout=120)
    assert output == "second run"
