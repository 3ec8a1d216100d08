"""OmniDocBench's own text, formula and reading-order scoring of one page, run from a checkout.

An ``omnidocbench`` suite with ``reference = "<folder>"`` (a clone of OmniDocBench at the pinned
commit, its Python requirements installed) gets ``text_edit``, ``formula_edit`` and
``reading_order_edit`` from OmniDocBench's own code rather than from the package's port of its
text matcher (`page_match`): an opt-in cross-check of the port. `Reference.score` runs, for
one page, what its ``configs/end2end.yaml`` runs for a whole dataset: ``End2EndDataset``
(``match_method: quick_match``, its timeouts and fallbacks) on a one-page ground-truth file and
a one-file prediction folder in a temporary directory, then
its ``Edit_dist`` metric on the ``text_block``, ``display_formula`` and ``reading_order``
samples, called as ``End2EndEval`` calls it, and reads back its per-page values (its
``*_per_page_edit.json``) and its matched samples (the sums and the pairs behind them).
``End2EndEval`` itself is not called: around those calls it only adds the group and page-split
tables and a run report that probes the machine's packages (two dozen subprocesses, over half
of a page's time), none of which a page's numbers read. The reference matches and scores each page
on its own, so a page scored alone is the page scored in the whole dataset's run (the tests hold
the two equal). Tables are not run here: their TEDS is ours (`tables`), equal to its numbers.

Its code is imported once per process, when a page first needs it (the suite only checks at load
that the folder holds ``src/dataset/end2end_dataset.py``). A module it imports that is not
installed is an error of each test that needs it, naming the module and what to install; the
package never stands in for one (its ``Levenshtein`` and ``func_timeout`` are GPL/LGPL: the user
installs them for OmniDocBench, not for us). Two of its habits are contained here: it writes its
results under ``./result`` (so the call runs in its temporary directory, under a lock, and
restores the working directory) and it prints progress (silenced; its loguru records from
``src`` are disabled). Its LaTeX-to-text conversion of inline math runs in this process
(``OMNIDOCBENCH_LATEX_TO_TEXT_TIMEOUT_SEC=0`` unless the user set it), not in a child process
per formula with a 30 s timeout: the same conversion without a process start per formula.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_doceval.errors import OmniDocBenchReferenceError, SuiteConfigError
from pytest_doceval.kinds.omnidocbench.matched_block import MatchedBlock

PINNED_COMMIT = "9dc1dec"
UPSTREAM = "https://github.com/opendatalab/OmniDocBench"
ENTRY = Path("src") / "dataset" / "end2end_dataset.py"
# OmniDocBench's element -> our row metric.
METRIC_OF_ELEMENT: Mapping[str, str] = {
    "text_block": "text_edit",
    "display_formula": "formula_edit",
    "reading_order": "reading_order_edit",
}
# Where a module's pip name is not the module's name.
PIP_NAMES: Mapping[str, str] = {
    "bs4": "beautifulsoup4",
    "yaml": "PyYAML",
    "func_timeout": "func-timeout",
    "PIL": "Pillow",
}
LATEX_TIMEOUT_ENV = "OMNIDOCBENCH_LATEX_TO_TEXT_TIMEOUT_SEC"
_SAVE_NAME = "page"
# Its configs/end2end.yaml, minus what we do not run here (CDM, tables) and one worker.
_DATASET_CONFIG: Mapping[str, Any] = {
    "dataset_name": "end2end_dataset",
    "match_method": "quick_match",
    "match_workers": 1,
    "quick_match_truncated_timeout_sec": 300,
    "match_timeout_sec": 420,
    "timeout_fallback_max_chunk_span": 10,
    "timeout_fallback_order_penalty": 0.10,
}
_METRICS_CONFIG: Mapping[str, Any] = {
    element: {"metric": ["Edit_dist"]} for element in METRIC_OF_ELEMENT
}

_LOCK = threading.RLock()  # one page at a time: the call changes the working directory


@dataclass(frozen=True)
class _Pipeline:
    """The reference's matcher and metric, as its registries hold them."""

    dataset: Callable[[Mapping[str, Any]], Any]  # End2EndDataset(config)
    edit_distance: Callable[[Any, Mapping[str, Any]], Any]  # call_Edit_dist(samples, config)


_PIPELINES: dict[Path, _Pipeline | str] = {}  # checkout -> its pipeline, or why it cannot load


@dataclass(frozen=True)
class TextScores:
    """One page's numbers from the reference: the metrics it has, their sums, the pairs."""

    metrics: Mapping[str, float]  # only where the reference has a per-page value (not NaN)
    counts: Mapping[str, tuple[float, float]]  # metric -> (Σ edits, Σ max(len))
    blocks: tuple[MatchedBlock, ...]  # its text and display-formula pairs


@dataclass(frozen=True)
class Reference:
    """A checkout of OmniDocBench's code (``path``) and its git commit when it is a git
    checkout (None: not one, or git is not installed)."""

    path: Path
    commit: str | None

    @property
    def identity(self) -> str:
        """Who made the text numbers, for the scorer's identity: ``reference``, with the
        commit when it is known to differ from the pinned one, so that its numbers never
        compare with the pinned commit's."""
        if self.commit is None or self.commit.startswith(PINNED_COMMIT):
            return "reference"
        return f"reference@{self.commit[:7]}"

    def note(self, shown: str | None = None) -> str:
        """The suite's note: which code made the text, formula and reading-order numbers
        (`shown`: the checkout's folder as the report shows it)."""
        head = (
            "text_edit, formula_edit, reading_order_edit: OmniDocBench's own code at "
            f"{shown or self.path}"
        )
        if self.commit is None:
            return f"{head} (commit unknown: not a git checkout; expected {PINNED_COMMIT})"
        if self.commit.startswith(PINNED_COMMIT):
            return f"{head} (commit {self.commit[:7]})"
        return f"{head} (commit {self.commit[:7]}, not the pinned {PINNED_COMMIT})"

    def score(self, page: Mapping[str, Any], prediction: str) -> TextScores:
        """Score one annotated page against its predicted markdown with the reference.

        Raises OmniDocBenchReferenceError when its code cannot be imported (naming the missing
        module and what to install) or fails on the page (naming the exception)."""
        with _LOCK:
            pipeline = _load(self.path)
            image = os.path.basename(str(page["page_info"]["image_path"]))
            with tempfile.TemporaryDirectory(prefix="doceval-omnidocbench-") as tmp:
                root = Path(tmp)
                truth = root / "gt.json"
                # ASCII JSON: the reference opens it in the locale's encoding.
                truth.write_text(json.dumps([page]), encoding="ascii")
                predictions = root / "pred"
                predictions.mkdir()
                # `<image name>.md`: the last name it tries, and the one that fits every
                # extension (it cuts four characters off for the others).
                (predictions / f"{image}.md").write_text(prediction, "utf-8", newline="")
                config = {
                    "dataset": {
                        **_DATASET_CONFIG,
                        "ground_truth": {"data_path": str(truth)},
                        "prediction": {"data_path": str(predictions)},
                    },
                    "metrics": _METRICS_CONFIG,
                }
                try:
                    with contextlib.chdir(root), _quiet(), _latex_in_process(), _no_warnings():
                        dataset = pipeline.dataset(config)
                        (root / "result").mkdir()  # where its metric writes
                        for element, metric_config in _METRICS_CONFIG.items():
                            pipeline.edit_distance(
                                dataset.samples[element], metric_config
                            ).evaluate([], f"{_SAVE_NAME}_{element}")
                except Exception as exc:
                    raise OmniDocBenchReferenceError(
                        f"OmniDocBench's own code ({self.path}) failed on this page: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                per_page = {element: _per_page(root, element) for element in METRIC_OF_ELEMENT}
            samples = {element: _samples(dataset, element) for element in METRIC_OF_ELEMENT}
        return _scores(per_page, samples)


def checkout_of(value: object, folder: Path, suite_file: Path) -> Reference | None:
    """The suite's ``reference`` key (None when unset): a folder (relative to the suite's, or
    absolute) holding OmniDocBench's code, else a SuiteConfigError naming it."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise SuiteConfigError(
            f"{suite_file}: [suite] reference must be a path (text): the folder of a clone of "
            f"OmniDocBench ({UPSTREAM}) at commit {PINNED_COMMIT}"
        )
    path = (folder / value).resolve()
    if not (path / ENTRY).is_file():
        raise SuiteConfigError(
            f"{suite_file}: [suite] reference = {value!r}: {path} does not hold OmniDocBench's "
            f"code (expected {ENTRY.as_posix()} in it): clone {UPSTREAM} at commit "
            f"{PINNED_COMMIT} there, or point reference at your clone"
        )
    return Reference(path, _git_commit(path))


def _git_commit(path: Path) -> str | None:
    """The commit checked out at `path` when `path` is the top of a git checkout."""
    try:
        done = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != path:
        return None  # not a checkout, or a folder inside another repository
    return lines[1]


def _load(checkout: Path) -> _Pipeline:
    """Import the reference from `checkout`, once per process; the cause when it cannot."""
    found = _PIPELINES.get(checkout)
    if found is None:
        try:
            found = _import(checkout)
        except OmniDocBenchReferenceError as exc:
            found = str(exc)
        _PIPELINES[checkout] = found
    if isinstance(found, str):
        raise OmniDocBenchReferenceError(found)
    return found


def _import(checkout: Path) -> _Pipeline:
    # Its modules hold invalid escape sequences and call deprecated pandas: warnings about
    # another project's code, which the user can do nothing about, are not shown.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _import_quietly(checkout)


def _import_quietly(checkout: Path) -> _Pipeline:
    loaded = sys.modules.get("src")
    if loaded is not None and not _is_under(loaded, checkout):
        raise OmniDocBenchReferenceError(
            f"cannot import OmniDocBench's code from {checkout}: its top-level package is named "
            f"'src', and another 'src' is already imported in this process ({_where(loaded)}); "
            "one OmniDocBench checkout per run"
        )
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    try:
        importlib.import_module("loguru").logger.disable("src")  # its per-page log lines
        registry = importlib.import_module("src.core.registry")
        registry.load_default_registrations()  # fills its registries
    except ModuleNotFoundError as exc:
        raise OmniDocBenchReferenceError(_missing_module(checkout, exc)) from exc
    except Exception as exc:
        raise OmniDocBenchReferenceError(
            f"cannot import OmniDocBench's code from {checkout}: {type(exc).__name__}: {exc}"
        ) from exc
    src = sys.modules["src"]
    if not _is_under(src, checkout):
        raise OmniDocBenchReferenceError(
            f"cannot import OmniDocBench's code from {checkout}: 'src' was found elsewhere "
            f"({_where(src)})"
        )
    return _Pipeline(
        dataset=registry.DATASET_REGISTRY.get("end2end_dataset"),
        edit_distance=registry.METRIC_REGISTRY.get("Edit_dist"),
    )


def _missing_module(checkout: Path, exc: ModuleNotFoundError) -> str:
    name = (exc.name or str(exc)).split(".")[0]
    if name == "src":
        return (
            f"OmniDocBench's code at {checkout} is incomplete ({exc}): clone {UPSTREAM} at "
            f"commit {PINNED_COMMIT}"
        )
    return (
        f"OmniDocBench's code at {checkout} imports the Python module {name!r}, which is not "
        f"installed here: pip install {PIP_NAMES.get(name, name)} (its requirements are the "
        f"dependencies in {checkout / 'pyproject.toml'})"
    )


def _is_under(module: Any, checkout: Path) -> bool:
    paths = [*getattr(module, "__path__", []), getattr(module, "__file__", None) or ""]
    return any(p and Path(p).resolve().is_relative_to(checkout) for p in paths)


def _where(module: Any) -> str:
    return str(getattr(module, "__file__", None) or list(getattr(module, "__path__", [])))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with (
        open(os.devnull, "w", encoding="utf-8") as sink,
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
    ):
        yield


@contextlib.contextmanager
def _no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _latex_in_process() -> Iterator[None]:
    if LATEX_TIMEOUT_ENV in os.environ:  # the user's choice stands
        yield
        return
    os.environ[LATEX_TIMEOUT_ENV] = "0"
    try:
        yield
    finally:
        os.environ.pop(LATEX_TIMEOUT_ENV, None)


def _per_page(root: Path, element: str) -> Mapping[str, float | None]:
    """Its ``<save name>_<element>_per_page_edit.json`` (absent: the element had no sample)."""
    path = root / "result" / f"{_SAVE_NAME}_{element}_per_page_edit.json"
    if not path.is_file():
        return {}
    loaded: Mapping[str, float | None] = json.loads(path.read_text("utf-8"))
    return loaded


def _samples(dataset: Any, element: str) -> Sequence[Mapping[str, Any]]:
    held = dataset.samples[element]
    found: Sequence[Mapping[str, Any]] = getattr(held, "samples", held)
    return found


def _compared(sample: Mapping[str, Any], side: str) -> str:
    """The text its Edit_dist compared: the normalised one, or the raw one when that is
    empty (its own rule)."""
    value = sample.get(f"norm_{side}") or sample.get(side) or ""
    return str(value)


def _position(value: object) -> int | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _scores(
    per_page: Mapping[str, Mapping[str, float | None]],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
) -> TextScores:
    metrics: dict[str, float] = {}
    counts: dict[str, tuple[float, float]] = {}
    blocks: list[MatchedBlock] = []
    for element, metric in METRIC_OF_ELEMENT.items():
        # Its only page's value. Not looked up by the image's name: it keys pages by the name
        # when it ends in .jpg or .png and otherwise by the text before its last "_" (so a
        # whole run of it pools the non-.jpg/.png pages that share that text; one page alone
        # is that page's own value).
        values = list(per_page[element].values())
        if len(values) > 1:
            raise OmniDocBenchReferenceError(
                f"OmniDocBench's {element} scoring gave {len(values)} pages for one page"
            )
        value = values[0] if values else None
        if value is None or math.isnan(value):
            continue  # no sample, or none with a character: the reference has no value
        metrics[metric] = float(value)
        mine = samples[element]
        # Its sums, as its pandas sum reads them: a sample without Edit_num (both sides
        # empty) adds nothing.
        edits = sum(float(s["Edit_num"]) for s in mine if s.get("Edit_num") is not None)
        counts[metric] = (edits, float(sum(s.get("upper_len", 0) for s in mine)))
    for element in ("text_block", "display_formula"):
        for s in samples[element]:
            blocks.append(
                MatchedBlock(
                    element,
                    _compared(s, "gt"),
                    _compared(s, "pred"),
                    int(s.get("Edit_num") or 0),
                    int(s.get("upper_len") or 0),
                    _position(s.get("gt_position")),
                    _position(s.get("pred_position")),
                )
            )
    return TextScores(metrics, counts, tuple(blocks))
