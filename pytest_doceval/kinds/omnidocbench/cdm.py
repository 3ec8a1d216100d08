"""Formula CDM as OmniDocBench v1.6 scores it (``CDM`` in its ``configs/end2end.yaml``): per
matched display formula, the better of the prediction's and its alternative's F1 (`cdm_match`)
against the truth, each rendered with its tokens coloured (`cdm_render`) by TeX Live's
pdflatex and rasterised by PyMuPDF.

* `cdm_tools`: the tools this machine has (pdflatex and its version, the LaTeX packages the
  templates load, PyMuPDF's version), or why CDM cannot run, naming the Debian packages.
* `canary`: run once before any page (an engine stage every page's CDM needs): formulas of
  letters and digits scored against themselves must give 1.0 with every token's colour found
  in the image, in Latin and in Chinese; else the suite's CDM fails loudly with the cause,
  rather than scoring every formula 0.
* `page_cdm`: the CDM stage's call for one page (its matched formulas' scores, as JSON text).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import PurePath
from typing import Any, Final

from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds.omnidocbench.cdm_inputs import CdmInputs
from pytest_doceval.kinds.omnidocbench.cdm_match import cdm_score
from pytest_doceval.kinds.omnidocbench.cdm_render import Rendered, render

CDM_REVISION: Final = "cdm-r1"
# The files the templates load, and the Debian packages that ship them.
REQUIRED_FILES: Final = {
    "amsmath.sty": "texlive-latex-base",
    "amssymb.sty": "texlive-base",
    "xcolor.sty": "texlive-latex-recommended",
    "geometry.sty": "texlive-latex-recommended",
    "booktabs.sty": "texlive-latex-recommended",
    "upgreek.sty": "texlive-latex-extra",
    "multirow.sty": "texlive-latex-extra",
    "CJK.sty": "latex-cjk-common",
    "c70gkai.fd": "latex-cjk-chinese-arphic-gkai00mp",
}
DEBIAN_PACKAGES: Final = (
    "texlive-latex-base texlive-latex-recommended texlive-latex-extra "
    "texlive-fonts-recommended latex-cjk-chinese latex-cjk-chinese-arphic-gkai00mp"
)
# Letters and digits only: every token prints solid pixels of its colour (a thin stroke --
# a minus, a fraction bar -- may lose its colour to anti-aliasing, in OmniDocBench's CDM too).
CANARY_FORMULAS: Final = (
    r"x^{2} y_{1} abc ABC 789 \alpha \beta \gamma \Omega",
    r"\text{面积} S_{k} Q",
)


class CdmUnavailable(DocevalError):
    """CDM cannot run on this machine (the cause names what to install)."""


@dataclass(frozen=True)
class CdmTools:
    """The tools CDM runs with here, as the scorer's identity names them."""

    pdflatex: str
    tex: str  # pdflatex's version line
    rasteriser: str  # "PyMuPDF <version>"

    def identity(self) -> str:
        """Short and stable: the TeX Live year and pdfTeX build, PyMuPDF's version."""
        year = re.search(r"TeX Live (\d{4})", self.tex)
        build = re.search(r"-(\d+\.\d+\.\d+)", self.tex)
        tex = f"texlive{year.group(1) if year else '?'}-pdftex{build.group(1) if build else '?'}"
        return f"{tex}+{self.rasteriser.replace(' ', '').lower()}"


@lru_cache(maxsize=1)
def cdm_tools() -> CdmTools | str:
    """The tools, or the reason CDM cannot run (naming the Debian packages to install)."""
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        return f"TeX Live's pdflatex is not installed (Debian: apt-get install {DEBIAN_PACKAGES})"
    try:
        done = subprocess.run(
            [pdflatex, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
        version = (done.stdout.splitlines() or [""])[0].strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"pdflatex ({pdflatex}) does not run: {exc}"
    kpsewhich = shutil.which("kpsewhich")
    found = _found(kpsewhich, list(REQUIRED_FILES)) if kpsewhich else set()
    missing = [f for f in REQUIRED_FILES if f not in found]
    if missing:
        packages = sorted({REQUIRED_FILES[f] for f in missing})
        return (
            f"TeX Live lacks {', '.join(missing)}, which CDM's templates load (Debian: apt-get "
            f"install {' '.join(packages)})"
        )
    # The version from the package's metadata: importing PyMuPDF here would load its layout
    # models where pymupdf_layout is installed (over a second), on warm runs too.
    return CdmTools(pdflatex, version, f"PyMuPDF {metadata.version('pymupdf')}")


def _found(kpsewhich: str, names: list[str]) -> set[str]:
    """Which of `names` TeX Live finds: one kpsewhich call, which prints a path per file found."""
    try:
        done = subprocess.run(
            [kpsewhich, *names], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    return {PurePath(line.strip()).name for line in done.stdout.splitlines() if line.strip()}


def _tools() -> CdmTools:
    tools = cdm_tools()
    if isinstance(tools, str):
        raise CdmUnavailable(f"formula_cdm cannot be computed: {tools}")
    return tools


@lru_cache(maxsize=512)
def _rendered(latex: str, pdflatex: str) -> Rendered:
    """A formula's render, once per process (a truth formula is rendered for every system)."""
    return render(latex, pdflatex)


@dataclass(frozen=True)
class FormulaCdm:
    """One formula's CDM: the score, whether the alternative prediction gave it, and whether
    each side compiled (a formula TeX cannot compile scores as OmniDocBench scores it: 0)."""

    score: float
    alternative: bool
    truth_compiled: bool
    prediction_compiled: bool


def formula_cdm(inputs: CdmInputs, pdflatex: str) -> FormulaCdm:
    """``_process_single_cdm_sample``: the better of the prediction and its alternative."""
    truth = _rendered(inputs.gt, pdflatex)
    predicted = _rendered(inputs.pred, pdflatex)
    found = cdm_score(truth, predicted)
    score, alternative = (found.f1 if found else 0.0), False
    if inputs.pred_alt:
        other = cdm_score(truth, _rendered(inputs.pred_alt, pdflatex))
        if other is not None and other.f1 > score:
            score, alternative = other.f1, True
    return FormulaCdm(score, alternative, truth.compiled, predicted.compiled)


def canary(pdflatex: str) -> str:
    """Every canary formula scored against itself: 1.0 with every coloured token found.
    "ok", or CdmUnavailable naming what went wrong."""
    for latex in CANARY_FORMULAS:
        rendered = render(latex, pdflatex)
        if not rendered.compiled:
            raise CdmUnavailable(
                f"CDM canary: pdflatex ({pdflatex}) did not compile {latex!r}: formula_cdm would "
                f"be 0 for every formula (Debian: apt-get install {DEBIAN_PACKAGES})"
            )
        lost = [t for t, b in zip(rendered.tokens, rendered.boxes, strict=False) if not b]
        score = cdm_score(rendered, rendered)
        if lost or score is None or score.f1 != 1.0:
            raise CdmUnavailable(
                f"CDM canary: {latex!r} scored {score.f1 if score else 0} against itself with "
                f"{len(lost)} of {len(rendered.tokens)} token colours not found in its image "
                f"({', '.join(lost[:5])}): rendering or rasterising is broken here"
            )
    return "ok"


def page_cdm(page: Mapping[str, Any], part: int, parts: int, _canary: str, prediction: str) -> str:
    """The CDM stage's call for one share of a page: its display formulas matched
    (`page_match`) and the `FormulaCdm` of each formula whose row index is `part` modulo
    `parts`, as JSON text ``[[index, cdm], ...]`` (a page's formulas render in several stages,
    side by side; `_canary`: the canary stage's output, needed first so that a broken TeX
    fails every page loudly)."""
    from pytest_doceval.kinds.omnidocbench.page_match import match_page

    pdflatex = _tools().pdflatex
    rows = match_page(page, prediction).formulas
    mine = [(i, row) for i, row in enumerate(rows) if i % parts == part]
    return json.dumps([[i, asdict(formula_cdm(row.cdm, pdflatex))] for i, row in mine])


def read_page_cdm(shares: Sequence[str]) -> list[FormulaCdm]:
    """A page's `FormulaCdm`s in row order from its CDM stages' outputs."""
    found = {int(i): FormulaCdm(**row) for text in shares for i, row in json.loads(text)}
    if sorted(found) != list(range(len(found))):
        raise DocevalError(f"the CDM stages scored rows {sorted(found)}, not every row once")
    return [found[i] for i in range(len(found))]


def stage_identity() -> Mapping[str, str]:
    """What the CDM stage's output depends on beyond its formulas."""
    tools = _tools()
    return {"cdm": CDM_REVISION, "tools": tools.identity()}
