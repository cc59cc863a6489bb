"""Sizing reports from scenario files: a pure report model (``model``), HTML (``html``),
PDF through Qt (``pdf``, the only Qt module), JSON and CSV (``exports``).

The GUI calls ``build_report(sc, db, lang)`` then ``write_report(report, path, fmt, paper,
progress)``; the CLI is ``gpu-planner report`` (``planner_app.cli.report``)."""
from planner_app.report.model import PlanResult, Report, build_report
from planner_app.report.writer import FORMATS, PAPERS, write_report

__all__ = ["Report", "PlanResult", "build_report", "write_report", "FORMATS", "PAPERS"]
