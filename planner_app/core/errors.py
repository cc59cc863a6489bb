"""Errors the engine raises for bad input: each names the field and what is allowed."""
from __future__ import annotations


class InputError(ValueError):
    """A user-supplied value is out of range or inconsistent.

    Attributes:
        field: the input's name as the engine knows it (``micro_batch``, ``tp``...); the CLI
            and the GUI map it to their own option or widget.
        message: what is wrong and what is allowed.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def require_int(field: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise InputError naming ``field``.

    Rejects bools, fractional floats, NaN and values outside [minimum, maximum].
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(field, f"must be a whole number, got {value!r}")
    if isinstance(value, float):
        if value != value or value != int(value):
            raise InputError(field, f"must be a whole number, got {value!r}")
        value = int(value)
    if value < minimum:
        raise InputError(field, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InputError(field, f"must be at most {maximum}, got {value}")
    return value


def require_float(field: str, value, minimum: float = 0.0, maximum: float | None = None,
                  inclusive_min: bool = True) -> float:
    """Return ``value`` as a finite float within range, or raise InputError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(field, f"must be a number, got {value!r}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(field, f"must be a finite number, got {value!r}")
    if value < minimum or (not inclusive_min and value == minimum):
        raise InputError(field, f"must be {'at least' if inclusive_min else 'greater than'} {minimum:g}, got {value:g}")
    if maximum is not None and value > maximum:
        raise InputError(field, f"must be at most {maximum:g}, got {value:g}")
    return value


def require_choice(field: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise InputError listing them."""
    if value not in choices:
        raise InputError(field, f"must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value


class ImpossibleResult(InputError):
    """The engine returned a value no real run can have (NaN, infinite, negative, MFU > 1); the
    service re-raises it naming the option that set the numbers (an override, a calibration)."""
