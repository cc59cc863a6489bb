"""Three bugs found while using the engine (issue 14), each with a test that failed before its fix."""
from planner_app.service.estimate import estimate_json

MEGATRON_70B = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "framework": "megatron", "tp": 8, "dp": 16, "zero": 1,
                "recipe": "mixed-bf16", "micro_batch": 1, "seq_len": 4096}


def test_megatron_keeps_its_fp32_gradient_buffer_without_accumulation(db):
    """Megatron allocates main_grad for every parameter up front: the peak of one micro-batch per
    step holds it with the activations, as with accumulation (it used to drop, and a 70B plan that
    does not fit an H100 was called fitting)."""
    one = estimate_json(MEGATRON_70B, db)["memory"]
    many = estimate_json({**MEGATRON_70B, "global_batch": 32}, db)["memory"]
    assert one["peak_bytes"] == many["peak_bytes"]
    assert one["breakdown"]["gradients"] > 0 and one["breakdown"]["activations"] > 0
    assert one["verdict"] == many["verdict"] == "does_not_fit"


def test_largest_micro_batch_keeps_the_pipeline_full(db):
    """With pp 4 and 64 micro-batches per step, the first stage holds 4 micro-batches: the largest
    micro-batch is found at that schedule, so it fits when run and one more does not."""
    base = {"model": "llama-2-13b", "gpu": "h200-sxm", "framework": "megatron", "pp": 4, "recipe": "mixed-bf16",
            "seq_len": 4096, "micro_batch": 1, "global_batch": 64}
    largest = estimate_json(base, db)["memory"]["largest_micro_batch"]
    assert largest >= 1

    def fits(b):
        return estimate_json({**base, "micro_batch": b, "global_batch": 64 * b}, db)["memory"]["fits"]

    assert fits(largest) and not fits(largest + 1)


def test_advice_combines_changes_when_no_single_one_fits(db):
    """Llama-2-7B under autocast on one A100 80GB: bf16, 8-bit AdamW, recomputation each fall short
    alone; advice names a combination that fits on the same GPU, and that combination, estimated,
    fits."""
    opts = {"model": "llama-2-7b", "gpu": "a100-sxm-80gb", "recipe": "amp-bf16", "seq_len": 4096, "micro_batch": 2}
    est = estimate_json(opts, db)
    assert not est["memory"]["fits"]
    same_gpus = [c for c in est["advice"]["changes"] if c["gpus"] == 1 and c["fits"]]
    combos = [c for c in same_gpus if " + " in c["change"]]
    assert combos, est["advice"]["text"]
    labels = combos[0]["change"].split(" + ")
    assert len(labels) >= 2
    changed = dict(opts)
    for label in labels:
        changed.update({"bf16 weights and optimizer states": {"recipe": "bf16"}, "8-bit AdamW": {"optimizer": "adamw-8bit"},
                        "full recomputation": {"recompute": "full"},
                        "offload optimizer states to the CPU": {"offload": "optimizer"}}.get(label, {}))
    assert estimate_json(changed, db)["memory"]["fits"]
    # the combination comes before LoRA, which trains something else
    order = [c["change"] for c in same_gpus]
    assert order.index(combos[0]["change"]) < next(i for i, c in enumerate(order) if "LoRA" in c)
