"""The engine: runs the selected tests' stages in dependency order, each key once.

`Engine.add` takes stages in pytest's item order. A stage whose output the output cache holds
is done at once; a stage whose inputs exist is dispatched at once -- a CPU stage to the
executor (in the order added, so early tests get their results first), a model stage to the
model hub's event loop, where each model's ``max_concurrency`` bounds it -- and every finished
stage dispatches the dependants it unblocks from the thread it finished on. So a model request
never waits behind CPU work it does not depend on, and a test (`Engine.output`) blocks only on
its own stages.

A CPU stage that cannot cross to a worker process (`CpuStage.portable` false: a parser from a
conftest.py) is *deferred* under the ``processes`` and Dask executors: it runs in the pytest
process when its first test asks for it, as it did before the engine -- so a parser that kills
its process loses only the test running it, not whichever test was running when it ran ahead.
A *free* stage (reading a saved output) is deferred too, under every executor: it is cheaper
than handing it to a thread, and one that a later stage needs runs as that stage is planned.

Failures: a stage that raises is failed, and so is every stage that needs it; the tests
depending on them get a `StageFailed` naming the stage and the cause (a `SystemUnavailable`
stays itself: its tests are skipped). A process pool broken by a dying worker is replaced and
the stages it held run again, each in a pool of its own: the one that kills its worker again
fails alone. Nothing failed is stored; stores are atomic (`Store.put`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from pytest_doceval.engine.answers import RanForAnother
from pytest_doceval.engine.executors import ExecutorSlot, process_pool
from pytest_doceval.engine.nodes import Node, Snapshot, Tally, for_test, needed
from pytest_doceval.engine.placement import MeasuredStages, Placement
from pytest_doceval.engine.stages import (
    CpuStage,
    ModelStage,
    Stage,
    StaysHome,
    timed_call,
)
from pytest_doceval.errors import DocevalError, SystemUnavailable
from pytest_doceval.metrics.cost import StageCost, price, tokens_of, total
from pytest_doceval.models.counts import split_waiting

if TYPE_CHECKING:
    from pytest_doceval.models.hub import Hub
    from pytest_doceval.store import Store

# How long a finished run waits for model requests still out (each has its own timeouts).
DRAIN_TIMEOUT = 120.0


def _run_alone(stage: CpuStage, args: tuple[Any, ...]) -> tuple[Any, StageCost]:
    """`stage` in a process pool of its own (after a broken pool: whoever breaks this one is
    the stage that kills its worker)."""
    with process_pool(1) as pool:
        result: tuple[Any, StageCost] = pool.submit(timed_call, stage.call, args).result()
        return result


class Engine:
    """One per process. `hub` gives the model hub (made on first model stage)."""

    def __init__(
        self,
        slot: ExecutorSlot,
        cache: Store,
        hub: Callable[[], Hub] | None = None,
        on_wire: Callable[[], Mapping[str, int]] | None = None,
        placement: Placement | None = None,
    ) -> None:
        self.slot = slot
        self.cache = cache
        self._hub_factory = hub
        self._on_wire = on_wire  # the model requests on the wire now, per model
        self._nodes: dict[str, Node] = {}
        # key -> tests that will ask for it and are not over yet (`hold`, `done_with`); the
        # stages forgotten once none is left, counted in `_forgotten`
        self._holders: Counter[str] = Counter()
        self._forgotten = Tally()
        self._lock = threading.RLock()
        # Notified whenever a stage finishes: what a test waiting for its stages waits on.
        self._settled = threading.Condition(self._lock)
        self._threads: concurrent.futures.ThreadPoolExecutor | None = None
        self._waiting: Counter[str] = Counter()  # model requests the stages wait for
        self._cpu_seconds = 0.0
        self._ran_for_another = 0  # answers the shared pool made for another worker's ask
        self._started: float | None = None
        self._closed = False
        remote = slot.spec.kind == "dask"
        self.placement = placement or Placement(workers=slot.workers, remote=remote)
        self._measured = MeasuredStages(self.placement, slot.workers)
        self._to_send: deque[Node] = deque()  # measured stages chosen, not started yet
        self._sending = False
        # group (or stage) -> why its stages could not run on the executor (`StaysHome`)
        self.stayed_home: dict[str, str] = {}

    # -- planning ------------------------------------------------------------------------------

    def add(self, stages: Iterable[Stage]) -> list[str]:
        """Plan `stages` (each after the ones it needs) and start what can start; returns
        their keys. A key already planned is not planned again."""
        keys = []
        with self._lock:
            if self._started is None:
                self._started = time.monotonic()
            for stage in stages:
                keys.append(stage.key)
                if stage.key in self._nodes:
                    continue
                node = self._nodes[stage.key] = Node(stage)
                if self._stored(node):
                    continue
                missing = [need for need in stage.needs if need not in self._nodes]
                if missing:
                    self._fail(node, DocevalError(f"needs stage {missing[0]}, never planned"))
                    continue
                for need in stage.needs:
                    self._nodes[need].dependants.append(stage.key)
                    self._run_if_free(self._nodes[need])
                self._try_start(node)
        return keys

    def hold(self, keys: Iterable[str]) -> None:
        """A test will ask for the stages of `keys` (planned): they are kept until it is over."""
        with self._lock:
            self._holders.update(keys)

    def done_with(self, keys: Sequence[str]) -> None:
        """A test that held `keys` is over. A finished stage no other test holds, and no stage
        still kept needs, is forgotten (counted for the totals): 100,000 tests' stages, their
        inputs, keys and costs, were kept to the end of the run. A stage still running is
        kept (it finishes into the store)."""
        with self._lock:
            for key in reversed(keys):  # a test's score before the outputs it needs
                left = self._holders[key] - 1
                if left > 0:
                    self._holders[key] = left
                    continue
                self._holders.pop(key, None)
                node = self._nodes.get(key)
                if node is None or not node.finished:
                    continue
                if any(dependant in self._nodes for dependant in node.dependants):
                    continue
                del self._nodes[key]
                self._forgotten.count(node)

    def to_run(self) -> tuple[int, int]:
        """(CPU, model) stages planned and not finished yet."""
        with self._lock:
            open_ = [
                n.stage
                for n in self._nodes.values()
                if not n.finished and n.state != "dropped" and n.counted
            ]
        model = sum(isinstance(stage, ModelStage) for stage in open_)
        return len(open_) - model, model

    def knows(self, key: str) -> bool:
        with self._lock:
            return key in self._nodes

    # -- results -------------------------------------------------------------------------------

    def wait(self, keys: Sequence[str], timeout: float | None = None) -> bool:
        """Wait until every stage of `keys` has finished; False if `timeout` ran out first.
        A deferred stage runs here, except a free one (a saved output): it is left to `output`,
        so a test whose result is stored, and never asks for it, does not read it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for key in keys:
            node = self._nodes.get(key)
            if node is None or (node.state == "deferred" and _is_free(node)):
                continue
            self._run_if_deferred(node)
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._settled_within(node, left):
                return False
        return True

    def output(self, key: str, asked_by: Stage | None = None) -> Any:
        """The output of stage `key`, one it was given (`knows`), waiting for it; raises the
        stage's failure, worded for `asked_by` (the asking test's own stage of that key: a
        stage two tests share names the first one's input)."""
        node = self._nodes[key]
        self._load_if_stored(node)
        self._run_if_deferred(node)
        while not self._settled_within(node, 0.05):  # a deferred stage's inputs may arrive
            self._run_if_deferred(node)
        if node.error is not None:
            error = node.error
            # A skip stays a skip; KeyboardInterrupt or SystemExit raised by a stage stops
            # the run as it would have in the test itself.
            if isinstance(error, SystemUnavailable) or not isinstance(error, Exception):
                raise error
            if getattr(node.stage, "verdict", False):
                raise error  # the kind's own error, as if raised in the test
            # Chained to the code's own exception (a parser's, shown under --tb=long).
            origin = error.__cause__ if isinstance(error, DocevalError) else error
            raise for_test(node, asked_by or node.stage) from (origin or error)
        return node.output

    def _settled_within(self, node: Node, timeout: float | None) -> bool:
        with self._settled:
            return self._settled.wait_for(lambda: node.settled, timeout)

    def release(self, key: str) -> None:
        """A test took stage `key`'s output and no other test needs it (its score): the engine
        forgets the value (a run of 100,000 tests would otherwise hold every result); one that
        is stored is read again if it is asked for again, another runs again."""
        with self._lock:
            node = self._nodes.get(key)
            if node is None or node.state != "done":
                return
            node.output = None
            node.state = "stored" if node.stored else "released"

    def _stored(self, node: Node) -> bool:
        """Whether `node`'s output is in the store: then it is done. A codec that keeps small
        values by the thousand in the store's table (a score) is only looked up now and read
        when a test asks (`_load_if_stored`); another output is read now, with its cost."""
        stage = node.stage
        if stage.fingerprint is None:
            return False
        if stage.codec.in_table:
            if not self.cache.has(stage.key, stage.codec):
                return False
            node.state, node.cached, node.stored = "stored", True, True
            self._notify_settled()
            return True
        hit = self.cache.get_with_meta(stage.key, stage.codec)
        if hit is None:
            return False
        value, meta = hit
        node.stored = True
        self._finish(node, value, StageCost.from_dict(meta.get("cost")), cached=True)
        return True

    def _load_if_stored(self, node: Node) -> None:
        """Read a stored or released output a test asks for; one the store no longer gives
        (corrupt, set aside) is computed, as if it had never been stored."""
        with self._lock:
            if node.state not in ("stored", "released"):
                return
            found = self.cache.get(node.stage.key, node.stage.codec) if node.stored else None
            if found is not None:
                node.output, node.state = found, "done"
                return
            node.state, node.cached, node.stored = "waiting", False, False
            self._try_start(node)

    def _run_if_free(self, node: Node) -> None:
        """A free stage that another stage needs runs now, in the planning thread: the stage
        needing it (a model's request built from a saved output) must not wait for a test."""
        if node.state == "deferred" and _is_free(node):
            self._run_if_deferred(node)

    def _run_if_deferred(self, node: Node) -> None:
        """Run a deferred stage here, in the calling (test's) thread; a KeyboardInterrupt it
        raises stops the run. The deferred stages it needs run first."""
        for need in node.stage.needs:
            self._load_if_stored(self._nodes[need])
            self._run_if_deferred(self._nodes[need])
        with self._lock:
            if node.state != "deferred":
                return
            node.state = "running"
            stage = node.stage
            assert isinstance(stage, CpuStage)
            inputs = tuple(self._nodes[k].output for k in stage.needs)
        try:
            output, cost = timed_call(stage.call, (*stage.args, *inputs))
        except Exception as exc:
            with self._lock:
                self._fail(node, exc)
            return
        except BaseException as exc:
            with self._lock:
                self._fail(node, exc)
            raise
        with self._lock:
            self._cpu_seconds += cost.cpu_seconds
            self._finish(node, output, None if stage.free else cost)
            if stage.measured is not None:
                self._measured_here(stage.measured, cost.cpu_seconds)

    def _stay_home(self, node: Node, why: StaysHome) -> None:
        """A stage whose code could not run on the executor runs in its test's thread, and so
        does the rest of its group; the run says so once (`stayed_home`)."""
        stage = node.stage
        assert isinstance(stage, CpuStage)
        node.state, node.future = "deferred", None
        group = stage.measured or stage.label
        self.placement.stay_home(group)
        self.stayed_home.setdefault(group, str(why))

    def _measured_here(self, group: str, seconds: float) -> None:
        """A stage of measured `group` ran in a test's thread: once the group is worth the
        executor (`placement`), its stages still left to tests go there, a window at a time."""
        self._send(self._measured.ran_here(group, seconds, pool_started=self.slot.started))

    def _send(self, nodes: list[Node]) -> None:
        """Start measured stages on the executor (`MeasuredStages` chose them). Not
        recursively: a stage that is done before its callback is added calls back at once,
        and sends the next from there."""
        self._to_send.extend(nodes)
        if self._sending:
            return
        self._sending = True
        try:
            while self._to_send:
                node = self._to_send.popleft()
                stage = node.stage
                assert isinstance(stage, CpuStage)
                if self._closed:
                    node.state = "deferred"  # the tests are over: nothing asks for it
                    continue
                self._start_cpu(node, stage, tuple(self._nodes[k].output for k in stage.needs))
        finally:
            self._sending = False

    def cost(self, keys: Sequence[str]) -> StageCost | None:
        """What the stages of `keys` that make an output (not those that score it) cost
        together, each counted once; None for no such stages, or when one's cost is unknown
        (an output stored before costs were kept): a partial sum would read as cheaper."""
        with self._lock:
            found = [self._nodes.get(k) for k in dict.fromkeys(keys)]
            nodes = [n for n in found if n is None or not n.stage.scoring]
            costs = [n.cost for n in nodes if n is not None]
            if not costs or len(costs) < len(nodes) or any(c is None for c in costs):
                return None
            return total(c for c in costs if c is not None)

    def snapshot(self) -> Snapshot:
        on_wire = self._on_wire() if self._on_wire is not None else {}
        with self._lock:
            tally = Tally.of(self._nodes.values(), start=self._forgotten)
            in_flight, queued = split_waiting(self._waiting, on_wire)
            return Snapshot(
                total=tally.total,
                done=tally.done,
                cached=tally.cached,
                failed=tally.failed,
                in_flight=in_flight,
                cpu_seconds=self._cpu_seconds,
                ran_for_another=self._ran_for_another,
                elapsed=0.0 if self._started is None else time.monotonic() - self._started,
                queued=queued,
            )

    # -- running -------------------------------------------------------------------------------

    def _try_start(self, node: Node) -> None:
        needs = [self._nodes[k] for k in node.stage.needs]
        for need in needs:
            self._load_if_stored(need)  # a stored output another stage needs is read now
        failed = next((n for n in needs if n.state == "failed"), None)
        if failed is not None:
            self._fail(node, needed(failed))
        elif all(n.state == "done" for n in needs) and not self._closed:
            node.state = "running"
            inputs = tuple(n.output for n in needs)
            if isinstance(node.stage, CpuStage):
                # Run by the first test that needs it: a stage that cannot go to processes, and
                # a free one (reading a saved output: on a thread of its own each read cost
                # more than itself in hand-offs, and the threads slowed the tests beside them).
                stage = node.stage
                if stage.free or (not stage.portable and self.slot.spec.kind != "threads"):
                    node.state = "deferred"
                    return
                if stage.measured is not None:
                    # Run by its test, timed, until worth the executor; then a window at a time.
                    node.state = "deferred"
                    self._send(self._measured.defer(stage.measured, node))
                    return
                self._start_cpu(node, stage, inputs)
            else:
                self._start_model(node, node.stage, inputs)

    def _start_cpu(self, node: Node, stage: CpuStage, inputs: tuple[Any, ...]) -> None:
        args = (*stage.args, *inputs)
        executor: concurrent.futures.Executor
        try:
            if node.isolated:
                executor = self._thread_pool()
                future = executor.submit(_run_alone, stage, args)
            elif not stage.portable or stage.free or self.slot.spec.kind == "threads":
                executor = self._thread_pool()
                future = executor.submit(timed_call, stage.call, args)
            else:
                executor = self.slot.get()
                future = self.slot.submit(executor, stage.key, stage.call, args)
        except BrokenProcessPool:
            self.slot.restart(executor)
            node.isolated = True
            self._start_cpu(node, stage, inputs)
            return
        except Exception as exc:  # an executor that cannot take work (a Dask scheduler gone)
            self._fail(node, exc)
            return
        node.future = future
        future.add_done_callback(lambda f: self._cpu_done(node, executor, inputs, f))

    def _cpu_done(
        self,
        node: Node,
        executor: concurrent.futures.Executor,
        inputs: tuple[Any, ...],
        future: concurrent.futures.Future[Any],
    ) -> None:
        with self._lock:
            try:
                answer = future.result()
            except BrokenProcessPool as exc:
                if node.isolated or self._closed:
                    self._fail(node, DocevalError(f"its worker process died ({exc})"))
                    return
                self.slot.restart(executor)
                node.isolated = True
                assert isinstance(node.stage, CpuStage)
                self._start_cpu(node, node.stage, inputs)
                return
            except concurrent.futures.CancelledError:
                self._fail(node, DocevalError("cancelled: the run was stopped"))
                return
            except StaysHome as exc:
                self._stay_home(node, exc)
                return
            except BaseException as exc:
                self._fail(node, exc)
                return
            if isinstance(answer, RanForAnother):  # counted where it ran
                output, cost = answer.output, answer.cost
                self._ran_for_another += 1
            else:
                output, cost = answer
                self._cpu_seconds += cost.cpu_seconds
            free = isinstance(node.stage, CpuStage) and node.stage.free
            self._finish(node, output, None if free else cost)

    def _start_model(self, node: Node, stage: ModelStage, inputs: tuple[Any, ...]) -> None:
        assert self._hub_factory is not None, "a model stage needs the engine to have a hub"
        try:
            hub = self._hub_factory()
            future = hub.run(self._ask_all(hub, stage, inputs))
        except BaseException as exc:
            self._fail(node, exc)
            return
        node.future = future
        future.add_done_callback(lambda f: self._model_done(node, f))

    async def _ask_all(
        self, hub: Hub, stage: ModelStage, inputs: tuple[Any, ...]
    ) -> tuple[Any, StageCost]:
        started = time.perf_counter()
        requests = stage.build(inputs)
        asked = await asyncio.gather(*(self._ask(hub, stage, r) for r in requests))
        costs = [cost for _, cost in asked]
        wall = StageCost(wall_seconds=time.perf_counter() - started)
        return stage.read([answer for answer, _ in asked]), total([wall, *costs])

    async def _ask(self, hub: Hub, stage: ModelStage, request: Any) -> tuple[Any, StageCost]:
        with self._lock:
            self._waiting[stage.model] += 1
        try:
            response = await hub.get(request)
        finally:
            with self._lock:
                self._waiting[stage.model] -= 1
        # Tokens as the API reported them (a response from the store keeps its usage).
        tokens_in, tokens_out = tokens_of(getattr(response, "usage", None) or {})
        config = hub.client.config(stage.model)
        usd = price(tokens_in, tokens_out, config.price_in, config.price_out)
        return stage.answer(response), StageCost(0.0, 0.0, 1, tokens_in, tokens_out, usd)

    def _model_done(self, node: Node, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            try:
                output, cost = future.result()
            except concurrent.futures.CancelledError:
                self._fail(node, DocevalError("cancelled: the run was stopped"))
            except BaseException as exc:
                self._fail(node, exc)
            else:
                self._finish(node, output, cost)

    def _finish(
        self, node: Node, output: Any, cost: StageCost | None = None, *, cached: bool = False
    ) -> None:
        stage = node.stage
        if not cached and stage.fingerprint is not None:
            node.stored = self._keep(stage, output, cost)
        node.output, node.cached, node.cost, node.state = output, cached, cost, "done"
        node.future = None
        self._notify_settled()
        self._place_freed(node)
        for key in node.dependants:
            dependant = self._nodes[key]
            if dependant.state == "waiting":
                self._try_start(dependant)

    def _place_freed(self, node: Node) -> None:
        """A finished stage of a measured group lets the next of its group go to the executor
        in its place (if it held one: `MeasuredStages`)."""
        group = getattr(node.stage, "measured", None)
        if group is not None:
            self._send(self._measured.done(node, group))

    def _keep(self, stage: Stage, output: Any, cost: StageCost | None) -> bool:
        """Store a finished stage's output through its codec, with its fingerprint and what it
        cost (a warm run reports the cost of the output it reuses); whether it was kept."""
        if stage.codec.name == "text" and not isinstance(output, str):
            return False  # a text stage that made something else (a test's stand-in parser)
        meta: dict[str, Any] = {"fingerprint": stage.fingerprint}
        if cost is not None:
            meta["cost"] = cost.to_dict()
        try:
            self.cache.put(stage.key, output, stage.codec, meta)
        except (OSError, TypeError, ValueError):  # the output is good; only keeping it failed
            return False
        return self.cache.writes

    def _fail(self, node: Node, error: BaseException) -> None:
        node.error, node.state, node.future = error, "failed", None
        self._notify_settled()
        self._place_freed(node)
        for key in node.dependants:
            dependant = self._nodes[key]
            if dependant.state == "waiting":
                self._fail(dependant, needed(node))

    def _notify_settled(self) -> None:
        with self._settled:  # re-entered: the callers hold the engine's lock already
            self._settled.notify_all()

    def _thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._threads is None:
            self._threads = concurrent.futures.ThreadPoolExecutor(
                self.slot.workers, thread_name_prefix="doceval-stage"
            )
        return self._threads

    # -- stopping ------------------------------------------------------------------------------

    def close(self, *, cancel: bool = False) -> None:
        """Stop; every stage still unfinished then fails, so that nobody waits forever, and is
        counted as *dropped*, not failed: no test of this run waited for it.

        The tests are over (`cancel` false): queued stages are dropped, and what is already
        running -- a CPU stage, a model request -- finishes and is stored. Under xdist's work
        stealing a peer may have taken over the test it was for and be waiting on this
        process's claim: cancelling the request would release the claim unanswered and make
        the peer send it again. Ctrl-C (`cancel`): what runs is cancelled too.
        """
        with self._lock:
            self._closed = True
            unfinished = [n for n in self._nodes.values() if not n.finished]
            cpu = [n.future for n in unfinished if n.future and isinstance(n.stage, CpuStage)]
            model = [n.future for n in unfinished if n.future and isinstance(n.stage, ModelStage)]
        for future in cpu:
            future.cancel()  # a running one goes on (concurrent.futures cancels only queued)
        for future in model:
            if cancel:
                future.cancel()
        if not cancel:
            concurrent.futures.wait(model, timeout=DRAIN_TIMEOUT)
        self.slot.close(cancel=cancel)
        if self._threads is not None:
            self._threads.shutdown(wait=not cancel, cancel_futures=True)
        with self._lock:
            for node in unfinished:
                if not node.finished:  # a need's failure may have failed it
                    self._fail(node, DocevalError("not run: the run was stopped"))
            for node in unfinished:
                if node.state == "failed":  # a cancelled queued stage failed through its future
                    node.state = "dropped"


def _is_free(node: Node) -> bool:
    return isinstance(node.stage, CpuStage) and node.stage.free
