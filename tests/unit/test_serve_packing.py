"""Serving replicas pack into whole instances and the SLO search ranks by its own keys (issue 29,
item 5): a deployment is billed for the whole instances its replicas take (three single-GPU
replicas share one 8-GPU instance, not three), its idle GPUs are said; "cheapest" runs in cost per
million output tokens, "fewest GPUs" in GPUs then that cost; quantized weights only when asked; the
Pareto front holds deployments sized for the load (no 2,048-GPU rows for 64 users)."""
import contextlib
import io
import json
import math

import pytest
from serve_case import run_serve, run_slo_search  # noqa: E402 (tests/unit is on sys.path)

from planner_app.cli import main
from planner_app.core.requests import ServeRequest
from planner_app.core.serving.deployment import pack_replicas
from planner_app.core.serving.search import FRONT_OVERPROVISION_FACTOR

MEETING = dict(model="llama-3.1-70b", isl=2048, osl=512, concurrency=64)  # the meeting task
MACHINES = (("instance", "p5.48xlarge"), ("instance", "p5en.48xlarge"))


def _billed(gpus_per_replica: int, replicas: int, per_instance: int) -> int:
    """Whole instances, counted replica by replica: fill an instance, then rent the next one."""
    if gpus_per_replica > per_instance:
        return replicas * math.ceil(gpus_per_replica / per_instance)
    instances, free = 0, 0
    for _ in range(replicas):
        if free < gpus_per_replica:
            instances, free = instances + 1, per_instance
        free -= gpus_per_replica
    return instances


@pytest.mark.parametrize("gpr, replicas, per_instance", [(1, 3, 8), (1, 8, 8), (1, 9, 8), (2, 3, 8), (4, 3, 8),
                                                         (3, 3, 8), (8, 2, 8), (16, 2, 8), (12, 1, 8), (1, 3, 1),
                                                         (2, 5, 4), (4, 1, 2)])
def test_pack_replicas_fills_whole_instances(gpr, replicas, per_instance):
    instances, idle = pack_replicas(gpr, replicas, per_instance)
    assert instances == _billed(gpr, replicas, per_instance)
    assert idle == instances * per_instance - gpr * replicas and idle >= 0
    # the same numbers over numpy columns (the search's path)
    import numpy as np
    cols = pack_replicas(np.array([gpr, gpr], float), np.array([replicas, replicas], float), per_instance)
    assert list(cols[0]) == [instances] * 2 and list(cols[1]) == [idle] * 2


def _price(db, instance: str) -> float:
    return db.instance(instance).prices.on_demand


def test_three_single_gpu_replicas_are_billed_one_instance(db):
    out = run_serve(ServeRequest(model="llama-3.1-8b", instance="p5en.48xlarge", tp=1, replicas=3, isl=2048, osl=512,
                                 concurrency=64), db)
    cost = out["cost"]
    assert (cost["instances"], cost["gpus_per_instance"], cost["idle_gpus"]) == (1, 8, 5)
    assert cost["usd_per_hour"] == pytest.approx(_price(db, "p5en.48xlarge"))  # was 3 instances' price
    assert cost["usd_per_million_output_tokens"] == pytest.approx(
        cost["usd_per_hour"] / (out["output_tokens_per_s"] * 3600) * 1e6)


def test_every_search_row_is_billed_whole_instances(db):
    res = run_slo_search(ServeRequest(**MEETING), MACHINES, 1000.0, 33.3, db, top=300)
    rows = res.cheapest + res.fewest_gpus + res.pareto
    assert any(p["replicas"] > 1 and p["tp"] * p["pp"] < 8 for p in rows)  # rows where packing matters
    for p in rows:
        gpr = p["tp"] * p["pp"]
        assert p["gpus"] == gpr * p["replicas"]
        assert p["instances"] == _billed(gpr, p["replicas"], 8) and p["gpus_per_instance"] == 8
        assert p["idle_gpus"] == 8 * p["instances"] - p["gpus"]
        assert p["usd_per_hour"] == pytest.approx(p["instances"] * _price(db, p["machine"]))
        assert p["usd_per_million_output_tokens"] == pytest.approx(
            p["usd_per_hour"] / (p["output_tokens_per_s"] * 3600) * 1e6)
        assert p["price_basis"] == "on_demand"
    # the single estimate bills the same
    p = next(p for p in rows if p["replicas"] > 1 and p["tp"] * p["pp"] < 8)
    single = run_serve(ServeRequest(**MEETING, instance=p["machine"], tp=p["tp"], pp=p["pp"], replicas=p["replicas"],
                                    weights_dtype=p["weights_dtype"], kv_dtype=p["kv_dtype"]), db)
    assert single["cost"]["instances"] == p["instances"]
    assert single["cost"]["usd_per_hour"] == pytest.approx(p["usd_per_hour"])


def test_each_ranking_runs_in_its_own_order(db):
    res = run_slo_search(ServeRequest(**MEETING), MACHINES + (("instance", "ecs.gn7e-c16g1.32xlarge"),),
                         1000.0, 33.3, db, top=400)
    cheap = [(p["usd_per_million_output_tokens"], p["gpus"]) for p in res.cheapest]
    few = [(p["gpus"], p["usd_per_million_output_tokens"]) for p in res.fewest_gpus]
    assert len(cheap) == len(few) == 400
    assert cheap == sorted(cheap) and few == sorted(few)
    assert len({p["machine"] for p in res.cheapest}) == 3


def test_a_price_at_another_basis_ranks_after_the_stated_one(db):
    """p5e.48xlarge is sold only as spot: with no basis asked it is priced at spot and named so, and
    comes after every on-demand row (its spot price is no cheaper on-demand deployment)."""
    assert db.instance("p5e.48xlarge").prices.on_demand is None
    res = run_slo_search(ServeRequest(**MEETING), (("instance", "p5e.48xlarge"), ("instance", "p5.48xlarge")),
                         1000.0, 33.3, db, top=3000)
    bases = [p["price_basis"] for p in res.cheapest]
    assert "spot" in bases and "on_demand" in bases
    assert bases == sorted(bases, key=lambda b: b != "on_demand")
    assert all(p["machine"] == "p5e.48xlarge" for p in res.cheapest if p["price_basis"] == "spot")
    spot = run_slo_search(ServeRequest(**MEETING, price="spot"), (("instance", "p5e.48xlarge"),
                                                                  ("instance", "p5.48xlarge")), 1000.0, 33.3, db, top=50)
    assert {p["price_basis"] for p in spot.cheapest} == {"spot"}
    per_m = [p["usd_per_million_output_tokens"] for p in spot.cheapest]
    assert per_m == sorted(per_m)


def _cli(argv: list) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def test_quantized_weights_only_when_asked():
    argv = ["serve", "--model", "llama-3.1-70b", "--instance", "p5.48xlarge,p5en.48xlarge", "--isl", "2048",
            "--osl", "512", "--concurrency", "64", "--ttft-ms", "1000", "--tpot-ms", "33.3", "--top", "200", "--json"]
    plain = _cli(argv)
    rows = plain["cheapest"] + plain["fewest_gpus"] + plain["pareto"]
    assert rows and {p["weights_dtype"] for p in rows} == {"bf16"}
    assert plain["quantized_weights"] is False
    asked = _cli(argv + ["--quantized-weights"])
    assert {"fp8", "int4"} <= {p["weights_dtype"] for p in asked["cheapest"] + asked["pareto"]}
    assert asked["evaluated"] == 3 * plain["evaluated"]


def test_the_pareto_front_is_sized_for_the_load(db):
    """64 users: no point of the front reaches 2,048 GPUs (was tp 8 x pp 4 x 64 replicas) and the note
    says what was left out; under a load one replica cannot hold, no point has more than
    FRONT_OVERPROVISION_FACTOR times the replicas its layout needs."""
    req = ServeRequest(**MEETING)
    res = run_slo_search(req, MACHINES, 1000.0, 33.3, db)
    assert res.pareto and max(p["gpus"] for p in res.pareto) < 2048
    assert max(p["gpus"] for p in res.pareto) <= FRONT_OVERPROVISION_FACTOR * 32  # tp 8 x pp 4 x 4 replicas
    note = next(n for n in res.notes if n.startswith("Pareto front:"))
    assert "more than 4x the replicas" in note and "2,048 GPUs" in note
    # a load one replica cannot hold: each point has at most 4x the replicas its layout needs (the single
    # estimate with a quarter of its replicas, less one, queues), and those it needs are there
    heavy = dict(model="llama-3.1-8b", isl=1024, osl=256, concurrency=4096)
    busy = run_slo_search(ServeRequest(**heavy), (("instance", "p5.48xlarge"),), 5000.0, 100.0, db)
    checked = 0
    for p in busy.pareto:
        assert not p["saturated"]
        fewer = math.ceil(p["replicas"] / FRONT_OVERPROVISION_FACTOR) - 1
        if fewer < 1:
            continue
        less = run_serve(ServeRequest(**heavy, instance=p["machine"], tp=p["tp"], pp=p["pp"], replicas=fewer,
                                      weights_dtype=p["weights_dtype"], kv_dtype=p["kv_dtype"]), db)
        assert less["saturated"]
        checked += 1
    assert checked
