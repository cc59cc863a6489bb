"""Sizing reports from scenario files: a pure report model (``model``), HTML (``html``),
PDF through Qt (``pdf``, the only Qt module), JSON and CSV (``exports``).

The GUI calls ``build_report(sc, db, lang)`` then ``write_report(report, path, fmt, paper,
progress)``; the CLI is ``gpu-planner report`` (``planner_app.cli.report``)."""
