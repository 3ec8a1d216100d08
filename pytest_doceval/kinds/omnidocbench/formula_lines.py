"""Multi-line display formulas split into their lines, as OmniDocBench v1.6 splits them before
matching (``split_gt_equation_arrays``, ``split_equation_arrays`` and
``normalize_logic_brace_formula`` of ``src/core/matching/match_quick.py``).

A formula whose whole body is one multi-line environment (``array`` with ``l``/``c``/``r``
columns, ``aligned``, ``align``, ``split``, ``gather``, ``multline``, ``cases`` used as a chain
of implications, ...), or bare rows separated by ``\\\\``, is matched line by line: a truth
formula's lines get the orders ``order + k/1000``, a predicted formula's lines spans inside the
formula's. Some are kept whole: systems of equations in a ``\\left\\{`` brace, ``cases`` that
define a function, ``aligned`` rows with their own left-hand sides inside a brace. Trailing
equation labels (``(3)``, ``\\tag{3}``) go.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from pytest_doceval.errors import OmniDocBenchInputError
from pytest_doceval.kinds.omnidocbench.lines import TruthBlock
from pytest_doceval.kinds.omnidocbench.normalise import strip_formula_delimiters, strip_formula_tags
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock

_ENVIRONMENTS: Final = (
    "array",
    "aligned",
    "align",
    "align*",
    "alignedat",
    "alignedat*",
    "split",
    "gather",
    "gather*",
    "gathered",
    "multline",
    "multline*",
    "flalign",
    "flalign*",
    "eqnarray",
    "eqnarray*",
    "cases",
)
MULTILINE_ENV: Final = re.compile(
    r"^\\begin\{(?P<env>" + "|".join(re.escape(n) for n in _ENVIRONMENTS) + r")\}"
    r"\s*(?P<extra>(?:\{[^{}]*\}\s*)*)",
    re.S,
)
_SPACING_TOKENS: Final = r"(?:\\qquad|\\quad|\\,|\\;|\\!|\\>|\\:|~)"
_TRAILING_SPACING: Final = re.compile(_SPACING_TOKENS + "+")
_TRAILING_SPACE_TOKEN: Final = re.compile(_SPACING_TOKENS + r"\s*$")
_LABEL: Final = re.compile(r"\\label\s*\{[^{}]*\}")
_TAG: Final = re.compile(r"\\tag\*?\s*\{[^{}]*\}")
_ALIGNED: Final = {"aligned", "align", "align*", "alignedat", "alignedat*"}
_LOGIC_MARKER: Final = re.compile(
    r"\\(?:Rightarrow|Leftrightarrow|Longrightarrow|Longleftrightarrow|"
    r"longrightarrow|longleftrightarrow|implies|therefore|because|"
    r"uparrow|downarrow|Updownarrow|forall|exists)\b|单调|否定"
)
_NESTED_ENV: Final = re.compile(
    r"\\begin\{(?:array|aligned|align\*?|alignedat\*?|split|gathered?|multline\*?|flalign\*?"
    r"|eqnarray\*?|cases)\}"
)
_CASE_LIKE_LEAD: Final = re.compile(
    r"^(?:\(?\d+\)?|\\(?:Rightarrow|Leftrightarrow|Longrightarrow|Longleftrightarrow|implies"
    r"|therefore|uparrow|downarrow|Updownarrow|leftarrow|rightarrow))"
)
_EXPLANATORY: Final = re.compile(r"\\(?:text|mathrm|operatorname)\s*\{")
_BRACE_PREFIX: Final = re.compile(r"^(?P<prefix>(?:\\left\s*\\\{|\\left\.))\s*")
_BRACE_SUFFIX: Final = re.compile(r"(?P<suffix>\s*\\right(?:\.|\\\}))\s*$")


@dataclass(frozen=True)
class _Split:
    """Where a formula's rows are: its body, the body's offset in the formula, and a suffix
    after the environment that joins the last line (with its end in the formula, or -1)."""

    body: str
    body_start: int
    suffix: str = ""
    suffix_end: int = -1


def _array_spec(spec: str) -> str:
    spec = re.sub(r"\s+|\|", "", spec)
    return re.sub(r"!{[^}]*}", "", re.sub(r"@{[^}]*}", "", spec))


def _splittable_array(spec: str) -> bool:
    """``is_all_l``: one column, or two with an ``l`` or ``r`` (``lcr`` only)."""
    spec = _array_spec(spec)
    if not spec or any(ch not in "lcr" for ch in spec):
        return False
    return len(spec) == 1 or (len(spec) == 2 and ("l" in spec or "r" in spec))


def find_env_end(text: str, env: str, index: int) -> int:
    """The index of the ``\\end{env}`` that closes the one open at `index` (nesting), or -1."""
    begin, end = f"\\begin{{{env}}}", f"\\end{{{env}}}"
    depth = 1
    while index < len(text):
        next_begin, next_end = text.find(begin, index), text.find(end, index)
        if next_end < 0:
            return -1
        if 0 <= next_begin < next_end:
            depth += 1
            index = next_begin + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return next_end
        index = next_end + len(end)
    return -1


def _escaped(text: str, index: int) -> bool:
    count, cursor = 0, index - 1
    while cursor >= 0 and text[cursor] == "\\":
        count += 1
        cursor -= 1
    return count % 2 == 1


def _env_token(text: str, index: int) -> tuple[str, int] | None:
    """A ``\\begin{..}`` or ``\\end{..}`` token at `index`: (+1/-1 as text, its end)."""
    for token, step in (("\\begin{", "+"), ("\\end{", "-")):
        if text.startswith(token, index):
            close = text.find("}", index + len(token))
            if close != -1:
                return step, close + 1
    return None


def split_rows(body: str, *, escapes: bool = True) -> list[str]:
    """Rows split at top-level ``\\\\`` (not inside braces or environments), each stripped,
    empty ones dropped; a ``*`` or ``[..]`` after the ``\\\\`` goes with it. `escapes`: an
    escaped brace does not count (the matcher's reading; the CDM sanitiser counts it)."""
    rows: list[str] = []
    current: list[str] = []
    braces = envs = 0
    i = 0
    while i < len(body):
        token = _env_token(body, i)
        if token is not None:
            current.append(body[i : token[1]])
            envs = envs + 1 if token[0] == "+" else max(0, envs - 1)
            i = token[1]
            continue
        if body.startswith("\\\\", i) and braces == 0 and envs == 0:
            if row := "".join(current).strip():
                rows.append(row)
            current = []
            i += 2
            while i < len(body) and body[i].isspace():
                i += 1
            if i < len(body) and body[i] == "*":
                i += 1
            if i < len(body) and body[i] == "[" and (close := body.find("]", i + 1)) != -1:
                i = close + 1
            continue
        ch = body[i]
        current.append(ch)
        if ch == "{" and not (escapes and _escaped(body, i)):
            braces += 1
        elif ch == "}" and not (escapes and _escaped(body, i)):
            braces = max(0, braces - 1)
        i += 1
    if tail := "".join(current).strip():
        rows.append(tail)
    return rows


def alignment_cells(line: str) -> list[str]:
    """A row's top-level ``&``-separated cells (an escaped ``&`` is text)."""
    cells: list[str] = []
    current: list[str] = []
    envs = 0
    i = 0
    while i < len(line):
        token = _env_token(line, i)
        if token is not None:
            current.append(line[i : token[1]])
            envs = envs + 1 if token[0] == "+" else max(0, envs - 1)
            i = token[1]
            continue
        if line[i] == "&" and envs == 0 and not _escaped(line, i):
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(line[i])
        i += 1
    cells.append("".join(current).strip())
    return cells


def _rstrip_spacing(text: str) -> str:
    working = text.rstrip()
    while (updated := _TRAILING_SPACE_TOKEN.sub("", working).rstrip()) != working:
        working = updated
    return working


def _end_label(label: str, prefix: str) -> bool:
    label = label.strip()
    if not label:
        return False
    if prefix and not (prefix[-1].isspace() or _TRAILING_SPACING.search(prefix[-10:])):
        return False
    if re.fullmatch(r"[a-z]{1,3}", label):
        return False
    return bool(
        re.fullmatch(r"[A-Za-z0-9.\-#]+", label) or re.fullmatch(r"(?:\\[A-Za-z#]+)+", label)
    )


def _strip_end_labels(trailing: str) -> str:
    """What follows an environment, without its ``\\label``, ``\\tag`` and ``(3)`` labels."""
    working = _LABEL.sub("", trailing)
    while True:
        stripped = working.rstrip()
        if not stripped:
            return ""
        tag = _TAG.search(stripped)
        if tag and tag.end() == len(stripped):
            working = _rstrip_spacing(stripped[: tag.start()].rstrip())
            continue
        if stripped[-1] not in ")]":
            return stripped
        start = stripped.rfind("(" if stripped[-1] == ")" else "[")
        if start < 0 or not _end_label(stripped[start + 1 : -1], stripped[:start]):
            return stripped
        working = _rstrip_spacing(stripped[:start])


def _lead(row: str) -> str:
    stripped = row.lstrip()
    while stripped.startswith("&"):
        stripped = stripped[1:].lstrip()
    return stripped


def _case_like(row: str) -> bool:
    lead = strip_formula_tags(_lead(row)).strip()
    return bool(lead) and bool(_CASE_LIKE_LEAD.match(lead))


def _explanatory(row: str) -> bool:
    return bool(_EXPLANATORY.search(_lead(row)))


def _logic(row: str) -> bool:
    return bool(_LOGIC_MARKER.search(_lead(row)))


def _aligned_row(row: str) -> bool:
    return len(alignment_cells(row)) > 1


def _split_cases(body: str, rows: Sequence[str]) -> bool:
    """``cases`` read as a chain of implications, one line each (not a function definition)."""
    if len(rows) <= 1 or any(_aligned_row(r) for r in rows) or not _LOGIC_MARKER.search(body):
        return False
    if _NESTED_ENV.search(body):
        return True
    if any(_logic(r) for r in rows[1:]) or any(_explanatory(r) for r in rows[1:]):
        return True
    return _logic(rows[0])


def _cases_as_array(body: str, rows: Sequence[str], after: str) -> bool:
    """``_should_normalize_cases_block``: such ``cases`` rewritten as a braced ``array``."""
    if len(rows) <= 1 or any(_aligned_row(r) for r in rows):
        return False
    after = after.lstrip()
    logic = bool(_LOGIC_MARKER.search(body)) or bool(_LOGIC_MARKER.search(after))
    followed = bool(MULTILINE_ENV.match(after))
    if not logic and not followed:
        return False
    if _NESTED_ENV.search(body) or any(_logic(r) for r in rows):
        return True
    return any(_explanatory(r) for r in rows[1:]) or logic or followed


def _own_left_side(row: str) -> bool:
    cells = alignment_cells(row)
    return len(cells) > 1 and bool(strip_formula_tags(cells[0]).strip())


def _keep_aligned(body: str, rows: Sequence[str], braced: bool) -> bool:
    nested = bool(_NESTED_ENV.search(body))
    if nested and any(_case_like(r) for r in rows[1:]):
        return True
    if not braced:
        return False
    if nested:
        return True
    if sum(1 for r in rows if _own_left_side(r)) >= 2:
        return True
    return any(_explanatory(r) for r in rows[1:]) or any(_case_like(r) for r in rows[1:])


def _keep_array(spec: str, body: str, rows: Sequence[str], braced: bool) -> bool:
    spec = _array_spec(spec)
    if not spec:
        return False
    if _NESTED_ENV.search(body) and any(_case_like(r) for r in rows[1:]):
        return True
    return braced and set(spec) <= {"l"} and len(rows) > 1


def _environment_split(formula: str) -> _Split | None:
    """``_find_multiline_env_match``: the rows of a formula that is one environment."""
    stripped = strip_formula_delimiters(formula).strip()
    if not stripped:
        return None
    prefix = _BRACE_PREFIX.match(stripped)
    candidate = stripped[prefix.end() :].lstrip() if prefix else stripped
    suffix = _BRACE_SUFFIX.search(candidate)
    core = candidate[: suffix.start()].rstrip() if suffix else candidate
    start = MULTILINE_ENV.match(core)
    if not start:
        return None
    env, extra = start.group("env"), start.group("extra")
    end_tag = f"\\end{{{env}}}"
    end = find_env_end(core, env, start.end())
    if end < start.end():
        return None
    groups = re.findall(r"\{([^{}]*)\}", extra) if env == "array" else []
    spec = groups[0] if groups else ""
    body = core[start.end() : end]
    rows = split_rows(body)
    braced = bool(prefix or suffix)
    trailing = _strip_end_labels(core[end + len(end_tag) :]).strip()
    if env == "cases" and not _split_cases(body, rows):
        return None
    if env in _ALIGNED and _keep_aligned(body, rows, braced):
        return None
    if env == "array" and (
        not spec or not _splittable_array(spec) or _keep_array(spec, body, rows, braced)
    ):
        return None
    if trailing and len(split_rows(trailing)) > 1:
        return None
    body_start = max(formula.find(body), 0)
    suffix_end = -1
    if trailing:
        tag_at = formula.find(end_tag, body_start + len(body))
        if tag_at >= 0:
            at = formula.find(trailing, tag_at + len(end_tag))
            if at >= 0:
                suffix_end = at + len(trailing)
    return _Split(body, body_start, trailing, suffix_end)


def _bare_split(formula: str) -> _Split | None:
    stripped = strip_formula_delimiters(formula).strip()
    if not stripped or "\\\\" not in stripped or len(split_rows(stripped)) <= 1:
        return None
    return _Split(stripped, max(formula.find(stripped), 0))


@lru_cache(maxsize=4096)
def formula_rows(formula: str) -> tuple[_Split, tuple[tuple[str, str], ...]] | None:
    """``_split_multiline_formula_lines``: the split and its lines as (raw row, line), or
    None for a formula that stays whole."""
    split = _environment_split(formula) or _bare_split(formula)
    if split is None:
        return None
    lines = [
        (raw, line) for raw in split_rows(split.body) if (line := strip_formula_tags(raw).strip())
    ]
    if len(lines) <= 1:
        return None
    if suffix := strip_formula_tags(split.suffix).strip():
        raw, line = lines[-1]
        lines[-1] = (raw, f"{line} {suffix}".strip())
    return split, tuple(lines)


def _wrap(line: str) -> str:
    return f"\\[{line.strip()}\\]"


def split_truth_formulas(blocks: Sequence[TruthBlock]) -> list[TruthBlock]:
    """``split_gt_equation_arrays``: each splittable truth formula as its lines."""
    out: list[TruthBlock] = []
    for block in blocks:
        found = formula_rows(block.latex or "") if block.category == "equation_isolated" else None
        if found is None:
            out.append(block)
            continue
        try:
            base = float(block.order)
        except (TypeError, ValueError):
            raise OmniDocBenchInputError(
                f"a multi-line display formula with no number as 'order' ({block.order!r})"
            ) from None
        for k, (_, line) in enumerate(found[1], start=1):
            out.append(dataclasses.replace(block, latex=_wrap(line), order=base + k / 1000.0))
    return out


def split_pred_formulas(blocks: Sequence[PredBlock]) -> list[PredBlock]:
    """``split_equation_arrays``: each splittable predicted formula as its lines, each line's
    span found inside the formula's (the last one reaching over a suffix)."""
    out: list[PredBlock] = []
    for block in blocks:
        found = formula_rows(block.content) if block.category == "equation_isolated" else None
        if found is None:
            out.append(block)
            continue
        split, lines = found
        search = 0
        for k, (raw, line) in enumerate(lines):
            raw_line = strip_formula_tags(raw).strip()
            at = split.body.find(raw_line, search)
            at = search if at == -1 else at
            search = at + len(raw_line)
            start = block.start + split.body_start + at
            end = start + len(raw_line) - 1
            if k == len(lines) - 1 and split.suffix_end > 0:
                end = block.start + split.suffix_end - 1
            out.append(dataclasses.replace(block, content=_wrap(line), start=start, end=end))
    return out


def _logic_brace_blocks(text: str) -> tuple[str, bool]:
    pieces: list[str] = []
    cursor = 0
    changed = False
    while cursor < len(text):
        begin = text.find("\\begin{", cursor)
        if begin < 0:
            pieces.append(text[cursor:])
            break
        pieces.append(text[cursor:begin])
        start = MULTILINE_ENV.match(text[begin:])
        if not start:
            pieces.append(text[begin : begin + len("\\begin{")])
            cursor = begin + len("\\begin{")
            continue
        env = start.group("env")
        end_tag = f"\\end{{{env}}}"
        body_start = begin + start.end()
        end = find_env_end(text, env, body_start)
        if end < body_start:
            pieces.append(text[begin:])
            break
        body, body_changed = _logic_brace_blocks(text[body_start:end])
        after = text[end + len(end_tag) : end + len(end_tag) + 200]
        if env == "cases" and _cases_as_array(body, split_rows(body), after):
            pieces.append("\\left\\{ \\begin{array}{l} " + body.strip() + " \\end{array} \\right.")
            changed = True
        else:
            pieces.append(text[begin:body_start] + body + end_tag)
            changed = changed or body_changed
        cursor = end + len(end_tag)
    return "".join(pieces), changed


def logic_brace_normalised(formula: str) -> str:
    """``normalize_logic_brace_formula``: ``cases`` used for implications rewritten as a
    braced ``array`` (the formula itself when nothing changed)."""
    normalised, changed = _logic_brace_blocks(formula)
    return normalised if changed else formula
