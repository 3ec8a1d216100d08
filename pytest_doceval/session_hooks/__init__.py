"""The hooks of one doceval run: registered by the plugin (`plugin.pytest_configure`) only when
``--doceval`` is given, so a plain pytest run never imports this package.

A run's process has one of three roles (`session.Role`), and each role is the plugin objects it
needs, as pytest-xdist itself splits its controller from its workers:

- every role: `collecting.Collecting` (a suite's case folders are data, not tests; shards;
  freezing what lives to the end for the garbage collector);
- a process that runs tests -- a plain run (`running.PlainRunning`: plans every test after
  collection) or an xdist worker (`running.WorkerRunning`: plans the tests it is handed, as it
  is handed them, and hands its engine's totals to the controller);
- a process that reports -- a plain run or the xdist controller (`reporting.Reporting`: rows
  from test reports, the report, suite gates and baselines at the end, the terminal summary,
  pytest-html's columns) -- and the controller alone (`controlling.XdistControl`: work
  stealing, the one process pool every worker's stages run in, the workers' progress).
"""

from __future__ import annotations

import pytest

from pytest_doceval.session import DocevalSession, Role
from pytest_doceval.session_hooks.collecting import Collecting, freeze_gc


def register(config: pytest.Config, session: DocevalSession) -> None:
    """Register the plugin objects of `session`'s role."""
    plugins: list[tuple[object, str]] = [(Collecting(session), "doceval-collecting")]
    if session.role is Role.PLAIN:
        from pytest_doceval.session_hooks.running import PlainRunning

        plugins.append((PlainRunning(session), "doceval-running"))
    elif session.role is Role.WORKER:
        from pytest_doceval.session_hooks.running import WorkerRunning

        plugins.append((WorkerRunning(session), "doceval-running"))
    else:
        from pytest_doceval.session_hooks.controlling import XdistControl

        plugins.append((XdistControl(session), "doceval-xdist-control"))
    if session.role.reports:
        from pytest_doceval.session_hooks.reporting import Reporting

        plugins.append((Reporting(session), "doceval-reporting"))
    for plugin, name in plugins:
        config.pluginmanager.register(plugin, name)


__all__ = ["freeze_gc", "register"]
