"""LoRA and QLoRA chosen on the Workload page with its own widgets: the Plan page shows what
``gpu-planner estimate`` gives for the scenario's options, the LoRA fields follow the choice,
and the scenario round-trips."""
import contextlib
import io
import json

from planner_app import scenario
from planner_app.cli import main


def _cli(options: dict) -> dict:
    argv = ["estimate", "--json"]
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            argv.append(flag)
        elif v not in (None, False):
            argv += [flag, str(v)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())


def _pick(combo, value):
    combo.setCurrentIndex(combo.findData(value))
    assert combo.currentData() == value


def test_qlora_on_the_workload_page_gives_the_cli_estimate(window, qtbot):
    wp, pp = window.workload_page, window.plan_page
    window.nav.setCurrentRow(0)
    _pick(wp.model_combo, "llama-2-7b")
    _pick(wp.field("framework"), "pytorch")
    _pick(wp.field("recipe"), None)  # auto
    _pick(wp.field("recompute"), "none")
    wp.field("global_batch").setValue(wp.field("global_batch").minimum())  # auto
    wp.field("micro_batch").setValue(2)
    wp.field("seq_len").setValue(2048)
    assert not wp.field("lora_rank").isEnabled() and not wp.field("qlora_prepare").isEnabled()  # full fine-tuning
    wp.field("finetune").setCurrentIndex(wp.field("finetune").findData("qlora"))
    assert wp.field("lora_rank").isEnabled() and wp.field("qlora_prepare").isEnabled()
    wp.field("lora_rank").setValue(32)
    wp.field("lora_targets").setEditText("all-linear")
    wp.field("lora_targets").lineEdit().editingFinished.emit()
    # QAbstractButton.click(): press, release and toggle as a user's click does, wherever an earlier test
    # left the page scrolled (a mouse click at the widget's coordinates misses when it is scrolled away)
    wp.field("qlora_prepare").click()
    w = window.doc.data["workload"]
    assert (w["finetune"], w["lora_rank"], w["lora_targets"], w["qlora_prepare"]) == ("qlora", 32, "all-linear", True)
    qtbot.waitUntil(lambda: (pp.last_estimate or {}).get("setup", {}).get("finetune") == "qlora"
                    and pp.last_estimate["setup"]["lora_rank"] == 32 and pp.last_estimate["setup"]["qlora_prepare"],
                    timeout=20000)
    gui = pp.last_estimate
    cli = _cli(scenario.plan_options(window.doc.data, pp.plan_combo.currentIndex()))
    assert gui["params"]["trainable"] == cli["params"]["trainable"] == 32 * 32 * (4 * 8192 + 3 * 15104)
    assert gui["memory"]["peak_bytes"] == cli["memory"]["peak_bytes"]
    assert gui["time"]["step_s"] == cli["time"]["step_s"]
    assert gui["setup"]["recompute"] == "full"  # prepare_model_for_kbit_training turns checkpointing on

    # back to full fine-tuning: the LoRA keys leave the scenario, the fields are disabled
    wp.field("finetune").setCurrentIndex(wp.field("finetune").findData("full"))
    assert not any(k in window.doc.data["workload"] for k in ("finetune", "lora_rank", "lora_targets",
                                                                "qlora_prepare"))
    assert not wp.field("lora_rank").isEnabled()


def test_lora_scenario_round_trips_through_a_file(window, tmp_path):
    wp = window.workload_page
    _pick(wp.model_combo, "llama-3.2-1b")
    _pick(wp.field("framework"), "pytorch")
    _pick(wp.field("recipe"), None)
    wp.field("finetune").setCurrentIndex(wp.field("finetune").findData("lora"))
    wp.field("lora_dtype").setCurrentIndex(wp.field("lora_dtype").findData("bf16"))
    wp.field("lora_dropout").setText("0.05")
    wp.field("lora_dropout").textEdited.emit("0.05")
    path = tmp_path / "lora.json"
    scenario.save(window.doc.data, str(path))
    back = scenario.load(str(path))["workload"]
    assert (back["finetune"], back["lora_dtype"], back["lora_dropout"]) == ("lora", "bf16", 0.05)
    window.doc.update_workload(finetune=None, lora_dtype=None, lora_dropout=None, lora_rank=None)
    window.doc.data["workload"].update(back)
    window.doc.changed.emit("all")
    assert wp.field("finetune").value() == "lora" and wp.field("lora_dtype").value() == "bf16" and abs(wp.field("lora_dropout").value() - 0.05) < 1e-9


def test_a_target_module_the_model_lacks_is_refused_at_the_page(window, qtbot):
    """Typed into the Workload page's target field: the Plan page shows one line naming the option
    and the model's modules, and no numbers."""
    wp, pp = window.workload_page, window.plan_page
    _pick(wp.model_combo, "llama-2-7b")
    _pick(wp.field("framework"), "pytorch")
    _pick(wp.field("recipe"), None)
    wp.field("finetune").setCurrentIndex(wp.field("finetune").findData("lora"))
    wp.field("lora_targets").setEditText("query_key_value")
    wp.field("lora_targets").lineEdit().editingFinished.emit()
    qtbot.waitUntil(lambda: "lora_targets" in pp.error.text(), timeout=20000)
    assert "query_key_value" in pp.error.text() and "q_proj" in pp.error.text()
    assert pp.verdict.text().startswith("No result")  # the numbers are cleared, not left from the last plan
