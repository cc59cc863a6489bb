"""Helpers of the report tests (a module name no other test folder uses)."""
import shutil
import subprocess


def pdf_text(path: str) -> str:
    if shutil.which("pdftotext"):
        out = subprocess.run(["pdftotext", "-enc", "UTF-8", path, "-"], capture_output=True, timeout=60, check=True)
        text = out.stdout.decode("utf-8")
    else:
        from pypdf import PdfReader

        text = "\n".join(p.extract_text() or "" for p in PdfReader(path).pages)
    return text.replace("\u200b", "")


def squash(text: str) -> str:
    """Text without any whitespace: long cells wrap in the PDF."""
    return "".join(text.split())
