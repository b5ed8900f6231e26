"""Parsing a time with a Go layout string (``time.Parse``), for args that carry one.

Contract: :func:`parse` returns seconds since the epoch, or raises ``ValueError`` with Go's
wording where it has one. A layout is Go's reference time ``Mon Jan 2 15:04:05 MST 2006``
written the way the values are; the chunks recognised are Go's (``time/format.go``
``nextStdChunk``): ``2006 06 01 1 Jan January 02 2 _2 002 __2 Mon Monday 15 03 3 04 4 05 5 PM
pm MST``, the zone offsets ``Z0700 Z07:00 Z07 Z070000 Z07:00:00`` and their ``-`` forms, and
fractional seconds ``.000``/``.999`` (``,`` too). As in Go: the input may carry fractional
seconds right after the seconds even when the layout has none; a layout without a zone reads
the time as UTC; a zone abbreviation (``MST``) other than ``UTC`` reads as a zero offset (Go's
fabricated location when the abbreviation is not the local zone's, and the engine runs in UTC);
a weekday is checked as a name and otherwise ignored; two-digit years are 1969-2068.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

_MONTHS: Final = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# Longest first where one chunk is a prefix of another.
_CHUNKS: Final = (
    "January", "Jan", "Monday", "Mon", "MST",
    "Z07:00:00", "Z070000", "Z07:00", "Z0700", "Z07",
    "-07:00:00", "-070000", "-07:00", "-0700", "-07",
    "2006", "002", "__2", "_2", "01", "02", "03", "04", "05", "06",
    "15", "1", "2", "3", "4", "5", "PM", "pm",
)  # fmt: skip
_FRACTION = re.compile(r"[.,](0+|9+)(?![0-9])")


def _chunks(layout: str) -> Iterator[str | tuple[str]]:
    """Literal text as ``str``, a layout chunk as a 1-tuple."""
    i, literal = 0, list[str]()
    while i < len(layout):
        frac = _FRACTION.match(layout, i)
        # Go: a fraction chunk only right after a digit chunk (seconds), e.g. "05.000".
        if frac is not None and i > 0 and layout[i - 1].isdigit():
            if literal:
                yield "".join(literal)
                literal = []
            yield (frac.group(0),)
            i = frac.end()
            continue
        for chunk in _CHUNKS:
            if layout.startswith(chunk, i) and _chunk_allowed(layout, i, chunk):
                if literal:
                    yield "".join(literal)
                    literal = []
                yield (chunk,)
                i += len(chunk)
                break
        else:
            literal.append(layout[i])
            i += 1
    if literal:
        yield "".join(literal)


def _chunk_allowed(layout: str, i: int, chunk: str) -> bool:
    # Go reads "Jan"/"Mon" only when not followed by a lower-case letter ("Janet" is literal),
    # "January"/"Monday" always; "01"-"06" and "002" as themselves.
    if chunk in ("Jan", "Mon"):
        after = layout[i + len(chunk) : i + len(chunk) + 1]
        return not (after.islower() and after.isalpha())
    return True


class _Reader:
    def __init__(self, value: str, layout: str) -> None:
        self.value, self.layout, self.pos = value, layout, 0

    def fail(self, element: str) -> ValueError:
        rest = self.value[self.pos :]
        return ValueError(
            f'parsing time "{self.value}" as "{self.layout}": cannot parse "{rest}" as "{element}"'
        )

    def digits(self, element: str, low: int, high: int) -> int:
        m = re.compile(rf"[0-9]{{{low},{high}}}").match(self.value, self.pos)
        if m is None:
            raise self.fail(element)
        self.pos = m.end()
        return int(m.group(0))

    def word(self, element: str, words: tuple[str, ...]) -> int:
        for i, w in enumerate(words):
            if self.value[self.pos : self.pos + len(w)].lower() == w.lower():
                self.pos += len(w)
                return i
        raise self.fail(element)

    def literal(self, text: str) -> None:
        if not self.value.startswith(text, self.pos):
            raise self.fail(text)
        self.pos += len(text)


@dataclass(slots=True)
class _Fields:
    year: int = 1
    month: int = 1
    day: int = 1
    yday: int = -1
    hour: int = 0
    minute: int = 0
    second: int = 0
    fraction: float = 0.0
    pm: bool | None = None
    offset: int = 0


_DIGITS: Final = {  # chunk -> (field, min digits, max digits)
    "2006": ("year", 4, 4), "01": ("month", 2, 2), "1": ("month", 1, 2),
    "02": ("day", 2, 2), "2": ("day", 1, 2), "_2": ("day", 1, 2),
    "002": ("yday", 3, 3), "__2": ("yday", 1, 3), "15": ("hour", 1, 2),
    "03": ("hour", 2, 2), "3": ("hour", 1, 2), "04": ("minute", 2, 2), "4": ("minute", 1, 2),
    "05": ("second", 2, 2), "5": ("second", 1, 2),
}  # fmt: skip
_ANY_FRACTION = re.compile(r"[.,]([0-9]+)")


def _read(r: _Reader, f: _Fields, c: str, fraction_follows: bool) -> None:
    """Read chunk ``c`` of the layout into ``f``."""
    if c in _DIGITS:
        name, low, high = _DIGITS[c]
        if c in ("_2", "__2"):
            while r.value.startswith(" ", r.pos):
                r.pos += 1
        setattr(f, name, r.digits(c, low, high))
        if c in ("03", "3") and f.hour > 12:
            raise ValueError(f'parsing time "{r.value}": hour out of range')
        m = _ANY_FRACTION.match(r.value, r.pos)
        # Go: fractional seconds may follow the seconds even when the layout has none.
        if name == "second" and m is not None and not fraction_follows:
            f.fraction = float("0." + m.group(1))
            r.pos = m.end()
    elif c == "06":
        yy = r.digits(c, 2, 2)
        f.year = yy + (1900 if yy >= 69 else 2000)
    elif c in ("January", "Jan"):
        f.month = r.word(c, _MONTHS if c == "January" else tuple(m[:3] for m in _MONTHS)) + 1
    elif c in ("Monday", "Mon"):
        r.word(c, _DAYS if c == "Monday" else tuple(d[:3] for d in _DAYS))
    elif c in ("PM", "pm"):
        text = r.value[r.pos : r.pos + 2].upper()
        if text not in ("AM", "PM"):
            raise r.fail(c)
        f.pm = text == "PM"
        r.pos += 2
    elif c == "MST":
        m = re.compile(r"UTC|[A-Z]{3,5}|[+-][0-9]+").match(r.value, r.pos)
        if m is None:
            raise r.fail(c)
        r.pos = m.end()
    elif c[0] in "Z-":
        if c[0] == "Z" and r.value.startswith("Z", r.pos):
            r.pos += 1
        else:
            f.offset = _offset(r, c)
    else:  # a fraction chunk: ".000" exactly that many digits, ".999" any number or none
        m = _ANY_FRACTION.match(r.value, r.pos)
        if m is None and c[1] == "9":
            return
        if m is None or (c[1] == "0" and len(m.group(1)) != len(c) - 1):
            raise r.fail(c)
        f.fraction = float("0." + m.group(1))
        r.pos = m.end()


def parse(layout: str, value: str) -> float:
    """Seconds since the epoch of ``value`` read with ``layout``."""
    r = _Reader(value, layout)
    f = _Fields()
    parts = list(_chunks(layout))
    for i, part in enumerate(parts):
        if isinstance(part, str):
            r.literal(part)
            continue
        following = parts[i + 1] if i + 1 < len(parts) else None
        _read(r, f, part[0], isinstance(following, tuple) and following[0][0] in ".,")
    if r.pos != len(value):
        raise ValueError(f'parsing time "{value}" as "{layout}": extra text: "{value[r.pos :]}"')
    return _to_epoch(value, f)


def _to_epoch(value: str, f: _Fields) -> float:
    hour = f.hour
    if f.pm is not None:
        hour = (0 if hour == 12 else hour) + (12 if f.pm else 0)
    month, day = f.month, f.day
    if f.yday >= 0:
        if not 1 <= f.yday <= (366 if calendar.isleap(f.year) else 365):
            raise ValueError(f'parsing time "{value}": day-of-year out of range')
        month, day = _from_yday(f.year, f.yday)
    if not 1 <= month <= 12:
        raise ValueError(f'parsing time "{value}": month out of range')
    if not 1 <= day <= calendar.monthrange(f.year, month)[1]:
        raise ValueError(f'parsing time "{value}": day out of range')
    for what, v, top in (("hour", hour, 23), ("minute", f.minute, 59), ("second", f.second, 59)):
        if v > top:
            raise ValueError(f'parsing time "{value}": {what} out of range')
    epoch = calendar.timegm((f.year, month, day, hour, f.minute, f.second, 0, 0, 0))
    return epoch + f.fraction - f.offset


def _offset(r: _Reader, chunk: str) -> int:
    m = re.compile(r"[+-]").match(r.value, r.pos)
    if m is None:
        raise r.fail(chunk)
    sign = -1 if m.group(0) == "-" else 1
    r.pos += 1
    body = chunk[1:]
    hours = r.digits(chunk, 2, 2)
    minutes = seconds = 0
    if body in ("07:00", "07:00:00"):
        r.literal(":")
        minutes = r.digits(chunk, 2, 2)
    elif body in ("0700", "070000"):
        minutes = r.digits(chunk, 2, 2)
    if body == "07:00:00":
        r.literal(":")
        seconds = r.digits(chunk, 2, 2)
    elif body == "070000":
        seconds = r.digits(chunk, 2, 2)
    return sign * (hours * 3600 + minutes * 60 + seconds)


def _from_yday(year: int, yday: int) -> tuple[int, int]:
    month = 1
    while yday > calendar.monthrange(year, month)[1]:
        yday -= calendar.monthrange(year, month)[1]
        month += 1
    return month, yday
