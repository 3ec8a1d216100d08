"""HTML for the facts kind: its ``fact_check`` view and its ``pass_rate`` analysis.

Registered in `views.VIEWS` and `analyses.ANALYSES` under those names; without the
registration both still show, through the generic renderers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.fmt import NA, fmt, fmt_int, mapping, mappings, num
from pytest_doceval.html.model import SuiteView
from pytest_doceval.rows import FLAG_MARK, describe_flags

Block = dict[str, Any]


def _verdict(passed: Any) -> str:
    return "passed" if passed is True else "failed" if passed is False else "skipped"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def fact_check(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """The fact as its file states it, then the verdict and its explanation; with several
    repeats, one line per repeat. A table block each (the page's script escapes the cells)."""
    out: list[Block] = []
    for view in views:
        data = mapping(view)
        rows: list[list[Any]] = [[k, _value(v)] for k, v in mapping(data.get("fact")).items()]
        score = num(data.get("score"))
        rows.append(["verdict", f"{_verdict(data.get('passed'))} (score {fmt(score, 3)})"])
        rows.append(["explanation", str(data.get("explanation") or "")])
        if data.get("caveat"):
            rows.append([f"{FLAG_MARK} caveat", str(data["caveat"])])
        for number, repeat in enumerate(mappings(data.get("repeats")), start=1):
            verdict = _verdict(repeat.get("passed"))
            rows.append([f"repeat {number}", f"{verdict}: {repeat.get('explanation') or ''}"])
        block: Block = {"t": "table", "title": "Fact check", "head": ["", ""], "rows": rows}
        chunk.size += len(json.dumps(block, ensure_ascii=False))
        out.append(block)
    return out


def _percent(value: Any) -> str:
    x = num(value)
    return NA if x is None else f"{100 * x:.1f}%"


def _groups_table(title: str, what: str, per_system: Mapping[str, Mapping[str, Any]]) -> Markup:
    """Rows = files or types, columns = systems: mean pass fraction and passed/total."""
    systems = list(per_system)
    names = sorted({n for groups in per_system.values() for n in mapping(groups)})
    if not names:
        return Markup()
    head = Markup().join(Markup("<th>{}</th>").format(s) for s in systems)
    body = []
    for group_name in names:
        cells = []
        for system in systems:
            group = mapping(mapping(per_system[system]).get(group_name))
            if not group:
                cells.append(Markup('<td class="num">{}</td>').format(NA))
                continue
            counts = f"{fmt_int(group.get('passed'))}/{fmt_int(group.get('total'))}"
            skipped = num(group.get("skipped")) or 0
            extra = f", {fmt_int(skipped)} skipped" if skipped else ""
            cells.append(
                Markup('<td class="num">{} <span class="key">({}{})</span></td>').format(
                    _percent(group.get("mean")), counts, extra
                )
            )
        body.append(Markup("<tr><td>{}</td>{}</tr>").format(group_name, Markup().join(cells)))
    return Markup(
        '<h4>{}</h4><table class="generic"><thead><tr><th>{}</th>{}</tr></thead>'
        "<tbody>{}</tbody></table>"
    ).format(title, what, head, Markup().join(body))


def pass_rate(key: str, value: Any, view: SuiteView) -> Markup:
    """pass_rate per system with its interval, then the breakdowns by fact type and file."""
    systems = {str(k): mapping(v) for k, v in mapping(value).items()}
    if not systems:
        return Markup()
    rows = []
    flag_lines = []
    for system, entry in systems.items():
        interval = f"[{_percent(entry.get('ci_low'))}, {_percent(entry.get('ci_high'))}]"
        flagged = {str(k): int(v) for k, v in mapping(entry.get("flagged")).items()}
        facts = num(entry.get("n_facts"))
        why = describe_flags(flagged, None if facts is None else int(facts))
        if flagged:
            flag_lines.append(Markup("<li>{} {}: {}</li>").format(FLAG_MARK, system, why))
        rows.append(
            Markup(
                '<tr><td>{system}</td><td class="num"{title}>{rate}</td>'
                '<td class="num">{interval}</td>'
                '<td class="num">{baseline}</td><td class="num">{files}</td>'
                '<td class="num">{facts}</td><td class="num">{micro}</td></tr>'
            ).format(
                system=system,
                title=Markup(' title="{}"').format(why) if flagged else "",
                rate=_percent(entry.get("pass_rate")) + (FLAG_MARK if flagged else ""),
                interval=interval,
                baseline=_percent(entry.get("baseline_pass_rate")),
                files=fmt_int(entry.get("n_files")),
                facts=fmt_int(entry.get("n_facts")),
                micro=_percent(entry.get("micro_mean")),
            )
        )
    method = next((str(e["method"]) for e in systems.values() if e.get("method")), "")
    return (
        Markup(
            "<h3>Pass rate (olmOCR-bench: the mean over fact files of each file's pass rate)</h3>"
        )
        + (Markup('<p class="legend">interval: {}</p>').format(method) if method else Markup())
        + Markup(
            '<table class="generic"><thead><tr><th>system</th><th>pass rate</th><th>CI</th>'
            "<th>baseline</th><th>files</th><th>facts</th>"
            '<th title="olmOCR-bench\'s overall_score: the mean over all facts, not its headline">'
            "micro mean (not the headline)</th></tr></thead><tbody>{}</tbody></table>"
        ).format(Markup().join(rows))
        + (
            Markup('<ul class="legend">{}</ul>').format(Markup().join(flag_lines))
            if flag_lines
            else Markup()
        )
        + _groups_table(
            "By fact type (mean fraction of repeats passed)",
            "type",
            {s: mapping(e.get("by_type")) for s, e in systems.items()},
        )
        + _groups_table(
            "By fact file (the terms of the pass rate)",
            "file",
            {s: mapping(e.get("by_file")) for s, e in systems.items()},
        )
    )
