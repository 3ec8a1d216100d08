"""What the engine keeps and where it runs a stage: outputs of every kind stored through the
stage's codec (a score, a page count), small stored values read only when asked and forgotten
once taken, a measured group (a suite's scores) moving to the executor once it pays, code that
cannot travel run in the test's process, and a shared stage's failure told in each test's own
words."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import engine_calls
import pytest

from pytest_doceval.engine import CpuStage, Engine, ExecutorSlot, StageFailed, parse_executor
from pytest_doceval.engine import placement as placement_rules
from pytest_doceval.engine.nodes import Node
from pytest_doceval.store import JSON, TEXT, Store
from pytest_doceval.store.store import Codec


class InTableJson(Codec[Any]):
    """JSON kept as rows of the store's table (as scores are)."""

    name = "json-rows"
    in_table = True

    def encode(self, value: Any) -> str:
        return JSON.encode(value)

    def decode(self, text: str) -> Any:
        return JSON.decode(text)


ROWS = InTableJson()


def engine_in(tmp_path: Path, executor: str = "threads", workers: int = 2) -> Engine:
    slot = ExecutorSlot(parse_executor(executor, workers=workers))
    return Engine(slot, Store(tmp_path / "cache", "rw"))


def stage(key: str, call: Any, *args: Any, **more: Any) -> CpuStage:
    return CpuStage(key, f"stage {key}", call, args, **more)


def test_a_stage_output_of_any_codec_is_stored_and_read_back(tmp_path: Path) -> None:
    first = engine_in(tmp_path)
    first.add([stage("n", engine_calls.pid_of, fingerprint={"n": 1}, codec=JSON)])
    made = first.output("n")
    first.close()
    first.cache.close()  # the table's last rows, as a run's end writes them
    assert isinstance(made, int)
    second = engine_in(tmp_path)
    second.add([stage("n", engine_calls.fail, "must not run", fingerprint={"n": 1}, codec=JSON)])
    assert second.output("n") == made and second.snapshot().cached == 1
    second.close()


def test_an_in_table_output_is_read_when_asked_and_forgotten_once_taken(tmp_path: Path) -> None:
    first = engine_in(tmp_path)
    first.add([stage("r", engine_calls.pid_of, fingerprint={"r": 1}, codec=ROWS)])
    value = first.output("r")
    first.close()
    first.cache.close()  # the table's last rows, as a run's end writes them
    second = engine_in(tmp_path)
    second.add([stage("r", engine_calls.fail, "must not run", fingerprint={"r": 1}, codec=ROWS)])
    node = second._nodes["r"]
    assert node.state == "stored" and node.output is None  # looked up, not read
    assert second.output("r") == value
    second.release("r")
    assert node.state == "stored" and node.output is None  # forgotten...
    assert second.output("r") == value  # ...and read again when asked again
    second.close()


def test_a_released_output_that_was_not_stored_is_made_again(tmp_path: Path) -> None:
    engine = engine_in(tmp_path)
    engine.add([stage("u", engine_calls.upper, "text")])  # no fingerprint: never stored
    assert engine.output("u") == "TEXT"
    engine.release("u")
    assert engine._nodes["u"].state == "released"
    assert engine.output("u") == "TEXT"
    engine.close()


def test_a_corrupt_stored_output_is_made_again(tmp_path: Path) -> None:
    import sqlite3

    from pytest_doceval.store.table import FILE_NAME

    first = engine_in(tmp_path)
    first.add([stage("c", engine_calls.upper, "abc", fingerprint={"c": 1}, codec=ROWS)])
    assert first.output("c") == "ABC"
    first.close()
    first.cache.close()  # the table's last rows, as a run's end writes them
    with sqlite3.connect(tmp_path / "cache" / FILE_NAME) as connection:
        connection.execute("UPDATE entries SET value = '\"XYZ\"' WHERE key = 'c'")
    second = engine_in(tmp_path)
    second.add([stage("c", engine_calls.upper, "abc", fingerprint={"c": 1}, codec=ROWS)])
    assert second.output("c") == "ABC"  # the checksum caught it: computed again
    second.close()


def test_a_measured_group_goes_to_the_executor_once_it_pays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cheap stages of a group run in the asking thread; once three say a stage costs more
    than its hand-off and the work left more than a pool's start, the rest go to the pool."""
    monkeypatch.setattr(placement_rules, "POOL_START_SECONDS", 0.05)
    engine = engine_in(tmp_path, executor="processes", workers=2)
    try:
        stages = [stage(f"s{i}", engine_calls.busy, 0.02, measured="suite") for i in range(12)]
        engine.add(stages)
        here = os.getpid()
        pids = [int(engine.output(f"s{i}")) for i in range(12)]
        assert pids[:3] == [here] * 3  # measured where the test runs
        assert all(pid != here for pid in pids[3:])  # then the pool took the rest
    finally:
        engine.close(cancel=True)


def test_a_group_on_the_executor_is_fed_a_window_at_a_time() -> None:
    """Once a group goes to the executor, at most `IN_FLIGHT_PER_PROCESS` stages a process are
    on it at once, in planned order; one that comes back lets the next in, and a stage its
    test already ran is never sent (issue 35: 200,000 scores at once held 2 GB)."""
    rules = placement_rules.Placement(workers=2, remote=True)  # a cluster: always worth it
    queue = placement_rules.MeasuredStages(rules, workers=2)
    window = 2 * placement_rules.IN_FLIGHT_PER_PROCESS
    nodes = [Node(stage(f"s{i}", engine_calls.pid_of, measured="g")) for i in range(window + 3)]
    sent: list[Node] = []
    for node in nodes:
        node.state = "deferred"
        sent += queue.defer("g", node)
    assert sent == nodes[:window]
    nodes[window].state = "running"  # its test reached it first and runs it itself
    nodes[0].state = "done"
    assert queue.done(nodes[0], "g") == [nodes[window + 1]]
    assert queue.done(nodes[0], "g") == []  # told twice: counted once
    nodes[1].state = "failed"
    assert queue.done(nodes[1], "g") == [nodes[window + 2]]
    assert all(n.state == "running" for n in [*nodes[2:window], *nodes[window + 1 :]])


def test_a_group_sent_to_the_executor_runs_every_stage_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More stages than the window: every output arrives, each stage ran once."""
    monkeypatch.setattr(placement_rules, "POOL_START_SECONDS", 0.0)
    monkeypatch.setattr(placement_rules, "IN_FLIGHT_PER_PROCESS", 1)
    engine = engine_in(tmp_path, executor="processes", workers=2)
    log = tmp_path / "runs.txt"
    try:
        count = 30
        engine.add(
            [
                stage(f"s{i}", engine_calls.busy_logged, 0.01, str(log), i, measured="g")
                for i in range(count)
            ]
        )
        assert [engine.output(f"s{i}")[1] for i in range(count)] == list(range(count))
        assert sorted(int(n) for n in log.read_text().split()) == list(range(count))
    finally:
        engine.close(cancel=True)


def test_a_cheap_group_stays_in_the_asking_thread(tmp_path: Path) -> None:
    engine = engine_in(tmp_path, executor="processes", workers=2)
    try:
        engine.add([stage(f"s{i}", engine_calls.pid_of, measured="cheap") for i in range(20)])
        assert {engine.output(f"s{i}") for i in range(20)} == {os.getpid()}
        assert not engine.slot.started  # no pool was started for them
    finally:
        engine.close(cancel=True)


def test_one_core_never_hands_a_group_over() -> None:
    rules = placement_rules.Placement(workers=1, remote=False)
    assert not any(rules.ran_here("g", 1.0, left=1000, pool_started=True) for _ in range(10))
    assert placement_rules.Placement(workers=1, remote=True).to_executor("g")


def test_code_that_cannot_travel_runs_in_the_tests_process(tmp_path: Path) -> None:
    engine = engine_in(tmp_path, executor="processes", workers=2)
    try:
        here = os.getpid()
        engine.add([stage("h", engine_calls.stays_home, here)])  # to the pool: refused there
        assert engine.output("h") == here
        assert "h" not in engine.stayed_home and "stage h" in engine.stayed_home
    finally:
        engine.close(cancel=True)


def test_a_shared_stage_fails_in_each_tests_own_words(tmp_path: Path) -> None:
    """Two byte-identical bad inputs make one stage (one key): each test is told of its own
    file, once."""
    engine = engine_in(tmp_path)
    first = tmp_path / "a" / "document.pdf"
    second = tmp_path / "b" / "document.pdf"

    def parse(path: Path) -> CpuStage:
        return CpuStage(
            "same-bytes",
            f"pymupdf on {path.parent.name}/document.pdf",
            engine_calls.unreadable,
            (str(first),),  # the stage that runs is the first test's
            inputs=(path,),
            system="pymupdf",
        )

    engine.add([parse(first)])
    for own in (first, second):
        with pytest.raises(StageFailed) as failed:
            engine.output("same-bytes", parse(own))
        message = str(failed.value)
        other = second if own == first else first
        assert str(own) in message and str(other) not in message
        assert message.count("document.pdf") == 1, message
        assert message.endswith("(stage pymupdf)")  # which system read it, not the file again
    engine.close()


def test_text_stays_the_default_codec() -> None:
    assert stage("t", engine_calls.upper).codec is TEXT
