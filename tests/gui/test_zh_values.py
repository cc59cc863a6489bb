"""Issue 29, item 9: in Chinese the values are Chinese too. The real window in zh_CN: the option
boxes list their choices in Chinese where the value is an English word (none, selective, full,
fused, lora, mixed-bf16), the Plan page's layout line reads "个 GPU = ...", the Specs page's GPU tab
is "GPU" (a list of GPUs, not "GPU 数量", a count), and Qt's own file dialog (the non-native one
that Linux desktops without a portal get) has no English label left."""
import re

from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QWidget

ENGLISH_WORD = re.compile(r"[A-Za-z]{3,}")


def combo(window, key) -> QComboBox:
    w = window.findChild(QWidget, f"option:{key}")
    assert isinstance(w, QComboBox), key
    return w


def items(c: QComboBox) -> list[str]:
    return [c.itemText(i) for i in range(c.count())]


def test_option_values_read_in_chinese(zh_window, qtbot):
    win = zh_window
    win.nav.setCurrentRow(0)
    assert {"无", "选择性", "完整"} <= set(items(combo(win, "recompute")))
    assert "全参数微调" in items(combo(win, "finetune"))
    assert any(t.startswith("混合精度 bf16") for t in items(combo(win, "recipe")))
    assert any("融合内核" in t for t in items(combo(win, "optimizer_impl")))
    # the scenario still holds the engine's values
    c = combo(win, "recompute")
    c.setCurrentIndex(items(c).index("选择性"))
    qtbot.waitUntil(lambda: win.doc.data["workload"].get("recompute") == "selective", timeout=5000)


def test_layout_line_and_specs_tab(zh_window, qtbot):
    win = zh_window
    win.nav.setCurrentRow(1)
    assert "个 GPU = tp" in win.plan_page.dp_label.text()
    assert "GPUs" not in win.plan_page.dp_label.text()
    specs = win.specs_page
    assert specs.tabs.tabText(0) == "GPU"


def test_qt_file_dialog_speaks_chinese(zh_window, qtbot):
    d = QFileDialog(zh_window, "打开")
    d.setOption(QFileDialog.DontUseNativeDialog, True)
    qtbot.addWidget(d)
    d.show()
    labels = [lab.text() for lab in d.findChildren(QLabel) if lab.text()]
    assert labels and not [t for t in labels if ENGLISH_WORD.search(t)], labels
    assert "查找范围(&L)：" in labels and "文件类型(&T)：" in labels
