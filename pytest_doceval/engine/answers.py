"""How a stage's outcome crosses the shared pool's socket (`shared_pool`, `pool_client`): one
encoding, written by the pool and read by its clients.

An answer is two bytes and a pickle. The first byte says for whom the stage ran: for this ask
(`FOR_THIS_ASK`), or for another xdist worker's, whose run the pool shares (`FOR_ANOTHER`: the
client hands it over as `RanForAnother`, so the run's CPU stage time counts it once). The
second says whether the stage returned (the pickle is its ``(output, cost)``) or raised (the
pickle is the exception), so the pool keeps the answers of stages that returned without
unpickling them in the controller (work on every finished stage, and an import of the
output's classes there).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

from pytest_doceval.metrics.cost import StageCost

FOR_THIS_ASK, FOR_ANOTHER = b"+", b"="
RETURNED, RAISED = b"r", b"x"


@dataclass(frozen=True)
class RanForAnother:
    """A stage's output and cost that the shared pool made for another xdist worker's ask. The
    output's cost is `cost`, as for the worker that asked first; the run's CPU stage time
    counts it once, there."""

    output: Any
    cost: StageCost


def outcome(returned: bool, value: Any) -> bytes:
    """A stage's outcome (`value`: its ``(output, cost)``, or the exception it raised), as the
    pool's processes send it; `answer` marks it for its ask."""
    return (RETURNED if returned else RAISED) + pickle.dumps(value)


def returned(encoded_outcome: bytes) -> bool:
    return encoded_outcome[:1] == RETURNED


def answer(encoded_outcome: bytes, *, for_another: bool) -> bytes:
    return (FOR_ANOTHER if for_another else FOR_THIS_ASK) + encoded_outcome


def read_answer(encoded: bytes) -> Any:
    """What an ask gets: the stage's ``(output, cost)``, or `RanForAnother`; the exception it
    raised is raised here."""
    value = pickle.loads(encoded[2:])
    if encoded[1:2] != RETURNED:
        raise value
    return RanForAnother(*value) if encoded[:1] == FOR_ANOTHER else value
