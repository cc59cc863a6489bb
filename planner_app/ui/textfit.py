"""Text that fits its room: where a label may break (spaces, after hyphens, dots, slashes and
underscores, between CJK characters), the size a wrapped label takes, and a label wrapped into
lines of a given pixel width (charts' category labels, table headers, chart titles). The text-fit
test (tests/gui/test_text_fit.py) measures with the same functions."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel

# Where a long token may break besides a space: after these characters (instance ids such as
# ecs.gn7e-c16g1.32xlarge, paths, snake_case keys). A zero-width space marks the break for Qt's
# line breaker (Unicode UAX #14: ZWSP is a break opportunity of zero width; "-" already is one).
BREAK_AFTER = "._/"
ZWSP = "\u200b"
# Flags of a wrapped label: Qt.TextWordWrap breaks at the opportunities above, never inside a word.
WRAP_FLAGS = Qt.AlignCenter | Qt.TextWordWrap


def breakable(text: str) -> str:
    """``text`` with a zero-width break opportunity after each BREAK_AFTER character."""
    for ch in BREAK_AFTER:
        text = text.replace(ch, ch + ZWSP)
    return text


def wrapped_size(fm: QFontMetrics, text: str, width_px: int) -> QSize:
    """The size ``text`` takes when wrapped (WRAP_FLAGS) into ``width_px``; wider than
    ``width_px`` when one unbreakable word is."""
    return fm.boundingRect(QRect(0, 0, max(width_px, 1), 100_000), WRAP_FLAGS, breakable(text)).size()


def longest_word_px(fm: QFontMetrics, text: str) -> int:
    """The width of ``text``'s widest unbreakable piece: the narrowest a wrapped label can be."""
    return wrapped_size(fm, text, 1).width()


def wrap_lines(text: str, font: QFont, width_px: float, max_lines: int = 3) -> list[str]:
    """``text`` broken into lines no wider than ``width_px`` (at the break opportunities; inside a
    word only when that word alone is wider), at most ``max_lines``: the last one shown is cut
    with "…" when more text follows."""
    if not text:
        return [""]
    fm = QFontMetrics(font)
    # break after a dot or slash only inside a word too wide on its own: "AWS p5.48xlarge" breaks
    # at its space, "ecs.gn7e-c16g1.32xlarge" where it must
    words = [breakable(w) if fm.horizontalAdvance(w) > width_px else w for w in text.split(" ")]
    layout = QTextLayout(" ".join(words), font)
    opt = QTextOption()
    opt.setWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(opt)
    spans = []
    layout.beginLayout()
    while True:
        line = layout.createLine()
        if not line.isValid():
            break
        line.setLineWidth(max(float(width_px), 1.0))
        spans.append((line.textStart(), line.textLength()))
    layout.endLayout()
    src = layout.text()
    lines = [src[a:a + n].replace(ZWSP, "").strip() for a, n in spans]
    if len(lines) > max_lines:
        rest = " ".join(lines[max_lines - 1:])
        lines = lines[:max_lines - 1] + [fm.elidedText(rest, Qt.ElideRight, int(width_px))]
    return lines or [""]


class WrapLabel(QLabel):
    """A word-wrapped label that asks its layout for the height its text needs at its width (Qt's
    layouts take a wrapped label's height from its size hint at an arbitrary width, so a long text
    in a narrow column was cut off at the bottom)."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setWordWrap(True)

    def _fit_height(self) -> None:
        need = self.heightForWidth(self.width()) if self.text() else 0
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)

    def resizeEvent(self, ev):  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        self._fit_height()

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self._fit_height()
