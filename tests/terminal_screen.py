"""What a terminal shows for text written to it (carriage returns, erase to end of line,
cursor up and right): to check a live line left pytest's output as pytest wrote it."""

from __future__ import annotations

import re


def render(text: str) -> str:
    """What a terminal shows for `text`: CR, erase to end of line, cursor up and right."""
    lines: list[list[str]] = [[]]
    row = col = 0
    for token in re.findall(r"\x1b\[\d*[A-Za-z]|\r\n|.", text, re.S):
        if token in ("\n", "\r\n"):
            row, col = row + 1, 0
            if row == len(lines):
                lines.append([])
        elif token == "\r":
            col = 0
        elif token == "\x1b[K":
            del lines[row][col:]
        elif token.startswith("\x1b[") and token.endswith("A"):
            row = max(0, row - int(token[2:-1] or 1))
        elif token.startswith("\x1b[") and token.endswith("C"):
            col += int(token[2:-1] or 1)
        elif not token.startswith("\x1b"):
            line = lines[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = token
            else:
                line.append(token)
            col += 1
    return "\n".join("".join(line).rstrip() for line in lines)
