"""The streaming stage engine: how a run computes what its tests score (DESIGN section 9).

Design of the code. A kind declares, per test, the stages producing its output (`Suite.plan`:
`CpuStage` -- a parser on a PDF, a page cut and parsed, sentences embedded -- and `ModelStage`
-- chat or embeddings requests built from earlier stages' outputs), each with a content key
(`stages`). After collection the session hands the selected tests' stages to the process's one
`Engine` (`engine`), in pytest's item order; the engine runs every key once, CPU stages on the
run's executor (`executors`: a process pool by default, threads, or a Dask cluster), model
stages on the model hub's event loop (``max_concurrency`` per model, retries, claims across
xdist workers) the moment their inputs exist. A test waits only for its own stages (printing
progress lines meanwhile, see `progress`); its kind's ``evaluate`` receives the finished results
its plan named (`plan`); a failed stage is an error of exactly the tests that need it.
"""

from pytest_doceval.engine.engine import Engine
from pytest_doceval.engine.executors import ExecutorSlot, ExecutorSpec, parse_executor
from pytest_doceval.engine.nodes import Snapshot, StageFailed
from pytest_doceval.engine.plan import (
    NO_RESULTS,
    Plan,
    StageNotPlanned,
    StageResults,
    run_plan,
    saved_output_stage,
)
from pytest_doceval.engine.stages import (
    CpuStage,
    ModelStage,
    Stage,
    StageInfo,
    StaysHome,
    chat_stage,
    info_of,
)

__all__ = [
    "NO_RESULTS",
    "CpuStage",
    "Engine",
    "ExecutorSlot",
    "ExecutorSpec",
    "ModelStage",
    "Plan",
    "Snapshot",
    "Stage",
    "StageFailed",
    "StageInfo",
    "StageNotPlanned",
    "StageResults",
    "StaysHome",
    "chat_stage",
    "info_of",
    "parse_executor",
    "run_plan",
    "saved_output_stage",
]
