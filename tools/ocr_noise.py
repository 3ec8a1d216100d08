"""Write the OCR variants of an extraction suite's pages from their corrected text, with
deterministic, seeded OCR noise (seed 003's three variants: corrected, layout, raw).

For every page folder ``<suite>/<page>/`` with a ``gold.txt``, each variant named on the
command line (default: ``layout`` and ``raw``) is written as ``<variant>.txt``:

* ``layout`` -- what an engine reads when a person has drawn the text regions (seed 003's
  "manual layout segmentation"): the lines are right, the characters are not always. Rare
  character confusions only.
* ``raw`` -- uncorrected OCR: about eight times as many confusions, plus what automatic layout
  does to a page -- lines broken in two at a space, a line run into the next, commas dropped
  between numbers, column spacing collapsed to one space, dashes read as hyphens, and a stray
  mark from a page fold.

The confusions are the classic ones of print OCR: ``rn``/``m``, ``l``/``1``/``I``, ``O``/``0``,
``cl``/``d``, ``e``/``c``, ``S``/``5``, ``B``/``8``, ``,``/``.``, and diacritics lost (``ř`` ->
``r``). Each page and variant has its own generator, seeded with ``SEED/<page>/<variant>``
(Python's str seeds are hashed with SHA-512, so the output does not depend on the process), so a
page can be regenerated alone and the files are the same on every machine.

    python tools/ocr_noise.py cases/speaker-index [--variants layout raw]
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass
from pathlib import Path

SEED = 3

# A match at a position -> what OCR may read instead.
CONFUSIONS: dict[str, tuple[str, ...]] = {
    "rn": ("m",),
    "m": ("rn",),
    "cl": ("d",),
    "d": ("cl",),
    "l": ("1", "I"),
    "1": ("l", "I"),
    "I": ("l", "1"),
    "O": ("0",),
    "0": ("O", "o"),
    "o": ("0",),
    "e": ("c",),
    "c": ("e",),
    "S": ("5",),
    "5": ("S",),
    "B": ("8",),
    "8": ("B",),
    "h": ("b",),
    ",": (".",),
    ".": (",",),
    "ř": ("r",),
    "á": ("a",),
    "é": ("e",),
    "ó": ("o",),
    "ø": ("o",),
    "ü": ("u", "ii"),
    "ö": ("o",),
    "Ó": ("O",),
}
_KEYS = sorted(CONFUSIONS, key=len, reverse=True)  # "rn" before "r"-less single letters
STRAY_MARKS = ("'", ".,", "·", "‘")


@dataclass(frozen=True)
class Noise:
    confusion: float  # chance that a confusable character (pair) is misread
    broken: float = 0.0  # chance per line of being broken in two at a space
    joined: float = 0.0  # chance per line of being run into the next line
    comma_dropped: float = 0.0  # chance per ", " between two numbers of losing its comma
    collapsed: float = 0.0  # chance per line that runs of spaces become one space
    dash_to_hyphen: float = 0.0
    stray_mark: bool = False


LEVELS = {
    "layout": Noise(confusion=0.004),
    "raw": Noise(
        confusion=0.03,
        broken=0.06,
        joined=0.03,
        comma_dropped=0.15,
        collapsed=0.3,
        dash_to_hyphen=0.7,
        stray_mark=True,
    ),
}


def confuse(line: str, rate: float, rng: random.Random) -> str:
    out, i = [], 0
    while i < len(line):
        key = next((k for k in _KEYS if line.startswith(k, i)), None)
        if key is not None and rng.random() < rate:
            out.append(rng.choice(CONFUSIONS[key]))
            i += len(key)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def drop_commas(line: str, rate: float, rng: random.Random) -> str:
    return re.sub(r"(?<=\d),(?= ?\d)", lambda m: "" if rng.random() < rate else m.group(0), line)


def noisy(text: str, noise: Noise, rng: random.Random) -> str:
    """`text` as an OCR engine with `noise` might read it."""
    lines = text.splitlines()
    out: list[str] = []
    for line in lines:
        if noise.dash_to_hyphen and rng.random() < noise.dash_to_hyphen:
            line = line.replace("–", "-")
        if noise.collapsed and rng.random() < noise.collapsed:
            line = re.sub(r"(?<=\S) {2,}", " ", line)
        line = drop_commas(line, noise.comma_dropped, rng)
        line = confuse(line, noise.confusion, rng)
        spaces = [m.start() for m in re.finditer(r"(?<=\S) (?=\S)", line)]
        if spaces and len(line) > 20 and rng.random() < noise.broken:
            cut = rng.choice(spaces)
            out.extend([line[:cut], line[cut + 1 :]])
        elif out and out[-1].strip() and line.strip() and rng.random() < noise.joined:
            out[-1] = f"{out[-1]} {line.strip()}"
        else:
            out.append(line)
    if noise.stray_mark and out:
        where = rng.randrange(len(out))
        out.insert(where, rng.choice(STRAY_MARKS))
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--variants", nargs="+", default=sorted(LEVELS), choices=sorted(LEVELS))
    args = parser.parse_args()
    for gold in sorted(args.suite.glob("*/gold.txt")):
        text = gold.read_text(encoding="utf-8")
        for variant in args.variants:
            rng = random.Random(f"{SEED}/{gold.parent.name}/{variant}")
            target = gold.parent / f"{variant}.txt"
            target.write_text(noisy(text, LEVELS[variant], rng), encoding="utf-8")
            print(target)


if __name__ == "__main__":
    main()
