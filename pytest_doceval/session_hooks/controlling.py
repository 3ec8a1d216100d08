"""Hooks of the xdist controller: how tests go out to the workers (work stealing), the one process
pool every worker's CPU stages run in (`engine.shared_pool`), and the workers' progress and
totals summed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_doceval.run.progress import progress_every
from pytest_doceval.run.stage_run import status_every
from pytest_doceval.run.terminal_lines import TerminalLines, TerminalTurns, terminal_lines
from pytest_doceval.session import DocevalSession

if TYPE_CHECKING:
    from pytest_doceval.engine.shared_pool import SharedPool
    from pytest_doceval.run.worker_progress import Gatherer

# What the controller tells a worker in its ``workerinput``.
POOL_KEY = "doceval_shared_pool"


class XdistControl:
    def __init__(self, session: DocevalSession) -> None:
        self.session = session
        self._pool: SharedPool | None = None
        self._gatherer: Gatherer | None = None
        self._lines: TerminalLines | None = terminal_lines(session.config)
        if self._lines is not None:
            session.config.pluginmanager.register(TerminalTurns(self._lines), "doceval-terminal")

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: how tests go out to workers
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist load`` (xdist's default under ``-n``) becomes work stealing: each worker
        gets its whole share of the tests at once, so its engine plans all their stages at the
        start (load scheduling hands out two or three tests at a time, and a worker's requests
        went out in trickles); a worker that runs out takes half of another's queue. Any other
        ``--dist`` is kept."""
        if config.getoption("dist") != "load":
            return None
        from xdist.scheduler import WorkStealingScheduling

        return WorkStealingScheduling(config, log)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker is being set up
    def pytest_configure_node(self, node: Any) -> None:
        """A worker is told where the run's one process pool is (made now, started when the
        first stage arrives) and where to publish its progress."""
        workerinput = node.workerinput
        if self.session.options.executor == "processes":
            workerinput[POOL_KEY] = self._shared_pool().address
        if self._lines is not None:
            from pytest_doceval.run.worker_progress import FOLDER_KEY

            workerinput[FOLDER_KEY] = self._progress(self._lines).folder_for_worker()

    def _shared_pool(self) -> SharedPool:
        if self._pool is None:
            from pytest_doceval.engine.executors import cpu_count
            from pytest_doceval.engine.shared_pool import SharedPool

            self._pool = SharedPool(cpu_count())  # the machine's cores, not a share of them
        return self._pool

    def _progress(self, lines: TerminalLines) -> Gatherer:
        if self._gatherer is None:
            from pytest_doceval.run.worker_progress import Gatherer

            every = status_every(lines, progress_every())
            self._gatherer = Gatherer(lines.write, lines.show, every=every, live=lines.live)
        return self._gatherer

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker finished
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        reporting = self.session.config.pluginmanager.get_plugin("doceval-reporting")
        totals = output.get("doceval_engine")
        if totals and reporting is not None:
            reporting.add_engine(totals, output.get("doceval_stayed_home") or {})
        if self._gatherer is not None:
            self._gatherer.node_down(str(node.workerinput["workerid"]))
        plan = output.get("doceval_shard")
        if plan:
            from pytest_doceval.run.shards import ShardPlan

            self.session.shard_plan = ShardPlan.from_dict(plan)

    @pytest.hookimpl(tryfirst=True)  # the workers are done: before the report is made
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED
        if self._gatherer is not None:
            self._gatherer.stop()
        if self._lines is not None:
            self._lines.close()
        if self._pool is not None:
            self._pool.close(cancel=interrupted)
