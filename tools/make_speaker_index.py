"""Write the example ``speaker-index`` suite's pages: six pages of an invented parliamentary
speaker index (seed 003's data: speakers, each with the pages of their speeches), as the
corrected text (``gold.txt``) and the truth (``truth.json``).

Everything is invented for this project and drawn from a seeded generator, so the pages can be
rebuilt byte for byte: 140 speakers in alphabetical order, each with a party and constituency
(peers have neither), 1-14 page references (some as ranges, ``212–214``), a few cross-references
(``Ashcombe, Lord. See Pellow, Arthur``), letter headings, entries wrapped onto indented
continuation lines, 30 lines to a page. Pages are cut from the middle of the index, so a page
can start with the tail of the previous page's last entry and end with an entry that goes on
overleaf.

The truth follows seed 003's protocol: a page's entries are those that start and end on it
(a partial entry is left out, as the seed's model was told to), cross-references are not
speaker entries, and a range stands for every page in it. Names are ``Surname, Forename`` as
printed, without the party and constituency.

    python tools/make_speaker_index.py cases/speaker-index

Then ``python tools/ocr_noise.py cases/speaker-index`` writes the OCR variants and
``python tools/regex_extract.py speaker-index cases/speaker-index`` the baseline's outputs.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEED = 3
FIRST_INDEX_PAGE = 2  # the sample is index pages 2-7 (page-002 ... page-007)
PAGES = 6
LINES_PER_PAGE = 30
WIDTH = 64
INDENT = "    "

SURNAMES = """Abernethy Achterberg Adair Ahmed Ainsworth Albrecht Aldridge Amadi Andersen Applegate
Arkwright Ashdown Atherton Ayodele Bainbridge Balogun Bancroft Barraclough Beaumont Bellamy
Benedetti Bhattacharya Birkett Blackwood Blount Bonnar Boateng Bradshaw Brennan Brightwell
Brocklehurst Buchanan Burgoyne Calloway Carmody Castellanos Catterall Chadwick Chaudhry Chisholm
Clement Cockburn Colquhoun Connolly Corrigan Cotterill Crabtree Cunliffe Dabrowski Dalrymple
Darnell Davenport Delacroix Demir Desai Dvořák Eastwood Egerton Ellingham Emenike Esposito
Etheridge Fairclough Falconer Farquhar Featherstone Fennimore Fitzgerald Fletcher Forsyth
Fothergill Gallagher Garnett Gascoigne Gillespie Gladwell Goldsworthy Gorecki Grimshaw
Gunnarsson Haddow Halloran Hargreaves Hatherley Hawksworth Heathcote Henningsen Hollingworth
Horvath Hutchinson Ibrahim Illingworth Ingram Jablonski Jeffries Jørgensen Kavanagh Kershaw
Kilbride Kowalczyk Lambourne Larkin Lindqvist Llewellyn Lockhart Lombardi MacAulay Mahoney
Marchetti Mbeki McAllister Merriweather Moreau Mulcahy Müller Nakamura Nightingale Novák
Oakshott Ó Ceallaigh Okonkwo Oldroyd Ormerod Pellow Pemberton Penhaligon Quarmby Radcliffe
Ramsbottom Rautio Rosenthal Sandoval Scarborough Shackleton Silvestri Strachan""".split()
FORENAMES = """Agnes Alasdair Amara Anselm Beatrix Bronwen Callum Cecily Declan Delphine Desmond
Edwina Eilidh Fergus Florence Gideon Gwendolyn Hamish Harriet Ignatius Imogen Isidore Jocelyn
Kasimir Leofric Lorna Magnus Marguerite Niamh Obadiah Ottoline Peregrine Philippa Quentin
Rosalind Rupert Seren Siobhán Tamsin Tobias Ursula Vaughan Wilhelmina Xavier Yvette Zbigniew
Tomáš Ingrid Farida Oluwaseun""".split()
PARTIES = ["Lab.", "Cons.", "Lib.", "Agr.", "Ind.", "Green"]
PLACES = """Halvergate|Mardale West|Kilmore|Dunmore East|Porthallow|Ashby Fold|Crickhowell|
Eskdale North|Fenwick|Glenrothes South|Harrowgate Vale|Inverkeld|Kettering Marsh|Lowther|
Malvern Chase|Newbridge|Otterburn|Pendle Hill|Quarry Bank|Rothwell|Saltburn|Thornaby|Upwell|
Wendover|Yarrow""".replace("\n", "").split("|")
PEER_TITLES = ["Lord", "Baroness", "Viscount", "Earl"]


@dataclass(frozen=True)
class Speaker:
    surname: str
    forename: str  # a title for peers
    affiliation: str | None  # "(Lab., Kilmore)"; None for peers
    refs: tuple[tuple[int, int], ...]  # (first, last) page; first == last for a single page
    see: str | None = None  # a cross-reference: "See <name>", no pages

    @property
    def name(self) -> str:
        return f"{self.surname}, {self.forename}"

    def pages(self) -> list[int]:
        return sorted({p for first, last in self.refs for p in range(first, last + 1)})


def make_speakers(rng: random.Random) -> list[Speaker]:
    speakers: list[Speaker] = []
    for surname in sorted(SURNAMES, key=lambda s: s.casefold()):
        if rng.random() < 0.07:  # a peer, listed under the title's holder
            title = rng.choice(PEER_TITLES)
            if rng.random() < 0.5 and speakers:
                target = rng.choice(speakers[-12:])
                speakers.append(Speaker(surname, title, None, (), see=target.name))
                continue
            forename, affiliation = title, None
        else:
            forename = rng.choice(FORENAMES)
            affiliation = f"({rng.choice(PARTIES)}, {rng.choice(PLACES)})"
        count = min(14, max(1, int(rng.expovariate(1 / 4.5)) + 1))
        starts = sorted(rng.sample(range(1, 470), count))
        refs: list[tuple[int, int]] = []
        for start in starts:
            span = rng.choice((1, 2, 3)) if rng.random() < 0.15 else 0
            if refs and start <= refs[-1][1] + 1:
                continue  # overlapping ranges would print oddly
            refs.append((start, start + span))
        speakers.append(Speaker(surname, forename, affiliation, tuple(refs)))
    return speakers


def ref_text(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}–{last}"


def entry_lines(speaker: Speaker) -> list[str]:
    """The printed lines of one entry: wrapped at WIDTH between references, continuation
    lines indented."""
    if speaker.see is not None:
        return [f"{speaker.name}. See {speaker.see}"]
    head = speaker.name + (f" {speaker.affiliation}" if speaker.affiliation else "")
    words = [ref_text(a, b) for a, b in speaker.refs]
    lines, current = [], head
    for number, word in enumerate(words):
        piece = word + ("," if number < len(words) - 1 else "")
        if len(current) + 1 + len(piece) > WIDTH:
            lines.append(current)
            current = INDENT + piece
        else:
            current = f"{current} {piece}" if current.strip() else INDENT + piece
    lines.append(current)
    return lines


def paginate(speakers: list[Speaker]) -> list[list[tuple[str, Speaker | None, bool, bool]]]:
    """The stream of printed lines cut into pages: (line, speaker, first line, last line)."""
    stream: list[tuple[str, Speaker | None, bool, bool]] = []
    letter = ""
    for speaker in speakers:
        initial = speaker.surname[0].upper()
        if initial != letter:
            if stream:
                stream.append(("", None, True, True))
            stream.append((initial, None, True, True))
            letter = initial
        lines = entry_lines(speaker)
        for i, line in enumerate(lines):
            stream.append((line, speaker, i == 0, i == len(lines) - 1))
    return [stream[i : i + LINES_PER_PAGE] for i in range(0, len(stream), LINES_PER_PAGE)]


def header(number: int) -> str:
    title = "INDEX OF SPEAKERS"
    if number % 2:
        return f"{title:<{WIDTH - 6}}{number:>6}"
    return f"{number:<6}{title:>{WIDTH - 6}}"


def page_files(
    number: int, lines: list[tuple[str, Speaker | None, bool, bool]]
) -> tuple[str, dict[str, Any]]:
    text = "\n".join([header(number), "", *(line for line, *_ in lines)]) + "\n"
    # An entry is complete when its first and its last line are both on this page.
    starts = {id(s) for _, s, first, _ in lines if s is not None and first}
    ends = {id(s) for _, s, _, last in lines if s is not None and last}
    complete = [
        s
        for _, s, first, _ in lines
        if s is not None and first and id(s) in ends and id(s) in starts and s.see is None
    ]
    truth = {"speakers": [{"name": s.name, "pages": s.pages()} for s in complete]}
    return text, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    args = parser.parse_args()
    pages = paginate(make_speakers(random.Random(SEED)))
    for offset in range(PAGES):
        number = FIRST_INDEX_PAGE + offset
        text, truth = page_files(number, pages[number - 1])
        folder = args.suite / f"page-{number:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "gold.txt").write_text(text, encoding="utf-8")
        entries = ",\n".join(f"  {json.dumps(e, ensure_ascii=False)}" for e in truth["speakers"])
        (folder / "truth.json").write_text(f'{{"speakers": [\n{entries}\n]}}\n', encoding="utf-8")
        print(f"{folder}: {len(truth['speakers'])} entries")


if __name__ == "__main__":
    main()
