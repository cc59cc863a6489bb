"""LoRA and QLoRA fine-tuning as PEFT and bitsandbytes run them.

LoRA (Hu et al. 2021) freezes the base model and trains, for each targeted linear layer of
``in`` x ``out`` weights, two adapters ``lora_A`` (r x in) and ``lora_B`` (out x r). PEFT's
``LoraLayer.forward`` (peft/tuners/lora/layer.py, 0.21) runs ``result = base(x)``, casts ``x``
to the adapters' dtype (``_cast_input_dtype``: a new tensor unless it already has that dtype),
then ``result + lora_B(lora_A(dropout(x))) * scaling`` and casts the sum back to the base's
dtype. ``get_peft_model`` keeps adapters in fp32 by default (``autocast_adapter_dtype=True``)
even on a 16-bit base. The frozen base saves no inputs for weight gradients (autograd saves an
operand only when the other one's gradient is needed) and its backward computes input
gradients only.

QLoRA (Dettmers et al. 2023) loads the base's linear layers (not the output layer) as
bitsandbytes ``Linear4bit``: NF4 codes (4 bits a weight) in blocks of 64, each block's absmax
quantised again to 8 bits in blocks of 256 with one fp32 constant (double quantisation, the
paper's sec. 3: 0.127 bits per parameter for the constants). ``MatMul4Bit``
(bitsandbytes/autograd/_functions.py, 0.50.2) dequantises the weight to the compute dtype for
the GEMM, in forward and again in backward, and keeps no activation (``ctx.tensors = (None,
B)``). ``prepare_model_for_kbit_training`` (peft/utils/other.py) casts every other parameter
(embeddings, norms, output layer) to fp32 and turns gradient checkpointing on.
"""
from __future__ import annotations

from dataclasses import dataclass

from planner_app.core.errors import InputError
from planner_app.core.models import layers_hf

FINETUNES = ("full", "lora", "qlora")
LORA_DTYPES = ("fp32", "bf16")
ADAPTER_BYTES = {"fp32": 4, "bf16": 2}
# NF4 with double quantisation (Dettmers et al. 2023, sec. 3): 4-bit codes, an 8-bit absmax per
# 64 weights and an fp32 constant per 256 absmax values.
NF4_BLOCK = 64
NF4_SECOND_BLOCK = 256
NF4_BYTES_PER_PARAM = 0.5 + 1.0 / NF4_BLOCK + 4.0 / (NF4_BLOCK * NF4_SECOND_BLOCK)
ALL_LINEAR = "all-linear"
# PEFT's defaults when target_modules is not given (peft/utils/constants.py,
# TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING, PEFT 0.21: read on the GPU machine into
# tests/data/peft_lora_targets.json), keyed by Hugging Face model_type. PEFT 0.21 has no entry for
# phi3, qwen2_moe, qwen3_moe, gpt_oss, glm4, olmo2, granite or deepseek_v3: get_peft_model raises
# "Please specify `target_modules`", and so does the engine.
PEFT_DEFAULT_TARGETS = {"llama": ("q_proj", "v_proj"), "mistral": ("q_proj", "v_proj"),
                        "mixtral": ("q_proj", "v_proj"), "qwen2": ("q_proj", "v_proj"), "gpt2": ("c_attn",),
                        "bert": ("query", "value"), "gemma": ("q_proj", "v_proj"), "gemma2": ("q_proj", "v_proj"),
                        "gemma3_text": ("q_proj", "v_proj"), "qwen3": ("q_proj", "v_proj"),
                        "gpt_neox": ("query_key_value",), "falcon": ("query_key_value",)}
# The model_type a spec without one (built from dimensions, or a Llama/Mistral/Qwen2/Mixtral/GPT-2/BERT
# config.json) is looked up under, by the engine's architecture.
ARCH_MODEL_TYPES = {"llama": "llama", "moe": "mixtral", "gpt2": "gpt2", "bert": "bert", "deepseek": "deepseek_v3"}
# Linear layers PEFT cannot adapt as nn.Linear in transformers 5.x: the MoE router.
NOT_ADAPTABLE = ("router",)


@dataclass(frozen=True)
class LoraSpec:
    """A resolved LoRA/QLoRA run: what the memory and time models need (hashable: it keys the
    cached layer profiles)."""

    rank: int
    targets: tuple  # module names (the last part of the name, as PEFT matches them)
    adapter_bytes: int  # 4 (fp32, PEFT's default) or 2
    dropout: float = 0.0
    quant: bool = False  # QLoRA: NF4 base linear layers
    prepare: bool = False  # prepare_model_for_kbit_training: fp32 embeddings, norms and output layer
    dense_adapter_params: int = 0  # adapter parameters of one dense layer
    moe_adapter_params: int = 0  # ... of one MoE layer
    dense_linear_params: int = 0  # weights of one dense layer's linear layers (quantised under QLoRA)
    moe_linear_params: int = 0
    largest_adapter_elems: int = 0  # the largest lora_A or lora_B matrix (for-loop AdamW's per-tensor temporaries)
    dense_adapter_tensors: int = 0  # lora_A and lora_B tensors of one dense layer
    moe_adapter_tensors: int = 0

    def adapter_params(self, dense_layers, moe_layers):
        return dense_layers * self.dense_adapter_params + moe_layers * self.moe_adapter_params

    def adapter_tensors(self, dense_layers, moe_layers):
        return dense_layers * self.dense_adapter_tensors + moe_layers * self.moe_adapter_tensors

    def linear_params(self, dense_layers, moe_layers):
        return dense_layers * self.dense_linear_params + moe_layers * self.moe_linear_params


def module_name(trace_name: str) -> str:
    """The module name PEFT matches: the last part of a layer's op name (``mlp.gate_proj``)."""
    return trace_name.rsplit(".", 1)[-1]


def layer_linears(model) -> dict:
    """{moe_layer: [(module name, in features, out features), ...]} of one layer of each kind,
    read from the layer traces the memory model runs (``layers_hf``), so the two never differ."""
    spec = layers_hf.HFLayerSpec("lp", 2, "sdpa", 1)
    out = {}
    for moe_layer, n in ((False, model.dense_mlp_layers), (True, model.moe_layers)):
        if n:
            tr = layers_hf.layer_trace(model, spec, moe_layer)[0]
            out[moe_layer] = [(module_name(name), int(k), int(n_out)) for name, k, n_out in tr.linears]
    return out


def resolve_lora(model, setup) -> LoraSpec | None:
    """The LoraSpec of a run (``setup``: its core/training/setup.TrainingSetup), or None for full
    fine-tuning; InputError naming the option when the combination is not what PEFT/bitsandbytes can
    run or what the engine models."""
    finetune, rank, targets, dtype = setup.finetune, setup.lora_rank, setup.lora_targets, setup.lora_dtype
    dropout, prepare, recipe, framework = setup.lora_dropout, setup.qlora_prepare, setup.recipe, setup.framework
    if finetune not in FINETUNES:
        raise InputError("finetune", f"must be one of {', '.join(FINETUNES)}; got {finetune!r}")
    if finetune == "full":
        return None
    if not model.is_transformer:
        raise InputError("finetune", f"LoRA needs a transformer model; {model.name} is not one")
    if framework != "pytorch":
        raise InputError("finetune", "LoRA and QLoRA are modelled as Hugging Face PEFT: use --framework pytorch; "
                                     f"got {framework}")
    if dtype not in LORA_DTYPES:
        raise InputError("lora_dtype", f"must be one of {', '.join(LORA_DTYPES)}; got {dtype!r}")
    if finetune == "qlora":
        if recipe not in ("bf16", "bf16-autocast"):
            raise InputError("recipe", "QLoRA computes in bf16 over 4-bit weights (bitsandbytes "
                                       "bnb_4bit_compute_dtype=bfloat16): use --recipe bf16-autocast (Trainer) or "
                                       f"bf16; got {recipe}")
        if model.is_moe:
            raise InputError("finetune", "QLoRA of a mixture-of-experts model is not modelled (transformers 5.x "
                                         "keeps experts in fused tensors, not nn.Linear); use --finetune lora")
    elif recipe not in ("fp32", "amp-bf16", "amp-fp16", "bf16", "bf16-autocast"):
        raise InputError("recipe", "LoRA trains on a PyTorch model loaded in fp32 (fp32, amp-bf16, amp-fp16) or in "
                                   f"bf16 (bf16-autocast, bf16); got {recipe}")
    if dtype == "bf16" and recipe not in ("bf16", "bf16-autocast"):
        raise InputError("lora_dtype", f"bf16 adapters need a bf16 base (--recipe bf16-autocast or bf16); got "
                                       f"--recipe {recipe}")
    if prepare and finetune != "qlora":
        raise InputError("qlora_prepare", "prepare_model_for_kbit_training applies to --finetune qlora only")
    if not 0.0 <= dropout < 1.0:
        raise InputError("lora_dropout", f"must be from 0 to below 1; got {dropout!r}")
    linears = layer_linears(model)
    names = sorted({n for kind in linears.values() for n, _, _ in kind if n not in NOT_ADAPTABLE})
    wanted = _target_names(model, targets, names)
    chosen = [(n, k, o) for kind in linears.values() for n, k, o in kind if n in wanted]
    smallest = int(min(min(k, o) for _, k, o in chosen))
    if rank < 1 or rank > smallest:
        raise InputError("lora_rank", f"must be from 1 to the smallest width of the targeted modules ({smallest}); "
                                      f"got {rank}")

    def per_layer(moe_layer, adapters: bool):
        return sum(rank * (k + o) if adapters else k * o for n, k, o in linears.get(moe_layer, ())
                   if (n in wanted if adapters else n not in NOT_ADAPTABLE))

    return LoraSpec(rank=rank, targets=tuple(sorted(wanted)), adapter_bytes=ADAPTER_BYTES[dtype], dropout=dropout,
                    quant=finetune == "qlora", prepare=prepare,
                    dense_adapter_params=per_layer(False, True), moe_adapter_params=per_layer(True, True),
                    dense_linear_params=per_layer(False, False), moe_linear_params=per_layer(True, False),
                    largest_adapter_elems=max(rank * max(k, o) for _, k, o in chosen),
                    dense_adapter_tensors=2 * sum(n in wanted for n, _, _ in linears.get(False, ())),
                    moe_adapter_tensors=2 * sum(n in wanted for n, _, _ in linears.get(True, ())))


def _target_names(model, targets: str, names: list) -> set:
    """The module names ``targets`` selects: ``all-linear`` (PEFT: every linear layer but the
    output layer), a comma-separated list, or empty for PEFT's default for the architecture."""
    text = (targets or "").strip()
    if text == ALL_LINEAR:
        if model.is_moe:
            # measured: PEFT 0.21 on Mixtral (transformers 5.17) also adapts the fused expert weights
            # (22.5M trainable parameters on mixtral-mini against 0.85M in its linear layers;
            # tests/data/trainer_runs_h200.json), which the engine does not model
            raise InputError("lora_targets", f"all-linear on a mixture-of-experts model also adapts the fused expert "
                                             f"weights, which is not modelled; name the modules ({', '.join(names)})")
        return set(names)
    if not text:
        default = PEFT_DEFAULT_TARGETS.get(model.family or ARCH_MODEL_TYPES.get(model.arch, ""))
        if default is None:
            other = "" if model.is_moe else f" or use {ALL_LINEAR}"  # all-linear is refused on MoE (above)
            raise InputError("lora_targets", f"PEFT has no default target modules for {model.name}; name them "
                                             f"(its linear modules: {', '.join(names)}){other}")
        return set(default)
    wanted = {t.strip() for t in text.split(",") if t.strip()}
    unknown = sorted(wanted - set(names))
    if unknown or not wanted:
        raise InputError("lora_targets", f"{', '.join(unknown) or repr(text)} is not a linear module of {model.name}; "
                                         f"its modules: {', '.join(names)}, or {ALL_LINEAR}")
    return wanted
