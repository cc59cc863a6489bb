"""The Probe page's validation line: the step-time error without a profile and with this probe's
profile (issue 14 item 6), and the run stored for the never-worse rule."""
from __future__ import annotations

import json
import os

DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def test_validation_line_shows_the_error_with_and_without_the_profile(window, userdb):
    from planner_app.service.validation import parse_validate_args, validation_case

    with open(os.path.join(DATA, "probe_calibration_h200.json"), encoding="utf-8") as f:
        cal = json.load(f)
    pp = window.probe_page
    pp.gpu = pp.db.gpu("h200-sxm")
    pp.result = {k: cal[k] for k in ("device", "backend", "gemm", "model_gemm", "gemm_best_tflops", "bandwidth")}
    window.doc.data["workload"]["model"] = "llama-3.2-1b"
    settings = parse_validate_args(None)
    model, _args, est = validation_case(pp.db, "llama-3.2-1b", settings, pp.gpu)
    pp._validation_case, pp._validation_estimate = (model, settings), est
    run = cal["validation_runs"][0]
    pp._show_validation(dict(run["measured"]))
    text = pp.status.text()
    without = est["time"]["step_s"] / (run["measured"]["step_ms_median"] / 1e3) - 1
    assert f"{without:+.1%} against the estimate without a profile" in text
    assert "with this probe's profile" in text and "–" not in text.split("without a profile")[1]
    stored = userdb.validations("h200-sxm")
    assert len(stored) == 1 and stored[0]["estimate"]["model_ref"] == "llama-3.2-1b"
