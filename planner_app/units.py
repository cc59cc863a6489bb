"""Formatting and parsing of units: bytes (GB vs GiB), seconds, rates, money."""
from __future__ import annotations

import math

_BINARY = False  # the Settings page switches GB (10^9) and GiB (2^30)


def set_binary(binary: bool) -> None:
    global _BINARY
    _BINARY = bool(binary)


def fmt_bytes(n: float | None, binary: bool | None = None) -> str:
    if n is None:
        return "-"
    binary = _BINARY if binary is None else binary
    base, units = (1024.0, ("B", "KiB", "MiB", "GiB", "TiB", "PiB")) if binary else (1000.0, ("B", "KB", "MB", "GB", "TB", "PB"))
    v = float(n)
    i = 0
    while abs(v) >= base and i < len(units) - 1:
        v /= base
        i += 1
    return f"{v:.0f} {units[i]}" if i == 0 else f"{v:.2f} {units[i]}"


# The unit names fmt_seconds writes; a report in another language passes its own for some of them
DURATION_UNITS = ("us", "ms", "s", "min", "h", "days")


def fmt_seconds(s: float | None, names: dict | None = None) -> str:
    """A duration in its natural unit: 156 s -> "2.6 min", 5 h -> "5.0 h", never "0.0 days".
    ``names``: other words for some of ``DURATION_UNITS`` (``{"days": "天"}``)."""
    if s is None:
        return "-"
    u = dict(zip(DURATION_UNITS, DURATION_UNITS)) | (names or {})
    if s < 1e-3:
        return f"{s * 1e6:.0f} {u['us']}"
    if s < 1:
        return f"{s * 1e3:.1f} {u['ms']}"
    if s < 120:
        return f"{s:.2f} {u['s']}"
    if s < 7200:
        return f"{s / 60:.1f} {u['min']}"
    if s < 3 * 86400:
        return f"{s / 3600:.1f} {u['h']}"
    return f"{s / 86400:.1f} {u['days']}"


def parse_bytes(text: str) -> float:
    """"80GB", "80 GiB", "1.5e9" -> bytes."""
    t = text.strip().lower().replace(" ", "")
    for suffix, mult in (("tib", 2**40), ("gib", 2**30), ("mib", 2**20), ("kib", 2**10), ("tb", 1e12),
                         ("gb", 1e9), ("mb", 1e6), ("kb", 1e3), ("b", 1)):
        if t.endswith(suffix):
            return float(t[: -len(suffix)]) * mult
    return float(t)


def fmt_rate(v: float | None) -> str:
    """A rate or count with two significant digits below 100 and whole numbers above: 12,345,
    45, 2.4, 0.082, 0.0041; a rate that is not zero never prints as "0"."""
    if v is None:
        return "-"
    a = abs(v)
    if a == 0 or a >= 100:
        return f"{v:,.0f}"
    decimals = max(0, 1 - math.floor(math.log10(a)))
    return f"{v:.{decimals}f}"
