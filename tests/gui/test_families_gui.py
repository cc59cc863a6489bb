"""A Gemma 3 config.json imported in the Workload page, then its depth edited: the window
pattern follows (5 windowed layers in 6) and the plan is recomputed, with no error."""
import json
import os

from PySide6.QtCore import Qt

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
HF = os.path.join(ROOT, "tests", "data", "hf_configs")


def test_importing_gemma3_and_editing_its_depth(window, qtbot):
    wp = window.workload_page
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000) as sig:
        assert wp.import_config(os.path.join(HF, "gemma-3-12b-text.json"))
    with open(os.path.join(ROOT, "tests", "data", "hf_param_counts.json")) as f:
        assert sig.args[0]["params"]["total"] == json.load(f)["counts"]["gemma-3-12b-text"]["params"]
    spin = wp.dims["layers"]
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000) as sig:
        spin.selectAll()
        qtbot.keyClicks(spin, "12")
        qtbot.keyClick(spin, Qt.Key_Return)
    assert wp.error.text() == ""
    cfg = window.doc.data["workload"]["model"]["hf_config"]
    assert cfg["model_type"] == "gemma3_text" and cfg["layer_types"].count("sliding_attention") == 10
    assert sig.args[0]["params"]["total"] < 4e9
