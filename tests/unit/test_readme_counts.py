"""The README's spec-database line states the shipped counts (GPUs, instances, providers, China
regions, interconnects, presets): a data change that forgets the README fails here."""
import os
import re

from planner_app.service.catalog import open_catalog

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
CHINA_REGION = re.compile(r"^(cn-|ap-guangzhou|ap-shanghai|ap-beijing)")


def test_readme_spec_database_counts_match_the_shipped_data():
    with open(README, encoding="utf-8") as f:
        text = " ".join(f.read().split())
    m = re.search(r"Spec database\*\*: (\d+) GPUs .*?, (\d+) cloud instances from (\d+) providers .*?; (\d+) in "
                  r"China regions.*?, (\d+) interconnects and networks, (\d+) model presets", text)
    assert m, "README's spec-database line changed shape"
    gpus, instances, providers, china, fabrics, presets = map(int, m.groups())
    db = open_catalog()
    df = db.instances
    assert gpus == len(db.gpus)
    assert instances == len(df)
    assert providers == df["provider"].nunique()
    assert china == int(df["region"].str.match(CHINA_REGION).sum())
    assert fabrics == len(db.fabrics)
    assert presets == len(db.models)
