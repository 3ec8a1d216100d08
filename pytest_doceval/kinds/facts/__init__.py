"""olmOCR-bench facts: the pure engine behind the ``facts`` suite kind.

A fact is one machine-checkable statement about a page ("this sentence is present", "this cell
has that heading"); a system's output of the page passes or fails it. The semantics are
olmOCR-bench's (allenai/olmocr, ``olmocr/bench``); each module's docstring says where it follows
olmOCR and where, and why, it differs.

* `model`     -- `Fact` dataclasses, `parse_fact`, `load_facts`, `load_fact_files`, `FactError`
* `normalise` -- `normalise_text` (olmOCR's), `normalise_latex` (math facts)
* `checks`    -- `check` (one fact, one output) and one function per fact type; `markup` holds
  the format and footnote checks
* `tables`    -- markdown table parsing and the table check; `html_tables` (HTML tables) and
  `grid` (spans, neighbours, headings) beside it
* `repeats`   -- `check_repeats`: repeat outputs folded into one verdict (> half must pass)
* `passrate`  -- `pass_rate` (mean over fact files of each file's pass fraction, the headline),
  its interval, `micro_mean` (olmOCR's ``overall_score``), breakdowns by type and file
* `layout`    -- suite folder layout: `output_path`, `find_repeat_outputs`, `fact_files`
"""

from pytest_doceval.kinds.facts.checks import RenderEqual, check
from pytest_doceval.kinds.facts.layout import (
    fact_files,
    find_repeat_outputs,
    output_path,
    system_dirs,
)
from pytest_doceval.kinds.facts.model import (
    FACT_TYPES,
    BaselineFact,
    Fact,
    FactError,
    FactFileError,
    FootnoteFact,
    FormatFact,
    MathFact,
    OrderFact,
    TableFact,
    TextFact,
    implicit_baselines,
    load_fact_files,
    load_facts,
    parse_fact,
)
from pytest_doceval.kinds.facts.normalise import normalise_latex, normalise_text
from pytest_doceval.kinds.facts.passrate import (
    Group,
    PassRate,
    breakdown_by_file,
    breakdown_by_type,
    micro_mean,
    pass_rate,
    pass_rate_ci,
)
from pytest_doceval.kinds.facts.repeats import aggregate_repeats, check_repeats
from pytest_doceval.kinds.facts.result import FactResult, PageOutput

__all__ = [
    "FACT_TYPES",
    "BaselineFact",
    "Fact",
    "FactError",
    "FactFileError",
    "FactResult",
    "FootnoteFact",
    "FormatFact",
    "Group",
    "MathFact",
    "OrderFact",
    "PageOutput",
    "PassRate",
    "RenderEqual",
    "TableFact",
    "TextFact",
    "aggregate_repeats",
    "breakdown_by_file",
    "breakdown_by_type",
    "check",
    "check_repeats",
    "fact_files",
    "find_repeat_outputs",
    "implicit_baselines",
    "load_fact_files",
    "load_facts",
    "micro_mean",
    "normalise_latex",
    "normalise_text",
    "output_path",
    "parse_fact",
    "pass_rate",
    "pass_rate_ci",
    "system_dirs",
]
