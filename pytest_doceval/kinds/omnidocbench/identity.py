"""The scorer's identity: what an ``omnidocbench`` suite's numbers were made with, in its
``scoring_id`` (so that a baseline made under another never compares) and in the report.

* the code pin (OmniDocBench v1.6 at 9dc1dec) and this port's revision (`MATCHER_REVISION`,
  moved when a fix changes a number), or OmniDocBench's own code for the text metrics
  (``reference``, with its commit when it is not the pinned one);
* the annotation file's SHA-256 (the first 12 hex digits in the id, all of it in the report);
* CDM's tools (TeX Live's pdfTeX build and PyMuPDF's version), or why CDM is off;
* the missing-prediction policy: a page without a prediction file is an error of its test
  (OmniDocBench scores it as an empty page; here a silent empty page would pass off a broken
  run as a bad parser).

Run facts that do not change what a number means (fallbacks and deadlines taken per page, pages
not scored and why) are in the report's ``omnidocbench`` analysis, not in the id.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_doceval.kinds.omnidocbench.scoring import SCORING_ID

MATCHER_REVISION: Final = "r1"
MISSING_PREDICTION: Final = "error"


def annotations_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class ScorerIdentity:
    text: str  # "native", or "reference" (+ "@<commit>" when not the pinned one)
    annotations_sha256: str
    cdm: str  # the tools' identity, or "off"

    @property
    def scoring_id(self) -> str:
        return (
            f"{SCORING_ID}/{MATCHER_REVISION};text={self.text};"
            f"annotations={self.annotations_sha256[:12]};cdm={self.cdm};"
            f"missing={MISSING_PREDICTION}"
        )

    def describe(self) -> dict[str, str]:
        return {
            "code": SCORING_ID,
            "port_revision": MATCHER_REVISION,
            "text_metrics_by": self.text,
            "annotations_sha256": self.annotations_sha256,
            "cdm": self.cdm,
            "missing_prediction": f"{MISSING_PREDICTION} (a page without a prediction file "
            "is its test's error; OmniDocBench scores it as an empty page)",
        }
