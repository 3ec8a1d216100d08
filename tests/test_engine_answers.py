"""The shared pool's answer encoding (`engine/answers.py`): what a client reads is what the
stage did, for whichever ask it ran."""

from __future__ import annotations

import pickle

import pytest

from pytest_doceval.engine.answers import (
    RanForAnother,
    answer,
    outcome,
    read_answer,
    returned,
)
from pytest_doceval.metrics.cost import StageCost

COST = StageCost(0.25, 0.5)


@pytest.mark.parametrize("for_another", [False, True])
def test_a_stage_that_returned_reads_back_as_its_output_and_cost(for_another: bool) -> None:
    encoded = outcome(True, ("TIDE", COST))
    assert returned(encoded)
    read = read_answer(answer(encoded, for_another=for_another))
    assert read == (RanForAnother("TIDE", COST) if for_another else ("TIDE", COST))


@pytest.mark.parametrize("for_another", [False, True])
def test_a_stage_that_raised_raises_for_every_ask(for_another: bool) -> None:
    encoded = outcome(False, ValueError("page 3 is blank"))
    assert not returned(encoded)
    with pytest.raises(ValueError, match="page 3 is blank"):
        read_answer(answer(encoded, for_another=for_another))


def test_the_pool_tells_returned_from_raised_without_unpickling() -> None:
    """`returned` reads one byte: an output whose class the controller cannot import (it
    never imports the kinds' modules) is kept all the same."""
    encoded = outcome(True, ("x", COST))
    broken = encoded[:1] + b"not a pickle"
    assert returned(broken)
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(broken[1:])
