"""``regex-baseline``: a deterministic, rule-based extractor -- regular expressions and a few
line rules, no model -- whose outputs the example extraction suites commit as a precomputed
system. It is a real (simple) system, so its numbers say how far plain rules get and how much
OCR noise costs them; it is not an LLM and nothing here pretends to be one.

Rules, by document type:

* ``speaker-index`` (seed 003's pages): a line of capitals (the running head) or a single
  letter (a letter heading) is skipped; a line that starts with ``Surname, Forename`` starts an
  entry, its name being the text before the first ``(`` or page number; ``... See ...`` is a
  cross-reference, not an entry; a line that starts with a digit, or with the end of an
  affiliation (``West) 7, 66``), continues the current entry (on top of a page, with no
  entry yet, it is the previous page's tail and is skipped). Page numbers are the runs of
  digits; ``212–214`` (en dash or hyphen) is every page from 212 to 214 when the span is
  1-10, else two pages. An entry whose last number is followed by a comma at the end of the
  page goes on overleaf and is left out.
* ``receipts``: merchant = the first line; date = the first date-shaped text (ISO, dotted,
  slashed, ``Mar 2, 2024``), as written; receipt number = the token after ``Receipt``,
  ``Trans #``, ``Invoice No``, ``Beleg-Nr.`` or ``영수증번호``; items = lines ending, after two or
  more spaces, in an amount (with an optional leading ``2 x``/``2 @ 4.49``, a trailing
  quantity column, or ``38.42 L @ 1.959``) that name no total, tax or payment; tax = the last
  tax line's amount; total = the first total line's amount (not a subtotal); currency = an
  ISO code in the text, else from a currency sign. Amounts: ``2,400`` is 2400, ``4,95`` is 4.95.
* ``invoice`` (invoice2data's PDFs as PyMuPDF reads them, one cell per line, for the
  real-data tests): a trivial extractor -- the first date, the money after the last ``total``
  line, the invoice number after its label, a currency, and as line items every line of words
  followed within two lines by a money line.
* ``sroie`` (ICDAR 2019 SROIE OCR lines, for the real-data tests): company = the first of the
  first six lines that names a company form (``SDN BHD``, ``ENTERPRISE``, ...), else the first
  line; address = the lines after it up to a registration, phone, GST or date line, joined by
  spaces; date = the first date-shaped text; total = the amount on (or right after) the last
  line saying ``TOTAL`` that is not a subtotal.

    python tools/regex_extract.py speaker-index cases/speaker-index
    python tools/regex_extract.py receipts cases/receipts

writes ``<page>/outputs/regex-baseline/<variant>.json`` for every variant ``suite.toml`` lists.
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

SYSTEM = "regex-baseline"

# -- speaker index -------------------------------------------------------------------------------

_ENTRY_START = re.compile(r"^(?P<name>[^\W\d][^,\d()]*,\s*[^,\d()]+?)\s*(?P<rest>\(.*|\d.*|)$")
_REF = re.compile(r"(\d+)(?:\s*[–-]\s*(\d+))?")
_MAX_RANGE = 10


def _pages(text: str) -> list[int]:
    pages: list[int] = []
    for match in _REF.finditer(text):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if 0 < last - first <= _MAX_RANGE:
            pages.extend(range(first, last + 1))
        else:
            pages.extend(sorted({first, last}))
    return pages


def _refs_part(rest: str) -> str:
    """What follows the affiliation: ``(Lab., Kilmore) 14, 26`` -> ``14, 26``."""
    return rest.split(")", 1)[1] if ")" in rest else ("" if rest.startswith("(") else rest)


def speaker_index(text: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    tail = ""  # the text of the current entry's last line, to see if it ends with a comma
    for raw in text.splitlines():
        line = raw.strip()
        letters = [c for c in line if c.isalpha()]
        if not line or (letters and all(c.isupper() for c in letters) and not _REF.match(line)):
            continue  # blank, running head, letter heading
        start = _ENTRY_START.match(line)
        if " See " in line or line.endswith(" See"):
            current = None  # a cross-reference
        elif start and not line[0].isdigit():
            name = re.sub(r"\s+", " ", start.group("name")).strip().rstrip(".")
            current = {"name": name, "pages": _pages(_refs_part(start.group("rest")))}
            entries.append(current)
            tail = start.group("rest")
        elif current is not None and (line[0].isdigit() or ")" in line):
            more = line.split(")", 1)[1] if ")" in line and not line[0].isdigit() else line
            current["pages"].extend(_pages(more))
            tail = more
    if entries and current is entries[-1] and tail.rstrip().endswith(","):
        entries.pop()  # goes on overleaf
    return {"speakers": [{"name": e["name"], "pages": sorted(set(e["pages"]))} for e in entries]}


# -- receipts ------------------------------------------------------------------------------------

_DATE = re.compile(
    r"\d{4}[-./]\d{1,2}[-./]\d{1,2}"
    r"|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2},? \d{4}"
    r"|\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{2,4}",
    re.IGNORECASE,
)
_NUMBER_LABEL = re.compile(
    r"(?:Receipt|Trans(?:action)?\s*#|Invoice\s*No|Beleg-Nr|영수증번호)\.?\s*[:#]?\s*"
    r"(?P<number>[0-9][0-9A-Za-z-]*)",
    re.IGNORECASE,
)
_AMOUNT = r"-?\d[\d.,]*"
_ITEM = re.compile(
    rf"^(?:(?P<qty>\d+)\s*[x@]\s*(?:{_AMOUNT}\s+)?)?(?P<name>.*?\S)"
    rf"(?:\s{{2,}}(?P<col>\d+)|\s+(?P<litres>[\d.]+)\s*L\s*@\s*[\d.]+)?"
    rf"\s{{2,}}(?P<amount>{_AMOUNT})\s*(?:€|EUR)?$"
)
_NOT_ITEM = re.compile(
    r"total|summe|vat|mwst|gst|tax|card|visa|eftpos|bar\b|cash|change|rückgeld|due|receipt"
    r"|items|합계|부가세|받을|카드",
    re.IGNORECASE,
)
_TAX = re.compile(r"vat|mwst|gst|tax|부가세", re.IGNORECASE)
_TOTAL = re.compile(r"total|summe|합계|amount due", re.IGNORECASE)
_TRAILING_AMOUNT = re.compile(rf"({_AMOUNT})\s*(?:€|EUR|원)?\s*$")
_CODES = ("GBP", "USD", "EUR", "AUD", "KRW", "MYR")
_SIGNS = {"€": "EUR", "£": "GBP", "₩": "KRW", "원": "KRW", "$": "USD"}


def amount(text: str) -> float | None:
    """``2,400`` -> 2400; ``4,95`` -> 4.95; ``1,234.50`` -> 1234.5; None if not a number."""
    text = text.strip()
    if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", text):
        text = text.replace(",", "")
    elif "," in text and "." not in text:
        text = text.replace(",", ".")
    else:
        text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def _trailing_amount(line: str) -> float | None:
    match = _TRAILING_AMOUNT.search(line)
    return None if match is None else amount(match.group(1))


def receipt(text: str) -> dict[str, Any]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    date = _DATE.search(text)
    number = _NUMBER_LABEL.search(text)
    items = []
    for line in lines:
        match = _ITEM.match(line)
        if match is None or _NOT_ITEM.search(line) or _DATE.search(line):
            continue
        value = amount(match.group("amount"))
        if value is None:
            continue
        qty_text = match.group("qty") or match.group("col") or match.group("litres") or "1"
        items.append({"name": match.group("name"), "qty": amount(qty_text), "amount": value})
    taxes = [v for line in lines if _TAX.search(line) and (v := _trailing_amount(line)) is not None]
    totals = [
        v
        for line in lines
        if _TOTAL.search(line)
        and not re.search(r"sub", line, re.IGNORECASE)
        and (v := _trailing_amount(line)) is not None
    ]
    code = next((c for c in _CODES if re.search(rf"\b{c}\b", text)), None)
    sign = next((_SIGNS[s] for s in _SIGNS if s in text), None)
    return {
        "merchant": lines[0] if lines else None,
        "date": date.group(0) if date else None,
        "receipt_number": number.group("number") if number else None,
        "items": items,
        "tax": taxes[-1] if taxes else None,
        "total": totals[0] if totals else None,
        "currency": code or sign,
    }


# -- SROIE ---------------------------------------------------------------------------------------

_COMPANY = re.compile(
    r"SDN\.? ?BHD|S/B|BHD|ENTERPRISE|TRADING|RESTAURANT|STORE|MART|HARDWARE|CO\.|LTD"
)
_ADDRESS_END = re.compile(
    r"TEL|FAX|GST|REG|DATE|INVOICE|RECEIPT|^\(?\d{5,}-[A-Z]\)?$|CO\.? ?NO|@", re.IGNORECASE
)
_SROIE_TOTAL = re.compile(r"TOTAL", re.IGNORECASE)
_SROIE_AMOUNT = re.compile(r"(\d+\.\d{2})\s*$")


def sroie(lines: Sequence[str]) -> dict[str, Any]:
    """Key fields of one SROIE receipt from its OCR lines (the text column of ``box/*.csv``)."""
    lines = [line.strip() for line in lines if line.strip()]
    at = next((i for i, line in enumerate(lines[:6]) if _COMPANY.search(line)), 0)
    address: list[str] = []
    for line in lines[at + 1 :]:
        if _ADDRESS_END.search(line):
            if address:
                break
            continue  # a registration number right under the name
        address.append(line)
    date = next((m.group(0) for line in lines if (m := _DATE.search(line))), None)
    total = None
    for i, line in enumerate(lines):
        if _SROIE_TOTAL.search(line) and not re.search(r"SUB", line, re.IGNORECASE):
            found = _SROIE_AMOUNT.search(line)
            if found is None and i + 1 < len(lines):
                found = _SROIE_AMOUNT.search(lines[i + 1])
            if found is not None:
                total = found.group(1)
    return {
        "company": lines[at] if lines else None,
        "date": date,
        "address": " ".join(address[:5]) or None,
        "total": total,
    }


def sroie_lines(csv_text: str) -> list[str]:
    """The text column of a SROIE ``box`` file: eight coordinates, then the text (which may
    itself hold commas)."""
    return [row.split(",", 8)[8] for row in csv_text.splitlines() if row.count(",") >= 8]


# -- invoices (invoice2data's PDFs as PyMuPDF reads them, for the real-data tests) ----------------

_MONEY = re.compile(r"^(?:[$€£]\s?)(-?\d[\d.,]*)$|^(-?\d[\d.,]*)\s?(?:€|EUR|USD)$")
_INVOICE_NO = re.compile(
    r"(?:Invoice|Factuurnummer|Rechnungsnr)\.?\s*(?:Number|No\.?|#)?\s*[:#]?\s*"
    r"(?P<number>[A-Z0-9][A-Z0-9/_-]*\d[A-Z0-9/_-]*)?",
    re.IGNORECASE,
)


def _money(line: str) -> float | None:
    match = _MONEY.match(line.strip())
    return None if match is None else amount(match.group(1) or match.group(2))


def invoice(text: str) -> dict[str, Any]:
    """A trivial invoice extractor over text laid out one cell per line: the first date; the
    money after the last line saying ``total``; the invoice number after its label (same or
    next line); a currency code or sign; and as line items, every line of words followed
    within two lines by a money line (its ``price_unit``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    date = _DATE.search(text)
    total = None
    for i, line in enumerate(lines):
        if re.search(r"total", line, re.IGNORECASE):
            here = _trailing_amount(line) if re.search(r"\d", line) else None
            nearby = [v for ln in lines[i + 1 : i + 3] if (v := _money(ln)) is not None]
            total = here if here is not None else (nearby[0] if nearby else total)
    number = None
    for i, line in enumerate(lines):
        found = _INVOICE_NO.search(line)
        if found is None:
            continue
        number = found.group("number")
        if number is None and i + 1 < len(lines):
            following = re.fullmatch(r"#?\s*([A-Z0-9][A-Z0-9/_-]*\d[A-Z0-9/_-]*)", lines[i + 1])
            number = following.group(1) if following else None
        if number:
            break
    items = []
    for i, line in enumerate(lines):
        if len(re.findall(r"[^\W\d_]", line)) < 3 or line.endswith(":") or _money(line) is not None:
            continue
        price = next((v for ln in lines[i + 1 : i + 3] if (v := _money(ln)) is not None), None)
        if price is not None:
            items.append({"name": line, "price_unit": price})
    code = next((c for c in _CODES if re.search(rf"\b{c}\b", text)), None)
    sign = next((_SIGNS[s] for s in _SIGNS if s in text), None)
    return {
        "date": date.group(0) if date else None,
        "amount": total,
        "invoice_number": number,
        "currency": code or sign,
        "lines": items,
    }


# -- command line --------------------------------------------------------------------------------

EXTRACTORS: dict[str, Callable[[str], dict[str, Any]]] = {
    "speaker-index": speaker_index,
    "receipts": receipt,
}


def run_suite(document_type: str, suite: Path) -> list[Path]:
    """Write the baseline's output for every page and variant of `suite`."""
    table = tomllib.loads((suite / "suite.toml").read_text(encoding="utf-8"))["suite"]
    extract = EXTRACTORS[document_type]
    written = []
    for page in sorted(p for p in suite.iterdir() if (p / "truth.json").is_file()):
        for variant in table["variants"]:
            text = (page / f"{variant}.txt").read_text(encoding="utf-8")
            target = page / "outputs" / SYSTEM / f"{variant}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            data = json.dumps(extract(text), ensure_ascii=False, indent=1)
            target.write_text(data + "\n", encoding="utf-8")
            written.append(target)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("type", choices=sorted(EXTRACTORS))
    parser.add_argument("suite", type=Path)
    args = parser.parse_args()
    for path in run_suite(args.type, args.suite):
        print(path)


if __name__ == "__main__":
    main()
