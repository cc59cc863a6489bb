"""Regenerate the sample reports in ``docs/reports/``: a PDF per example scenario (and a
zh_CN one), with PNG renders of their pages (``pdftoppm -r 60``) for a quick look.

    python -m planner_app.report.samples [OUT_DIR] [--only NAME ...]   # NAME: an example's file name, no .json
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

from planner_app import scenario
from planner_app.report.model import build_report
from planner_app.report.pdf import ensure_app
from planner_app.report.writer import write_report
from planner_app.specdb.catalog import shipped_db

ZH_SAMPLE = "llama-70b-pretraining-three-clouds"
# Scenarios written for users in China (Chinese titles and notes): also rendered in zh_CN.
ZH_NATIVE = ("china-70b-pretraining-aws-alibaba-tencent", "china-70b-train-and-serve-aws-alibaba-tencent")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    only = None
    if "--only" in argv:  # regenerate some samples only (the others keep their files)
        only = set(argv[argv.index("--only") + 1:])
        argv = argv[:argv.index("--only")]

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = argv[0] if argv else os.path.join(root, "docs", "reports")
    png = os.path.join(out, "png")
    os.makedirs(png, exist_ok=True)
    ensure_app()
    db = shipped_db()  # the committed sample reports show the shipped data, never a user's rows
    jobs = [(os.path.splitext(os.path.basename(p))[0], p, "en") for p in scenario.examples()]
    jobs.append((f"{ZH_SAMPLE}.zh_CN", os.path.join(scenario.example_dir(), f"{ZH_SAMPLE}.json"), "zh_CN"))
    jobs += [(f"{n}.zh_CN", os.path.join(scenario.example_dir(), f"{n}.json"), "zh_CN") for n in ZH_NATIVE]
    if only is not None:
        jobs = [j for j in jobs if os.path.splitext(os.path.basename(j[1]))[0] in only]
    for name, path, lang in jobs:
        sc = scenario.load(path)
        if lang == "zh_CN" and name.startswith(ZH_SAMPLE):
            sc["meta"]["title"] = "七百亿参数模型预训练：AWS、Azure 与 GCP 对比"
            sc["meta"]["project"] = "2027 基础模型"
        pdf = os.path.join(out, f"{name}.pdf")
        write_report(build_report(sc, db, lang=lang), pdf, "pdf", "A4")
        for old in glob.glob(os.path.join(png, f"{name}-*.png")):
            os.remove(old)
        if shutil.which("pdftoppm"):
            subprocess.run(["pdftoppm", "-r", "60", "-png", pdf, os.path.join(png, name)], check=True)
        print(pdf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
