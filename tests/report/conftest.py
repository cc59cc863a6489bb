"""Shared helpers for the report tests: text out of a PDF (poppler's pdftotext when it is
installed, pypdf otherwise), PDFs of the example scenarios made once per session."""
import os

import pytest
from report_helpers import pdf_text


@pytest.fixture(scope="session")
def app():
    from planner_app.report.pdf import ensure_app

    return ensure_app()


@pytest.fixture(scope="session")
def example_pdfs(app, db, tmp_path_factory):
    """{example path: (pdf path, report, text)} for every example scenario, A4, English."""
    from planner_app import scenario
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    out = tmp_path_factory.mktemp("reports")
    made = {}
    for path in scenario.examples():
        rep = build_report(scenario.load(path), db)
        pdf = str(out / (os.path.basename(path)[:-5] + ".pdf"))
        write_report(rep, pdf, "pdf", "A4")
        made[path] = (pdf, rep, pdf_text(pdf))
    return made
