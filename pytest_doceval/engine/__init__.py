"""The streaming stage engine: how a run computes what its tests score (DESIGN section 9).

Design of the code. A kind declares, per test, the stages producing its output (`Suite.stages`:
`CpuStage` -- a parser on a PDF, a page cut and parsed, sentences embedded -- and `ModelStage`
-- chat or embeddings requests built from earlier stages' outputs), each with a content key
(`stages`). After collection the session hands the selected tests' stages to the process's one
`Engine` (`engine`), in pytest's item order; the engine runs every key once, CPU stages on the
run's executor (`executors`: a process pool by default, threads, or a Dask cluster), model
stages on the model hub's event loop (``max_concurrency`` per model, retries, claims across
xdist workers) the moment their inputs exist. A test waits only for its own stages (printing
progress lines meanwhile, see `progress`) and reads their outputs through `RunContext.output`; a
failed stage is an error of exactly the tests that need it.
"""

from pytest_doceval.engine.engine import MISSING, Engine
from pytest_doceval.engine.executors import ExecutorSlot, ExecutorSpec, parse_executor
from pytest_doceval.engine.nodes import Snapshot, StageFailed
from pytest_doceval.engine.stages import CpuStage, ModelStage, Stage, StagePlan

__all__ = [
    "MISSING",
    "CpuStage",
    "Engine",
    "ExecutorSlot",
    "ExecutorSpec",
    "ModelStage",
    "Snapshot",
    "Stage",
    "StageFailed",
    "StagePlan",
    "parse_executor",
]
