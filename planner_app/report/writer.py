"""Write a report in one of the formats, atomically: the output goes to a temporary file
in the target's folder and is renamed over the target only when complete, so a failure
leaves neither a partial file nor a damaged older report."""
from __future__ import annotations

import os

from planner_app.atomic import atomic_path
from planner_app.core.errors import InputError
from planner_app.report.exports import to_csv, to_json
from planner_app.report.html import render
from planner_app.report.text import Strings

FORMATS = ("pdf", "html", "json", "csv")
PAPERS = ("A4", "Letter")


def format_for(path: str, fmt: str | None = None) -> str:
    """The format named, or the one the file suffix implies (PDF when it implies none)."""
    if fmt:
        if fmt not in FORMATS:
            raise InputError("format", f"must be one of {', '.join(FORMATS)}, got {fmt!r}")
        return fmt
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    return {"htm": "html"}.get(ext, ext) if ext in FORMATS + ("htm",) else "pdf"


def write_report(report, path: str, fmt: str | None = None, paper: str = "A4", progress=None) -> str:
    """Write ``report`` to ``path``; ``progress(fraction, text)`` is called along the way.
    Returns the format written. Raises InputError("output", ...) when the file cannot be
    written (nothing is left behind)."""
    fmt = format_for(path, fmt)
    if paper not in PAPERS:
        raise InputError("paper", f"must be A4 or Letter, got {paper!r}")
    s = Strings(report.lang)
    path = os.path.abspath(path)
    if os.path.isdir(path):
        raise InputError("output", f"{path} is a folder; give a file name")
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise InputError("output", f"folder {directory} does not exist")
    try:
        with atomic_path(path, suffix="." + fmt, prefix=".report-") as tmp:
            if progress:
                progress(0.05, s("Writing the report"))
            _write(report, fmt, tmp, paper, progress)
    except OSError as e:  # the temporary file could not be made, or not renamed over the target
        raise InputError("output", f"cannot write {path}: {e.strerror or e}") from None
    if progress:
        progress(1.0, s("Done"))
    return fmt


def _write(report, fmt: str, tmp: str, paper: str, progress) -> None:
    """The report in ``fmt`` into the (temporary) file ``tmp``."""
    if fmt == "pdf":
        from planner_app.report.pdf import ReportError, write_pdf  # lazy: keeps Qt off the json, csv and html reports

        try:
            write_pdf(report, tmp, paper, progress)
        except ReportError as e:
            raise InputError("output", str(e)) from None
        if os.path.getsize(tmp) == 0:
            raise InputError("output", f"the PDF could not be written to {os.path.dirname(tmp)}")
        return
    if fmt == "html":
        data = render(report, target="html")
    elif fmt == "json":
        data = to_json(report)
    else:
        data = to_csv(report)
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(data)
