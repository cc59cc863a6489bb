"""Money: GPU-hours, energy, and cost from an instance's prices (on-demand, 1- and 3-year
reserved, spot, and mixes), converted to one currency at a user-set rate."""
from __future__ import annotations

from dataclasses import dataclass

from planner_app.core.errors import InputError

# Default exchange rate (CNY per USD); the user sets their own in Settings or --cny-per-usd.
DEFAULT_CNY_PER_USD = 7.10

PRICE_KINDS = ("on_demand", "reserved_1yr", "reserved_3yr", "spot")


@dataclass(frozen=True)
class PriceMix:
    """Shares of the hours bought at each price, e.g. 80% 1-year reserved + 20% on-demand."""

    on_demand: float = 0.0
    reserved_1yr: float = 0.0
    reserved_3yr: float = 0.0
    spot: float = 0.0

    def __post_init__(self):
        shares = [self.on_demand, self.reserved_1yr, self.reserved_3yr, self.spot]
        if any(s < 0 for s in shares) or abs(sum(shares) - 1.0) > 1e-6:
            raise InputError("price_mix", f"shares must be non-negative and add up to 1; got {shares}")

    @classmethod
    def parse(cls, text: str) -> PriceMix:
        """"reserved_1yr=0.8,on_demand=0.2" or "80% reserved-1yr + 20% on-demand"."""
        shares = {}
        for part in text.replace("+", ",").split(","):
            part = part.strip().lower().replace("-", "_").replace(" ", "")
            if not part:
                continue
            if "=" in part:
                k, v = part.split("=", 1)
            elif "%" in part:
                v, k = part.split("%", 1)
                v = str(float(v) / 100)
            else:
                raise InputError("price_mix", f"cannot read {part!r}; use e.g. reserved_1yr=0.8,on_demand=0.2")
            k = {"reserved1yr": "reserved_1yr", "reserved3yr": "reserved_3yr", "ondemand": "on_demand",
                 "1yr": "reserved_1yr", "3yr": "reserved_3yr"}.get(k.replace("_", ""), k)
            if k not in PRICE_KINDS:
                raise InputError("price_mix", f"unknown price {k!r}; allowed: {', '.join(PRICE_KINDS)}")
            try:
                shares[k] = float(v)
            except ValueError:
                raise InputError("price_mix", f"share of {k} must be a number, got {v!r}") from None
        return cls(**shares)


DEFAULT_MIX = PriceMix(on_demand=0.2, reserved_1yr=0.8)


def to_usd(amount: float | None, currency: str, cny_per_usd: float) -> float | None:
    if amount is None:
        return None
    if currency == "USD":
        return amount
    if currency == "CNY":
        if cny_per_usd <= 0:
            raise InputError("cny_per_usd", f"must be positive, got {cny_per_usd}")
        return amount / cny_per_usd
    raise InputError("currency", f"must be USD or CNY, got {currency!r}")


def cny_rate(cny_per_usd: float | None) -> float:
    """The CNY per USD rate a conversion uses: the user's, else the built-in one."""
    return DEFAULT_CNY_PER_USD if cny_per_usd is None else cny_per_usd


def hourly_prices_usd(prices, cny_per_usd: float | None) -> dict:
    """Per instance-hour prices in USD; None where unknown. ``cny_per_usd`` None: the built-in rate."""
    rate = cny_rate(cny_per_usd)
    return {k: to_usd(getattr(prices, k), prices.currency, rate) for k in PRICE_KINDS}


@dataclass(frozen=True)
class PriceChoice:
    """How a plan is priced: ``basis`` (a price kind; None: on-demand, else the first known price),
    the blend ``mix`` a cost is also shown at, and the CNY rate (None: the built-in 7.10)."""

    basis: str | None
    mix: PriceMix
    cny_per_usd: float | None

    def hourly(self, prices) -> tuple[float | None, str | None]:
        """The one pricing rule: (USD per instance-hour, its basis: the price kind it is). Asked for a
        basis: that price or none (a cost names its basis; never another price in its place); not
        asked: on-demand, else the first price the row has, named as what it is (an instance sold
        only as spot is priced at spot and says "spot", never shown as on-demand)."""
        per_hour = hourly_prices_usd(prices, self.cny_per_usd)
        if self.basis is not None:
            return per_hour.get(self.basis), self.basis
        for kind in PRICE_KINDS:  # on_demand first
            if per_hour.get(kind) is not None:
                return per_hour[kind], kind
        return None, None


def mix_price(per_hour: dict, mix: PriceMix) -> float | None:
    """Blended hourly price; None when a share needs a price that is unknown."""
    total = 0.0
    for k in PRICE_KINDS:
        share = getattr(mix, k)
        if share == 0:
            continue
        if per_hour.get(k) is None:
            return None
        total += share * per_hour[k]
    return total


def energy_kwh(gpus: int, tdp_w: float, hours: float, utilisation: float = 1.0) -> float:
    """GPU energy at board power (TDP x hours): an upper bound without host and cooling."""
    return gpus * tdp_w * utilisation * hours / 1000.0
