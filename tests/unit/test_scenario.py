"""Scenario files: bad input is refused naming the field; v1 migrates; newer versions are
refused; saving is atomic and the result reads back exactly."""
import json

import pytest

from planner_app import scenario
from planner_app.core.errors import InputError
from planner_app.service.estimate import estimate_json
from planner_app.specdb.schema import SpecDataError


def _good():
    return scenario.new_scenario()


@pytest.mark.parametrize("mutate, field", [
    (lambda s: s["workload"].update(colour="red"), "workload.colour"),
    (lambda s: s["workload"].pop("model"), "workload.model"),
    (lambda s: s.update(plans=[]), "plans"),
    (lambda s: s["plans"][0].update(speed=3), "plans[0].speed"),
    # a plan's own value of a workload option is checked as the workload's is
    (lambda s: s["plans"][0].update(micro_batch=0), "plans[0].micro_batch"),
    (lambda s: s["plans"][0].update(recipe="fp64"), "plans[0].recipe"),
    (lambda s: s["plans"][0].update(model="llama-3.1-8b"), "plans[0].model"),
    (lambda s: s["plans"][0].pop("gpu"), "plans[0]"),
    (lambda s: s.update(currency="EUR"), "currency"),
    (lambda s: s.update(chosen_plan=5), "chosen_plan"),
    (lambda s: s.update(schema_version="two"), "schema_version"),
    (lambda s: s.pop("schema_version"), "schema_version"),
    (lambda s: s.update(schema_version=99), "schema_version"),
])
def test_bad_scenarios_name_the_field(mutate, field):
    sc = _good()
    mutate(sc)
    with pytest.raises(SpecDataError) as e:
        scenario.loads(json.dumps(sc), "s.json")
    assert e.value.column == field


def test_invalid_json_names_the_line():
    with pytest.raises(SpecDataError, match="line 2.*not valid JSON"):
        scenario.loads('{"schema_version": 2,\n oops}', "s.json")


def test_version_1_migrates():
    v1 = {"schema_version": 1, "title": "old", "model": "llama-2-7b", "micro_batch": 2, "gpu": "h100-sxm", "gpus": 8,
          "zero": 1}
    sc = scenario.loads(json.dumps(v1))
    assert sc["schema_version"] == 2 and sc["meta"]["title"] == "old"
    assert sc["workload"] == {"model": "llama-2-7b", "micro_batch": 2}
    assert sc["plans"] == [{"gpu": "h100-sxm", "gpus": 8, "zero": 1, "name": "Plan A"}]


def test_save_reads_back_exactly_and_refuses_bad_data(tmp_path):
    sc = _good()
    sc["meta"]["title"] = "七百亿参数"
    path = tmp_path / "s.json"
    scenario.save(sc, str(path))
    assert scenario.load(str(path)) == sc
    bad = _good()
    bad["plans"] = []
    with pytest.raises(SpecDataError):
        scenario.save(bad, str(path))
    assert scenario.load(str(path)) == sc  # the good file is untouched


def test_unknown_estimate_option_is_named(db):
    with pytest.raises(InputError) as e:
        estimate_json({"model": "llama-2-7b", "gpu": "h100-sxm", "gpu_count": 8}, db)
    assert e.value.field == "gpu_count" and "allowed" in str(e.value)


def test_plans_evaluate_to_the_cli_numbers_and_errors_stay_per_plan(db):
    sc = _good()
    sc["plans"].append({"name": "bad", "gpu": "h100-sxm", "gpus": 8, "tp": 3})
    res = scenario.evaluate(sc, db)
    assert res[0]["estimate"]["params"]["total"] > 6e9
    assert "error" in res[1] and "tp" in res[1]["error"]
