"""Advice: when a plan does not fit or runs slowly, the single changes that would fix it,
ranked, each with its quantified effect on memory and step time ("does not fit by 12 GB:
full recomputation saves 21 GB and costs 31% more time; ZeRO-2 saves 28 GB and costs 4%").
When no single change makes it fit on its GPUs, the memory-saving changes are combined, the
cheapest in time per GB first, until it does ("bf16 weights + 8-bit AdamW + full recomputation")."""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner_app.core.errors import InputError
from planner_app.core.text import QT_TRANSLATE_NOOP, Text, TextList
from planner_app.core.training.memory import training_memory
from planner_app.core.training.timing import step_time


@dataclass
class Change:
    label: Text
    fits: bool
    saves_bytes: float  # device memory saved (negative: uses more)
    time_change: float  # relative step-time change (+0.31 = 31% slower)
    gpus: int


def _variants(model, setup, plan):
    """(label, setup, plan, keeps_gpus) of each single change to the plan as it is."""
    s, p = setup, plan
    yield Text(QT_TRANSLATE_NOOP("Engine", "full recomputation")), s, replace(p, recompute="full")
    yield Text(QT_TRANSLATE_NOOP("Engine", "selective recomputation")), s, replace(p, recompute="selective")
    for z in range(p.zero + 1, 4):
        yield Text(QT_TRANSLATE_NOOP("Engine", "ZeRO-{z}"), z=z), s, replace(p, zero=z)
    if p.micro_batch > 1:
        yield (Text(QT_TRANSLATE_NOOP("Engine", "micro-batch {b} (more accumulation)"), b=p.micro_batch // 2),
               replace(s, global_batch=s.global_batch or p.micro_batch * p.dp * p.ep),
               replace(p, micro_batch=p.micro_batch // 2))
    if p.tp * 2 <= p.gpus_per_node:
        yield (Text(QT_TRANSLATE_NOOP("Engine", "{n}x tensor parallel (2x the GPUs)"), n=p.tp * 2), s,
               replace(p, tp=p.tp * 2, sequence_parallel=True))
    if p.tp > 1 and not p.sequence_parallel:
        yield Text(QT_TRANSLATE_NOOP("Engine", "sequence parallelism")), s, replace(p, sequence_parallel=True)
    yield Text(QT_TRANSLATE_NOOP("Engine", "{n}x pipeline parallel (2x the GPUs)"), n=p.pp * 2), s, replace(p, pp=p.pp * 2)
    yield Text(QT_TRANSLATE_NOOP("Engine", "{n}x data parallel (2x the GPUs)"), n=p.dp * 2), s, replace(p, dp=p.dp * 2)
    if s.offload == "none":
        yield Text(QT_TRANSLATE_NOOP("Engine", "offload optimizer states to the CPU")), replace(s, offload="optimizer"), p
    if s.recipe in ("fp32", "amp-bf16", "amp-fp16") and s.framework != "megatron":
        yield Text(QT_TRANSLATE_NOOP("Engine", "bf16 weights and optimizer states")), replace(s, recipe="bf16"), p
    if s.attention == "eager":
        yield Text(QT_TRANSLATE_NOOP("Engine", "SDPA / flash attention")), replace(s, attention="sdpa"), p
    if s.optimizer in ("adam", "adamw"):
        yield Text(QT_TRANSLATE_NOOP("Engine", "8-bit AdamW")), replace(s, optimizer="adamw-8bit"), p
    if s.finetune == "full" and s.framework == "pytorch" and model.is_transformer:
        # a different training outcome (adapters, not every weight): offered, never combined
        lora_recipe = s.recipe if s.recipe in ("fp32", "bf16", "bf16-autocast", "amp-bf16", "amp-fp16") else "bf16"
        yield (Text(QT_TRANSLATE_NOOP("Engine", "LoRA adapters instead of full fine-tuning (PEFT, rank 8)")),
               replace(s, finetune="lora", recipe=lora_recipe), p)
        yield (Text(QT_TRANSLATE_NOOP("Engine", "QLoRA: LoRA on a 4-bit base (bitsandbytes NF4)")),
               replace(s, finetune="qlora", recipe="bf16-autocast"), p)


# Changes a combination may take (the same training, its GPUs unchanged): memory-saving settings,
# never more GPUs and never LoRA in place of full fine-tuning.
_COMBINABLE = ("full recomputation", "ZeRO-{z}", "micro-batch {b} (more accumulation)", "sequence parallelism",
               "offload optimizer states to the CPU", "bf16 weights and optimizer states", "SDPA / flash attention",
               "8-bit AdamW")


_OTHER_TRAINING = ("LoRA adapters instead of full fine-tuning (PEFT, rank 8)",
                   "QLoRA: LoRA on a 4-bit base (bitsandbytes NF4)")


def _combined(model, hw, setup, plan, singles: list, cap: float, base_t: float, base_dev: float):
    """When no single change fits: the memory-saving changes that keep the GPUs, applied one after
    another (the least extra time per GB saved first) until the plan fits; a Change naming all of
    them, or None."""
    # cheapest first: the least step time per GB saved (changes that also speed the step up lead)
    steps = sorted((c for c in singles if c[0].label.template in _COMBINABLE and c[0].saves_bytes > 0),
                   key=lambda c: c[0].time_change / (c[0].saves_bytes / 1e9))
    s, p, labels, seen = setup, plan, [], set()
    for change, s1, p1 in steps:
        if change.label.template in seen:  # one ZeRO stage, one micro-batch
            continue
        seen.add(change.label.template)
        s2 = replace(s, **{f: getattr(s1, f) for f in ("global_batch", "offload", "recipe", "attention", "optimizer")
                           if getattr(s1, f) != getattr(setup, f)})
        p2 = replace(p, **{f: getattr(p1, f) for f in ("recompute", "micro_batch", "zero", "sequence_parallel")
                           if getattr(p1, f) != getattr(plan, f)})
        try:
            m = training_memory(model, s2, p2, cap)
        except InputError:
            continue
        s, p = s2, p2
        labels.append(change.label)
        if m.fits:
            t = step_time(model, hw, s, p).step_s
            return Change(label=TextList(QT_TRANSLATE_NOOP("Engine", " + "), labels), fits=True,
                          saves_bytes=base_dev - m.device_bytes, time_change=t / base_t - 1, gpus=p.gpus)
    return None


# The changes the advice lists at most
ADVICE_CHANGES = 8

# A plan that fits and whose whole run is shorter than this is not told to take more GPUs to go faster:
# a job's fixed start-up (launching instances, loading the weights -- 140 GB of a 70B model in bf16 at
# ~1 GB/s from network storage is over 2 minutes -- and initialising NCCL) is minutes, clouds bill
# whole instances (EC2: per second, 60 s minimum: aws.amazon.com/ec2/pricing/on-demand), and halving
# a run of minutes saves minutes. A judgement, stated in the advice where it applies.
SHORT_RUN_S = 3600.0


def advise(model, hw, setup, plan, base=None, run_s: float | None = None) -> tuple[dict, list[Change]]:
    """(summary of the plan as it is, ranked changes). ``base``: the plan's own (MemoryResult,
    step seconds) where the caller has them already (the estimate does), else computed here.
    ``run_s``: the whole run's seconds (with a token budget); a plan that fits and runs for less
    than ``SHORT_RUN_S`` is offered no change that takes more GPUs."""
    cap = hw.gpu.capacity_bytes
    if base is None:
        base = training_memory(model, setup, plan, cap), step_time(model, hw, setup, plan).step_s
    base_mem, base_t = base
    summary = {"fits": bool(base_mem.fits), "over_bytes": base_mem.device_bytes - cap, "step_s": base_t}
    changes, singles = [], []
    for label, s, p in _variants(model, setup, plan):
        try:
            m = training_memory(model, s, p, cap)
            t = step_time(model, hw, s, p).step_s
        except InputError:
            continue
        c = Change(label=label, fits=bool(m.fits), saves_bytes=base_mem.device_bytes - m.device_bytes,
                   time_change=t / base_t - 1, gpus=p.gpus)
        changes.append(c)
        singles.append((c, s, p))
    if not base_mem.fits:
        changes = [c for c in changes if c.saves_bytes > 0]
        if not any(c.fits and c.gpus == plan.gpus and c.label.template in _COMBINABLE for c in changes):
            combo = _combined(model, hw, setup, plan, singles, cap, base_t, base_mem.device_bytes)
            if combo is not None:
                changes.append(combo)
        # what fits first, on the fewest GPUs, the same training (not LoRA instead) before the fastest
        changes.sort(key=lambda c: (not c.fits, c.gpus, c.label.template in _OTHER_TRAINING, c.time_change))
    else:  # it fits: faster settings for the same training (LoRA would train something else)
        changes = [c for c in changes if c.fits and c.time_change < -0.01 and c.label.template not in _OTHER_TRAINING]
        if run_s is not None and run_s < SHORT_RUN_S and any(c.gpus > plan.gpus for c in changes):
            changes = [c for c in changes if c.gpus <= plan.gpus]
            summary["short_run_s"] = SHORT_RUN_S  # more GPUs left out: the run is too short for them
        changes.sort(key=lambda c: c.time_change)
    return summary, changes[:ADVICE_CHANGES]


def advice_text(summary: dict, changes: list[Change]) -> Text:
    """One sentence: the verdict, then each change with its effect on memory and time."""
    gb = 1e9
    short = summary.get("short_run_s")
    if summary["fits"] and not changes:
        if short:
            return Text(QT_TRANSLATE_NOOP("Engine", "fits; no change suggested: the whole run takes under {minutes:.0f} "
                                                    "minutes, too short for more GPUs to pay for their start-up"),
                        minutes=short / 60)
        return Text(QT_TRANSLATE_NOOP("Engine", "fits; no single change makes it faster"))
    parts = []
    for c in changes:
        if c.saves_bytes >= 0:
            mem = Text(QT_TRANSLATE_NOOP("Engine", "saves {gb:.1f} GB"), gb=c.saves_bytes / gb)
        else:
            mem = Text(QT_TRANSLATE_NOOP("Engine", "uses {gb:.1f} GB more"), gb=-c.saves_bytes / gb)
        if c.time_change >= 0:
            tim = Text(QT_TRANSLATE_NOOP("Engine", "costs {pct:.0f}% more time"), pct=c.time_change * 100)
        else:
            tim = Text(QT_TRANSLATE_NOOP("Engine", "is {pct:.0f}% faster"), pct=-c.time_change * 100)
        if c.fits:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "{change} {memory} and {time}"),
                              change=c.label, memory=mem, time=tim))
        else:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "{change} {memory} and {time} (still does not fit)"),
                              change=c.label, memory=mem, time=tim))
    joined = TextList(QT_TRANSLATE_NOOP("Engine", "; "), parts)
    if summary["fits"] and short:
        return Text(QT_TRANSLATE_NOOP("Engine", "fits; faster with: {changes} (no more GPUs: the whole run takes under "
                                                "{minutes:.0f} minutes)"), changes=joined, minutes=short / 60)
    if summary["fits"]:
        return Text(QT_TRANSLATE_NOOP("Engine", "fits; faster with: {changes}"), changes=joined)
    return Text(QT_TRANSLATE_NOOP("Engine", "does not fit by {gb:.1f} GB: {changes}"),
                gb=summary["over_bytes"] / gb, changes=joined)
