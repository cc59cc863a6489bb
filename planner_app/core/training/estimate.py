"""One training estimate (``gpu-planner estimate --json``): memory, FLOPs, time and cost of a plan,
as typed parts (``TrainingEstimate``) with one serializer to the JSON of PRODUCT.md's CLI contract."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from planner_app.core.hardware.compute import DTENSOR_LAYER_HOST_S, HOST_ADAMW_ELEMENTS_PER_S, host_adamw_kind
from planner_app.core.hardware.fit import add_margin
from planner_app.core.hardware.machine import Hardware
from planner_app.core.hardware.specs import CUDA_CONTEXT_BYTES, NVML_CAPACITY_FACTOR
from planner_app.core.models.flops import forward_flops_per_token
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.cost import (
    PRICE_KINDS,
    PriceChoice,
    energy_kwh,
    hourly_prices_usd,
    mix_price,
)
from planner_app.core.results import check_quantities
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.advice import advice_text, advise
from planner_app.core.training.lora import NF4_BYTES_PER_PARAM
from planner_app.core.training.memory import MemoryResult, training_memory
from planner_app.core.training.setup import (
    ParallelPlan,
    TrainingSetup,
    grad_accum_steps,
)
from planner_app.core.training.states import (
    FRAGMENTATION,
    FRAGMENTATION_RECOMPUTE,
    allocator_reserve_fraction,
)
from planner_app.core.training.timing import StepTime, pcie_gb_s, step_time

# A GPU without a board power in the spec data is charged as an H100 SXM (700 W) for energy
DEFAULT_TDP_W = 700.0


def same_schedule(setup: TrainingSetup, plan: ParallelPlan, micro_batch: int | None = None
                  ) -> tuple[TrainingSetup, ParallelPlan]:
    """(setup, plan) at another micro-batch with the same number of micro-batches per step: the
    global batch follows, so a pipeline keeps as many micro-batches in flight (min(pp,
    micro-batches), which sets its first stage's activations)."""
    n_acc = grad_accum_steps(setup, plan)
    mb = plan.micro_batch if micro_batch is None else micro_batch
    return (replace(setup, global_batch=mb * plan.dp * plan.ep * n_acc if n_acc > 1 else 0),
            replace(plan, micro_batch=mb))


def largest_micro_batch(model, setup: TrainingSetup, plan: ParallelPlan, capacity_bytes: float) -> int:
    """The largest micro-batch whose step fits (memory never falls as the batch grows), at the
    plan's number of micro-batches per step."""
    def fits(b):
        return training_memory(model, *same_schedule(setup, plan, b), capacity_bytes).fits

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


FEWEST_GPUS_LIMIT = 65536  # the most GPUs fewest_gpus tries


def fewest_gpus(model, setup: TrainingSetup, plan: ParallelPlan, capacity_bytes: float):
    """The fewest GPUs holding the model when only the data-parallel degree grows (the
    layout's tp, pp, cp, ep and ZeRO stage kept). None when growing dp cannot help."""
    base = plan.tp * plan.pp * plan.cp * plan.ep
    n_acc = grad_accum_steps(setup, plan)
    dp = 1
    while base * dp <= FEWEST_GPUS_LIMIT:
        s, p = same_schedule(setup, plan)
        s = replace(s, global_batch=s.global_batch and plan.micro_batch * dp * plan.ep * n_acc)
        if training_memory(model, s, replace(p, dp=dp), capacity_bytes).fits:
            return base * dp
        if plan.zero == 0 and setup.offload == "none" and dp > 1:
            return None  # replicas hold the same memory: more GPUs do not help
        dp *= 2
    return None


@dataclass(frozen=True)
class TrainingTime:
    """The step as the estimate states it: the engine's step (``StepTime``), or the one a measured
    MFU or TFLOP/s sets (``SpeedOverrides``), and what follows from it."""

    step_s: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    mfu: float
    hfu: float
    tflops_per_gpu: float
    micro_batches_per_step: int
    global_batch: int
    breakdown_s: dict
    no_overlap_efficiency: float
    train_s: float | None  # with a token budget

    def __post_init__(self):
        check_quantities(self, positive=("step_s", "tokens_per_s"), at_most_one=("mfu", "hfu"),
                         tolerance_of={"breakdown_s": self.step_s})

    def to_json(self) -> dict:
        out = {"step_s": self.step_s, "tokens_per_s": self.tokens_per_s, "tokens_per_s_per_gpu":
               self.tokens_per_s_per_gpu, "mfu": self.mfu, "hfu": self.hfu, "tflops_per_gpu": self.tflops_per_gpu,
               "micro_batches_per_step": self.micro_batches_per_step, "global_batch": self.global_batch,
               "breakdown_s": dict(self.breakdown_s), "no_overlap_efficiency": self.no_overlap_efficiency}
        if self.train_s is not None:
            out.update(train_s=self.train_s, train_days=self.train_s / 86400)
        return out


@dataclass(frozen=True)
class TrainingCost:
    """GPU-hours, energy and money of the whole run (with a token budget); on an instance, whole
    instances at every price, a blend, and ``usd`` at the plan's basis (``PriceChoice.hourly``)."""

    gpu_hours: float | None = None
    energy_kwh: float | None = None
    instances: int | None = None
    instance_hours: float | None = None
    usd_by_price: dict | None = None
    mix: dict | None = None
    usd_mix: float | None = None
    usd: float | None = None
    usd_price_basis: str | None = None  # None: no cost.usd (no price known)
    currency_source: str | None = None
    price_date: str | None = None

    def __post_init__(self):
        check_quantities(self)

    def to_json(self) -> dict:
        out: dict = {}
        if self.gpu_hours is None:
            return out
        out.update(gpu_hours=self.gpu_hours, energy_kwh=self.energy_kwh)
        if self.instances is not None:
            out.update(instances=self.instances, instance_hours=self.instance_hours, usd_by_price=self.usd_by_price,
                       mix=self.mix, usd_mix=self.usd_mix)
            if self.usd_price_basis is not None:
                out.update(usd=self.usd, usd_price_basis=self.usd_price_basis)
            out.update(currency_source=self.currency_source, price_date=self.price_date)
        return out


def training_cost(hw: Hardware, gpus: int, train_s: float | None, price: PriceChoice) -> TrainingCost:
    """The run's cost: whole instances (a plan on part of an instance rents all of it) x hours x
    the instance-hour price, at every price kind, the mix and the plan's basis."""
    if train_s is None:
        return TrainingCost()
    hours = train_s / 3600
    gpu_hours, kwh = hours * gpus, energy_kwh(gpus, hw.gpu.tdp_w or DEFAULT_TDP_W, hours)
    inst = hw.instance
    if inst is None:
        return TrainingCost(gpu_hours=gpu_hours, energy_kwh=kwh)
    n_inst = math.ceil(gpus / inst.gpu_count)
    per_hour = hourly_prices_usd(inst.prices, price.cny_per_usd)
    blended = mix_price(per_hour, price.mix)
    usd_h, basis = price.hourly(inst.prices)
    return TrainingCost(gpu_hours=gpu_hours, energy_kwh=kwh, instances=n_inst, instance_hours=n_inst * hours,
                        usd_by_price={k: (v * n_inst * hours if v is not None else None) for k, v in per_hour.items()},
                        mix={k: getattr(price.mix, k) for k in PRICE_KINDS},
                        usd_mix=blended * n_inst * hours if blended is not None else None,
                        usd=usd_h * n_inst * hours if usd_h is not None else None, usd_price_basis=basis,
                        currency_source=inst.prices.currency, price_date=inst.prices.date)


@dataclass(frozen=True)
class Flops:
    per_step: float
    hardware_per_step: float
    per_token_forward: float
    six_nd_per_step: float
    peak_tflops_per_gpu: float

    def to_json(self) -> dict:
        return {"per_step": self.per_step, "hardware_per_step": self.hardware_per_step,
                "per_token_forward": self.per_token_forward, "six_nd_per_step": self.six_nd_per_step,
                "peak_tflops_per_gpu": self.peak_tflops_per_gpu}


@dataclass(frozen=True)
class TrainingEstimate:
    """One training plan's estimate: its resolved inputs, memory, step, time, cost and advice."""

    model: ModelSpec
    hardware: Hardware
    setup: TrainingSetup
    plan: ParallelPlan
    memory: MemoryResult
    step: StepTime  # the engine's step, before a speed override
    flops: Flops
    time: TrainingTime
    cost: TrainingCost
    largest_micro_batch: int | None
    fewest_gpus: int | None
    advice: dict | None
    assumptions: tuple

    def memory_json(self) -> dict:
        mem, cap = self.memory, self.hardware.gpu.capacity_bytes
        out = {"peak_bytes": mem.peak_bytes, "breakdown": dict(mem.breakdown), "fits": bool(mem.fits),
               "device_bytes": mem.device_bytes, "capacity_bytes": cap, "headroom_bytes": mem.headroom_bytes,
               "overhead": dict(mem.overhead), "peak_phase": mem.peak_phase, "peak_stage": mem.peak_stage,
               "phase_peaks": dict(mem.phase_peaks), "host_bytes": mem.host_bytes,
               "activations_per_layer_bytes": mem.activations_per_layer_bytes}
        if mem.paged_bytes:
            out["paged_optimizer_states_bytes"] = mem.paged_bytes
        if self.largest_micro_batch is not None:
            out["largest_micro_batch"] = self.largest_micro_batch
            out["fewest_gpus_same_layout"] = self.fewest_gpus
        add_margin(out)
        return out

    def to_json(self) -> dict:
        """The estimate as ``gpu-planner estimate --json`` prints it (PRODUCT.md)."""
        model, hw, setup, plan = self.model, self.hardware, self.setup, self.plan
        out: dict[str, Any] = {
            "mode": "training",
            "model": {"name": model.name, "arch": model.arch, "summary": model.summary()},
            "params": {"total": model.params_total, "active": model.params_active},
            "gpu": {"id": hw.gpu.id, "name": hw.gpu.name, "memory_gb": hw.gpu.memory_gb,
                    "capacity_bytes": hw.gpu.capacity_bytes, "source": hw.gpu.source, "retrieved": hw.gpu.retrieved},
            "parallel": {"tp": plan.tp, "pp": plan.pp, "dp": plan.dp, "cp": plan.cp, "ep": plan.ep, "zero": plan.zero,
                         "sequence_parallel": plan.sequence_parallel, "pp_schedule": plan.pp_schedule, "vp": plan.vp,
                         "gpus": plan.gpus, "gpus_per_node": plan.gpus_per_node, "nodes": plan.nodes},
            "setup": {"micro_batch": plan.micro_batch, "seq_len": setup.seq_len, "global_batch": setup.global_batch,
                      "tokens": setup.tokens, "recipe": setup.recipe, "optimizer": setup.optimizer,
                      "optimizer_impl": setup.optimizer_impl, "attention": setup.attention,
                      "recompute": plan.recompute, "framework": setup.framework, "offload": setup.offload},
            "memory": self.memory_json(),
            "assumptions": list(self.assumptions),
        }
        lora = setup.lora(model)
        if lora is not None:
            out["setup"].update(finetune=setup.finetune, lora_rank=lora.rank, lora_targets=list(lora.targets),
                                lora_dtype=setup.lora_dtype, lora_dropout=lora.dropout, qlora_prepare=lora.prepare)
            out["params"]["trainable"] = int(lora.adapter_params(model.dense_mlp_layers, model.moe_layers))
        if hw.instance is not None:
            out["instance"] = {"provider": hw.instance.provider, "region": hw.instance.region,
                               "id": hw.instance.instance_id, "gpus_per_instance": hw.instance.gpu_count,
                               "source": hw.instance.source, "retrieved": hw.instance.retrieved}
        out["flops"] = self.flops.to_json()
        out["time"] = self.time.to_json()
        out["cost"] = self.cost.to_json()
        if self.advice is not None:
            out["advice"] = self.advice
        return out


def estimate_training(model, hw: Hardware, setup: TrainingSetup, plan: ParallelPlan, speed, price: PriceChoice,
                      extras: bool = True) -> TrainingEstimate:
    """The training estimate of a resolved plan. ``speed``: a measured MFU or TFLOP/s in place of the
    engine's efficiency model (core/requests.SpeedOverrides); ``price``: how its cost is priced;
    ``extras``: the largest micro-batch, the fewest GPUs and the advice (searches over the plan)."""
    cap = hw.gpu.capacity_bytes
    mem = training_memory(model, setup, plan, cap)
    assumptions = list(mem.assumptions)
    st = step_time(model, hw, setup, plan)
    step_s = st.step_s
    if speed.mfu:
        step_s = st.model_flops_per_step / (speed.mfu * st.gpus * st.peak_tflops * 1e12)
        assumptions.append(Text(QT_TRANSLATE_NOOP("Engine", "step time from --mfu {mfu:g} (model FLOPs over peak), "
                                                            "not the model"), mfu=speed.mfu))
    elif speed.achieved_tflops:
        step_s = st.hw_flops_per_step / (speed.achieved_tflops * 1e12 * st.gpus)
        assumptions.append(Text(QT_TRANSLATE_NOOP("Engine", "step time from --achieved-tflops {tflops:g} per GPU, "
                                                            "counting hardware FLOPs (recomputation included) as "
                                                            "Narayanan et al. 2021 do"),
                                tflops=speed.achieved_tflops))
    scale = step_s / st.step_s
    fwd_tok = forward_flops_per_token(model, setup.seq_len) if model.is_transformer else model.fwd_flops_per_sample
    flops = Flops(per_step=st.model_flops_per_step, hardware_per_step=st.hw_flops_per_step, per_token_forward=fwd_tok,
                  six_nd_per_step=6.0 * model.params_active * st.tokens_per_step, peak_tflops_per_gpu=st.peak_tflops)
    tokens_per_s = st.tokens_per_step / step_s
    peak = st.gpus * st.peak_tflops * 1e12
    train_s = setup.tokens / tokens_per_s if setup.tokens else None
    time = TrainingTime(step_s=step_s, tokens_per_s=tokens_per_s, tokens_per_s_per_gpu=tokens_per_s / st.gpus,
                        mfu=st.model_flops_per_step / (step_s * peak), hfu=st.hw_flops_per_step / (step_s * peak),
                        tflops_per_gpu=st.model_flops_per_step / step_s / st.gpus / 1e12,
                        micro_batches_per_step=st.micro_batches, global_batch=st.global_batch,
                        breakdown_s={k: v * scale for k, v in st.parts.items()},
                        no_overlap_efficiency=st.no_overlap_efficiency, train_s=train_s)
    cost = training_cost(hw, st.gpus, train_s, price)
    if train_s is None:
        assumptions.append(Text(QT_TRANSLATE_NOOP("Engine", "no --tokens: time to train and cost need a token "
                                                            "budget")))
    assumptions += training_assumptions(model, hw, setup, plan)
    largest = few = advice = None
    if extras and model.is_transformer:
        largest = largest_micro_batch(model, setup, plan, cap)
        few = fewest_gpus(model, setup, plan, cap)
        summary, changes = advise(model, hw, setup, plan, base=(mem, st.step_s), run_s=train_s)
        advice = {"text": advice_text(summary, changes),
                  "changes": [{"change": c.label, "fits": c.fits, "saves_bytes": c.saves_bytes,
                               "time_change": c.time_change, "gpus": c.gpus} for c in changes]}
    return TrainingEstimate(model=model, hardware=hw, setup=setup, plan=plan, memory=mem, step=st, flops=flops,
                            time=time, cost=cost, largest_micro_batch=largest, fewest_gpus=few, advice=advice,
                            assumptions=tuple(assumptions))


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
             context_gb=CUDA_CONTEXT_BYTES / 1e9, reserve=_percent(allocator_reserve_fraction(plan.recompute == "full")),
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
                       3: QT_TRANSLATE_NOOP("Engine", "ZeRO-3 as FSDP2 fully_shard on each decoder layer and the "
                                                      "model: one layer prefetched, the root's embedding and output "
                                                      "layer gathered for the whole forward and backward, one layer's "
                                                      "reduce-scatter input in flight")}[plan.zero]))
        if plan.zero == 3 and plan.no_reshard_after_forward:
            a.append(Text(QT_TRANSLATE_NOOP("Engine", "reshard_after_forward=False: every layer stays gathered from "
                                                      "its forward to its backward, which all-gathers nothing")))
    if setup.framework == "pytorch" and plan.tp > 1 and model.arch != "bert":
        (f0, b0), (f1, b1) = DTENSOR_LAYER_HOST_S[False], DTENSOR_LAYER_HOST_S[True]
        sp = plan.sequence_parallel
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "tensor parallelism as torch's parallelize_module (DTensor, "
                                                  "torchtitan's Llama plan, loss_parallel): each layer takes at least "
                                                  "DTensor's host time, {fwd_ms:.1f} ms forward and {bwd_ms:.1f} ms "
                                                  "backward for a Llama layer on the reference host, scaled by the "
                                                  "host's dispatch speed (probe calibration)"),
                      fwd_ms=(f1 if sp else f0) * 1e3, bwd_ms=(b1 if sp else b0) * 1e3))
    if setup.offload != "none":
        impl = host_adamw_kind(setup.optimizer_impl, setup.framework)
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "CPU offload: the optimizer steps this GPU's shard on the host at "
                                                  "{rate:.3g} elements/s ({impl} AdamW on a 16-core host) and the "
                                                  "shards cross PCIe at {pcie:g} GB/s, neither overlapped with the "
                                                  "GPU's work"),
                      rate=HOST_ADAMW_ELEMENTS_PER_S[(impl, 2)], impl=impl, pcie=pcie_gb_s(hw.gpu.pcie_gen)))
    if plan.recompute == "selective" and setup.framework != "megatron":
        a.append(Text(QT_TRANSLATE_NOOP("Engine", "selective recomputation as Megatron defines it: attention scores "
                                                  "recomputed in backward")))
    if plan.recompute == "full":
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
