"""Translatable sentences from the Qt-free layers (engine advice and assumptions, probe
messages) without importing Qt.

``Text(template, **params)`` is a ``str`` whose value is the English sentence
(``template.format(**params)``), so JSON, the CLI and every ``==`` comparison see plain
English, byte for byte. It also keeps ``.template`` and ``.params``, so a face (the GUI, the
report) can show ``translate("Engine", template).format(**params)`` in the user's language
(``render``). Params that are words are Text themselves and are translated too; numbers keep
their format spec (``{gb:.1f}``) in both languages.

Templates are written inside ``QT_TRANSLATE_NOOP("Engine", "...")`` (a no-op here) so that
pyside6-lupdate extracts them into the "Engine" context (literals only; adjacent literals
are joined, as Python does).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

CONTEXT = "Engine"


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the name lupdate looks for
    """Mark ``text`` for extraction into ``context``; returns it unchanged."""
    return text


class Text(str):
    """An English sentence that remembers its template and parameters (see the module doc)."""

    template: str
    params: dict

    def __new__(cls, template: str, **params):
        self = super().__new__(cls, template.format(**params))
        self.template = template
        self.params = params
        return self

    def __reduce__(self):  # copy/deepcopy/pickle keep the template, not just the English
        return (_make_text, (type(self), self.template, self.params))

    def __repr__(self) -> str:
        return f"Text({str.__repr__(self)})"


class TextList(Text):
    """Sentences joined by a separator that is translated too (``"; "`` becomes ``"；"``)."""

    items: tuple

    def __new__(cls, sep: str, items: Iterable):
        items = tuple(items)
        self = str.__new__(cls, sep.join(items))
        self.template, self.params, self.items = sep, {}, items
        return self

    def __reduce__(self):
        return (TextList, (self.template, self.items))


def _make_text(cls, template, params):
    return cls(template, **params)


def render(value, translate: Callable[[str, str], str]):
    """``value`` in the language of ``translate(context, text)``: a Text's template translated
    and formatted with its rendered params; a TextList's items joined by the translated
    separator; anything else unchanged. A translation that fails to format (a catalogue
    with a broken placeholder) falls back to the English sentence."""
    if isinstance(value, TextList):
        return translate(CONTEXT, value.template).join(render(v, translate) for v in value.items)
    if isinstance(value, Text):
        params = {k: render(v, translate) for k, v in value.params.items()}
        try:
            return translate(CONTEXT, value.template).format(**params)
        except (KeyError, IndexError, ValueError):
            return str(value)
    return value


def texts_in(value) -> Iterable[Text]:
    """Every Text inside ``value`` (itself, its params, a TextList's items), outermost first."""
    if isinstance(value, Text):
        yield value
        for v in (value.items if isinstance(value, TextList) else value.params.values()):
            yield from texts_in(v)
