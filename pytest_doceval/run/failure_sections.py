"""How pytest's terminal shows the failed tests of a big run.

pytest writes a section for each failed test, and for each it scans every report of the run for
that test's teardown output (pytest-dev/pytest#13360): the work is failures x reports. A
100,000-case run whose gates failed 16,703 of its 200,000 tests was still writing them an hour
after its last test. Under ``--tb=auto`` (pytest's default) such a run shows each failure as
one line instead (``--tb=line``, which pytest writes without that scan); the JSON and HTML
reports hold every failure, and ``--tb=short`` (any style given) asks for the sections anyway.
"""

from __future__ import annotations

import pytest

# Failure sections x reports beyond which pytest's sections take more than seconds to write.
LONG_SECTIONS = 50_000_000


def one_line_failures(config: pytest.Config) -> str | None:
    """Switch a run whose failure sections would take pytest minutes to ``--tb=line`` (when
    no style was given); the line that says so, or None."""
    if config.getoption("tbstyle", "auto") != "auto":
        return None
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None
    failed = len(reporter.stats.get("failed", ()))
    reports = sum(len(found) for found in reporter.stats.values())
    if failed * reports <= LONG_SECTIONS:
        return None
    config.option.tbstyle = "line"
    return (
        f"doceval: {failed:,} failed tests are shown a line each (--tb=line): pytest's "
        f"sections would scan all {reports:,} reports for each; --tb=short shows them"
    )
