"""Report generation time per example scenario (goal: <= 3 s for a 6-page report).

    python -m benchmarks.speed.report_speed [--repeat N]

Prints, for each example, the time to evaluate the scenario and build the report model,
the time to write the PDF, the page count, and the same for HTML/JSON/CSV."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from pypdf import PdfReader

    from planner_app import scenario
    from planner_app.report.model import build_report
    from planner_app.report.pdf import ensure_app, report_font_family
    from planner_app.report.writer import write_report
    from planner_app.specdb.catalog import shipped_db

    t0 = time.perf_counter()
    ensure_app()
    report_font_family()
    db = shipped_db()
    print(f"start-up (Qt application, font, spec data): {time.perf_counter() - t0:.2f} s")
    print(f"{'example':42s} {'lang':6s} {'build':>7s} {'pdf':>7s} {'pages':>5s} {'total':>7s} {'html':>7s} "
          f"{'json':>7s} {'csv':>7s}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for path in scenario.examples():
            for lang in ("en", "zh_CN"):
                best = {}
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    rep = build_report(scenario.load(path), db, lang=lang)
                    tb = time.perf_counter() - t
                    times = {"build": tb}
                    for fmt in ("pdf", "html", "json", "csv"):
                        t = time.perf_counter()
                        write_report(rep, os.path.join(tmp, f"r.{fmt}"), fmt, "A4")
                        times[fmt] = time.perf_counter() - t
                    for k, v in times.items():
                        best[k] = min(best.get(k, v), v)
                pages = len(PdfReader(os.path.join(tmp, "r.pdf")).pages)
                total = best["build"] + best["pdf"]
                worst = max(worst, total)
                print(f"{os.path.basename(path):42s} {lang:6s} {best['build']:6.2f}s {best['pdf']:6.2f}s {pages:5d} "
                      f"{total:6.2f}s {best['html']:6.2f}s {best['json']:6.2f}s {best['csv']:6.2f}s")
    print(f"slowest PDF report (build + write): {worst:.2f} s (goal <= 3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
