"""A bounded memo keyed by an object's identity, for inputs that cannot be hashed (numpy arrays,
layer profiles holding them)."""
from __future__ import annotations

from collections import OrderedDict


class IdentityMemo:
    """At most ``maxsize`` entries, the least recently used dropped first. Each entry keeps its key
    object alive, so an ``id`` is never reused while its entry stands; a hit is checked to be the
    very object (``is``)."""

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._items: OrderedDict = OrderedDict()

    def get(self, obj):
        """The value stored for ``obj``, or None."""
        hit = self._items.get(id(obj))
        if hit is None or hit[0] is not obj:
            return None
        self._items.move_to_end(id(obj))
        return hit[1]

    def put(self, obj, value) -> None:
        self._items[id(obj)] = (obj, value)
        self._items.move_to_end(id(obj))
        while len(self._items) > self.maxsize:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
