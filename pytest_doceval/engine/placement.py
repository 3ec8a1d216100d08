"""Where a measured stage runs: in the thread of the test asking for it, or on the executor.

Handing a stage to a process pool is not free: its arguments and output cross a pipe, and the
process handing it over pays for that, and a pool not yet started costs its start. A suite's
scores can cost a tenth of a millisecond each (a precomputed text scored by CER) or tens of
milliseconds (TEDS of large tables): the first are cheapest where the test runs, the second
are worth every core. So the stages of a *measured group* (`CpuStage.measured`: one per suite's
scores) start in the test's own thread, each timed, and once `SAMPLES` of them say a stage
costs more than its hand-off, and the work left in the group more than starting the pool, the
rest of the group goes to the executor. A remote cluster (Dask) always takes them: a user who
gives one wants it to carry the run. One core never does: it would only add the hand-off to
the same work -- nor does a pool no bigger than the processes that already score in parallel
(``-n 2`` on two cores: each worker scores its own tests, one core each).

A verdict is kept per group for the engine's life; it never flips back (the stages already
dispatched are the cheapest to leave where they are). A group on the executor is fed to it a
few stages a process at a time (`MeasuredStages`), in the order the tests will ask for them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from pytest_doceval.engine.executors import IN_FLIGHT_PER_PROCESS
from pytest_doceval.engine.nodes import Node

# What a process pays to hand one stage to a local process pool and take its output back
# (submit, pickling both ways, the callback): measured on these machines at 0.1-0.3 ms for a
# small stage; a stage must cost more than this, with a margin, to be worth handing over.
HAND_OFF_SECONDS = 0.0005
# Starting a local pool (the forkserver, its preloads, a process per core importing the
# stages' modules): about a second of CPU. Work left in a group below this stays here.
POOL_START_SECONDS = 1.0
SAMPLES = 3


@dataclass
class GroupCost:
    samples: int = 0
    seconds: float = 0.0
    to_executor: bool = False
    home: bool = False  # its code cannot run on the executor (`StaysHome`)

    @property
    def mean(self) -> float:
        return self.seconds / self.samples if self.samples else 0.0


class Placement:
    """The verdict of each measured group (see the module docstring)."""

    def __init__(self, *, workers: int, remote: bool) -> None:
        self.workers = workers  # the executor's processes per process that runs tests
        self.remote = remote  # a cluster of its own machines: always worth it
        self.groups: dict[str, GroupCost] = {}

    def to_executor(self, group: str) -> bool:
        """Whether a stage of `group` goes to the executor now."""
        found = self.groups.get(group)
        if found is not None and found.home:
            return False
        return self.remote or (found is not None and found.to_executor)

    def stay_home(self, group: str) -> None:
        """`group`'s code cannot run on the executor: its stages run in the tests' threads."""
        cost = self.groups.setdefault(group, GroupCost())
        cost.home, cost.to_executor = True, False

    def ran_here(self, group: str, seconds: float, *, left: int, pool_started: bool) -> bool:
        """A stage of `group` ran in a test's thread for `seconds` of CPU, `left` stages of the
        group are still waiting: True when the group now goes to the executor."""
        cost = self.groups.setdefault(group, GroupCost())
        cost.samples += 1
        cost.seconds += seconds
        if cost.to_executor or cost.home or self.workers <= 1 or cost.samples < SAMPLES:
            return False
        start = 0.0 if pool_started else POOL_START_SECONDS
        if cost.mean > HAND_OFF_SECONDS and cost.mean * left > start:
            cost.to_executor = True
            return True
        return False


class MeasuredStages:
    """The stages of each measured group waiting for a test or the executor (`Placement` says
    which), in the order they were planned, and those the executor holds now: as many a
    process as the executor slot lets onto a pool (`IN_FLIGHT_PER_PROCESS`). The rest stay
    deferred here, not queued in the slot: 200,000 scores handed over at once were a work
    item, a future and arguments each (2 GB of a 100,000-case run's controller), and a test
    that reaches a stage still waiting here runs it itself."""

    def __init__(self, placement: Placement, workers: int) -> None:
        self.placement = placement
        self.window = IN_FLIGHT_PER_PROCESS * max(1, workers)
        self._waiting: dict[str, deque[Node]] = {}
        self._not_run: dict[str, int] = {}  # group -> its stages not run yet (for the verdict)
        self._sent: dict[str, set[str]] = {}  # group -> keys of its stages on the executor

    def defer(self, group: str, node: Node) -> list[Node]:
        """`node` (deferred) waits for its test or the executor; the nodes to send now."""
        self._waiting.setdefault(group, deque()).append(node)
        self._not_run[group] = self._not_run.get(group, 0) + 1
        return self._next(group)

    def ran_here(self, group: str, seconds: float, *, pool_started: bool) -> list[Node]:
        """A stage of `group` ran in a test's thread for `seconds` of CPU: the nodes to send
        now (once the group is worth the executor)."""
        self._not_run[group] = left = max(0, self._not_run.get(group, 0) - 1)
        self.placement.ran_here(group, seconds, left=left, pool_started=pool_started)
        return self._next(group)

    def done(self, node: Node, group: str) -> list[Node]:
        """`node` of `group` came back from the executor (or failed there): the nodes to send
        in its place."""
        sent = self._sent.get(group)
        if sent is None or node.stage.key not in sent:
            return []
        sent.discard(node.stage.key)
        return self._next(group)

    def _next(self, group: str) -> list[Node]:
        if not self.placement.to_executor(group):
            return []
        waiting = self._waiting.get(group)
        sent = self._sent.setdefault(group, set())
        chosen: list[Node] = []
        while waiting and len(sent) < self.window:
            node = waiting.popleft()
            if node.state == "deferred":  # not run by its test meanwhile
                node.state = "running"
                sent.add(node.stage.key)
                chosen.append(node)
        return chosen
