"""Issue 29, item 9 (the PDF part): the Chinese report's inputs table shows option values in Chinese
where the value is an English word ("training", "lora", "none" were left as they are)."""
import json
import os
import shutil
import subprocess

import pytest

from planner_app.paths import examples_dir


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is installed by ./run tests")
def test_zh_report_inputs_are_chinese(tmp_path):
    from planner_app.cli import main
    src = os.path.join(examples_dir(), "finetune-8b-one-node.json")
    with open(src, encoding="utf-8") as f:
        sc = json.load(f)
    sc["workload"].update(finetune="lora", recompute="none")
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sc), encoding="utf-8")
    out = tmp_path / "r.pdf"
    assert main(["report", str(path), "--lang", "zh_CN", "-o", str(out)]) == 0
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True, check=True).stdout
    inputs = text[text.index("输入"):]
    assert "LoRA" in inputs and "训练" in inputs and "无" in inputs
    for word in (" training", " lora ", " none"):
        assert word not in inputs.split("对比的方案")[0], word
