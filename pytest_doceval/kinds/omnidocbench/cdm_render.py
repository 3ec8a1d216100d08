"""A formula rendered with each token in its own colour and each token's box read back, as
OmniDocBench v1.6's CDM renders it (``latex2bbox_color.py``), rasterised with PyMuPDF.

1. Chinese text is wrapped in ``\\text{..}`` (and set in the CJK ``gkai`` font); ``\\%`` is kept
   through tokenising; the tokens (`cdm_tokenize`; the LaTeX as written where there are none)
   are normalised and coloured (`cdm_colour`).
2. pdflatex compiles the formula in a ``displaymath`` on an A5 landscape page (A4 over 600
   tokens, A3 over 1,300), retried on larger papers down to A1 while the log reports an
   overfull box or more than one page.
3. The PDF is rasterised at 200 dpi (every page, stacked, when it has several) -- OmniDocBench
   calls ImageMagick 7's ``magick`` here, which Debian does not ship (its ``convert`` is
   ImageMagick 6: no image, every score 0); PyMuPDF renders the same PDF, on white -- cropped to
   its ink with 8 pixels to spare, and each colour's bounding box read from the pixels (a pixel
   counts for a token when each channel is within 1 of the token's colour, a multiple of 15).

A formula that does not compile has no boxes: as in OmniDocBench, the truth then scores nothing
and a prediction scores 0. Compiles and tokenising are bounded (30 s each, as OmniDocBench's).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np
from numpy.typing import NDArray

from pytest_doceval.kinds.omnidocbench.cdm_colour import coloured, normalised_tokens
from pytest_doceval.kinds.omnidocbench.cdm_tokenize import tokenize_latex

STEP_TIMEOUT_S: Final = 30.0  # pdflatex and tokenising, each (OmniDocBench's)
DPI: Final = 200
GAP: Final = 15  # colour step
CJK_FONT: Final = "gkai"
_PREAMBLE: Final = r"""
\documentclass[12pt]{article}
\usepackage[landscape]{geometry}
\usepackage{geometry}
\geometry{a<PaperSize>paper,scale=0.98}
\pagestyle{empty}
\usepackage{booktabs}
"""
_COLOUR_FIX: Final = r"""\usepackage{xcolor}
\begin{document}
\makeatletter
\renewcommand*{\@textcolor}[3]{%%
  \protect\leavevmode
  \begingroup
    \color#1{#2}#3%%
  \endgroup
}
\makeatother
"""
_MATH: Final = "\\begin{displaymath}\n%s\n\\end{displaymath}\n"
TABULAR_TEMPLATE: Final = (
    _PREAMBLE + "\\usepackage{multirow}\n\\usepackage{amssymb}\n\\usepackage{upgreek}\n"
    "\\usepackage{amsmath}\n" + _COLOUR_FIX + _MATH + "\\end{document}\n"
)
FORMULA_TEMPLATE: Final = (
    _PREAMBLE
    + "\\usepackage{amsmath}\n\\usepackage{upgreek}\n\\usepackage{amssymb}\n"
    + _COLOUR_FIX
    + _MATH
    + "\\end{document}\n"
)
CJK_TEMPLATE: Final = (
    _PREAMBLE + "\\usepackage{amsmath}\n\\usepackage{upgreek}\n\\usepackage{CJK}\n"
    "\\usepackage{amssymb}\n"
    + _COLOUR_FIX
    + "\\begin{CJK}{UTF8}{<CJKFont>}\n"
    + _MATH
    + "\\end{CJK}\n\\end{document}\n"
)
_CHINESE: Final = re.compile(r"[\u4e00-\u9fff]")
_CJK_RUN: Final = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]+")
_CJK_MATHRM: Final = re.compile(r"\\mathrm\s*\{([^{}]*[\u4e00-\u9fff\u3400-\u4dbf][^{}]*)\}")
_CJK_TEXT: Final = re.compile(r"\\text\s*\{([^{}]*[\u4e00-\u9fff\u3400-\u4dbf][^{}]*)\}")


@lru_cache(maxsize=1)
def palette() -> tuple[tuple[int, int, int], ...]:
    """``gen_color_list(5800, 15)``: colour k (from 1) has channels k's base-18 digits x 15."""
    levels = 255 // GAP + 1
    return tuple(
        (k // levels**2 * GAP, k % levels**2 // levels * GAP, k % levels * GAP)
        for k in range(1, 5801)
    )


@dataclass(frozen=True)
class Rendered:
    """One formula's tokens and their boxes ([] for a token that printed nothing), and the
    image's size; `compiled` False where pdflatex made no PDF (nothing to score)."""

    tokens: tuple[str, ...]
    boxes: tuple[tuple[int, int, int, int] | None, ...]
    size: tuple[int, int]  # width, height
    compiled: bool
    latex: str  # what pdflatex compiled (for a note)


NOT_RENDERED = Rendered((), (), (0, 0), False, "")


def _wrap_chinese(latex: str) -> str:
    """``wrap_chinese_in_text``: runs of Chinese in ``\\text{..}`` unless already alone in one."""
    latex = re.sub(r"\\text\s*\{", r"\\text{", latex)

    def wrap(match: re.Match[str]) -> str:
        before, after = latex[: match.start()], latex[match.end() :]
        if re.search(r"\\text\s*\{$", before) and re.match(r"\s*}", after):
            return match.group(0)
        return f"\\text{{{match.group(0)}}}"

    return _CJK_RUN.sub(wrap, latex)


def _chinese_per_character(latex: str) -> str:
    """CJK groups as ``\\text { .. }`` (each glyph its own token), never ``\\mathrm``."""
    if "\\mathrm" in latex:
        latex = _CJK_MATHRM.sub(r"\\text{\1}", latex)
    if "\\text" not in latex:
        return latex

    def spaced(match: re.Match[str]) -> str:
        content = match.group(1).strip()
        return r"\text { " + content + " }" if content else match.group(0)

    return _CJK_TEXT.sub(spaced, latex)


def _tokens(latex: str) -> str:
    """Step 1's tokenising, bounded: past the deadline, the LaTeX as written."""
    started = time.monotonic()
    done, tokens = tokenize_latex(latex)
    if time.monotonic() - started > STEP_TIMEOUT_S:
        return latex
    return tokens if done and tokens else latex


@dataclass(frozen=True)
class Prepared:
    """Step 1's result: the template, the coloured LaTeX, the coloured tokens in colour order,
    and how many tokens the normalised formula had (the colours read back)."""

    template: str
    body: str
    tokens: list[str]
    colours: int


def prepared(latex: str) -> Prepared:
    """Step 1 of the module docstring."""
    if "tabular" in latex:
        template = TABULAR_TEMPLATE
    elif _CHINESE.search(latex):
        template = CJK_TEMPLATE.replace("<CJKFont>", CJK_FONT)
        latex = latex.replace("，", ", ").replace("：", ": ").replace("；", "; ")
        latex = _wrap_chinese(latex)
    else:
        template = FORMULA_TEMPLATE
    latex = latex.replace("\n", " ").replace("\\%", "<PERCENTAGETOKEN>")
    tokens = _tokens(latex)
    if _CHINESE.search(tokens):
        tokens = _chinese_per_character(tokens)
    tokens = tokens.replace("< P E R C E N T A G E T O K E N >", "\\%")
    normalised = normalised_tokens(tokens)
    colours = min(len(normalised.strip().split(" ")), len(palette()))
    body, listed = coloured(normalised)
    for k, (r, g, b) in enumerate(palette()[:colours]):
        body = body.replace(f"<color_{k}>", f"{r},{g},{b}")
    return Prepared(template, body, listed, colours)


def _log_facts(log: Path) -> tuple[int | None, bool]:
    """``_parse_pdflatex_log``: pages written, and whether a box overflowed."""
    pages, overfull = None, False
    try:
        text = log.read_text("utf-8", errors="ignore")
    except OSError:
        return None, False
    for line in text.splitlines():
        if pages is None and "Output written on" in line:
            m = re.search(r"Output written on .*\((\d+) page", line)
            pages = int(m.group(1)) if m else None
        overfull = overfull or "Overfull \\hbox" in line or "Overfull \\vbox" in line
    return pages, overfull


@dataclass(frozen=True)
class _Compiled:
    pdf: bytes | None  # None: pdflatex made none
    pages: int | None  # as its log says (None: it does not say)
    overfull: bool


def _compile(pdflatex: str, document: str, folder: Path) -> _Compiled:
    """One pdflatex run (``run_cmd``), bounded; its PDF read and its files removed."""
    tex = folder / "formula.tex"
    tex.write_text(document + "\n", encoding="utf-8")
    with contextlib.suppress(subprocess.TimeoutExpired):  # killed; its output read as is
        subprocess.run(
            [pdflatex, "-interaction=nonstopmode", f"-output-directory={folder}", str(tex)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            timeout=STEP_TIMEOUT_S,
            check=False,
            cwd=folder,
        )
    pdf = folder / "formula.pdf"
    pages, overfull = _log_facts(folder / "formula.log")
    data = pdf.read_bytes() if pdf.is_file() else None
    for name in ("formula.pdf", "formula.log", "formula.aux"):
        (folder / name).unlink(missing_ok=True)
    return _Compiled(data, pages, overfull)


def compiled_pdf(pdflatex: str, template: str, body: str, tokens: int) -> _Compiled | None:
    """Step 2: the PDF on the first paper without an overfull box or a second page (A1 at
    the most), or None when a run makes no PDF."""
    guess = 3 if tokens > 1300 else 4 if tokens > 600 else 5
    papers = list(range(guess, 0, -1))
    with tempfile.TemporaryDirectory(prefix="doceval-cdm-") as tmp:
        for paper in papers:
            run = _compile(pdflatex, template.replace("<PaperSize>", str(paper)) % body, Path(tmp))
            if run.pdf is None:
                return None
            spilled = run.overfull or (run.pages is not None and run.pages > 1)
            if not spilled or paper == papers[-1]:
                return run
    return None


def rasterised(pdf: bytes, all_pages: bool) -> NDArray[np.uint8] | None:
    """Step 3's image: the first page, or every page stacked, at 200 dpi on white (RGB)."""
    import pymupdf

    try:
        with pymupdf.open(stream=pdf, filetype="pdf") as doc:  # type: ignore[no-untyped-call]
            pages = [doc[i] for i in range(len(doc) if all_pages else min(1, len(doc)))]
            images = []
            for page in pages:
                pix = page.get_pixmap(dpi=DPI, alpha=False)
                images.append(
                    np.frombuffer(pix.samples, dtype=np.uint8).reshape(
                        pix.height, pix.width, pix.n
                    )[:, :, :3]
                )
    except Exception:  # PyMuPDF raises its own and runtime errors on a broken PDF
        return None
    if not images:
        return None
    width = max(image.shape[1] for image in images)
    out = np.full((sum(image.shape[0] for image in images), width, 3), 255, dtype=np.uint8)
    top = 0
    for image in images:
        out[top : top + image.shape[0], : image.shape[1]] = image
        top += image.shape[0]
    return out


def cropped(image: NDArray[np.uint8], pad: int = 8) -> NDArray[np.uint8]:
    """``crop_image``: to the non-white pixels of its grey image (Pillow's ``L``: a pixel
    light enough rounds to white), with `pad` to spare; 10x10 when all is white."""
    # Only a pixel with a channel below 255 can be grey below 255 (pure white is 255 in L), and
    # a formula covers little of its page: the grey image is made within those pixels' box.
    # (A comparison and `any` over whole rows: numpy's `min` over the 3 channels is 40x slower.)
    coloured = image != 255
    rows = np.flatnonzero(coloured.reshape(coloured.shape[0], -1).any(axis=1))
    columns = np.flatnonzero(coloured.any(axis=0).any(axis=1))
    ys = xs = np.empty(0, dtype=np.intp)
    if len(rows):
        top, left = int(rows[0]), int(columns[0])
        box = image[top : int(rows[-1]) + 1, left : int(columns[-1]) + 1]
        r, g, b = (box[:, :, c].astype(np.uint32) for c in range(3))
        grey = (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16
        ys, xs = np.nonzero(grey != 255)
        ys, xs = ys + top, xs + left
    if len(ys) == 0:
        x0, y0, x1, y1 = 0, 0, 10, 10
    else:
        x0, y0, x1, y1 = int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())
    height, width = image.shape[:2]
    return image[max(0, y0 - pad) : min(height, y1 + pad), max(0, x0 - pad) : min(width, x1 + pad)]


def colour_boxes(
    image: NDArray[np.uint8], count: int, tolerance: int = 1
) -> list[tuple[int, int, int, int] | None]:
    """``extrac_bbox_from_color_image_scan`` (its fast path for this palette): each of the
    first `count` colours' box, one pixel out on every side, or None."""
    height, width = image.shape[:2]
    channels = [image[:, :, c].astype(np.int16) for c in range(3)]
    levels = [np.clip(((c + GAP // 2) // GAP) * GAP, 0, 255) for c in channels]
    near = [np.abs(c - q) <= tolerance for c, q in zip(channels, levels, strict=True)]
    white = (
        (channels[0] >= 255 - tolerance)
        & (channels[1] >= 255 - tolerance)
        & (channels[2] >= 255 - tolerance)
    )
    mask = ~white & near[0] & near[1] & near[2]
    index = (
        (levels[0] // GAP).astype(np.uint16) * 324
        + (levels[1] // GAP).astype(np.uint16) * 18
        + (levels[2] // GAP).astype(np.uint16)
    )
    mask &= (index >= 1) & (index <= count)
    out: list[tuple[int, int, int, int] | None] = [None] * count
    if not mask.any():
        return out
    ys, xs = np.nonzero(mask)
    token = (index[ys, xs] - 1).astype(np.int32)
    low_x, low_y = np.full(count, width, dtype=np.int32), np.full(count, height, dtype=np.int32)
    high_x, high_y = np.full(count, -1, dtype=np.int32), np.full(count, -1, dtype=np.int32)
    np.minimum.at(low_x, token, xs)
    np.minimum.at(low_y, token, ys)
    np.maximum.at(high_x, token, xs)
    np.maximum.at(high_y, token, ys)
    for k in range(count):
        if high_x[k] >= 0:
            out[k] = (int(low_x[k] - 1), int(low_y[k] - 1), int(high_x[k] + 1), int(high_y[k] + 1))
    return out


def render(latex: str, pdflatex: str) -> Rendered:
    """The formula's tokens and boxes (module docstring). A formula the normaliser cannot
    read, or that does not compile, is not rendered (OmniDocBench's skipped render)."""
    try:
        ready = prepared(latex)
    except Exception:  # OmniDocBench's "Preprocess latex failed": no boxes
        return NOT_RENDERED
    run = compiled_pdf(pdflatex, ready.template, ready.body, len(ready.tokens))
    image = None
    if run is not None and run.pdf is not None:
        image = rasterised(run.pdf, all_pages=run.pages is None or run.pages > 1)
    if image is None:
        return Rendered((), (), (0, 0), False, ready.body)
    image = cropped(image)
    boxes = colour_boxes(image, ready.colours)
    height, width = image.shape[:2]
    return Rendered(
        tuple(ready.tokens), tuple(boxes[: len(ready.tokens)]), (width, height), True, ready.body
    )
