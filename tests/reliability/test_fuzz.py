"""Fuzzing the entry points (issue 16) with hypothesis: the CLI (in process, argv lists),
the scenario reader, config.json, cluster result files and the spec CSV importer. Whatever
comes in: no traceback and no hang; exit 2 with one line, or exit 0 with finite, physically
possible numbers. Bounded (max_examples, no per-example deadline) so the file runs in well
under 3 minutes on 2 cores."""
import contextlib
import csv
import io
import json
import math
import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from planner_app.core.errors import InputError
from planner_app.scenario import ESTIMATE_OPTIONS as OPTIONS_BY_KEY
from planner_app.specdb.schema import SpecDataError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# PLANNER_FUZZ_SCALE=10 runs ten times the examples (a deeper search by hand; CI runs 1x)
SCALE = max(1, int(os.environ.get("PLANNER_FUZZ_SCALE", "1")))
FUZZ = settings(max_examples=60 * SCALE, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def fast_cli(tmp_path_factory):
    """planner_app.cli.main with one catalog and one parser for every example (as the golden
    test does: loading them is most of a case's time) and an empty user database."""
    import planner_app.cli as cli
    import planner_app.cli.estimate as cli_estimate
    import planner_app.cli.search as cli_search
    from planner_app.service.catalog import open_catalog

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLANNER_USER_DIR", str(tmp_path_factory.mktemp("fuzz-user")))
        catalog = open_catalog()
        parser = cli.build_parser(document=False)
        mp.setattr(cli_estimate, "open_catalog", lambda: catalog)
        mp.setattr(cli_search, "open_catalog", lambda: catalog)
        mp.setattr(cli, "build_parser", lambda document=False, command=None: parser)

        def run(argv):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = cli.main(list(argv))
                except SystemExit as e:  # argparse's own exits (none expected: Parser raises UsageError)
                    rc = e.code
            return rc, out.getvalue(), err.getvalue()
        yield run


def _numbers(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _numbers(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _numbers(v, f"{path}[{i}]")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path, obj


def assert_possible(est: dict) -> None:
    """What exit 0 promises: every number finite, the memory and time physical."""
    for path, v in _numbers(est):
        assert math.isfinite(v), f"{path} = {v}"
    m, t = est["memory"], est.get("time", {})
    assert m["peak_bytes"] > 0 and m["device_bytes"] >= m["peak_bytes"] * 0.999
    assert all(v >= 0 for v in m["breakdown"].values())
    if est["mode"] == "training":
        assert t["step_s"] > 0 and t["tokens_per_s"] > 0 and 0 < t["mfu"] <= 1 + 1e-9 and t["hfu"] <= 1 + 1e-9
        assert all(v >= -1e-9 * t["step_s"] for v in t["breakdown_s"].values())
        if "train_s" in t:
            assert t["train_s"] > 0 and est["cost"]["gpu_hours"] > 0
    else:
        assert t["prefill_s"] > 0 and t["decode_tokens_per_s"] > 0


def assert_one_line_or_possible(rc, out, err):
    assert rc in (0, 2), (rc, err[-2000:])
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gpu-planner"), err[-2000:]
        assert out == ""
    return rc


# ---- the CLI --------------------------------------------------------------------------------
EDGE_TEXT = ["inf", "-inf", "nan", "1e400", "-1", "0", "0.5", "1e30", "9" * 400, "5e-324", "1e-300", "", " ",
             "abc", "1,000", "1_0", "0x10", "\n", "8\n; touch x", "$(id)", "1e12", "2", "8", "64", "1024",
             "abc%on_demand", "on_demand=nan", "spot=2,on_demand=-1", "nvlink4", "ib-ndr", "efa", "5000"]
SMALL = {"int": st.sampled_from(["1", "2", "4", "8", "16"]), "float": st.sampled_from(["0.3", "0.5", "1e12", "100"])}


def _value(opt):
    """Mostly values of the right kind (so that many examples reach the engine), else edge
    cases and arbitrary text."""
    wild = [st.sampled_from(EDGE_TEXT), st.text(max_size=12)]
    if opt.kind == "choice":
        valid = st.sampled_from([str(c) for c in opt.choices])
    elif opt.kind in ("int", "float"):
        lo = opt.minimum if opt.minimum is not None else 0
        hi = min(opt.maximum if opt.maximum is not None else 1e6, 1e6)
        valid = st.one_of(SMALL[opt.kind], st.integers(int(lo), int(hi)).map(str) if opt.kind == "int"
                          else st.floats(lo, hi, allow_nan=False).map(repr))
    else:
        valid = st.sampled_from(["ib-ndr", "efa", "roce-400", "on_demand=0.5,spot=0.5", "spot", "nvlink4"])
    return st.one_of([valid, valid, valid] + wild)


ESTIMATE_OPTIONS = [o for o in OPTIONS_BY_KEY.values() if o.key not in ("model", "gpu", "instance", "calibration")]
MODELS = ["llama-2-7b", "gpt2", "llama-3.1-70b", "mixtral-8x7b", "llama-3.2-1b", "gpt2", "nope", "",
          os.path.join(ROOT, "tests", "data", "hf_configs", "gpt2.json")]
MACHINES = [["--gpu", "h100-sxm"], ["--gpu", "a100-80gb"], ["--gpu", "h100-sxm"], ["--gpu", "t4"],
            ["--instance", "p5.48xlarge"], ["--gpu", "no-such-gpu"], ["--instance", "x"], []]


@st.composite
def estimate_argv(draw):
    argv = ["estimate", "--model", draw(st.sampled_from(MODELS)), *draw(st.sampled_from(MACHINES))]
    for opt in draw(st.lists(st.sampled_from(ESTIMATE_OPTIONS), max_size=4, unique_by=lambda o: o.key)):
        if opt.kind == "bool":
            argv.append(opt.flag)
        else:
            argv += [opt.flag, draw(_value(opt))]
    return argv + ["--json"]


@settings(FUZZ, max_examples=400 * SCALE)
@given(argv=estimate_argv())
def test_fuzz_estimate(fast_cli, argv):
    rc, out, err = fast_cli(argv)
    event(f"exit {rc}")
    if assert_one_line_or_possible(rc, out, err) == 0:
        assert_possible(json.loads(out))


COMMANDS = st.sampled_from([
    ["scaling", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--json"],
    ["cluster", "command"], ["cluster", "slurm"], ["specs", "gpus", "--json"], ["models", "--json"],
    ["search", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--tokens", "1e10", "--max-gpus", "8", "--json"],
])
EXTRA_FLAGS = ["--nodes", "--fabrics", "--gpus-per-node", "--out", "--python", "--partition", "--account", "--time",
               "--setup", "--master-addr", "--port", "--top", "--max-gpus", "--deadline-days", "--budget-usd",
               "--min-headroom-pct", "--seq-len", "--tokens", "--objective", "--weak", "--quick"]


@settings(FUZZ, max_examples=60 * SCALE)
@given(base=COMMANDS, extra=st.lists(st.tuples(st.sampled_from(EXTRA_FLAGS), st.sampled_from(EDGE_TEXT)),
                                     max_size=3))
def test_fuzz_other_commands(fast_cli, base, extra):
    argv = list(base) + [x for pair in extra for x in pair]
    rc, out, err = fast_cli(argv)
    assert_one_line_or_possible(rc, out, err)
    if rc == 0 and argv[0] == "scaling":
        for path, v in _numbers(json.loads(out)["curves"]):
            assert math.isfinite(v) and v >= 0, (path, v)


# ---- files ----------------------------------------------------------------------------------
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.text(max_size=20),
                         st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([10**400, -0.0, 1e308]))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(st.text(max_size=8), inner,
                                                                                 max_size=3)), max_leaves=8)


def _paths(obj, path=()):
    """Every (container, key) in a JSON value, to replace one of them."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield obj, k
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield obj, i
            yield from _paths(v, path + (i,))


@st.composite
def mutated(draw, base):
    """``base`` (a JSON object) with 1-3 values replaced by arbitrary JSON, keys added or removed."""
    doc = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        spots = list(_paths(doc))
        container, key = draw(st.sampled_from(spots))
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "delete" and isinstance(container, dict):
            del container[key]
        elif action == "add" and isinstance(container, dict):
            container[draw(st.text(max_size=10))] = draw(JSON_VALUES)
        else:
            container[key] = draw(JSON_VALUES)
    return doc


def _example_scenario():
    from planner_app import scenario
    with open(scenario.examples()[0], encoding="utf-8") as f:
        return json.load(f)


@settings(FUZZ, max_examples=150 * SCALE)
@given(doc=mutated(_example_scenario()))
def test_fuzz_scenario_reader(db, doc):
    from planner_app import scenario

    text = json.dumps(doc, allow_nan=True)
    try:
        sc = scenario.loads(text, "fuzz.json")
    except SpecDataError as e:
        event("refused")
        assert "\n" not in str(e)
        return
    event("read")
    for res in scenario.evaluate(sc, db):  # every plan: an estimate or one error line, never an exception
        if "estimate" in res:
            assert_possible(res["estimate"])
        else:
            assert "\n" not in res["error"]


def _config(name):
    with open(os.path.join(ROOT, "tests", "data", "hf_configs", name), encoding="utf-8") as f:
        return json.load(f)


@settings(FUZZ, max_examples=150 * SCALE)
@given(doc=st.one_of(mutated(_config("llama-2-7b.json")), mutated(_config("gpt2.json")),
                     mutated(_config("mixtral-mini.json"))))
def test_fuzz_config_json(db, tmp_path_factory, doc):
    from planner_app.service.estimate import estimate_json

    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_text(json.dumps(doc, allow_nan=True))
    try:
        est = estimate_json({"model": str(path), "gpu": "h100-sxm", "gpus": 8, "tokens": 1e9}, db)
    except InputError as e:
        event("refused")
        assert "\n" not in str(e)
        return
    event("estimated")
    assert_possible(est)


def _h200x2():
    with open(os.path.join(ROOT, "tests", "data", "collectives_h200x2.json"), encoding="utf-8") as f:
        return json.load(f)


def _top_level_only(doc):
    """A mutation of the file's own fields (environment, schema, p2p matrix), rows kept."""
    return {**_h200x2(), **{k: v for k, v in doc.items() if k != "rows"}}


@settings(FUZZ, max_examples=200 * SCALE)
@given(doc=st.one_of(mutated(_h200x2()), mutated({k: v for k, v in _h200x2().items() if k != "rows"})
                     .map(_top_level_only)))
def test_fuzz_cluster_result(db, fast_cli, tmp_path_factory, doc):
    from planner_app.probe import cluster
    from planner_app.probe.calibration import profile_from_result

    path = tmp_path_factory.mktemp("res") / "r.json"
    path.write_text(json.dumps(doc, allow_nan=True))
    assert_one_line_or_possible(*fast_cli(["cluster", "import", str(path), "--profile", "fuzz", "--gpu", "h200"]))
    try:
        data = cluster.read_result(str(path))
    except SpecDataError as e:
        event("refused")
        assert "\n" not in str(e)
        return
    event("read")
    gpu = db.gpu("h200")
    cluster.summary(data)
    for v in cluster.collective_verdicts(data, gpu, cluster.default_intra_fabric(db, gpu), db.fabric("ib-ndr")):
        assert math.isfinite(v["fraction"]) and v["fraction"] >= 0
    p = profile_from_result("fuzz", {}, gpu, collectives=data)  # what a profile would hold
    for bw in (p.intra_busbw_gb_s, p.inter_busbw_gb_s):
        assert bw is None or (math.isfinite(bw) and bw >= 0)


@settings(FUZZ, max_examples=60 * SCALE)
@given(raw=st.binary(max_size=300))
def test_fuzz_cluster_result_bytes(tmp_path_factory, raw):
    from planner_app.probe import cluster

    path = tmp_path_factory.mktemp("raw") / "r.json"
    path.write_bytes(raw)
    with pytest.raises(SpecDataError):
        cluster.read_result(str(path))


CELL = st.one_of(st.sampled_from(["", "0", "-1", "nan", "inf", "1e400", "h100-sxm", "no-such-gpu", "8", "true",
                                  "2026-01-01", "AWS", "USD", "nvlink4", "pcie4", "efa", "x" * 300]),
                 st.text(max_size=15))


@settings(FUZZ, max_examples=100 * SCALE)
@given(kind=st.sampled_from(["instances", "gpus", "fabrics"]), data=st.data())
def test_fuzz_spec_csv_import(tmp_path_factory, kind, data):
    """A CSV in the spec format: rows refused with one line (file, line, column), or saved; a
    saved row that does not match the catalog is flagged and skipped, never fatal."""
    from planner_app.specdb import importers
    from planner_app.specdb.catalog import SpecDB
    from planner_app.specdb.userdb import UserDB

    d = tmp_path_factory.mktemp("csv")
    with open(os.path.join(ROOT, "spec_data", f"{kind}.csv"), newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        row = dict(next(reader))
    row[header[0]] = row[header[0]] + "-fuzz" if kind != "instances" else row[header[0]]
    if kind == "instances":
        row["instance_id"] = "fuzz.box"
    for col in data.draw(st.lists(st.sampled_from(header), max_size=4, unique=True)):
        row[col] = data.draw(CELL)
    path = d / "rows.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerow(row)
    udb = UserDB(str(d / "user.sqlite"))
    try:
        importers.import_csv(udb, kind, str(path))
    except (SpecDataError, InputError) as e:
        event("refused")
        assert "\n" not in str(e)
        return
    event("saved")
    db = SpecDB(user_db=udb)  # never raises: a row that does not fit the catalog is skipped
    assert all("\n" not in p for p in db.user_problems)
    udb.close()
