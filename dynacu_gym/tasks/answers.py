"""Answer normalisation: what a person would accept as the same answer, and hashing of it.

The page compares the agent's answer with salted hashes that the task server hands out, so no
page source holds an answer. Both sides must normalise identically: this module is the Python
side and ``tasks/_shared/dynacu-task.js`` the JavaScript side; the cases both are tested
against (the JavaScript side in a real browser) are in ``tasks/_shared/normalize-cases.json``.

Kinds:
    text    case, accents, punctuation and a leading article do not matter.
    number  "1.4 million" = "$1.4M" = "1,400,000" = "one point four million"; "12%" = "12".
    date    "April 28" = "28th of April" = "4/28" = "Apr. 28, 2026" (month and day: "04-28").
    time    "3:30 pm" = "15:30" = "3.30 PM"; "3 pm" = "15:00".
    code    case, spaces and dashes do not matter: "save-20" = "SAVE 20".
    digits  only the digits count, spoken digits included: "555-0142" = "five five five 0142".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

KINDS = ("text", "number", "date", "time", "code", "digits")

_UNITS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
_SUFFIXES = {
    "k": 3, "thousand": 3, "m": 6, "mn": 6, "mil": 6, "million": 6, "b": 9, "bn": 9,
    "billion": 9, "t": 12, "trillion": 12,
}  # fmt: skip
# Currency and units that may follow a number the question already gave the unit of. Not "m"
# (million) and not bare "s" after a letter; "2847 ms" = "2,847" when the question asks for ms.
_NUMBER_NOISE = re.compile(
    r"(?<![a-z])(dollars?|usd|euros?|eur|pounds?|gbp|per ?cent|percent|pct|ms|milliseconds?|secs?"
    r"|seconds?|mins?|minutes?|hours?|hrs?|kg|kilograms?|lbs?|km|kilometers?|kilometres?|miles?"
    r"|kb|mb|gb|tb|rps|req/s|requests per second)(?![a-z])|[$€£¥%]"
)
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}  # fmt: skip
_ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}  # fmt: skip
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _base(raw: str) -> str:
    """Lower case, no accents, plain quotes and dashes, single spaces."""
    text = unicodedata.normalize("NFKD", str(raw))
    text = "".join(ch for ch in text if not ("\u0300" <= ch <= "\u036f"))
    text = text.lower()
    text = re.sub("[\u2018\u2019\u02bc]", "'", text)
    text = re.sub("[\u201c\u201d]", '"', text)
    text = re.sub("[\u2010-\u2015\u2212]", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def _canonical_decimal(sign: str, int_part: str, frac_part: str, power: int) -> str:
    """Shift the decimal point ``power`` places right, in strings (no float rounding)."""
    digits = (int_part or "0") + frac_part
    point = len(int_part or "0") + power
    if point > len(digits):
        digits += "0" * (point - len(digits))
    int_s, frac_s = digits[:point], digits[point:]
    int_s = int_s.lstrip("0") or "0"
    frac_s = frac_s.rstrip("0")
    value = int_s + ("." + frac_s if frac_s else "")
    return "-" + value if sign == "-" and value != "0" else value


def _words_to_number(tokens: list[str]) -> tuple[int, str] | None:
    """English number words to (integer, fraction digits); None if any token is not one.

    A word that fits the number so far adds to it ("twenty one" is 21, "three hundred five"
    is 305); one that cannot starts a said digit group that follows it: "one forty-nine" is
    149, "six one eight four" is 6184, "nineteen ninety-nine" is 1999, "five oh two" is 502.
    """
    total, current, seen = 0, 0, False
    last = ""  # the kind of the last word: "", unit, teen, tens, tens+unit, hundred
    frac = ""
    for i, tok in enumerate(tokens):
        if tok == "and":
            continue
        if tok == "point":
            rest = tokens[i + 1 :]
            if not rest or any(t not in _UNITS or _UNITS[t] > 9 for t in rest):
                return None
            frac = "".join(str(_UNITS[t]) for t in rest)
            break
        if tok in _UNITS or tok in _TENS:
            value = _UNITS[tok] if tok in _UNITS else _TENS[tok]
            kind = "unit" if value < 10 else ("teen" if value < 20 else "tens")
            if kind == "unit":
                fits = last in ("", "tens", "hundred") and (value > 0 or not seen)
            else:
                fits = last in ("", "hundred")
            if fits:
                current += value
                kind = "tens+unit" if last == "tens" else kind
            else:
                current = current * (10 if kind == "unit" else 100) + value
            last = kind
        elif tok == "hundred":
            current, last = max(current, 1) * 100, "hundred"
        elif tok in _SCALES:
            total += max(current, 1) * 10 ** _SCALES[tok]
            current, last = 0, ""
        elif tok.isdigit() and not seen:  # "3 thousand"; but "3 20 4" is no one number
            current, last = int(tok), ""
        else:
            return None
        seen = True
    if not seen:
        return None
    return total + current, frac


def _number(text: str) -> str | None:
    text = re.sub(r"^[\s\"']+|[\s\"'.!?;:]+$", "", text)
    text = _NUMBER_NOISE.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip()
    m = re.fullmatch(r"([+-]?) ?(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d+))? ?([a-z]+)?", text)
    if m and (m.group(2) or m.group(3)):
        sign, int_part, frac, suffix = m.groups()
        if suffix is not None and suffix not in _SUFFIXES:
            return None
        power = _SUFFIXES[suffix] if suffix else 0
        return _canonical_decimal(sign, int_part.replace(",", ""), frac or "", power)
    sign = ""
    if text.startswith(("minus ", "negative ")):
        sign, text = "-", text.split(" ", 1)[1]
    tokens = [t for t in re.split(r"[ ,\-]+", text) if t]  # "five, eight, two": digits
    # "1.4 million" was handled above; "one point four million" ends in a scale word.
    power = 0
    if len(tokens) > 1 and tokens[-1] in _SCALES and "point" in tokens:
        power = _SCALES[tokens.pop()]
    parsed = _words_to_number(tokens)
    if parsed is None:
        return None
    whole, frac = parsed
    return _canonical_decimal(sign, str(whole), frac, power)


def _day_number(token: str) -> int | None:
    m = re.fullmatch(r"(\d{1,2})(st|nd|rd|th)?", token)
    if m:
        return int(m.group(1))
    parts = token.split("-")
    if len(parts) == 2 and parts[0] in ("twenty", "thirty") and parts[1] in _ORDINAL_WORDS:
        return _TENS[parts[0]] + _ORDINAL_WORDS[parts[1]]
    return _ORDINAL_WORDS.get(token)


def _date(text: str) -> str | None:
    text = re.sub(r"[,.]", " ", text)
    tokens = [t for t in text.split() if t not in ("the", "of", "on")]
    month = day = None
    if len(tokens) == 1 and re.fullmatch(r"\d{1,4}[/-]\d{1,2}(?:[/-]\d{1,4})?", tokens[0]):
        parts = re.split(r"[/-]", tokens[0])
        if len(parts[0]) == 4:  # ISO: year-month-day
            if len(parts) != 3:
                return None
            month, day = int(parts[1]), int(parts[2])
        else:  # month/day[/year], as written in the US
            month, day = int(parts[0]), int(parts[1])
    else:
        # Join "twenty" + "eighth" written apart into one ordinal token; a recogniser writes
        # "twenty-second" as "20 second".
        joined: list[str] = []
        for tok in tokens:
            tens = {"20": "twenty", "30": "thirty"}.get(joined[-1], joined[-1]) if joined else ""
            if tens in ("twenty", "thirty") and tok in _ORDINAL_WORDS:
                joined[-1] = tens + "-" + tok
            else:
                joined.append(tok)
        if len(joined) not in (2, 3):
            return None
        if len(joined) == 3 and not re.fullmatch(r"\d{4}", joined[2]):
            return None
        first, second = joined[0], joined[1]
        if first in _MONTHS:
            month, day = _MONTHS[first], _day_number(second)
        elif second in _MONTHS:
            month, day = _MONTHS[second], _day_number(first)
        else:
            return None
    if month is None or day is None or not 1 <= month <= 12:
        return None
    if not 1 <= day <= _DAYS_IN_MONTH[month - 1]:
        return None
    return f"{month:02d}-{day:02d}"


_MERIDIEM = re.compile(
    r"\s*\b(?:(a|p)\.? ?m\b\.?|in the (morning)|in the (afternoon|evening)|at (night))$"
)


def _spoken_time(text: str) -> str | None:
    """A time said in words, written as digits; None if ``text`` is not one.

    "seven thirty a.m." is "7:30am", "quarter to eight" is "7:45", "five oh five pm" is "5:05pm".
    """
    meridiem = ""
    m = _MERIDIEM.search(text)
    if m:  # "a.m." or "in the morning"; else "p.m.", "in the afternoon/evening", "at night"
        meridiem = "am" if m.group(1) == "a" or m.group(2) else "pm"
        text = text[: m.start()]
    tokens = [t for t in re.split(r"[ \-]+", text.strip()) if t]
    if len(tokens) == 3 and tokens[0] in ("half", "quarter") and tokens[1] in ("past", "to"):
        hour = _UNITS.get(tokens[2], 0)
        if not 1 <= hour <= 12:
            return None
        if tokens[1] == "past":
            return f"{hour}:{30 if tokens[0] == 'half' else 15:02d}{meridiem}"
        return f"{12 if hour == 1 else hour - 1}:45{meridiem}"
    if not tokens or not 1 <= _UNITS.get(tokens[0], 0) <= 12:
        return None
    hour, rest = _UNITS[tokens[0]], tokens[1:]
    if rest in ([], ["o'clock"], ["oclock"]):
        return f"{hour}:00{meridiem}" if rest or meridiem else None
    if len(rest) == 2 and rest[0] in ("oh", "o") and 1 <= _UNITS.get(rest[1], 10) <= 9:
        return f"{hour}:0{_UNITS[rest[1]]}{meridiem}"
    parsed = _words_to_number(rest) if all(t in _UNITS or t in _TENS for t in rest) else None
    if parsed is None or parsed[1] or not 10 <= parsed[0] <= 59:
        return None
    return f"{hour}:{parsed[0]}{meridiem}"


def _time(text: str) -> str | None:
    text = _spoken_time(text) or text
    text = text.replace(".", ":").replace(" ", "")
    text = text.replace("o'clock", "").replace("oclock", "")
    m = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?(am|pm|a:m:|p:m:)?", text)
    if not m:
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    meridiem = (m.group(3) or "").replace(":", "")
    if meridiem and m.group(2) is None and not 1 <= hour <= 12:
        return None
    if not meridiem and m.group(2) is None:
        return None  # a bare "3" is not a time
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


def _digits(text: str) -> str | None:
    tokens = re.split(r"[ \-]+", text)
    out = "".join(
        str(_UNITS[t]) if t in _UNITS and _UNITS[t] <= 9 else re.sub(r"\D", "", t) for t in tokens
    )
    return out or None


def normalize(kind: str, raw: str) -> str | None:
    """Normalise an answer of ``kind``; None when it cannot be read as one.

    Raises:
        ValueError: ``kind`` is not one of :data:`KINDS`.
    """
    if kind not in KINDS:
        raise ValueError(f"expected an answer kind in {KINDS}, got {kind!r}")
    text = _base(raw)
    if kind == "text":
        text = "".join(ch if ch.isalnum() else " " for ch in text)
        text = " ".join(text.split())
        text = re.sub(r"^(the|a|an) ", "", text)
        return text or None
    if kind == "code":
        text = re.sub(r"[^a-z0-9]", "", text).upper()
        return text or None
    if kind == "number":
        return _number(text)
    if kind == "date":
        return _date(text)
    if kind == "time":
        return _time(text)
    return _digits(text)


_NUMBER_WORDS = {*_UNITS, *_TENS, *_SCALES, "hundred"}
_CARDINALS = {v: k for k, v in {**_UNITS, **_TENS}.items() if k != "oh"}


def in_digits(text: str) -> str | None:
    """``text`` with each run of number words in digits ("under twenty": "under 20"), or None.

    A run may end in an ordinal ("twenty sixth": "26"); None when the text spells no number.
    """
    words = _base(text).replace("-", " ").split()
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        out.append(normalize("number", " ".join(run)) or " ".join(run))
        run.clear()

    for word in words:
        if word in _ORDINAL_WORDS and not (run and run[-1] in _ORDINAL_WORDS):
            word = _CARDINALS.get(_ORDINAL_WORDS[word], word)
        if word in _NUMBER_WORDS or (word == "and" and run):
            run.append(word)
            continue
        if run:
            flush()
        out.append(word)
    if run:
        flush()
    spelled = " ".join(w for w in out if w)
    return spelled if spelled != " ".join(words) else None


def answer_hash(salt: str, field: str, normalized: str) -> str:
    """The salted SHA-256 the page recomputes for a normalised answer (hex)."""
    return hashlib.sha256(f"{salt}:{field}:{normalized}".encode()).hexdigest()


def readings(kind: str, text: str, max_words: int = 8) -> set[str]:
    """The answers of ``kind`` that ``text`` says: its runs of 1..``max_words`` words, normalised.

    For dates, a run inside a longer run that reads as another date is part of that date, not
    one of its own: "20 second of September" says the 22nd and not also the 2nd. Other kinds
    read every run: "two point six million" says 2.6 million and also 2.6 (the same figure in
    millions, as a slide writes it). The page runtime's ``readings`` does the same.
    """
    words = str(text).split()
    found: dict[tuple[int, int], str] = {}
    for n in range(1, min(max_words, len(words)) + 1):
        for i in range(len(words) - n + 1):
            value = normalize(kind, " ".join(words[i : i + n]))
            if value is not None:
                found[(i, n)] = value
    if kind != "date":
        return set(found.values())
    return {
        value
        for (i, n), value in found.items()
        if not any(
            m > n and j <= i and i + n <= j + m and other != value
            for (j, m), other in found.items()
        )
    }


def mentions(
    kind: str, accepted: list[str] | tuple[str, ...], text: str, max_words: int = 8
) -> bool:
    """Whether ``text`` (a transcript, say) mentions one of the ``accepted`` answers.

    It does when one of its :func:`readings` is an accepted form, as the page runtime's
    ``ctx.mentions`` judges: "I think it's April 28th." mentions "April 28".
    """
    wanted = {normalize(kind, form) for form in accepted} - {None}
    return not wanted.isdisjoint(readings(kind, text, max_words))


def spoken_verdict(
    kind: str,
    accepted: tuple[str, ...] | list[str],
    rejected: tuple[str, ...] | list[str],
    text: str,
) -> str | None:
    """The verdict a listening page reaches on ``text``, as the runtime's ``ctx.mentions`` does.

    Args:
        kind: the field's normalisation kind.
        accepted: the field's accepted forms.
        rejected: its declared near misses.
        text: what was said.

    Returns:
        ``"rejected"`` if a near miss is mentioned (hedging counts as wrong), else
        ``"accepted"`` if an accepted form is, else None.
    """
    if mentions(kind, rejected, text):
        return "rejected"
    return "accepted" if mentions(kind, accepted, text) else None
