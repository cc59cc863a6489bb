"""Report strings and number formats.

Every fixed string goes through ``planner_app.i18n.tr("Report", ...)``; for zh_CN, when
the Qt translator has no entry (no compiled ``.qm``, or an older one) the string comes
from ``zh_cn.STRINGS``. English reports never consult the translator, so a GUI running
in Chinese can still write an English report. Numbers are formatted the same in both
languages (the format the tests read back); a duration's unit word (min, h, days) is translated.
"""
from __future__ import annotations

from planner_app import units
from planner_app.i18n import engine_text, tr, translator
from planner_app.report.zh_cn import STRINGS

CONTEXT = "Report"


class Strings:
    """``s("text")`` translates a fixed report string into the report's language."""

    def __init__(self, lang: str):
        self.lang = lang
        self._cache: dict = {}

    def __call__(self, text: str) -> str:
        if self.lang == "en":
            return text
        hit = self._cache.get(text)
        if hit is None:
            hit = tr(CONTEXT, text)
            if hit == text:
                hit = STRINGS.get(text, text)
            self._cache[text] = hit
        return hit

    def option(self, text: str) -> str:
        """An option's label (core/options.py, context "Options"), as the GUI's forms show it."""
        if self.lang == "en":
            return text
        t = translator(self.lang)
        hit = t.translate("Options", text) if t is not None else None
        return hit if hit else self(text)  # a translation may equal its text ("QLoRA")

    def engine(self, value) -> str:
        """An engine sentence (advice, an assumption: ``core.text.Text``) in the report's
        language, through the app's catalogue for that language (whatever the UI's is)."""
        if self.lang == "en":
            return str(value)
        return engine_text(value, self.lang)

    def f(self, text: str, **kw) -> str:
        """A translated template with ``{name}`` fields filled in."""
        return self(text).format(**kw)


# The price kinds (core/plans/cost.PRICE_KINDS) as the report names them (translated by Strings).
PRICE_LABELS = {"on_demand": "On-demand", "reserved_1yr": "1-yr reserved", "reserved_3yr": "3-yr reserved",
                "spot": "Spot"}


# ---- numbers (one format per kind of number; the tests format estimates the same way) ----
def usd(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"${v:,.0f}"
    return f"${v:,.2f}"


def usd_per_m(v: float | None) -> str:
    return "-" if v is None else f"${v:,.3f}"


# The words of units.fmt_seconds that a report translates (s, ms and us stay SI symbols)
DURATION_WORDS = ("min", "h", "days")


def duration(v: float | None, s: Strings) -> str:
    """A run's length in its natural unit and the report's language: "2.6 min", "2.6 分钟", "59.5 days"."""
    return units.fmt_seconds(v, {w: s(w) for w in DURATION_WORDS})


def gpu_hours(v: float | None) -> str:
    """GPU-hours: one decimal below 100 (a short job is 0.3, not 0), whole hours above."""
    if v is None:
        return "-"
    return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


def count(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}"


def rate(v: float | None) -> str:
    """tokens/s"""
    return "-" if v is None else f"{v:,.0f}"


def pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.1f}%"


def gb(v: float | None) -> str:
    return units.fmt_bytes(v, binary=False)


def tokens(v: float | None) -> str:
    """A token budget: 1e12 -> 1.00T, 2e9 -> 2.00B."""
    if v is None:
        return "-"
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(v) >= div:
            return f"{v / div:.2f}{suffix}"
    return f"{v:,.0f}"


def params(v: float | None) -> str:
    return "-" if v is None else f"{v / 1e9:.2f}B"
