"""The serve request the serving tests vary (tests/unit/test_serving*.py): Llama-3.1-70B, FP8 weights and KV,
four H100 SXM, 2048 in / 512 out, 64 concurrent unless a load is given; and the service's JSON and search
as the tests call them."""
from dataclasses import replace

from planner_app.core.requests import ServeRequest, ServeSearchRequest, SloTargets
from planner_app.service import serving

BASE = ["serve", "--model", "llama-3.1-70b", "--gpu", "H100 SXM", "--tp", "4", "--isl", "2048", "--osl", "512",
        "--concurrency", "8"]


def run_serve(req: ServeRequest, db) -> dict:
    """What ``gpu-planner serve --json`` prints for ``req``."""
    return serving.run_serve(req, db).to_json()


def run_slo_search(req: ServeRequest, machines, ttft_ms: float, tpot_ms: float, db, top: int = 10,
                   quantized: bool = False):
    """The SLO search of ``req``'s model and traffic on ``machines`` ((kind, name) pairs); ``quantized``:
    fp8/int4 weights too."""
    names = {"instance": ",".join(n for k, n in machines if k == "instance") or None,
             "gpu": ",".join(n for k, n in machines if k == "gpu") or None}
    return serving.run_slo_search(ServeSearchRequest(serve=replace(req, **names),
                                                     targets=SloTargets(ttft_ms=ttft_ms, tpot_ms=tpot_ms), top=top,
                                                     quantized_weights=quantized), db)


def serve(db, **kw):
    base = dict(model="llama-3.1-70b", gpu="H100 SXM", tp=4, isl=2048, osl=512, weights_dtype="fp8", kv_dtype="fp8")
    base.update(kw)
    if "request_rate" not in kw and "concurrency" not in kw:
        base["concurrency"] = 64
    return run_serve(ServeRequest(**base), db)
