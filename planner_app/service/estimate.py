"""The estimate service: one request (CLI-named options) -> the engine's estimate. Every face
(CLI, GUI pages, report, scenario files) builds its estimates here, so a plan gives the same
numbers everywhere."""
from __future__ import annotations

import math

from planner_app.core.errors import InputError
from planner_app.core.inference.estimate import estimate_inference
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.estimate import Overrides, estimate_training
from planner_app.core.training.setup import InferenceSetup, TrainingSetup

# The estimate options, their defaults and the modes they apply to are declared once in
# service/options.py (the CLI's option names; scenario files and the GUI use the same names).
from planner_app.service.options import INFERENCE_ONLY, OPTION_DEFAULTS, TRAINING_ONLY, check_options
from planner_app.service.resolve import (
    check_attention,
    default_attention,
    default_recipe,
    default_seq_len,
    resolve_hardware,
    resolve_model,
    resolve_plan,
)
from planner_app.service.results import check_achieved_tflops, check_estimate, check_price_mix


def load_calibration(name):
    """The saved calibration profile ``name`` (None for none): one loader for estimate, scaling
    and search."""
    if not name:
        return None
    from planner_app.probe.calibration import load_profile

    return load_profile(name)


def build_request(args, db):
    """(model, hardware, setup or inference, plan, overrides, notes) from parsed options."""
    model = resolve_model(args.model, db)
    hw, per_node, notes = resolve_hardware(db, gpu=args.gpu, instance=args.instance, fabric=args.fabric,
                                           nics_per_node=args.nics_per_node, gpus_per_node=args.gpus_per_node,
                                           calibration=load_calibration(getattr(args, "calibration", None)))
    overrides = Overrides(mfu=args.mfu, achieved_tflops=args.achieved_tflops)
    overrides.cny_per_usd = args.cny_per_usd or 7.10
    overrides.price_mix = check_price_mix(args.price_mix) if args.price_mix else None
    overrides.price_basis = getattr(args, "price", None)
    if hw.calibration is not None:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "calibration profile {name!r} ({summary})"),
                          name=hw.calibration.name, summary=hw.calibration.summary()))
    return model, hw, per_node, overrides, notes


def apply_cli_defaults(args, mode: str = "training"):
    """Refuse options of the other mode, then fill what the command line left unset (None)
    from ``OPTION_DEFAULTS`` (argparse leaves them None so that a given option can be told
    from a default one)."""
    other = INFERENCE_ONLY if mode == "training" else TRAINING_ONLY
    for key in other:
        if getattr(args, key, None) not in (None, False):
            flag = "--" + key.replace("_", "-")
            raise InputError(key, f"applies to --mode {'inference' if mode == 'training' else 'training'} only "
                                  f"(this is --mode {mode}); remove {flag}")
    for key, default in OPTION_DEFAULTS.items():
        if getattr(args, key, None) is None:
            setattr(args, key, default)
    return args


def estimate_from_options(options: dict, db) -> dict:
    """The estimate for a dict of CLI-named options (missing ones take the CLI defaults)."""
    from types import SimpleNamespace

    options = check_options(options)  # unknown names, types, ranges: the same rules as the CLI's
    return estimate_from_args(SimpleNamespace(**{**OPTION_DEFAULTS, **options}), db)


LORA_OPTIONS = ("lora_rank", "lora_targets", "lora_dtype", "lora_dropout", "qlora_prepare")


def finetune_options(args, notes=None) -> dict:
    """The TrainingSetup's fine-tuning fields from CLI-named options: LoRA options need
    --finetune lora or qlora, --qlora-prepare needs qlora; unset ones take PEFT's defaults
    (TrainingSetup's); --qlora-prepare turns gradient checkpointing on, as
    prepare_model_for_kbit_training does by default (use_gradient_checkpointing=True)."""
    finetune = getattr(args, "finetune", None) or "full"
    given = {k: getattr(args, k, None) for k in LORA_OPTIONS if getattr(args, k, None) not in (None, False)}
    if finetune == "full" and given:
        key = next(iter(given))
        raise InputError(key, f"applies to --finetune lora or qlora only; add --finetune lora (or qlora) or remove "
                              f"--{key.replace('_', '-')}")
    if given.get("qlora_prepare") and finetune != "qlora":
        raise InputError("qlora_prepare", "applies to --finetune qlora only (prepare_model_for_kbit_training)")
    if given.get("qlora_prepare") and args.recompute == "none":
        args.recompute = "full"
        if notes is not None:
            notes.append(Text(QT_TRANSLATE_NOOP("Engine", "prepare_model_for_kbit_training turns gradient "
                                                          "checkpointing on (full recomputation)")))
    return {"finetune": finetune, **given}


def training_setup_and_plan(args, model, hw, per_node, db, notes=None, dp=None):
    """The TrainingSetup and ParallelPlan for CLI-named options; one place for the defaults
    (recipe from the GPU and framework, attention from the framework, sequence length from
    the preset), shared by estimate, scaling (``dp=1``: the curve grows it) and the GUI."""
    recipe = args.recipe or default_recipe(hw.gpu, args.framework, getattr(args, "finetune", None) or "full")
    if not args.recipe and notes is not None:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "recipe {recipe} (default for {gpu} with {framework}; --recipe)"),
                          recipe=recipe, gpu=hw.gpu.name, framework=args.framework))
    attention = args.attention or default_attention(args.framework, model)
    check_attention(model, attention, args.framework)
    if attention == "eager" and (args.cp or 1) > 1:
        # context parallelism splits the sequence over ranks inside the attention kernel (ring
        # attention over flash/SDPA kernels: Megatron-Core's context parallel runs on
        # TransformerEngine's fused attention); eager attention has no such split
        raise InputError("attention", "--cp above 1 needs flash or sdpa attention (ring attention); eager has no "
                                      "context-parallel form: use --attention flash or sdpa, or --cp 1")
    if not args.attention and attention != default_attention(args.framework) and notes is not None:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "attention eager: transformers runs {family} without SDPA "
                                                      "(--attention flash for FlashAttention-2)"), family=model.family))
    seq = args.seq_len or default_seq_len(model, db)
    finetune = finetune_options(args, notes)  # may turn recomputation on (--qlora-prepare)
    setup = TrainingSetup(micro_batch=args.micro_batch, seq_len=seq, global_batch=args.global_batch or 0,
                          tokens=args.tokens or 0.0, recipe=recipe, optimizer=args.optimizer,
                          attention=attention, recompute=args.recompute, framework=args.framework,
                          offload=args.offload, optimizer_impl=args.optimizer_impl, **finetune)
    plan = resolve_plan(gpus=None if dp else args.gpus, tp=args.tp, pp=args.pp, dp=dp or args.dp, cp=args.cp,
                        ep=args.ep, zero=args.zero, sequence_parallel=args.sequence_parallel,
                        pp_schedule=args.pp_schedule, vp=args.vp, gpus_per_node=per_node)
    return setup, plan


def estimate_from_args(args, db) -> dict:
    model, hw, per_node, overrides, notes = build_request(args, db)
    if args.mode == "inference":
        tp = args.tp or 1
        if args.pp not in (None, 1) or args.dp not in (None, 1):
            raise InputError("pp", "inference sizing supports tensor parallelism only (--tp); pp and dp must be 1")
        setup = InferenceSetup(batch=args.batch, prompt_len=args.prompt_len, new_tokens=args.new_tokens,
                               weights_dtype=args.weights_dtype, kv_dtype=args.kv_dtype,
                               # transformers' default attn_implementation: SDPA (eager for the families without it)
                               attention=args.attention or default_attention("pytorch", model), api=args.inference_api)
        out = estimate_inference(model, hw, setup, tp, overrides)
    else:
        setup, plan = training_setup_and_plan(args, model, hw, per_node, db, notes)
        out = estimate_training(model, hw, setup, plan, overrides)
        check_achieved_tflops(args.achieved_tflops, out)
        from planner_app.service.host import host_section

        out["host"] = host_section(args, model, hw, setup, plan, out)
    out["assumptions"] = notes + out["assumptions"]
    cause = ("mfu" if args.mfu else "achieved_tflops" if args.achieved_tflops else
             "calibration" if getattr(args, "calibration", None) else "result")
    return json_safe(check_estimate(out, cause))


def json_safe(obj):
    """JSON-safe: NaN/inf become null (every face's JSON output)."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
