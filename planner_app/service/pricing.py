"""Where a plan's price comes from, in words: its currency, the date it was read, its age, and
the exchange rate used when a CNY price is shown in USD. One place for the CLI and the
report, so that every converted price names its rate."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from planner_app.core.plans.cost import cny_rate

# A price older than this is flagged "may be stale": cloud list prices move (AWS cut P5
# on-demand prices by up to 45% in June 2025, as issue 17 records), so a year-old row is a
# guess. A policy choice, not a measured figure.
STALE_AFTER_DAYS = 365


@dataclass(frozen=True)
class PriceSource:
    """A plan's price provenance: ``currency`` of the row, ``date`` it was read (may be ''),
    ``cny_per_usd`` the rate the engine used and whether the user set it."""

    currency: str
    date: str
    cny_per_usd: float  # the rate the engine used (cny_rate: the user's, else the built-in one)
    rate_given: bool

    @property
    def converted(self) -> bool:
        """True when the engine's USD figures were converted from another currency."""
        return self.currency != "USD"

    def age_days(self, today: _dt.date | None = None) -> int | None:
        """Days between the price date and ``today``; None without a valid date."""
        try:
            d = _dt.date.fromisoformat(self.date)
        except (TypeError, ValueError):
            return None
        return ((today or _dt.date.today()) - d).days

    def stale(self, today: _dt.date | None = None) -> bool:
        """True when the price is more than STALE_AFTER_DAYS old (False without a valid date)."""
        age = self.age_days(today)
        return age is not None and age > STALE_AFTER_DAYS

    def rate_text(self) -> str:
        """'7.10 CNY per USD (built-in default, not a dated market rate; --cny-per-usd sets yours)'."""
        if self.rate_given:
            return f"{self.cny_per_usd:g} CNY per USD (your --cny-per-usd)"
        return (f"{self.cny_per_usd:.2f} CNY per USD (the built-in default, not a dated market rate; "
                "--cny-per-usd sets yours)")

    def describe(self, today: _dt.date | None = None) -> str:
        """'CNY price dated 2024-12-31 (700 days old, may be stale), converted at 7.10 CNY per USD (...)'."""
        age = self.age_days(today)
        when = f"dated {self.date}" if self.date else "undated"
        if age is not None:
            when += f" ({age} day{'' if age == 1 else 's'} old" + (", may be stale)" if self.stale(today) else ")")
        text = f"{self.currency} price {when}"
        if self.converted:
            text += f", converted at {self.rate_text()}"
        return text


def price_source(db, instance_id: str | None, cny_per_usd: float | None) -> PriceSource | None:
    """The PriceSource of an instance (None for a bare GPU or an unknown instance)."""
    if not instance_id:
        return None
    try:
        inst = db.instance(instance_id)
    except ValueError:  # InputError and SpecDataError are ValueErrors: the estimate reports them
        return None
    return PriceSource(currency=inst.prices.currency, date=inst.prices.date or "",
                       cny_per_usd=cny_rate(cny_per_usd), rate_given=bool(cny_per_usd))


def native_amount(usd: float | None, src: PriceSource) -> float | None:
    """The USD amount back in the row's own currency (the number the provider quotes)."""
    if usd is None or not src.converted:
        return usd
    return usd * src.cny_per_usd
