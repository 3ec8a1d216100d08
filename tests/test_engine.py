"""The stage engine: dependency order, one run per key, failures, cancellation, worker death,
and model requests that never wait behind unrelated CPU work."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import engine_calls
import pytest
from model_fixtures import make_hub, model_config, model_server
from model_server import ModelServer

from pytest_doceval.engine import (
    CpuStage,
    Engine,
    ExecutorSlot,
    ModelStage,
    StageFailed,
    parse_executor,
)
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.models.hub import Hub
from pytest_doceval.models.requests import ChatRequest, message
from pytest_doceval.store import Store, stored_output

__all__ = ["model_server"]


def make_engine(
    tmp_path: Path, executor: str = "threads", workers: int = 2, hub: Hub | None = None
) -> Engine:
    slot = ExecutorSlot(parse_executor(executor, workers=workers))
    cache = Store(tmp_path / "cache", "rw")
    return Engine(slot, cache, hub=None if hub is None else (lambda: hub))


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    made = make_engine(tmp_path)
    yield made
    made.close(cancel=True)


def cpu(
    key: str, call: Any, *args: Any, needs: Sequence[str] = (), store: bool = False
) -> CpuStage:
    fingerprint = {"stage": key} if store else None
    return CpuStage(key, f"stage {key}", call, args, tuple(needs), fingerprint)


def test_stages_run_in_dependency_order_and_each_key_once(engine: Engine, tmp_path: Path) -> None:
    log = str(tmp_path / "log")
    a = cpu("a", engine_calls.logged, log, "a", 0.05)
    b = cpu("b", engine_calls.upper, needs=["a"])
    c = cpu("c", engine_calls.join, needs=["a", "b"])
    engine.add([a, b, c])
    engine.add([a, b])  # a second test needing the same stages
    assert engine.output("c") == "a+A"
    assert engine.output("b") == "A"
    assert Path(log).read_text().count("a ") == 1
    assert not engine.knows("unknown")
    snapshot = engine.snapshot()
    assert (snapshot.total, snapshot.done, snapshot.failed) == (3, 3, 0)


def test_a_failed_stage_fails_exactly_its_dependants(engine: Engine) -> None:
    engine.add(
        [
            cpu("bad", engine_calls.fail, "corrupt PDF"),
            cpu("after", engine_calls.upper, needs=["bad"]),
            cpu("good", engine_calls.upper, "fine"),
        ]
    )
    with pytest.raises(StageFailed, match=r"^ValueError: corrupt PDF \(stage stage bad\)$"):
        engine.output("bad")
    with pytest.raises(StageFailed, match=r"^ValueError: corrupt PDF \(stage stage bad\)"):
        engine.output("after")
    assert engine.output("good") == "FINE"
    assert engine.snapshot().failed == 2


def test_outputs_are_stored_and_reused_failures_never(tmp_path: Path) -> None:
    first = make_engine(tmp_path)
    first.add([cpu("k", engine_calls.upper, "text", store=True)])
    first.add([cpu("bad", engine_calls.fail, "no", store=True)])
    assert first.output("k") == "TEXT"
    with pytest.raises(StageFailed):
        first.output("bad")
    first.close()
    assert stored_output(first.cache, "k") == "TEXT" and stored_output(first.cache, "bad") is None
    second = make_engine(tmp_path)
    second.add([cpu("k", engine_calls.fail, "must not run", store=True)])
    assert second.output("k") == "TEXT" and second.snapshot().cached == 1
    second.close()


def test_close_cancels_queued_and_running_stages(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, workers=1)
    log = str(tmp_path / "log")
    engine.add([cpu(f"s{i}", engine_calls.logged, log, f"s{i}", 0.5) for i in range(6)])
    time.sleep(0.1)
    engine.close(cancel=True)
    with pytest.raises(StageFailed, match="stopped"):
        engine.output("s5")
    # The one running finishes (waited for, however busy the machine); none of the queued
    # ones starts after it: the queue was dropped, not run.
    deadline = time.monotonic() + 60
    while not Path(log).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.6)
    assert Path(log).read_text().count("\n") == 1


def test_a_dying_worker_fails_its_stage_only_and_the_pool_is_restarted(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, executor="processes", workers=2)
    try:
        stages = [cpu(f"ok{i}", engine_calls.upper, f"t{i}") for i in range(4)]
        engine.add([stages[0], stages[1], cpu("dies", engine_calls.die), *stages[2:]])
        with pytest.raises(StageFailed, match=r"its worker process died .*\(stage stage dies\)"):
            engine.output("dies")
        assert [engine.output(f"ok{i}") for i in range(4)] == ["T0", "T1", "T2", "T3"]
        engine.add([cpu("later", engine_calls.upper, "after")])  # the pool works again
        assert engine.output("later") == "AFTER"
        assert engine.slot.restarts >= 1
    finally:
        engine.close(cancel=True)


def _request(model: str, base_url: str, text: str) -> ChatRequest:
    config = model_config(base_url, name=model)
    return ChatRequest.build(config, [message("user", text)], case="c")


def test_a_model_request_does_not_wait_behind_unrelated_cpu_work(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url, max_concurrency=4)
    log = str(tmp_path / "log")
    with make_hub(config, tmp_path / "models") as hub:
        engine = make_engine(tmp_path, workers=1, hub=hub)
        try:
            ask = ModelStage(
                key="ask",
                label="ask",
                model="echo",
                build=lambda inputs: [_request("echo", model_server.base_url, inputs[0])],
                read=lambda answers: answers[0],
                needs=("page",),
            )
            slow = [cpu(f"slow{i}", engine_calls.logged, log, f"slow{i}", 0.4) for i in range(5)]
            engine.add([cpu("page", engine_calls.upper, "page one"), ask, *slow])
            assert engine.output("ask") == "user: PAGE ONE"
            # Answered while CPU work is still queued: not after the 2 s of slow stages.
            assert not engine.wait(["slow4"], timeout=0)
            engine.wait([f"slow{i}" for i in range(5)])
        finally:
            engine.close(cancel=True)
    assert model_server.total == 1 and hub.counts["model"] == 1


def test_a_failing_model_fails_its_stage_naming_the_cause(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url, max_retries=1)
    with make_hub(config, tmp_path / "models") as hub:
        engine = make_engine(tmp_path, hub=hub)
        try:
            engine.add(
                [
                    ModelStage(
                        "m",
                        "refine of case c",
                        "echo",
                        build=lambda _: [_request("echo", model_server.base_url, "x [fault:500]")],
                        read=lambda answers: answers[0],
                    )
                ]
            )
            with pytest.raises(StageFailed, match=r"500.*\(stage refine of case c\)"):
                engine.output("m")
        finally:
            engine.close(cancel=True)
    assert hub.counts["failed"] == 1


def test_executor_specs() -> None:
    assert parse_executor("processes").kind == "processes"
    assert parse_executor("threads").kind == "threads"
    dask = parse_executor("dask:tcp://127.0.0.1:8786")
    assert (dask.kind, dask.address, dask.text) == ("dask", "tcp://127.0.0.1:8786", dask.text)
    for bad in ("process", "dask:", "dask:127.0.0.1", ""):
        with pytest.raises(SuiteConfigError, match="expected processes, threads or dask"):
            parse_executor(bad)


def test_a_model_stage_can_need_another_model_stage(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url)
    url = model_server.base_url
    with make_hub(config, tmp_path / "models") as hub:
        engine = make_engine(tmp_path, hub=hub)
        try:
            read = ModelStage(
                "read", "ocr", "echo", lambda _: [_request("echo", url, "page")], lambda a: a[0]
            )
            answer = ModelStage(
                "answer",
                "answer",
                "echo",
                lambda inputs: [_request("echo", url, f"answer {inputs[0]}")],
                lambda a: a[0],
                needs=("read",),
            )
            engine.add([read, answer])  # the second starts from the loop the first ends on
            assert engine.output("answer") == "user: answer user: page"
        finally:
            engine.close(cancel=True)


def test_user_code_that_cannot_cross_processes_runs_when_its_test_asks(tmp_path: Path) -> None:
    import threading

    engine = make_engine(tmp_path, executor="processes")
    threads: list[str] = []

    def user_parser(text: str) -> str:  # a closure: no worker process could import it
        threads.append(threading.current_thread().name)
        return text.upper()

    try:
        local = CpuStage("user", "user parser", user_parser, ("page",), portable=False)
        after = CpuStage("after", "then", engine_calls.join, ("x",), needs=("user",))
        engine.add([local, after])
        time.sleep(0.2)
        assert threads == [] and engine.to_run() == (2, 0)  # deferred, not run ahead
        assert engine.output("after") == "x+PAGE"
        assert threads == [threading.current_thread().name]  # in the asking test's thread
    finally:
        engine.close(cancel=True)


def test_a_free_stage_runs_only_when_its_output_is_asked_for(engine: Engine) -> None:
    """A saved output is read by the test that asks for it (a test whose result is stored
    only waits for its stages, and reads nothing), or as a stage that needs it is planned."""
    reads: list[str] = []

    def read(path: str) -> str:
        reads.append(path)
        return f"text of {path}"

    engine.add([CpuStage("saved", "saved output", read, ("a.md",), free=True)])
    assert engine.wait(["saved"], timeout=30)
    assert reads == []
    assert engine.output("saved") == "text of a.md" and reads == ["a.md"]
    needed = CpuStage("saved-b", "saved output b", read, ("b.md",), free=True)
    engine.add([needed, CpuStage("up", "upper", engine_calls.upper, needs=("saved-b",))])
    assert reads == ["a.md", "b.md"]  # read as the stage needing it was planned
    assert engine.output("up") == "TEXT OF B.MD"


def test_closing_a_finished_run_lets_requests_out_finish_and_drops_queued_cpu_work(
    model_server: ModelServer, tmp_path: Path
) -> None:
    """The tests are over, but a request still out may be one a peer (an xdist worker that
    stole the test) waits for on this process's claim: it finishes and is stored, so nobody
    sends it again. Queued CPU stages are dropped; the running one finishes."""
    config = model_config(model_server.base_url, max_concurrency=4)
    log = str(tmp_path / "log")
    text = "late [latency:0.6]"
    with make_hub(config, tmp_path / "models") as hub:
        engine = make_engine(tmp_path, workers=1, hub=hub)
        ask = ModelStage(
            "ask",
            "ask",
            "echo",
            build=lambda _: [_request("echo", model_server.base_url, text)],
            read=lambda answers: answers[0],
        )
        slow = [cpu(f"slow{i}", engine_calls.logged, log, f"slow{i}", 0.3) for i in range(4)]
        engine.add([ask, *slow])
        time.sleep(0.15)
        engine.close()
        assert engine.output("ask").startswith("user: late")
        with pytest.raises(StageFailed, match="stopped"):
            engine.output("slow3")
        # What was dropped is neither a stage of the run nor a failure (totals, progress).
        snapshot = engine.snapshot()
        assert (snapshot.total, snapshot.done, snapshot.failed) == (2, 2, 0)
    assert Path(log).read_text().count("\n") == 1
    with make_hub(config, tmp_path / "models") as again:  # the answer was stored
        assert again.counts["model"] == 0
        second = make_engine(tmp_path, hub=again)
        second.add([ask])
        assert second.output("ask").startswith("user: late")
        second.close()
    assert model_server.total == 1


def test_a_finished_test_s_stages_are_forgotten_once_no_other_test_holds_them(
    engine: Engine,
) -> None:
    """Two tests share stage `a`; each has its own `b`. A test that is over (`done_with`)
    lets the engine forget what only it needed, and the counts stay as if it were all kept."""
    a = cpu("a", engine_calls.upper, "x")
    first = [a, cpu("b1", engine_calls.upper, needs=["a"])]
    second = [a, cpu("b2", engine_calls.join, needs=["a"])]
    engine.add(first)
    engine.add(second)
    engine.hold(s.key for s in first)
    engine.hold(s.key for s in second)
    assert engine.output("b1") == "X"
    before = engine.snapshot()
    engine.done_with([s.key for s in first])
    assert not engine.knows("b1")
    assert engine.knows("a")  # the second test holds it
    assert engine.output("b2") == "X"
    engine.done_with([s.key for s in second])
    assert not engine.knows("a")
    assert not engine.knows("b2")
    after = engine.snapshot()
    assert (after.total, after.done, after.failed) == (before.total, before.done, 0) == (3, 3, 0)


def test_a_stage_still_needed_or_unfinished_is_not_forgotten(engine: Engine) -> None:
    """A test over before its stage finished (it errored early) leaves the stage to finish;
    a stage another kept stage needs stays while that one is kept."""
    # A free stage waits, deferred, until a test asks for its output: unfinished till then.
    waiting = CpuStage("waiting", "stage waiting", engine_calls.upper, ("w",), free=True)
    engine.add([waiting])
    engine.hold(["waiting"])
    engine.done_with(["waiting"])
    assert engine.knows("waiting")
    engine.add([cpu("after", engine_calls.upper, needs=["waiting"])])
    engine.hold(["waiting", "after"])
    assert engine.output("after") == "W"
    engine.done_with(["waiting"])  # "after" is still kept, and needs it
    assert engine.knows("waiting")
    engine.done_with(["after"])
    assert not engine.knows("after")
