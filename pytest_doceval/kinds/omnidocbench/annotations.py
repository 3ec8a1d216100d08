"""One page of OmniDocBench's annotation JSON: checked, and its truth elements as the benchmark
reads them (``End2EndDataset.get_page_elements``).

A page is ``{"layout_dets": [...], "extra": {"relation": [...]}, "page_info": {...}}``; each
layout element has a ``category_type``, an ``anno_id``, optionally ``ignore``, ``order`` and its
content (``text``, ``latex`` or ``html``). Elements linked by a ``truncated`` relation (one
paragraph cut across columns or pages) are joined into one, in reading order, their texts
concatenated; a joined group with any ignored member is left out whole. Other ignored elements
are left out. Elements are grouped by category, each in the order the annotation lists them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_doceval.errors import OmniDocBenchInputError

Element = Mapping[str, Any]


def _problem(page: Any) -> str | None:
    if not isinstance(page, Mapping):
        return f"a page is a JSON object, not {type(page).__name__}"
    for key in ("layout_dets", "extra", "page_info"):
        if key not in page:
            return f"the page has no {key!r}"
    if not isinstance(page["layout_dets"], Sequence) or isinstance(page["layout_dets"], str):
        return "'layout_dets' is not a list"
    for i, element in enumerate(page["layout_dets"]):
        if not isinstance(element, Mapping):
            return f"layout_dets[{i}] is not an object"
        for key in ("category_type", "anno_id"):
            if key not in element:
                return f"layout_dets[{i}] has no {key!r}"
    extra = page["extra"]
    if not isinstance(extra, Mapping) or not isinstance(extra.get("relation"), Sequence):
        return "'extra' has no 'relation' list"
    for i, relation in enumerate(extra["relation"]):
        if not isinstance(relation, Mapping) or "relation_type" not in relation:
            return f"extra.relation[{i}] has no 'relation_type'"
        if relation["relation_type"] == "truncated" and not (
            "source_anno_id" in relation and "target_anno_id" in relation
        ):
            return f"extra.relation[{i}] (truncated) lacks source_anno_id/target_anno_id"
    info = page["page_info"]
    if not isinstance(info, Mapping) or not isinstance(info.get("image_path"), str):
        return "'page_info' has no 'image_path'"
    return None


def check_page(page: Any) -> Mapping[str, Any]:
    """`page` itself, or OmniDocBenchInputError naming what is not in the benchmark's format."""
    problem = _problem(page)
    if problem is not None:
        raise OmniDocBenchInputError(f"not an OmniDocBench annotation page: {problem}")
    checked: Mapping[str, Any] = page
    return checked


def image_name(page: Mapping[str, Any]) -> str:
    """The page's key: its image's file name (``page_info.image_path``'s base name)."""
    return os.path.basename(str(page["page_info"]["image_path"]))


def _truncated_groups(page: Mapping[str, Any]) -> list[set[Any]]:
    groups: list[set[Any]] = []
    for relation in page["extra"]["relation"]:
        if relation["relation_type"] != "truncated":
            continue
        group = {relation["source_anno_id"], relation["target_anno_id"]}
        kept = []
        for other in groups:
            if other & group:
                group |= other
            else:
                kept.append(other)
        groups = [*kept, group]
    return groups


def _joined(members: list[Element], page: Mapping[str, Any]) -> dict[str, Any]:
    members = sorted(members, key=lambda e: e["order"])
    if any("text" not in m for m in members):
        raise OmniDocBenchInputError(
            f"{image_name(page)}: a 'truncated' relation joins elements without 'text' "
            f"(anno_id {[m['anno_id'] for m in members]})"
        )
    first = members[0]
    return {
        "category_type": first["category_type"],
        "order": first["order"],
        "anno_id": first["anno_id"],
        "text": "".join(m["text"] for m in members),
        "merge_list": members,
    }


def truth_elements(page: Mapping[str, Any]) -> dict[str, list[Element]]:
    """The page's truth elements by category (module docstring)."""
    groups = _truncated_groups(page)
    in_groups = {anno_id for group in groups for anno_id in group}
    by_category: dict[str, list[Element]] = {}
    by_id: dict[Any, Element] = {}
    for element in page["layout_dets"]:
        if element["anno_id"] in in_groups:
            by_id[element["anno_id"]] = element
        elif not element.get("ignore", False):
            by_category.setdefault(element["category_type"], []).append(element)
    for group in groups:
        members = [by_id[anno_id] for anno_id in group if by_id.get(anno_id)]
        if not members or any(m.get("ignore", False) for m in members):
            continue
        joined = _joined(members, page)
        by_category.setdefault(joined["category_type"], []).append(joined)
    return by_category


def in_reading_order(elements: Sequence[Element]) -> list[Element]:
    """`elements` sorted by ``order`` (a missing or zero order counts as 0), stable."""
    return sorted(elements, key=lambda e: e.get("order") or 0)


def has_table(page: Mapping[str, Any]) -> bool:
    """Whether the page has a table the benchmark expects scored (not ignored)."""
    return any(
        e.get("category_type") == "table" and not e.get("ignore", False)
        for e in page["layout_dets"]
    )
