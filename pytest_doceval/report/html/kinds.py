"""A kind's own HTML renderers, found by the kind's name (the page never imports a kind).

A section names its kind; the kind's class (through the kinds' registry, which imports a
built-in kind only when asked) says which renderers draw its row views (``html_views``) and its
analyses (``html_analyses``). A report whose kind is not installed here (a user kind read by
``doceval report`` elsewhere) still renders, with the generic renderers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pytest_doceval.errors import DocevalError
from pytest_doceval.html.analysis import AnalysisRenderer
from pytest_doceval.html.views import ViewRenderer


@dataclass(frozen=True)
class KindHtml:
    views: Mapping[str, ViewRenderer] = field(default_factory=dict)
    analyses: Mapping[str, AnalysisRenderer] = field(default_factory=dict)


@cache
def kind_html(kind: Any) -> KindHtml:
    """The renderers kind `kind` declares (none for an unknown or missing kind)."""
    if not isinstance(kind, str) or not kind:
        return KindHtml()
    from pytest_doceval.kinds.registry import kind_class

    try:
        cls = kind_class(kind)
    except (DocevalError, ImportError, AttributeError):
        return KindHtml()
    return KindHtml(dict(cls.html_views), dict(cls.html_analyses))
