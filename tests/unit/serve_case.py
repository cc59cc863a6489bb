"""The serve request the serving tests vary (tests/unit/test_serving*.py): Llama-3.1-70B, FP8 weights and KV,
four H100 SXM, 2048 in / 512 out, 64 concurrent unless a load is given."""
from planner_app.service.serving import ServeRequest, run_serve

BASE = ["serve", "--model", "llama-3.1-70b", "--gpu", "H100 SXM", "--tp", "4", "--isl", "2048", "--osl", "512",
        "--concurrency", "8"]


def serve(db, **kw):
    base = dict(model="llama-3.1-70b", gpu="H100 SXM", tp=4, isl=2048, osl=512, weights_dtype="fp8", kv_dtype="fp8")
    base.update(kw)
    if "request_rate" not in kw and "concurrency" not in kw:
        base["concurrency"] = 64
    return run_serve(ServeRequest(**base), db)
