"""Every case of ``tests/data/golden_estimates.json`` (``python benchmarks/make_golden.py``) gives
the same ``estimate --json`` again: numbers to 1e-9 relative (1e-6 absolute near zero), booleans,
strings and key sets exactly. A deliberate change fails with one line per changed case, naming
its command line and the JSON path of the first value that differs; remake the file and say why.
"""
import contextlib
import io
import json
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "data", "golden_estimates.json")
REL, ABS = 1e-9, 1e-6


def first_difference(want, got, path="$"):
    """The JSON path and a short description of the first difference, or None when equal."""
    if isinstance(want, bool) or isinstance(got, bool):
        return None if type(want) is type(got) and want == got else f"{path}: {want!r} -> {got!r}"
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return None if math.isclose(want, got, rel_tol=REL, abs_tol=ABS) else f"{path}: {want!r} -> {got!r}"
    if isinstance(want, dict) and isinstance(got, dict):
        if want.keys() != got.keys():
            gone, new = sorted(want.keys() - got.keys()), sorted(got.keys() - want.keys())
            return f"{path}: keys missing {gone}, new {new}"
        for k in sorted(want):
            d = first_difference(want[k], got[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path}: {len(want)} items -> {len(got)}"
        for n, (w, g) in enumerate(zip(want, got)):
            d = first_difference(w, g, f"{path}[{n}]")
            if d:
                return d
        return None
    return None if type(want) is type(got) and want == got else f"{path}: {want!r} -> {got!r}"


def test_first_difference_names_the_path():
    assert first_difference({"a": [1.0, {"b": 2}]}, {"a": [1.0, {"b": 2.0000000000001}]}) is None
    assert first_difference({"a": [1.0, {"b": 2}]}, {"a": [1.0, {"b": 2.1}]}) == "$.a[1].b: 2 -> 2.1"
    assert first_difference({"a": 0.0}, {"a": 1e-7}) is None
    assert first_difference({"a": True}, {"a": 1}) == "$.a: True -> 1"
    assert first_difference({"a": 1, "b": 2}, {"a": 1, "c": 2}) == "$: keys missing ['b'], new ['c']"
    assert first_difference({"a": None}, {"a": 0.0}) == "$.a: None -> 0.0"


def test_estimates_match_the_golden_file(monkeypatch, tmp_path):
    import planner_app.cli as cli

    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    assert len(golden["cases"]) >= 320
    # The cases name config.json files relative to the repository root, as the file was made.
    monkeypatch.chdir(ROOT)
    # An empty user database, as make_golden.py uses: no user rows or price overrides.
    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    # One catalog and one parser for all cases (loading them is ~3/4 of a case's time). The
    # golden file was made with a fresh catalog per case, so an estimate that changed the
    # catalog it was given would show here as a difference.
    import planner_app.cli.estimate as cli_estimate
    from planner_app.service.catalog import open_catalog

    catalog = open_catalog()
    parser = cli.build_parser(document=False)
    monkeypatch.setattr(cli_estimate, "open_catalog", lambda: catalog)
    monkeypatch.setattr(cli, "build_parser", lambda document=False, command=None: parser)

    failures = []
    for case in golden["cases"]:
        argv, out, err = case["argv"], io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.main(list(argv))
            except SystemExit as e:
                rc = e.code
        if rc != 0:
            failures.append(f"{' '.join(argv)}: exit {rc}: {err.getvalue().strip()}")
            continue
        d = first_difference(case["result"], json.loads(out.getvalue()))
        if d:
            failures.append(f"{' '.join(argv)}: {d}")
    assert not failures, f"{len(failures)} of {len(golden['cases'])} cases differ:\n" + "\n".join(failures)
