"""The project's own tests pass on a busy machine: nothing in them can fail by load alone."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parent
# A deadline set anywhere but None (a number, a timedelta) overrides the profile's back.
OWN_DEADLINE = re.compile(r"\bdeadline\s*=\s*(?!None\b)")


def test_the_default_profile_has_no_deadline() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


@settings(max_examples=5)
@given(st.integers())
def test_a_tests_own_settings_inherit_no_deadline(n: int) -> None:
    own = test_a_tests_own_settings_inherit_no_deadline._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert own.max_examples == 5 and own.deadline is None


def test_no_test_sets_a_hypothesis_deadline() -> None:
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "settings" in line and OWN_DEADLINE.search(line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert not offenders, offenders
