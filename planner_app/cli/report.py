"""``gpu-planner report SCENARIO.json -o OUT.pdf [--lang en|zh_CN] [--format F] [--paper P]``."""
from __future__ import annotations

import sys

from planner_app import i18n, scenario
from planner_app.report.model import build_report
from planner_app.report.writer import format_for, write_report
from planner_app.service.catalog import open_catalog


def run(args) -> int:
    sc = scenario.load(args.scenario)
    fmt = format_for(args.output, getattr(args, "format", None))
    lang = getattr(args, "lang", "en") or "en"
    if fmt == "pdf" or lang != "en":
        # Fonts and painting need a QGuiApplication; it must exist before i18n.install,
        # which would otherwise make a plain QCoreApplication.
        from planner_app.report.pdf import ensure_app  # lazy: keeps Qt off the English json, csv and html reports
        ensure_app()

    previous = i18n.current()
    if lang != "en":
        i18n.install(lang)  # a compiled catalogue when there is one; zh_cn.py otherwise
    try:
        report = build_report(sc, open_catalog(), lang=lang)
        write_report(report, args.output, fmt, getattr(args, "paper", "A4") or "A4")
    finally:
        if lang != "en":
            i18n.install(previous)  # callers in the same process keep their language
    failed = [p.name for p in report.plans if not p.ok]
    print(f"wrote {args.output} ({fmt}, {len(report.plans)} plans"
          + (f"; {len(failed)} could not be estimated: {', '.join(failed)}" if failed else "") + ")",
          file=sys.stderr)
    return 0
