"""Finding an evidence item's keys in a transcript, OCR text or an element list."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dynacu_gym.tasks.answers import in_digits, mentions, normalize

_TRAILING_PUNCT = re.compile(r"(?<=\w)[,;:.!?)\]]+(?=\s|$)")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.I)
_BAR_FOR_I = re.compile(r"(?<!\S)\|(?!\S)")  # OCR reads a capital I alone as a bar
WRAP_LINES = 8  # how far below a wrapped line its rest may come (OCR interleaves columns)
WRAP_WORDS = 3  # a key found wrapped has at least this many words: two are too easily met


def key_found(key: str, text: str) -> bool:
    """Whether ``text`` (a transcript or OCR text) says ``key``.

    Numbers and times are normalised: "sixty" finds 60, "$4,800" finds 4800, "3:30" finds
    "3.30", and a key that spells a number finds it in digits too ("press four" finds "press
    4", "twenty-sixth" finds "26th"). Other keys are whole words, case and punctuation aside.
    """
    if any(ch.isdigit() for ch in key):
        # "$95, not" and "April 28th": a number ends at a comma or an ordinal's suffix.
        said = _ORDINAL.sub(r"\1", _TRAILING_PUNCT.sub(" ", text))
        if re.fullmatch(r"\d{4,}", key) and mentions("digits", [key], said, len(key) + 2):
            return True  # a code read out digit by digit: "5-8-2-0" or "five, eight, two, zero"
        kind = "time" if ":" in key else "number"
        if normalize(kind, key) is not None:
            return mentions(kind, [key], said, max_words=len(key.split()) + 5)
    else:
        spelled = in_digits(key)
        if spelled is not None and key_found(spelled, text):
            return True
    wanted = normalize("text", key)
    if not wanted:
        return False
    text = _BAR_FOR_I.sub("I", text)
    if re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", normalize("text", text) or ""):
        return True
    return len(wanted.split()) >= WRAP_WORDS and _wrapped(wanted.split(), text)


def _wrapped(words: list[str], text: str) -> bool:
    """Whether ``words`` run over a line's end in OCR text, with other lines in between.

    One line ends with their start and one of the next ``WRAP_LINES`` starts with the rest. Text
    that wraps in a narrow card comes out of OCR split, often with lines of the column
    beside it in between ("last booking 9:30", "Date *", "pm)").
    """
    lines = [line.split() for line in (normalize("text", ln) for ln in text.splitlines()) if line]
    for i, line in enumerate(lines):
        for cut in range(1, len(words)):
            head, rest = words[:cut], words[cut:]
            if line[-cut:] != head:
                continue
            if any(below[: len(rest)] == rest for below in lines[i + 1 : i + 1 + WRAP_LINES]):
                return True
    return False


def seen(keys: Iterable[str], text: str, every: bool = False) -> bool:
    """At least half the keys (all of them if ``every``), and at least one, are in ``text``."""
    keys = list(keys)
    if not keys:
        return False
    return enough(sum(key_found(k, text) for k in keys), len(keys), every)


def puts_on_screen(key: str, text: str) -> bool:
    """Whether typing ``text`` puts ``key`` on screen ("tangerine" in "tangerine7" too)."""
    wanted = normalize("text", key)
    return key_found(key, text) or bool(wanted and wanted in (normalize("text", text) or ""))


def enough(found: int, wanted: int, every: bool) -> bool:
    """Whether ``found`` of ``wanted`` keys is enough: half (at least one), or all if ``every``."""
    return wanted > 0 and (found == wanted if every else 2 * found >= wanted)
