"""The ``doceval`` command: build cases, and work with reports without re-running anything.

::

    doceval build-case paper.tex cases/papers/paper        # pdflatex + pandoc -> a case folder
    doceval build-case notes.md cases/ko/notes             # PyMuPDF layout of markdown
    doceval build-case scan.tex cases/scans/scan --image-only
    doceval report doceval-report.json --html report.html  # re-render
    doceval report doceval-report.json --format latex -o tables.tex  # the papers' tables
    doceval compare old.json new.json                      # paired comparison, CIs, p-values
    doceval compare old.json new.json --format markdown    # the same for a PR / CI summary
    doceval report doceval-report.json --format summary    # failures and changes, markdown
    doceval merge shard-*.json -o all.json                 # CI-matrix shards into one report
    doceval suites                                         # what pytest --doceval would run

Exit status: 0 on success; 1 when `compare` finds a significant regression or `merge` a failing
suite gate; 2 on bad input (missing file, other schema version, overlapping shards, ...).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_doceval.errors import DocevalError

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2
EXIT_STATUS = """exit status:
  0  success
  1  `compare` found a significant regression; `merge` found a failing suite gate
  2  bad input: a missing file, another report schema, overlapping shards, a bad option, a
     suite `suites` lists that would not load"""


def _build_case(args: argparse.Namespace) -> int:
    from pytest_doceval.cli import build_case as casebuild

    source: Path = args.source
    if source.suffix == ".tex":
        case = casebuild.build_case_from_latex(source, args.out_dir, timeout=args.timeout)
    elif source.suffix in (".md", ".markdown"):
        if not source.is_file():
            raise DocevalError(f"{source}: file not found")
        case = casebuild.build_case_from_markdown(
            source.read_text(encoding="utf-8"), args.out_dir, title=args.title
        )
    else:
        raise DocevalError(f"{source}: expected a .tex or .md source")
    if args.image_only:
        casebuild.make_image_only_pdf(case.pdf, case.pdf, dpi=args.dpi)
    kind = "image-only PDF" if args.image_only else "PDF"
    print(f"{case.directory}: {case.pages} page(s), {kind} + truth.md")
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from pytest_doceval.report.html import write_html
    from pytest_doceval.report.json_report import load_report
    from pytest_doceval.report.terminal import summary_lines

    if args.format == "text" and (args.output or args.suite):
        raise DocevalError("-o and --suite apply to the paper tables: add --format latex|markdown")
    if args.link and args.format != "summary":
        raise DocevalError("--link applies to the markdown summary: add --format summary")
    report = load_report(args.report)
    if args.format == "summary":
        from pytest_doceval.report.compare import baseline_case_changes
        from pytest_doceval.report.markdown import summary_markdown

        _emit(summary_markdown(report, baseline_case_changes(report), link=args.link), args.output)
    elif args.format != "text":
        from pytest_doceval.atomic import write_text_atomic
        from pytest_doceval.report.paper import render, report_tables

        tables = report_tables(report, args.suite)
        if not tables:
            raise DocevalError(f"{args.report}: no suite here has paper tables")
        text = render(tables, args.format)
        if args.output:
            write_text_atomic(args.output, text)
            print(f"{len(tables)} table(s) ({args.format}): {args.output}")
        else:
            print(text, end="")
    else:
        print("\n".join(summary_lines(report)))
    if args.html:
        write_html(report, args.html)
        print(f"HTML report: {args.html}")
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from pytest_doceval.report.compare import case_changes, compare_reports, format_comparison
    from pytest_doceval.report.json_report import load_report

    old, new = load_report(args.old), load_report(args.new)
    rows = compare_reports(
        old,
        new,
        metrics=args.metric or None,
        margin=args.margin,
        resamples=args.bootstrap,
        seed=args.seed,
    )
    changed = case_changes(old, new, rows)
    regressions = [r for r in rows if r["verdict"] == "worse"]
    if args.format == "markdown":
        from pytest_doceval.report.markdown import comparison_markdown

        text = comparison_markdown(new, rows, changed, link=args.link, most_cases=args.cases)
        _emit(text, args.output)
        return EXIT_REGRESSION if regressions else EXIT_OK
    if args.link or args.output:
        raise DocevalError("--link and -o apply to the markdown: add --format markdown")
    print(format_comparison(rows, changed, show_all=args.all, most_cases=args.cases))
    if regressions:
        print(f"{len(regressions)} significant regression(s)")
        return EXIT_REGRESSION
    return EXIT_OK


def _emit(text: str, output: Path | None) -> None:
    """Markdown to `output` (appended: a CI step summary collects several), else stdout."""
    if output is None:
        print(text, end="")
        return
    with output.open("a", encoding="utf-8") as out:
        out.write(text)


def _merge(args: argparse.Namespace) -> int:
    from pytest_doceval.report.json_report import load_report, write_report
    from pytest_doceval.report.merge import merge_reports
    from pytest_doceval.report.terminal import summary_lines

    reports = [load_report(path) for path in args.reports]
    merged = merge_reports(reports, names=[str(p) for p in args.reports], root=Path.cwd())
    write_report(merged, args.output)
    print("\n".join(summary_lines(merged)))
    print(f"merged {len(reports)} report(s) into {args.output}")
    if args.html:
        from pytest_doceval.report.html import write_html

        write_html(merged, args.html)
    failed = _failed_gates(merged["suites"])
    for gate in failed:
        print(f"FAILED suite gate: {gate}")
    return EXIT_REGRESSION if failed else EXIT_OK


def _failed_gates(suites: Mapping[str, Any]) -> list[str]:
    return [
        f"{name}: {gate['rule']} {gate['message']}"
        for name, suite in suites.items()
        for gate in suite.get("gates", [])
        if not gate["passed"]
    ]


def _suites(args: argparse.Namespace) -> int:
    from pytest_doceval.cli.suites import run

    return run(args)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-doceval")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="doceval",
        description=__doc__.split("\n\n")[0],
        epilog=EXIT_STATUS,
        formatter_class=raw,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str, status: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name, help=text, description=text, epilog=f"exit status: {status}", formatter_class=raw
        )

    build = command(
        "build-case", "turn a .tex or .md source into a case folder", "0 written, 2 bad input"
    )
    build.add_argument("source", type=Path, help="a LaTeX (.tex) or markdown (.md) file")
    build.add_argument("out_dir", type=Path, help="the case folder to write")
    build.add_argument("--image-only", action="store_true", help="make the PDF a scan (no text)")
    build.add_argument("--dpi", type=int, default=150, help="scan resolution (default 150)")
    build.add_argument("--title", default=None, help="document title (markdown sources)")
    build.add_argument("--timeout", type=float, default=120, help="seconds per tool run")
    build.set_defaults(run=_build_case)

    report = command(
        "report",
        "re-render a JSON report: terminal summary, HTML, or the papers' tables",
        "0 written, 2 bad input (missing report, other schema, unknown suite)",
    )
    report.add_argument("report", type=Path, help="a doceval-report.json a run wrote")
    report.add_argument("--html", type=Path, default=None, help="write the HTML report here")
    report.add_argument(
        "--format",
        choices=("text", "latex", "markdown", "summary"),
        default="text",
        help="text: the terminal summary (default); latex (booktabs) or markdown: the tables "
        "the seeds specify, per suite kind; summary: markdown for a CI step summary or a pull "
        "request comment (what failed, significant changes, the cases that moved most)",
    )
    report.add_argument(
        "--link",
        metavar="URL",
        default=None,
        help="the address of this report's HTML: cases in the summary link to their rows",
    )
    report.add_argument(
        "--suite", default=None, help="only this suite's tables (default: every suite)"
    )
    report.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="write the tables here (default: stdout); a summary is appended",
    )
    report.set_defaults(run=_report)

    compare = command(
        "compare",
        "paired comparison of two reports (old, new): mean change with CI, p-values, and the "
        "cases that moved, worst first",
        "0 no significant regression, 1 a significant regression, 2 bad input",
    )
    compare.add_argument("old", type=Path, help="the earlier report (e.g. from main)")
    compare.add_argument("new", type=Path, help="the later report (e.g. from the pull request)")
    compare.add_argument("--metric", action="append", help="limit to this metric (repeatable)")
    compare.add_argument(
        "--margin", type=float, default=0.0, help="regression margin in metric units (0.005)"
    )
    compare.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    compare.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    compare.add_argument(
        "--all", action="store_true", help="list unchanged (suite, system, metric) rows too"
    )
    compare.add_argument(
        "--cases", type=int, default=20, help="how many changed cases to list (default 20)"
    )
    compare.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text (default), or markdown for a CI step summary or a pull-request comment",
    )
    compare.add_argument(
        "--link",
        metavar="URL",
        default=None,
        help="the address of the new report's HTML: cases in the markdown link to their rows",
    )
    compare.add_argument(
        "-o", "--output", type=Path, default=None, help="append the markdown here (default: stdout)"
    )
    compare.set_defaults(run=_compare)

    merge = command(
        "merge",
        "combine shard reports of one run (--doceval-shard K/N) into one report",
        "0 merged, 1 a suite gate fails on the merged numbers, 2 bad input",
    )
    merge.add_argument(
        "reports", type=Path, nargs="+", help="the shard reports (doceval-report.json each)"
    )
    merge.add_argument(
        "-o", "--output", type=Path, required=True, help="where to write the merged JSON report"
    )
    merge.add_argument("--html", type=Path, default=None, help="also write the HTML report")
    merge.set_defaults(run=_merge)

    suites = command(
        "suites",
        "list what pytest --doceval would run, running nothing: each suite's kind, systems, "
        "cases and tests, and which systems' tests will be skipped and why",
        "0 listed, 2 a suite would not load (its error is listed) or bad input",
    )
    suites.add_argument(
        "paths", nargs="*", help="suite folders (default: the project's [tool.doceval] suites)"
    )
    suites.set_defaults(run=_suites)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except DocevalError as exc:
        print(f"doceval {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
