"""One estimate: memory, FLOPs, time and cost of a training or inference plan, as the
JSON object of PRODUCT.md's CLI contract (``gpu-planner estimate --json``)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner_app.core.hardware.fit import add_margin
from planner_app.core.hardware.machine import Hardware
from planner_app.core.hardware.specs import CUDA_CONTEXT_BYTES, NVML_CAPACITY_FACTOR
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training import timing
from planner_app.core.training.lora import NF4_BYTES_PER_PARAM
from planner_app.core.training.memory import training_memory
from planner_app.core.training.setup import ParallelPlan, TrainingSetup, grad_accum_steps
from planner_app.core.training.states import FRAGMENTATION, FRAGMENTATION_RECOMPUTE, allocator_reserve_fraction


@dataclass
class Overrides:
    mfu: float | None = None
    achieved_tflops: float | None = None
    price_basis: str | None = None  # cost.usd at this price (PRICE_KINDS); None: on-demand, else the first known


def _layout(plan: ParallelPlan) -> dict:
    return {"tp": plan.tp, "pp": plan.pp, "dp": plan.dp, "cp": plan.cp, "ep": plan.ep, "zero": plan.zero,
            "sequence_parallel": plan.sequence_parallel, "pp_schedule": plan.pp_schedule, "vp": plan.vp,
            "gpus": plan.gpus, "gpus_per_node": plan.gpus_per_node, "nodes": plan.nodes}


def same_schedule(setup: TrainingSetup, plan: ParallelPlan, micro_batch: int | None = None) -> TrainingSetup:
    """``setup`` at another micro-batch (or data-parallel degree) with the same number of
    micro-batches per step: the global batch follows, so a pipeline keeps as many micro-batches
    in flight (min(pp, micro-batches), which sets its first stage's activations)."""
    n_acc = grad_accum_steps(setup, plan)
    mb = setup.micro_batch if micro_batch is None else micro_batch
    return replace(setup, micro_batch=mb, global_batch=mb * plan.dp * plan.ep * n_acc if n_acc > 1 else 0)


def largest_micro_batch(model, setup: TrainingSetup, plan: ParallelPlan, capacity_bytes: float) -> int:
    """The largest micro-batch whose step fits (memory never falls as the batch grows), at the
    plan's number of micro-batches per step."""
    def fits(b):
        return training_memory(model, same_schedule(setup, plan, b), plan, capacity_bytes).fits

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while hi <= 1 << 16 and fits(hi):
        lo, hi = hi, hi * 2
    if hi > 1 << 16:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def fewest_gpus(model, setup: TrainingSetup, plan: ParallelPlan, capacity_bytes: float, max_gpus: int = 65536):
    """The fewest GPUs holding the model when only the data-parallel degree grows (the
    layout's tp, pp, cp, ep and ZeRO stage kept). None when growing dp cannot help."""
    base = plan.tp * plan.pp * plan.cp * plan.ep
    dp = 1
    while base * dp <= max_gpus:
        p = replace(plan, dp=dp)
        s = same_schedule(setup, plan)
        s = replace(s, global_batch=s.global_batch and s.micro_batch * dp * plan.ep * grad_accum_steps(setup, plan))
        if training_memory(model, s, p, capacity_bytes).fits:
            return base * dp
        if plan.zero == 0 and setup.offload == "none" and dp > 1:
            return None  # replicas hold the same memory: more GPUs do not help
        dp *= 2
    return None


def estimate_training(model, hw: Hardware, setup: TrainingSetup, plan: ParallelPlan,
                      overrides: Overrides | None = None, extras: bool = True) -> dict:
    """The full training estimate as a JSON-ready dict."""
    overrides = overrides or Overrides()
    cap = hw.gpu.capacity_bytes
    mem = training_memory(model, setup, plan, cap)
    out = {
        "mode": "training",
        "model": {"name": model.name, "arch": model.arch, "summary": model.summary()},
        "params": {"total": model.params_total, "active": model.params_active},
        "gpu": {"id": hw.gpu.id, "name": hw.gpu.name, "memory_gb": hw.gpu.memory_gb,
                "capacity_bytes": cap, "source": hw.gpu.source, "retrieved": hw.gpu.retrieved},
        "parallel": _layout(plan),
        "setup": {"micro_batch": setup.micro_batch, "seq_len": setup.seq_len, "global_batch": setup.global_batch,
                  "tokens": setup.tokens, "recipe": setup.recipe, "optimizer": setup.optimizer,
                  "optimizer_impl": setup.optimizer_impl,
                  "attention": setup.attention, "recompute": setup.recompute, "framework": setup.framework,
                  "offload": setup.offload},
        "memory": {
            "peak_bytes": mem.peak_bytes,
            "breakdown": dict(mem.breakdown),
            "fits": bool(mem.fits),
            "device_bytes": mem.device_bytes,
            "capacity_bytes": cap,
            "headroom_bytes": mem.headroom_bytes,
            "overhead": dict(mem.overhead),
            "peak_phase": mem.peak_phase,
            "peak_stage": mem.peak_stage,
            "phase_peaks": dict(mem.phase_peaks),
            "host_bytes": mem.host_bytes,
            "activations_per_layer_bytes": mem.activations_per_layer_bytes,
        },
        "assumptions": list(mem.assumptions),
    }
    if mem.paged_bytes:
        out["memory"]["paged_optimizer_states_bytes"] = mem.paged_bytes
    lora = setup.lora(model)
    if lora is not None:
        out["setup"].update(finetune=setup.finetune, lora_rank=lora.rank, lora_targets=list(lora.targets),
                            lora_dtype=setup.lora_dtype, lora_dropout=lora.dropout, qlora_prepare=lora.prepare)
        out["params"]["trainable"] = int(lora.adapter_params(model.dense_mlp_layers, model.moe_layers))
    if hw.instance is not None:
        out["instance"] = {"provider": hw.instance.provider, "region": hw.instance.region,
                           "id": hw.instance.instance_id, "gpus_per_instance": hw.instance.gpu_count,
                           "source": hw.instance.source, "retrieved": hw.instance.retrieved}
    if extras and model.is_transformer:
        out["memory"]["largest_micro_batch"] = largest_micro_batch(model, setup, plan, cap)
        out["memory"]["fewest_gpus_same_layout"] = fewest_gpus(model, setup, plan, cap)
    add_margin(out["memory"])
    st = timing.add_training_time(out, model, hw, setup, plan, overrides)
    out["assumptions"] += training_assumptions(model, hw, setup, plan)
    if extras and model.is_transformer:
        from planner_app.core.training.advice import advice_text, advise

        summary, changes = advise(model, hw, setup, plan, base=(mem, st.step_s))
        out["advice"] = {"text": advice_text(summary, changes),
                         "changes": [{"change": c.label, "fits": c.fits, "saves_bytes": c.saves_bytes,
                                      "time_change": c.time_change, "gpus": c.gpus} for c in changes]}
    return out


def _percent(fraction) -> float:
    return round(float(fraction) * 100, 6)


def training_assumptions(model, hw: Hardware, setup: TrainingSetup, plan: ParallelPlan) -> list[Text]:
    a = [
        Text(QT_TRANSLATE_NOOP("Engine", "memory.peak_bytes is what torch.cuda.max_memory_allocated would report on "
                                         "the most loaded GPU (framework {framework})"), framework=setup.framework),
        Text(QT_TRANSLATE_NOOP("Engine", "device memory adds the CUDA context ({context_gb:g} GB), NCCL buffers and "
                                         "a caching-allocator reserve of {reserve:g}% of the peak ({plain:g}% "
                                         "without, {full:g}% with full recomputation); fits compares that with "
                                         "{gb:g} GB x 2^30 x {nvml:g} (what NVML reports)"),
             context_gb=CUDA_CONTEXT_BYTES / 1e9, reserve=_percent(allocator_reserve_fraction(setup.recompute == "full")),
             plain=_percent(FRAGMENTATION), full=_percent(FRAGMENTATION_RECOMPUTE), gb=hw.gpu.memory_gb,
             nvml=NVML_CAPACITY_FACTOR),
    ]
    if setup.framework in ("pytorch", "deepspeed"):
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "activations follow the Hugging Face transformers 5.x implementation "
                                                  "(eager PyTorch ops, autograd saving rules); loss via logits.float() "
                                                  "and cross_entropy")))
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "training loop: loss = model(...).loss; loss.backward(); "
                                                  "optimizer.step(); zero_grad(set_to_none=True)")))
    else:
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "activations follow Megatron-LM with fused kernels (Korthikanti et al. "
                                                  "2022, generalised)")))
    lora = setup.lora(model)
    if lora is not None:
        a += lora_assumptions(model, setup, lora)
    if setup.optimizer == "adamw-8bit-paged":
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "bitsandbytes' paged 8-bit AdamW keeps its states in CUDA managed "
                                                  "memory (memory.paged_optimizer_states_bytes): outside "
                                                  "max_memory_allocated and the fit, paged to the host when the GPU "
                                                  "is full")))
    if setup.framework == "pytorch" and setup.optimizer in ("adam", "adamw"):
        a.append({"foreach": Text(QT_TRANSLATE_NOOP("Engine", "PyTorch's foreach AdamW allocates one parameter-sized "
                                                              "temporary in the optimizer step")),
                  "fused": Text(QT_TRANSLATE_NOOP("Engine", "PyTorch's fused AdamW (Hugging Face Trainer's default): "
                                                            "no temporaries, one kernel per step (--optimizer-impl)")),
                  "forloop": Text(QT_TRANSLATE_NOOP("Engine", "PyTorch's for-loop AdamW: temporaries of the largest "
                                                              "tensor only, one tensor at a time (--optimizer-impl)"))
                  }[setup.optimizer_impl])
    if plan.zero and setup.framework == "pytorch":
        a.append(Text({1: QT_TRANSLATE_NOOP("Engine", "ZeRO-1 as torch ZeroRedundancyOptimizer"),
                       2: QT_TRANSLATE_NOOP("Engine", "ZeRO-2 as FSDP SHARD_GRAD_OP"),
                       3: QT_TRANSLATE_NOOP("Engine", "ZeRO-3 as FSDP FULL_SHARD with one layer prefetched")}[plan.zero]))
    if setup.recompute == "selective" and setup.framework != "megatron":
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "selective recomputation as Megatron defines it: attention scores "
                                                  "recomputed in backward")))
    if setup.recompute == "full":
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "full recomputation keeps each layer's input and recomputes the layer "
                                                  "in backward")))
    if model.sliding_window and setup.seq_len >= model.sliding_window:
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "sliding window <= sequence: transformers builds an explicit "
                                                  "attention mask")))
    return a


def lora_assumptions(model, setup: TrainingSetup, lora) -> list[Text]:
    """What a LoRA/QLoRA estimate assumes, built from the resolved spec and its constants."""
    a = [Text(QT_TRANSLATE_NOOP("Engine", "LoRA as PEFT's get_peft_model: the base frozen, adapters of rank {rank} on "
                                          "{targets} in {dtype} ({n:,} trainable parameters), dropout {dropout:g}; "
                                          "the frozen base keeps no inputs for weight gradients and its backward "
                                          "computes data gradients only"),
              rank=lora.rank, targets=", ".join(lora.targets), dtype=setup.lora_dtype,
              n=int(lora.adapter_params(model.dense_mlp_layers, model.moe_layers)), dropout=lora.dropout),
         Text(QT_TRANSLATE_NOOP("Engine", "MFU of a LoRA step counts the FLOPs it runs: the forward, the base's data "
                                          "gradients and the adapters' three passes (no weight gradients for the "
                                          "base)"))]
    if lora.quant:
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "QLoRA: the layers' linear weights as bitsandbytes Linear4bit (NF4, "
                                                  "double quantization: {bpp:.4f} bytes per weight), dequantized to "
                                                  "bf16 for each GEMM in forward and backward; embeddings, norms and "
                                                  "the output layer in {bits} bits"),
                      bpp=NF4_BYTES_PER_PARAM, bits=32 if lora.prepare else 16))
    return a
