"""``gpu-planner report`` end to end, formats from the suffix, atomic writes, refusals."""
import json
import os

import pytest
from report_helpers import pdf_text

from planner_app import scenario
from planner_app.cli import main

EXAMPLES = scenario.examples()


def test_report_pdf_end_to_end(app, tmp_path, capsys):
    out = tmp_path / "r.pdf"
    assert main(["report", EXAMPLES[0], "-o", str(out)]) == 0
    assert out.read_bytes()[:5] == b"%PDF-"
    assert scenario.load(EXAMPLES[0])["meta"]["title"] in pdf_text(str(out))
    assert os.listdir(tmp_path) == ["r.pdf"]  # no temporary file left


@pytest.mark.parametrize("fmt", ["html", "json", "csv"])
def test_report_formats(app, tmp_path, fmt):
    out = tmp_path / f"r.{fmt}"
    assert main(["report", EXAMPLES[1], "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    if fmt == "json":
        assert json.loads(text)["scenario"]["meta"]["title"]
    elif fmt == "html":
        assert text.startswith("<!DOCTYPE html>")
    else:
        assert text.startswith("plan,")


def test_explicit_format_wins_over_the_suffix(app, tmp_path):
    out = tmp_path / "r.out"
    assert main(["report", EXAMPLES[1], "-o", str(out), "--format", "json"]) == 0
    json.loads(out.read_text(encoding="utf-8"))


def test_report_zh_cn_and_letter(app, tmp_path):
    from pypdf import PdfReader

    out = tmp_path / "zh.pdf"
    assert main(["report", EXAMPLES[2], "-o", str(out), "--lang", "zh_CN", "--paper", "Letter"]) == 0
    assert "推荐方案" in pdf_text(str(out))
    assert abs(float(PdfReader(str(out)).pages[0].mediabox.width) - 612) < 2


def test_missing_folder_is_one_clear_line(tmp_path, capsys):
    out = tmp_path / "no" / "such" / "r.pdf"
    assert main(["report", EXAMPLES[0], "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "output" in err[0] and "does not exist" in err[0]
    assert not out.parent.exists()


def test_parent_is_a_file(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["report", EXAMPLES[0], "-o", str(f / "r.pdf")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == ["file.txt"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_leaves_nothing(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["report", EXAMPLES[0], "-o", str(ro / "r.pdf")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot write" in err[0]
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


def test_failure_mid_write_leaves_the_old_report_and_no_partial_file(app, db, tmp_path, monkeypatch):
    """A crash while the PDF is being written: the old report stays, no temporary file."""
    from planner_app.report import pdf
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    out = tmp_path / "r.pdf"
    out.write_bytes(b"%PDF-old")

    def boom(report, path, paper, progress=None):
        with open(path, "wb") as f:
            f.write(b"%PDF-half")
        raise RuntimeError("disk full")

    monkeypatch.setattr(pdf, "write_pdf", boom)
    with pytest.raises(RuntimeError):
        write_report(build_report(scenario.load(EXAMPLES[0]), db), str(out), "pdf")
    assert out.read_bytes() == b"%PDF-old"
    assert os.listdir(tmp_path) == ["r.pdf"]


def test_newer_schema_version_is_refused(tmp_path, capsys):
    sc = scenario.load(EXAMPLES[0])
    sc["schema_version"] = scenario.SCHEMA_VERSION + 1
    path = tmp_path / "future.json"
    path.write_text(json.dumps(sc), encoding="utf-8")
    out = tmp_path / "r.pdf"
    assert main(["report", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "schema_version" in err[0] and "newer" in err[0]
    assert not out.exists()


def test_unknown_paper_and_format_are_usage_errors(tmp_path, capsys):
    assert main(["report", EXAMPLES[0], "-o", str(tmp_path / "r.pdf"), "--paper", "A3"]) == 2
    assert main(["report", EXAMPLES[0], "-o", str(tmp_path / "r.pdf"), "--format", "docx"]) == 2
    assert os.listdir(tmp_path) == []


def test_write_report_refuses_bad_arguments(db, tmp_path):
    from planner_app.core.errors import InputError
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    rep = build_report(scenario.load(EXAMPLES[0]), db)
    with pytest.raises(InputError):
        write_report(rep, str(tmp_path / "r.pdf"), "pdf", "A5")
    with pytest.raises(InputError):
        write_report(rep, str(tmp_path / "r.pdf"), "docx")
    with pytest.raises(InputError):
        write_report(rep, str(tmp_path), "pdf")  # a folder
    assert os.listdir(tmp_path) == []


def _cli_args(options: dict) -> list[str]:
    args = []
    for k, v in options.items():
        opt = "--" + k.replace("_", "-")
        if v is True:
            args.append(opt)
        elif v not in (None, False):
            args += [opt, f"{v:g}" if isinstance(v, float) else str(v)]
    return args


def test_pdf_numbers_match_gpu_planner_estimate(app, db, tmp_path, capsys):
    """The recommended plan's numbers in the PDF are what `gpu-planner estimate --json`
    prints for the same options."""
    from planner_app import units
    from planner_app.report.model import build_report

    path = [p for p in EXAMPLES if "llama-70b" in p][0]
    sc = scenario.load(path)
    opts = scenario.plan_options(sc, build_report(sc, db).recommended)
    assert main(["estimate", *_cli_args(opts), "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    out = tmp_path / "r.pdf"
    assert main(["report", path, "-o", str(out)]) == 0
    text = pdf_text(str(out))
    for s in (f"in {units.fmt_seconds(est['time']['train_s'])}", f"{est['time']['tokens_per_s']:,.0f} tokens/s",
              f"MFU {est['time']['mfu'] * 100:.1f}%", f"{est['cost']['gpu_hours']:,.0f} GPU-hours",
              f"${est['cost']['usd_by_price']['on_demand']:,.0f}"):
        assert s in text, s


def test_many_reports_in_one_process(tmp_path):
    """Dozens of PDFs in one process, then a clean exit (PySide6 6.12.0 loses references
    to None while painting; the interpreter used to abort at exit)."""
    import subprocess
    import sys

    code = ("import os; os.environ.setdefault('QT_QPA_PLATFORM', 'offscreen'); "
            "from planner_app import scenario; from planner_app.report.model import build_report; from planner_app.report.writer import write_report; "
            "from planner_app.specdb.catalog import shipped_db; db = shipped_db(); "
            f"rep = build_report(scenario.load({EXAMPLES[-1]!r}), db); "
            f"[write_report(rep, os.path.join({str(tmp_path)!r}, 'r.pdf'), 'pdf') for _ in range(60)]; "
            "import gc; gc.collect(); print('ok')")
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, cwd=root)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-600:]
