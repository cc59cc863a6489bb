"""Turn what a user typed (names, ids, options) into engine inputs. Shared by the CLI, the
GUI and scenario files."""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, replace

from planner_app.core.errors import InputError
from planner_app.core.hardware.machine import Hardware
from planner_app.core.inference.setup import InferenceSetup
from planner_app.core.models.hf_config import load_hf_config, model_from_hf_config
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.cost import DEFAULT_MIX, PriceChoice
from planner_app.core.requests import InferenceRequest, TrainingRequest
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.setup import ParallelPlan, TrainingSetup
from planner_app.service.results import check_price_mix
from planner_app.specdb.schema import one_line

DEFAULT_FABRIC = "ib-ndr"


# The whole-number fields of a Hugging Face config the engine reads (core/models/hf_config.py); a
# value above 2^40 describes no model and would overflow the engine's float arithmetic.
HF_INT_FIELDS = ("vocab_size", "hidden_size", "n_embd", "num_hidden_layers", "n_layer", "num_attention_heads",
                 "n_head", "num_key_value_heads", "intermediate_size", "n_inner", "max_position_embeddings",
                 "n_positions", "head_dim", "type_vocab_size", "sliding_window", "num_local_experts",
                 "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                 "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                 "v_head_dim")
MAX_HF_INT = 1 << 40
MAX_CONFIG_BYTES = 16 << 20  # a config.json is a few kB; DeepSeek-V3's is 1.7 kB


def check_hf_config(cfg, source: str = "config.json") -> dict:
    """A parsed config.json before the engine reads it: an object, every number finite, the
    whole-number fields whole and in range. Errors name the field."""
    if not isinstance(cfg, dict):
        raise InputError("model", f"{source} must hold a JSON object (a Hugging Face config)")
    stack: list[tuple[str, dict | list]] = [("", cfg)]
    while stack:
        path, obj = stack.pop()
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
        for k, v in items:
            where = one_line(f"{path}.{k}" if path else str(k))  # a key from the file, shown on one line
            if isinstance(v, float) and v != v or isinstance(v, float) and v in (float("inf"), float("-inf")):
                raise InputError(f"config.json: {where}", f"must be a finite number, got {v!r}")
            if isinstance(v, (dict, list)):
                stack.append((where, v))
    for key in HF_INT_FIELDS:
        v = cfg.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or not 0 <= v <= MAX_HF_INT:
            raise InputError(f"config.json: {key}", f"must be a whole number from 0 to {MAX_HF_INT:,}, got "
                                                    f"{str(v)[:40]!r}")
    return cfg


def _engine_model(build, source: str):
    """The engine's ModelSpec from ``build()``; an error the engine did not phrase (a value of
    a type it did not expect) becomes one line naming the config."""
    try:
        return build()
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, ZeroDivisionError) as e:
        raise InputError("model", f"{source} cannot be read as a model config ({type(e).__name__}: "
                                  f"{str(e)[:100]})") from None


def _read_config_file(path: str) -> dict:
    """The JSON of a config.json path: a regular file (a FIFO or device would block the read
    forever), of a sane size, without NaN/Infinity, nested at most as deep as JSON allows."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("model", f"no preset or file named {path!r}") from None
    except OSError as e:
        raise InputError("model", f"cannot read {path!r}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError("model", f"{path!r} is not a regular file (a folder, pipe or device); give a config.json")
    if st.st_size > MAX_CONFIG_BYTES:
        raise InputError("model", f"{path!r} is {st.st_size:,} bytes; a config.json is at most "
                                  f"{MAX_CONFIG_BYTES >> 20} MiB")

    def refuse(name):
        raise ValueError(f"{name} is not a JSON number")
    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.read(), parse_constant=refuse)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("model", f"cannot read {path!r}: {getattr(e, 'strerror', None) or e}") from None
    except RecursionError:
        raise InputError("model", f"{os.path.basename(path)} is nested too deeply to be a config.json") from None
    except ValueError as e:  # JSONDecodeError included
        raise InputError("config.json", f"{os.path.basename(path)} is not valid JSON ({str(e)[:100]})") from None


def resolve_model(name_or_path, db):
    """A preset (by id, name or alias), a Hugging Face config.json path, or such a config
    as a dict (a scenario file carries imported configs inline)."""
    if isinstance(name_or_path, dict):
        cfg = check_hf_config(name_or_path.get("hf_config", name_or_path), "the embedded config")
        name = name_or_path.get("name") or cfg.get("_name_or_path") or "custom"
        return _engine_model(lambda: model_from_hf_config(cfg, str(name)[:200]), "the embedded config")
    if not name_or_path or not str(name_or_path).strip():
        raise InputError("model", "must name a preset (gpu-planner models) or a config.json file")
    text = str(name_or_path).strip()
    if text.endswith(".json") or os.path.sep in text or os.path.exists(text):
        check_hf_config(_read_config_file(text), os.path.basename(text))
        return _engine_model(lambda: load_hf_config(text), os.path.basename(text))
    return db.model(text)


def default_seq_len(model, db) -> int:
    try:
        row = db.row("models", model.name)
        if row is not None and row["default_seq_len"]:
            return int(row["default_seq_len"])
    except (AttributeError, KeyError):
        pass
    if model.max_positions:
        return min(model.max_positions, 4096)
    return 2048


def default_recipe(gpu, framework: str, finetune: str) -> str:
    """bf16 where the GPU has it: PyTorch's autocast over fp32 weights, Megatron/DeepSpeed's
    mixed bf16; GPUs without bf16 (V100, T4) use fp16 autocast. LoRA and QLoRA load the base in
    bf16 (``torch_dtype=torch.bfloat16``, as PEFT's and TRL's examples do; QLoRA's
    ``bnb_4bit_compute_dtype``) with fp32 adapters, and Trainer(bf16=True) runs the forward under
    autocast."""
    if not gpu.bf16_tflops:
        return "amp-fp16"
    if finetune != "full":
        return "bf16-autocast"
    return "amp-bf16" if framework == "pytorch" else "mixed-bf16"


def default_attention(framework: str, model=None) -> str:
    """Flash attention under Megatron (its fused kernels); PyTorch's SDPA elsewhere, except
    for the families transformers runs without SDPA (Gemma 2, gpt-oss: eager, its fallback)."""
    if framework == "megatron":
        return "flash"
    return "eager" if model is not None and not getattr(model, "sdpa_supported", True) else "sdpa"


def check_attention(model, attention: str, framework: str) -> None:
    """Refuse ``--attention sdpa`` for a family transformers cannot run with SDPA."""
    if framework != "megatron" and attention == "sdpa" and not getattr(model, "sdpa_supported", True):
        raise InputError("attention", f"transformers has no SDPA path for {model.family} (_supports_sdpa = False in "
                                      f"modeling_{model.family}.py); use eager or flash")


def resolve_hardware(db, gpu=None, instance=None, fabric=None, nics_per_node=None, gpus_per_node=None,
                     calibration=None):
    """(Hardware, gpus_per_node, assumptions) from a GPU name or an instance id."""
    notes = []
    inst = None
    if instance:
        inst = db.instance(instance)
        g = db.gpu(inst.gpu_id)
        per_node = gpus_per_node or inst.gpu_count
        intra = db.fabric(inst.intra_node_link) if inst.intra_node_link else None
        fab_id = fabric or inst.fabric_id
        if not fab_id:
            fab_id = DEFAULT_FABRIC
            notes.append(Text(QT_TRANSLATE_NOOP("Engine", "{instance}: the network is not in the spec data; "
                                                          "{fabric} assumed"),
                              instance=inst.instance_id, fabric=DEFAULT_FABRIC))
        inter = inter_fabric(db, fab_id)
        nics = nics_per_node or inst.nics or 1
    elif gpu:
        g = db.gpu(gpu)
        per_node = gpus_per_node or 8
        intra = db.intra_link(g)
        inter = inter_fabric(db, fabric or DEFAULT_FABRIC)
        nics = nics_per_node or per_node
        if not fabric:
            notes.append(Text(QT_TRANSLATE_NOOP("Engine", "inter-node network {fabric} with {nics} NICs per node "
                                                          "(default; --fabric, --nics-per-node)"),
                              fabric=inter.name, nics=nics))
    else:
        raise InputError("gpu", "give a GPU or a cloud instance")
    notes.append(Text(QT_TRANSLATE_NOOP("Engine", "intra-node link: {link}"),
                      link=intra.name if intra else Text(QT_TRANSLATE_NOOP("Engine", "none"))))
    return Hardware(gpu=g, intra=intra, inter=inter, nics_per_node=nics, instance=inst,
                    calibration=calibration), per_node, notes


def inter_fabric(db, fabric_id: str):
    """An inter-node network by id; an intra-node link (NVLink, PCIe) named as the network
    between nodes is an error naming ``fabric``."""
    f = db.fabric(fabric_id)
    if f.scope != "inter":
        allowed = ", ".join(r["id"] for r in db.records["fabrics"] if r["scope"] == "inter")
        raise InputError("fabric", f"{f.id} is a link inside a node, not a network between nodes; allowed: {allowed}")
    return f


def resolve_plan(layout: ParallelPlan, gpus: int, gpus_per_node: int) -> ParallelPlan:
    """``layout`` with its data-parallel degree (given, else from the GPU count: GPUs / (tp x pp x
    cp x ep), else 1) and the machine's GPUs per node; the GPU count must match the degrees."""
    inner = layout.tp * layout.pp * layout.cp * layout.ep
    dp = layout.dp
    if not dp:
        if not gpus:
            dp = 1
        elif gpus % inner:
            raise InputError("gpus", f"{gpus} GPUs is not a multiple of tp x pp x cp x ep = {inner}")
        else:
            dp = gpus // inner
    elif gpus and gpus != inner * dp:
        raise InputError("gpus", f"{gpus} GPUs does not equal tp x pp x cp x ep x dp = {inner * dp} "
                                 f"({layout.tp} x {layout.pp} x {layout.cp} x {layout.ep} x {dp})")
    return replace(layout, dp=dp, gpus_per_node=gpus_per_node)


@dataclass(frozen=True)
class ResolvedTraining:
    """A training request against the spec database: the engine's inputs, every default taken and
    what it says (``notes``, the first assumptions of the estimate)."""

    model: ModelSpec
    hardware: Hardware
    setup: TrainingSetup
    plan: ParallelPlan
    price: PriceChoice
    notes: tuple


def price_choice(pricing) -> PriceChoice:
    """The request's pricing part as the engine prices with it (the mix parsed, 80% 1-year reserved
    and 20% on-demand where none is given)."""
    mix = check_price_mix(pricing.price_mix) if getattr(pricing, "price_mix", None) else DEFAULT_MIX
    return PriceChoice(basis=pricing.price, mix=mix, cny_per_usd=pricing.cny_per_usd)


def resolve_training(req: TrainingRequest, db, calibration=None) -> ResolvedTraining:
    """The engine's inputs for ``req``: the model and hardware by name, the recipe from the GPU and
    framework, the attention kernel from the framework and the model, the sequence length from the
    preset, dp from the GPU count, the machine's GPUs per node; ``calibration``: the loaded profile
    ``req.calibration`` names (service/estimate.py loads it)."""
    model = resolve_model(req.model, db)
    m = req.machine
    hw, per_node, notes = resolve_hardware(db, gpu=m.gpu, instance=m.instance, fabric=m.fabric,
                                           nics_per_node=m.nics_per_node or None,
                                           gpus_per_node=m.gpus_per_node or None, calibration=calibration)
    if hw.calibration is not None and calibration is not None:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "calibration profile {name!r} ({summary})"),
                          name=calibration.name, summary=calibration.summary()))
    s, layout = req.setup, req.layout
    recipe = s.recipe or default_recipe(hw.gpu, s.framework, s.finetune)
    if not s.recipe:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "recipe {recipe} (default for {gpu} with {framework}; --recipe)"),
                          recipe=recipe, gpu=hw.gpu.name, framework=s.framework))
    attention = s.attention or default_attention(s.framework, model)
    check_attention(model, attention, s.framework)
    if attention == "eager" and layout.cp > 1:
        # context parallelism splits the sequence over ranks inside the attention kernel (ring
        # attention over flash/SDPA kernels: Megatron-Core's context parallel runs on
        # TransformerEngine's fused attention); eager attention has no such split
        raise InputError("attention", "context parallelism above 1 needs flash or sdpa attention (ring attention); "
                                      "eager has no context-parallel form: choose flash or sdpa, or cp 1")
    if not s.attention and attention != default_attention(s.framework):
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "attention eager: transformers runs {family} without SDPA "
                                                      "(--attention flash for FlashAttention-2)"), family=model.family))
    if s.qlora_prepare and layout.recompute == "none":
        # prepare_model_for_kbit_training turns gradient checkpointing on by default
        # (use_gradient_checkpointing=True, peft/utils/other.py)
        layout = replace(layout, recompute="full")
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "prepare_model_for_kbit_training turns gradient "
                                                      "checkpointing on (full recomputation)")))
    setup = replace(s, recipe=recipe, attention=attention, seq_len=s.seq_len or default_seq_len(model, db))
    plan = resolve_plan(layout, m.gpus, per_node)
    return ResolvedTraining(model=model, hardware=hw, setup=setup, plan=plan, price=price_choice(req.pricing),
                            notes=tuple(notes))


@dataclass(frozen=True)
class ResolvedInference:
    model: ModelSpec
    hardware: Hardware
    setup: InferenceSetup
    price: PriceChoice
    notes: tuple


def resolve_inference(req: InferenceRequest, db, calibration=None) -> ResolvedInference:
    """The engine's inputs for one inference batch: transformers' default attention kernel (SDPA; eager
    for the families without it)."""
    model = resolve_model(req.model, db)
    hw, _per_node, notes = resolve_hardware(db, gpu=req.machine.gpu, instance=req.machine.instance,
                                            calibration=calibration)
    if hw.calibration is not None and calibration is not None:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "calibration profile {name!r} ({summary})"),
                          name=calibration.name, summary=calibration.summary()))
    setup = replace(req.setup, attention=req.setup.attention or default_attention("pytorch", model))
    price = PriceChoice(basis=req.pricing.price, mix=DEFAULT_MIX, cny_per_usd=req.pricing.cny_per_usd)
    return ResolvedInference(model=model, hardware=hw, setup=setup, price=price, notes=tuple(notes))
