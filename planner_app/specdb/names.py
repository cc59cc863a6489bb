"""Name matching tolerant of case, spacing, punctuation and vendor prefixes."""
from __future__ import annotations

import re

from planner_app.core.errors import InputError

_VENDOR_WORDS = ("nvidia", "amd", "intel", "tesla", "geforce", "instinct", "habana")
# One pattern for all the words (removing one whole word never changes another's word
# boundaries, so this equals removing them one by one); the catalog normalises ~350 names
# at start-up, and eight re.sub calls per name were a third of its load time.
_VENDOR_RE = re.compile(rf"\b(?:{'|'.join(_VENDOR_WORDS)})\b")
_NOT_NAME_RE = re.compile(r"[^a-z0-9.]")


def normalise(name: str) -> str:
    """"NVIDIA H100-SXM5 80GB" -> "h100sxm580gb"."""
    return _NOT_NAME_RE.sub("", _VENDOR_RE.sub("", name.lower()))


def best_match(name: str, index: dict, field: str, kind: str) -> str:
    """The id whose id, name or alias matches ``name``; a unique prefix match also counts.

    Raises InputError naming ``field`` and listing close candidates when nothing (or more
    than one thing) matches.
    """
    key = normalise(name)
    if not key:
        raise InputError(field, f"must name a {field}; got {name!r}")
    if key in index:
        return index[key]
    ids = {v for k, v in index.items() if k.startswith(key)}
    if len(ids) == 1:
        return ids.pop()
    if not ids:  # "h100-sxm5-80gb" style: the longest known name that the input starts with
        prefixes = sorted((k for k in index if key.startswith(k) and len(k) >= 3), key=len, reverse=True)
        if prefixes:
            return index[prefixes[0]]
    candidates = sorted(ids) if ids else sorted({v for k, v in index.items() if key[:3] in k})[:8]
    hint = f"; did you mean: {', '.join(candidates)}" if candidates else f"; see `gpu-planner {'specs gpus' if kind == 'gpus' else 'models'}`"
    what = "ambiguous" if ids else "unknown"
    raise InputError(field, f"{what} {field} {name!r}{hint}")
