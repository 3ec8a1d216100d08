"""Formula CDM against OmniDocBench v1.6's own CDM code (tests/omnidocbench_reference.py), run with
the same rasteriser (PyMuPDF: its ``magick`` call is replaced, `reference.same_rasteriser`).

Without TeX: the tokenizer (formula and tabular modes), the normaliser and the colouring against
its functions on the demo formulas, the predictions' formulas and generated ones; the LaTeX each
matched formula hands to CDM against its samples' (matrix variants, text taken as a formula).
With TeX Live: each formula's F1 against its ``cdm_metrics`` on demo pairs and generated
variants; the canary; a page's and the leaderboard's Formula CDM and Overall against its whole
run (slow). Without TeX Live, ``formula_cdm`` is absent and the notes say what to install.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import omnidocbench_reference as reference
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pytest_doceval.kinds.omnidocbench import cdm as cdm_module
from pytest_doceval.kinds.omnidocbench.cdm import CdmUnavailable, canary, cdm_tools, formula_cdm
from pytest_doceval.kinds.omnidocbench.cdm_colour import coloured, normalised_tokens
from pytest_doceval.kinds.omnidocbench.cdm_inputs import CdmInputs
from pytest_doceval.kinds.omnidocbench.cdm_match import (
    MIN_SAMPLES,
    RESIDUAL,
    TRIALS,
    cdm_score,
    ransac_inliers,
)
from pytest_doceval.kinds.omnidocbench.cdm_render import cropped, render
from pytest_doceval.kinds.omnidocbench.cdm_tokenize import tokenize_latex
from pytest_doceval.kinds.omnidocbench.page_match import match_page
from pytest_doceval.kinds.omnidocbench.scoring import cdm_page, leaderboard, score_page

try:
    reference.load()
except reference.Unavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(str(exc), allow_module_level=True)

TOOLS = cdm_tools()
needs_tex = pytest.mark.skipif(isinstance(TOOLS, str), reason=f"no CDM here: {TOOLS}")


def _theirs(module: str) -> Any:
    with warnings.catch_warnings():  # its modules' invalid escapes, compiled on import
        warnings.simplefilter("ignore")
        return importlib.import_module(module)


def _formulas() -> list[str]:
    """The demo's truth formulas and the display formulas of its predictions."""
    found = []
    for page in reference.demo_pages():
        found += [str(d["latex"]) for d in page["layout_dets"] if d.get("latex")]
        markdown = reference.demo_prediction(page) or ""
        found += re.findall(r"\$\$(.*?)\$\$", markdown, re.S) + re.findall(
            r"\\\[(.*?)\\\]", markdown, re.S
        )
    return found


EXTRA = [
    r"\frac{a}{b}+\sqrt[3]{x}-\binom{n}{k}",
    r"\binom n k + \frac 1 2",
    r"\hat \lambda \cdot \overline{AB} \mathbf{v}_{i}",
    r"\operatorname{sin} x + \operatorname*{lim}_{x\to 0} \operatorname{foo}(x)",
    r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} \begin{cases} x & y \\ z \end{cases}",
    r"\begin{array}{lc} a & b \\ c & d \end{array} \begin{aligned} x &= 1 \\ y &= 2 \end{aligned}",
    r"f'(x) = x'' \rule{1pt}{2pt} \phantom{x} \mathrm{d} x \text{ for all } x",
    r"\xrightarrow[a]{b} \xrightarrow{c} \left( \frac{1}{2} \right] \big( x \big)",
    r"\text{面积} = \pi r^{2}，\mathrm{周长}",
    r"a \% b \ldots c \cdots \sin x \log y \mod 3",
    r"\begin{tabular}{|l|c|} a & b \\ \hline 1 & 2 \end{tabular}",
    r"\underbrace{x+y}_{n} \stackrel{a}{=} b \overset{c}{\to} d",
    r"{\rm d}x \; \displaystyle \sum_{i=1}^{n} \left\{ x \right\}",
    r"x^{\prime\prime} \vec{v} \tilde{\mathbf{x}} \widehat{\mathcal{A}}",
    r"\begin{smallmatrix} a & b \end{smallmatrix} \begin{split} a &= b \\ &= c \end{split}",
    r"x_ {1}^ 2 '", r"\frac{1}", r"\left( x", "", r"\\", r"\begin{array}{}a\end{array}",
]  # fmt: skip


def test_the_tokenizer_equals_omnidocbenchs() -> None:
    theirs = _theirs("src.metrics.cdm.modules.tokenize_latex.tokenize_latex").tokenize_latex
    for formula in [*_formulas(), *EXTRA]:
        assert tokenize_latex(formula) == theirs(formula), formula


def test_normalising_and_colouring_equal_omnidocbenchs() -> None:
    processor = _theirs("src.metrics.cdm.modules.latex_processor")
    theirs_tokens = _theirs("src.metrics.cdm.modules.tokenize_latex.tokenize_latex").tokenize_latex
    for formula in [*_formulas(), *EXTRA]:
        done, tokens = theirs_tokens(formula)
        tokens = tokens if done and tokens else formula
        try:
            expected = processor.normalize_latex(tokens)
        except Exception as exc:  # its own failure: ours must fail too
            with pytest.raises(type(exc)):
                normalised_tokens(tokens)
            continue
        assert normalised_tokens(tokens) == expected, formula
        split, listed, i = expected.strip().split(" "), [], 0
        try:
            while i < len(split):
                split, i, listed = processor.token_add_color_RGB(split, i, listed)
        except Exception as exc:
            with pytest.raises(type(exc)):
                coloured(expected)
            continue
        assert coloured(expected) == (" ".join(split), listed), formula


ATOMS = ["x", "y", "1", "2", r"\alpha", r"\beta", "+", "-", "=", "(", ")", r"\cdot", r"\infty"]


@st.composite
def formulas(draw: Any, depth: int = 0) -> str:
    """Random LaTeX from the constructs the tokenizer treats specially."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                ["atom", "atom", "frac", "sqrt", "script", "font", "accent", "env", "text"]
            )
        )
        inner = (
            draw(formulas(depth + 1))
            if depth < 2 and kind not in ("atom", "text")
            else draw(st.sampled_from(ATOMS))
        )
        parts.append(
            {
                "atom": inner,
                "frac": rf"\frac{{{inner}}}{{{draw(st.sampled_from(ATOMS))}}}",
                "sqrt": rf"\sqrt[{draw(st.sampled_from(ATOMS))}]{{{inner}}}",
                "script": f"{draw(st.sampled_from(ATOMS))}^{{{inner}}}_{{{draw(st.sampled_from(ATOMS))}}}",  # noqa: E501
                "font": rf"\mathbf{{{inner}}}",
                "accent": rf"\hat{{{inner}}}",
                "env": rf"\begin{{array}}{{ll}} {inner} & x \\ y & {inner} \end{{array}}",
                "text": r"\text{for all } " + inner,
            }[kind]
        )
    return " ".join(parts)


@settings(deadline=None, max_examples=120)
@given(formulas())
def test_generated_formulas_tokenize_as_omnidocbench(formula: str) -> None:
    theirs = _theirs("src.metrics.cdm.modules.tokenize_latex.tokenize_latex").tokenize_latex
    assert tokenize_latex(formula) == theirs(formula)
    processor = _theirs("src.metrics.cdm.modules.latex_processor")
    tokens = tokenize_latex(formula)[1] or formula
    assert normalised_tokens(tokens) == processor.normalize_latex(tokens)


def test_the_latex_cdm_renders_is_omnidocbenchs() -> None:
    """Each matched formula's CDM input equals its sample's (delimiters stripped, matrix
    variants, text taken as a formula), page by page in row order."""
    cal_metric = _theirs("src.metrics.cal_metric")
    pages = reference.demo_pages()
    predictions = {reference.image_name(p): reference.demo_prediction(p) or "" for p in pages}
    predictions["matrix.jpg"] = "$$\\left[\\begin{array}{ll}{{1}}&{2}\\\\3&4\\end{array}\\right]$$"
    pages = [*pages, {
        "layout_dets": [{"anno_id": 1, "category_type": "equation_isolated", "order": 1,
                         "latex": "\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}"}],
        "extra": {"relation": []},
        "page_info": {"image_path": "matrix.jpg", "page_attribute": {}},
    }]  # fmt: skip
    run = reference.run(pages, predictions, tables=False)
    samples: dict[str, list[dict[str, Any]]] = {}
    for sample in run.samples["display_formula"]:
        samples.setdefault(str(sample["img_id"]), []).append(sample)
    for page in pages:
        name = reference.image_name(page)
        ours = [row.cdm for row in match_page(page, predictions[name]).formulas]
        expected = []
        for sample in samples.get(name, []):
            strip = cal_metric._strip_cdm_math_wrappers
            alt = sample.get("pred_cdm_alt", "")
            alt = strip(alt.split("```latex")[-1].split("```")[0]) if alt else ""
            expected.append((
                strip(sample.get("gt_cdm", sample["gt"])),
                strip(sample.get("pred_cdm", sample["pred"]).split("```latex")[-1].split("```")[0]),
                alt,
                "pred_cdm" in sample,
            ))  # fmt: skip
        assert [(c.gt, c.pred, c.pred_alt, c.text_as_formula) for c in ours] == expected, name
    assert any(
        c.pred_alt
        for p in pages
        for c in [r.cdm for r in match_page(p, predictions[reference.image_name(p)]).formulas]
    )


# -- with TeX Live --------------------------------------------------------------------------


def _reference_f1(gt: str, pred: str) -> float:
    reference.same_rasteriser()
    cdm = _theirs("src.metrics.cdm.cdm")
    with tempfile.TemporaryDirectory() as folder:
        return float(cdm.cdm_metrics(gt, pred, save_vis=False, tmp_dir=folder)["F1_score"])


def _our_f1(gt: str, pred: str) -> float:
    assert not isinstance(TOOLS, str)
    found = cdm_score(render(gt, TOOLS.pdflatex), render(pred, TOOLS.pdflatex))
    return found.f1 if found else 0.0


def _strip(latex: str) -> str:
    return latex.strip().strip("$").replace("\\[", "").replace("\\]", "").strip()


CDM_PAIRS = [
    (r"\frac{a}{b}+c", r"\frac{a}{b}+c"),
    (r"\frac{a}{b}+c", r"\frac{a}{d}+c"),
    (r"x^{2}+y^{2}=r^{2}", r"x^2 + y^2 = r"),
    (
        r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
        r"\left(\begin{array}{ll}1&2\\3&4\end{array}\right)",
    ),
    (r"\text{面积}=\pi r^{2}", r"\text{面积}=\pi r"),
    (r"\sum_{i=1}^{n} i", r"\frac{1"),  # the prediction does not compile: 0
    (r"\alpha \leq \beta", r"\alpha \le \beta"),  # tokens that print alike
    (r"a+b", ""),  # nothing predicted
]


@needs_tex
def test_cdm_of_formula_pairs_equals_omnidocbenchs() -> None:
    formulas = [_strip(f) for f in _formulas()]
    pairs = [*CDM_PAIRS, *[(formulas[i], formulas[i + 1]) for i in range(0, 8, 2)]]
    for gt, pred in pairs:
        assert _our_f1(gt, pred) == _reference_f1(gt, pred), (gt, pred)


@st.composite
def _point_pairs(draw: Any) -> tuple[Any, Any]:
    """Token centres and their matches on a coarse grid: a scaled, shifted copy with outliers,
    or two halves each moved its own way with a little noise, so that trials tie on the inlier
    count and the residual decides (or ties too, where the same pair is drawn twice)."""
    count = draw(st.integers(3, 40))
    grid = st.integers(0, 12).map(lambda v: v * 25.0)
    src = np.array([[draw(grid), draw(grid)] for _ in range(count)])
    scales = st.sampled_from([1.0, 0.5, 1.25, 2.0])
    dst = draw(scales) * src + np.array([draw(grid), draw(grid)])
    if draw(st.booleans()):
        half = slice(0, count // 2)
        dst[half] = draw(scales) * src[half] + np.array([draw(grid), draw(grid)])
        noise = st.integers(-3, 3).map(float)
        dst += np.array([[draw(noise), draw(noise)] for _ in range(count)])
    else:
        for k in draw(st.lists(st.integers(0, count - 1), max_size=count)):
            dst[k] = [draw(grid), draw(grid)]
    return src, dst


@given(_point_pairs())
@settings(max_examples=60, deadline=None)
def test_ransac_equals_omnidocbenchs(points: tuple[Any, Any]) -> None:
    """Every trial fitted at once gives its loop's inliers, ties broken as there."""
    src, dst = points
    ransac = _theirs("src.metrics.cdm.modules.ransac").ransac
    transform = _theirs("src.metrics.cdm.modules.visual_matcher").SimpleAffineTransform
    _, theirs = ransac((src, dst), transform, MIN_SAMPLES, RESIDUAL, max_trials=TRIALS)
    ours = ransac_inliers(src, dst)
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert ours.tolist() == theirs.tolist()


@given(
    st.integers(1, 40),
    st.integers(1, 40),
    st.lists(
        st.tuples(st.integers(0, 39), st.integers(0, 39), st.sampled_from([0, 120, 250, 254])),
        max_size=6,
    ),
    st.sampled_from([1, 8]),  # with 0 its crop of one pixel is empty and cannot be saved
)
@settings(max_examples=80, deadline=None)
def test_cropping_equals_omnidocbenchs(
    height: int, width: int, marks: list[tuple[int, int, int]], pad: int
) -> None:
    """Pillow's L image decides what is white (254 in one channel still is): the crop is its
    crop_image's, which reads and rewrites a PNG."""
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    for y, x, value in marks:
        image[y % height, x % width, (y + x) % 3] = value
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.png"
        Image.fromarray(image).save(path)
        assert _theirs("src.metrics.cdm.modules.latex2bbox_color").crop_image(str(path), pad)
        with Image.open(path) as done:
            theirs = np.asarray(done.convert("RGB"))
    assert np.array_equal(cropped(image, pad), theirs)


@needs_tex
def test_a_truth_that_does_not_compile_scores_nothing_as_omnidocbench() -> None:
    assert not isinstance(TOOLS, str)
    result = formula_cdm(CdmInputs(r"\frac{1", "x", "", False), TOOLS.pdflatex)
    assert result.score == 0.0 and not result.truth_compiled and result.prediction_compiled
    assert _reference_f1(r"\frac{1", "x") == 0.0


@needs_tex
def test_the_canary_passes_here_and_fails_loudly_on_a_broken_tex(tmp_path: Path) -> None:
    assert not isinstance(TOOLS, str)
    assert canary(TOOLS.pdflatex) == "ok"
    broken = tmp_path / "pdflatex"
    broken.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    broken.chmod(0o755)
    with pytest.raises(CdmUnavailable, match=r"did not compile .* formula_cdm would be 0"):
        canary(str(broken))


def test_without_tex_cdm_is_absent_and_the_notes_name_the_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_omnidocbench_suite import build, write

    monkeypatch.setattr(shutil, "which", lambda name: None)
    cdm_module.cdm_tools.cache_clear()
    try:
        reason = cdm_tools()
        assert isinstance(reason, str) and "texlive-latex-extra" in reason
        page = reference.demo_pages()[0]
        file = write(tmp_path / "odb", [page])
        stem = Path(reference.image_name(page)).stem
        (tmp_path / "odb" / "outputs" / "saved" / f"{stem}.md").write_text("x", encoding="utf-8")
        suite = build(file)
        assert "cdm=off;" in suite.scoring_id
        (note,) = [n for n in suite.notes() if n.startswith("formula_cdm and overall")]
        assert "apt-get install" in note and "latex-cjk-chinese" in note
        ref = suite.case_refs()[0]
        assert not any(n.startswith("cdm") for n in suite.plan(ref).results)  # no CDM stage
    finally:
        cdm_module.cdm_tools.cache_clear()


@needs_tex
@pytest.mark.slow
def test_formula_cdm_and_overall_of_the_demo_pages_equal_omnidocbenchs() -> None:
    """The whole leaderboard row: each page's Formula CDM, the leaderboard's, and Overall."""
    pages = reference.demo_pages()
    predictions = {reference.image_name(p): reference.demo_prediction(p) or "" for p in pages}
    theirs = reference.run(pages, predictions, cdm=True)
    scores = []
    for page in pages:
        name = reference.image_name(page)
        score = score_page(page, predictions[name])
        shares = [cdm_module.page_cdm(page, part, 2, "ok", predictions[name]) for part in (0, 1)]
        rows = cdm_module.read_page_cdm(shares)
        value = cdm_page([r.score for r in rows], score.formula_page)
        metrics = dict(score.metrics)
        if value is not None:
            metrics["formula_cdm"] = value
        expected = theirs.pages.get(name, {}).get("formula_cdm")
        assert (value is None) == (expected is None), name
        if value is not None:
            assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (name, value, expected)
        scores.append(type(score)(metrics, score.counts, (), ()))
    board = leaderboard(scores)
    for metric in ("formula_cdm", "overall", "text_edit", "table_teds"):
        assert math.isclose(board[metric], theirs.leaderboard[metric], rel_tol=0, abs_tol=1e-9), (
            metric,
            board[metric],
            theirs.leaderboard[metric],
        )
    print(json.dumps({m: board[m] for m in ("overall", "text_edit", "formula_cdm", "table_teds")}))
