"""The pages of an ``omnidocbench`` suite: its annotation file, page images and predictions.

The annotation file is OmniDocBench's own JSON: a list of pages, each an object with
``layout_dets`` (its blocks) and ``page_info`` (``image_path``, ``page_attribute``). Only that
outer shape is checked when the suite loads (a file not in it is a load error naming the file and
the first page that breaks it); what is inside a block is `scoring.score_page`'s business, and a
bad block is an error of that page's tests only.

A page is named by its image's file name (``page_info.image_path``, folders dropped, as
OmniDocBench names its pages); its case id is that name without the extension. A precomputed
system's prediction is found as OmniDocBench's ``End2EndDataset`` finds it, trying in order
``<stem>.md``, ``<stem without .pdf>.mmd``, ``<stem without .pdf>.md`` and ``<image name>.md``.
Where OmniDocBench scores a page without a prediction as an empty page (with a warning), a
missing prediction here is an error of that test naming the page and the file: a silent empty
page would pass off a broken run as a bad parser. An empty prediction file is scored, as
OmniDocBench scores it, with a note.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.errors import CaseInputError, SuiteConfigError
from pytest_doceval.files import not_utf8
from pytest_doceval.systems.base import ImageParser, Parser, run_system

TIER = "tier"
TIERS = ("base", "hard")
FORMAT_HINT = (
    "expected OmniDocBench's annotation format: a JSON list of pages, each an object with "
    "layout_dets (a list of blocks) and page_info (with image_path)"
)


@dataclass(frozen=True)
class Page:
    """One annotated page: its position in the file, its image's name and its annotation."""

    index: int
    image: str  # the image's file name, e.g. ``book_p12.jpg``
    annotation: Mapping[str, Any]
    attributes: Mapping[str, Any] = field(default_factory=dict)
    tier: str | None = None  # "base" or "hard" where known (`with_tier`)

    @property
    def case(self) -> str:
        return Path(self.image).stem

    def with_tier(self, base: frozenset[str] | None) -> Page:
        """The page with its tier: from `base` (the Base pages' image names) when given,
        else from a ``tier`` page attribute ("base" or "hard") when the annotations have one."""
        if base is not None:
            return dataclasses.replace(self, tier="base" if self.image in base else "hard")
        marked = str(self.attributes.get(TIER, "")).lower()
        return dataclasses.replace(self, tier=marked if marked in TIERS else None)

    def labels(self) -> dict[str, str]:
        """The page's ``page_attribute`` as row labels: a list (special issues) joined by
        ``", "`` in its order (an empty list gives no label: the page is in none of its
        groups); then its tier, where known."""
        out: dict[str, str] = {}
        for key, value in self.attributes.items():
            if key == TIER:
                continue
            if isinstance(value, list):
                if value:
                    out[str(key)] = ", ".join(str(v) for v in value)
            else:  # as OmniDocBench's page split writes it: str() of the value
                out[str(key)] = str(value)
        if self.tier:
            out[TIER] = self.tier
        return out


def listed_attributes(pages: Sequence[Page]) -> list[str]:
    """The page attributes that hold lists (OmniDocBench's ``special_issue``)."""
    return sorted({str(k) for p in pages for k, v in p.attributes.items() if isinstance(v, list)})


def attribute_groups(labels: Mapping[str, str], listed: Sequence[str] = ()) -> list[str]:
    """The groups OmniDocBench's page split puts a page in, from its row labels: ``ALL``,
    ``<attribute>: <value>`` for each plain attribute, and each item of a list attribute
    (`listed`: the label keys that held lists) whose name does not contain ``table``
    (OmniDocBench leaves table issues out of its page split)."""
    groups = ["ALL"]
    for key, value in labels.items():
        if key in listed:
            groups += [v for v in value.split(", ") if "table" not in v]
        else:
            groups.append(f"{key}: {value}")
    return groups


def load_pages(file: Path, source: Path, shown: Callable[[Path], str] = str) -> list[Page]:
    """The pages of annotation `file`, or a `SuiteConfigError` (naming `file` as `shown`
    shows it, and `source`, the suite.toml that points at it) when it is not in
    OmniDocBench's format."""
    name = shown(file)

    def bad(cause: str) -> SuiteConfigError:
        return SuiteConfigError(f"{name} (annotations of {source}): {cause}; {FORMAT_HINT}")

    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise SuiteConfigError(f"{source}: annotations file {name} does not exist") from None
    except OSError as exc:
        raise SuiteConfigError(f"{name}: cannot read the annotations: {exc}") from None
    try:
        pages = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise bad(not_utf8(data, exc)) from None
    except json.JSONDecodeError as exc:
        raise bad(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(pages, list) or not pages:
        raise bad("not a non-empty list of pages")
    out: list[Page] = []
    seen: dict[str, int] = {}
    for index, page in enumerate(pages):
        where = f"page {index + 1} of {len(pages)}"
        if not isinstance(page, dict):
            raise bad(f"{where} is not an object")
        info = page.get("page_info")
        if not isinstance(page.get("layout_dets"), list):
            raise bad(f"{where} has no layout_dets list")
        if not isinstance(info, dict) or not isinstance(info.get("image_path"), str):
            raise bad(f"{where} has no page_info.image_path")
        image = Path(info["image_path"].replace("\\", "/")).name
        if not image or not Path(image).stem:
            raise bad(f"{where} has an empty page_info.image_path")
        if image in seen:
            raise bad(f"{where} repeats the image {image!r} of page {seen[image] + 1}")
        seen[image] = index
        attributes = info.get("page_attribute")
        out.append(Page(index, image, page, attributes if isinstance(attributes, dict) else {}))
    cases: dict[str, str] = {}
    for page in out:
        other = cases.setdefault(page.case, page.image)
        if other != page.image:
            raise bad(f"images {other!r} and {page.image!r} have one name ({page.case!r})")
    return out


def prediction_candidates(folder: Path, image: str) -> list[Path]:
    """Where OmniDocBench's ``End2EndDataset`` looks for a page's prediction, in its order."""
    stem = Path(image).stem
    bare = stem.replace(".pdf", "")
    names = [f"{stem}.md", f"{bare}.mmd", f"{bare}.md", f"{image}.md"]
    return [folder / name for name in dict.fromkeys(names)]


def find_prediction(folder: Path, image: str) -> Path | None:
    return next((p for p in prediction_candidates(folder, image) if p.is_file()), None)


def parse_page_image(system: str, parser: Parser, image: Path) -> str:
    """A CPU stage's call: `parser` on a page image. A parser that reads images
    (`ImageParser`: RapidOCR) gets the image as it is; any other gets it as a one-page PDF
    (the image on a page of its size), written in a temporary folder of its own."""
    if isinstance(parser, ImageParser):
        reader: ImageParser = parser
        return run_system(system, image, lambda: reader.parse_image(image))
    with tempfile.TemporaryDirectory(prefix="doceval-odb-") as folder:
        pdf = Path(folder, f"{image.stem}.pdf")
        pdf.write_bytes(image_as_pdf(image))
        return run_system(system, image, lambda: parser.parse(pdf))


def image_as_pdf(image: Path) -> bytes:
    """`image` as the bytes of a one-page PDF (PyMuPDF; a `CaseInputError` for a file that
    is not an image it reads)."""
    import pymupdf

    try:
        with pymupdf.open(image) as doc:  # type: ignore[no-untyped-call]
            data: bytes = doc.convert_to_pdf()
    except Exception as exc:  # PyMuPDF raises its own and plain runtime errors
        raise CaseInputError(f"{image}: not a page image PyMuPDF can read ({exc})") from None
    return data


def base_page_names(file: Path, source: Path) -> frozenset[str]:
    """The Base tier's image names from `file`: OmniDocBench v1.5's annotation file (a JSON
    list of pages), or text with one image name a line; a `SuiteConfigError` naming it when it
    cannot be read."""
    try:
        text = file.read_text("utf-8-sig")
    except OSError as exc:
        raise SuiteConfigError(f"{source}: base_pages {file.name}: {exc.strerror or exc}") from None
    if text.lstrip().startswith("["):
        try:
            pages = json.loads(text)
            return frozenset(Path(p["page_info"]["image_path"]).name for p in pages)
        except (json.JSONDecodeError, TypeError, KeyError) as exc:
            raise SuiteConfigError(
                f"{source}: base_pages {file.name} is neither an annotation file (pages with "
                f"page_info.image_path) nor a list of image names ({exc})"
            ) from None
    return frozenset(Path(line.strip()).name for line in text.splitlines() if line.strip())
