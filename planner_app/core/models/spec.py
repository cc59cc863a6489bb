"""Model description: the architecture dimensions the engine sizes, and parameter counts.

Parameter counts follow the Hugging Face implementations layer by layer (transformers 5.x
modeling_<type>.py: GPT2LMHeadModel, LlamaForCausalLM / Mistral / Qwen2 / Qwen3,
BertForMaskedLM, MixtralForCausalLM, DeepseekV3ForCausalLM, Gemma/Gemma2/Gemma3 text,
Phi3, Qwen2-MoE, Qwen3-MoE, gpt-oss, GLM-4, OLMo-2, Granite, GPT-NeoX, Falcon), so that
``ModelSpec.params_total`` equals ``sum(p.numel() for p in model.parameters())`` for the
matching model (tests/unit/test_hf_meta_models.py builds each one on the meta device;
tests/data/hf_param_counts.json keeps the counts as a record).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from planner_app.core.errors import (
    InputError,
    require_choice,
    require_float,
    require_int,
)
from planner_app.core.text import QT_TRANSLATE_NOOP, Text, TextList

ARCHS = ("gpt2", "llama", "bert", "moe", "deepseek", "cnn")
POSITIONS = ("learned", "rope", "none")
NORMS = ("layernorm", "rmsnorm")
MLPS = ("swiglu", "gelu", "gelu_tanh")
# Where a layer's hidden-width norms sit: before each sublayer (Llama), before and after
# each (Gemma 2/3 and GLM-4 "sandwich"), or only after each, on the residual branch (OLMo-2).
NORM_LAYOUTS = ("pre", "sandwich", "post")
# RMSNorm on queries and keys: none, per head over head_dim (Qwen3, Gemma 3), or over the
# whole projection width (OLMo-2: q_norm over heads*head_dim, k_norm over kv_heads*head_dim).
QK_NORMS = ("none", "head", "full")
# Families whose transformers implementation has no SDPA path (``_supports_sdpa = False`` in
# modeling_gemma2.py: "sdpa does not support softcapping"; modeling_gpt_oss.py: the sinks):
# transformers runs them eager unless FlashAttention (or flex) is asked for.
NO_SDPA_FAMILIES = ("gemma2", "gpt_oss")


@dataclass(frozen=True)
class ModelSpec:
    """One model architecture. Sizes are counts (not bytes); 0 means "not used".

    ``arch``: ``gpt2`` (GPT-2 style decoder: learned positions, LayerNorm, GELU MLP, biases),
    ``llama`` (RoPE, RMSNorm, gated MLP, grouped-query attention: Llama, Mistral, Qwen2/3,
    Gemma 1/2/3, Phi-3, GLM-4, OLMo-2, Granite),
    ``bert`` (post-norm encoder with a masked-LM head), ``moe`` (Llama-style attention with a
    mixture-of-experts MLP: Mixtral, Qwen2/3-MoE, gpt-oss), ``deepseek`` (multi-head latent attention + MoE with
    shared experts and leading dense layers: DeepSeek-V2/V3), ``cnn`` (a non-transformer
    described by its parameter count, forward FLOPs and activation bytes per sample).
    ``gpt2`` with ``position="rope"`` is a GPT-NeoX / Falcon decoder (LayerNorm, GELU MLP,
    fused QKV, rotary positions).

    ``mlp="swiglu"`` means a gated MLP (gate, up, down): Gemma's GELU-tanh gate (GeGLU) has the
    same matrices and saves the same tensors. The fields after ``v_head_dim`` describe what
    the families of issue 14 add; their defaults describe a Llama layer, so a spec built
    without them is unchanged.
    """

    name: str
    arch: str
    hidden: int = 0
    layers: int = 0
    heads: int = 0
    kv_heads: int = 0  # 0: same as heads
    head_dim: int = 0  # 0: hidden // heads
    ffn_hidden: int = 0
    vocab: int = 0
    max_positions: int = 0
    position: str = "rope"
    norm: str = "rmsnorm"
    mlp: str = "swiglu"
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    norm_bias: bool = False
    tied_embeddings: bool = False
    type_vocab: int = 0
    attn_dropout: float = 0.0
    hidden_dropout: float = 0.0
    embed_dropout: float = 0.0
    sliding_window: int = 0
    # mixture of experts
    experts: int = 0
    top_k: int = 0
    expert_ffn_hidden: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    # multi-head latent attention (DeepSeek-V2/V3)
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    # layer structure beyond Llama's (transformers modeling_<family>.py)
    family: str = ""  # the Hugging Face model_type the spec was read from ("" = built from dimensions)
    norms_per_layer: int = 2  # hidden-width norms per layer: 4 Gemma 2/3, GLM-4; 1 Falcon-7B
    norm_layout: str = "pre"
    qk_norm: str = "none"
    parallel_block: bool = False  # attention and MLP read the same input, outputs summed (GPT-NeoX, Falcon)
    rotary_fraction: float = 1.0  # share of head_dim rotated (GPT-NeoX 0.25, GLM-4 0.5)
    sliding_window_layers: int = 0  # layers with the window; 0: every layer (Mistral) when sliding_window is set
    attn_softcap: float = 0.0  # tanh cap of attention scores (Gemma 2: 50)
    final_softcap: float = 0.0  # tanh cap of the output logits (Gemma 2: 30)
    attn_sinks: bool = False  # one learned sink logit per head (gpt-oss)
    router_bias: bool = False  # MoE router Linear with bias (gpt-oss)
    expert_bias: bool = False  # routed experts' projections with biases (gpt-oss)
    shared_expert_ffn_hidden: int = 0  # width of each shared expert; 0: expert_ffn_hidden
    shared_expert_gate: bool = False  # sigmoid gate Linear(hidden, 1) on the shared expert (Qwen2-MoE)
    # hidden_act of a GELU MLP as the layer trace runs it (GPT-NeoX: "gelu_fast" and "gelu_new" are
    # separate Python ops, activations.py; "" or "gelu": one kernel saving its input)
    activation: str = ""
    # non-transformer models
    params_given: int = 0
    fwd_flops_per_sample: float = 0.0
    act_bytes_per_sample_fp32: float = 0.0
    # provenance
    source: str = ""
    notes: str = field(default="", compare=False)

    def __post_init__(self):
        require_choice("arch", self.arch, ARCHS)
        if self.arch == "cnn":
            require_int("params", self.params_given, 1)
            require_float("fwd_flops_per_sample", self.fwd_flops_per_sample, 0.0, inclusive_min=False)
            require_float("act_bytes_per_sample", self.act_bytes_per_sample_fp32, 0.0, inclusive_min=False)
            return
        require_choice("position", self.position, POSITIONS)
        require_choice("norm", self.norm, NORMS)
        require_choice("mlp", self.mlp, MLPS)
        for f in ("hidden", "layers", "heads", "vocab"):
            require_int(f, getattr(self, f), 1)
        require_int("kv_heads", self.kv_heads, 0)
        require_int("head_dim", self.head_dim, 0)
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.head_dim == 0:
            if self.hidden % self.heads and self.arch != "deepseek":
                raise InputError("heads", f"must divide hidden size {self.hidden} (got {self.heads} heads); "
                                          "give head_dim explicitly for models whose heads do not tile the hidden size")
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        if self.heads % self.kv_heads:
            raise InputError("kv_heads", f"must divide the number of attention heads {self.heads}, got {self.kv_heads}")
        if self.position == "learned":
            require_int("max_positions", self.max_positions, 1)
        for f in ("attn_dropout", "hidden_dropout", "embed_dropout"):
            require_float(f, getattr(self, f), 0.0, 1.0)
        if self.arch in ("moe", "deepseek"):
            require_int("experts", self.experts, 1)
            require_int("top_k", self.top_k, 1, self.experts)
            require_int("expert_ffn_hidden", self.expert_ffn_hidden, 1)
            require_int("dense_layers", self.dense_layers, 0, self.layers)
            require_int("shared_experts", self.shared_experts, 0)
        if self.arch == "deepseek":
            for f in ("kv_lora_rank", "qk_nope_dim", "qk_rope_dim", "v_head_dim"):
                require_int(f, getattr(self, f), 1)
        require_int("ffn_hidden", self.ffn_hidden, 1)
        self._check_structure()

    def _check_structure(self):
        require_int("norms_per_layer", self.norms_per_layer, 1, 4)
        require_choice("norm_layout", self.norm_layout, NORM_LAYOUTS)
        require_choice("qk_norm", self.qk_norm, QK_NORMS)
        require_float("rotary_fraction", self.rotary_fraction, 0.0, 1.0, inclusive_min=False)
        require_float("attn_softcap", self.attn_softcap, 0.0)
        require_float("final_softcap", self.final_softcap, 0.0)
        require_int("sliding_window", self.sliding_window, 0)
        require_int("sliding_window_layers", self.sliding_window_layers, 0, self.layers)
        if self.sliding_window_layers and not self.sliding_window:
            raise InputError("sliding_window_layers", "needs a sliding_window; got layers with a window of 0")
        require_int("shared_expert_ffn_hidden", self.shared_expert_ffn_hidden, 0)
        if (self.shared_expert_ffn_hidden or self.shared_expert_gate) and not self.shared_experts:
            raise InputError("shared_experts", "must be at least 1 when a shared expert width or gate is given")

    # ---- derived widths ---------------------------------------------------------------
    @property
    def is_transformer(self) -> bool:
        return self.arch != "cnn"

    @property
    def is_moe(self) -> bool:
        return self.arch in ("moe", "deepseek")

    @property
    def q_width(self) -> int:
        """Width of the query projection output (heads x query head size)."""
        if self.arch == "deepseek":
            return self.heads * (self.qk_nope_dim + self.qk_rope_dim)
        return self.heads * self.head_dim

    @property
    def kv_width(self) -> int:
        """Width of one of K or V per token as the attention kernel sees it."""
        if self.arch == "deepseek":
            return self.heads * (self.qk_nope_dim + self.qk_rope_dim)
        return self.kv_heads * self.head_dim

    @property
    def attn_out_width(self) -> int:
        if self.arch == "deepseek":
            return self.heads * self.v_head_dim
        return self.heads * self.head_dim

    @property
    def sdpa_supported(self) -> bool:
        return self.family not in NO_SDPA_FAMILIES

    @property
    def window_layers(self) -> int:
        """Layers that attend within ``sliding_window`` (the others attend to the whole context)."""
        if not self.sliding_window:
            return 0
        return self.sliding_window_layers or self.layers

    def attended_context(self, ctx):
        """Keys one query attends to (or KV entries a sequence keeps), averaged over the
        layers: ``min(ctx, sliding_window)`` on the windowed layers, ``ctx`` on the others
        (Gemma 2 and gpt-oss alternate, Gemma 3 has five windowed layers in six). Scalar or array."""
        if not self.sliding_window:
            return ctx
        if self.window_layers == self.layers:
            return min(ctx, self.sliding_window) if np.ndim(ctx) == 0 else np.minimum(ctx, self.sliding_window)
        share = self.window_layers / self.layers
        return share * np.minimum(ctx, self.sliding_window) + (1.0 - share) * ctx

    @property
    def shared_ffn_hidden(self) -> int:
        """Total inner width of the shared experts of one MoE layer (0: none)."""
        return self.shared_experts * (self.shared_expert_ffn_hidden or self.expert_ffn_hidden)

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def dense_mlp_layers(self) -> int:
        return self.dense_layers if self.is_moe else self.layers

    # ---- parameter counts (Hugging Face layouts) --------------------------------------
    def _norm_params(self, width: int = 0) -> int:
        """One norm over ``width`` (default: hidden): weight, and a bias for LayerNorm."""
        w = width or self.hidden
        return 2 * w if (self.norm == "layernorm" or self.norm_bias) else w

    def layer_norm_params(self) -> int:
        """The hidden-width norms of one layer (input, post-attention, sandwich norms)."""
        return self.norms_per_layer * self._norm_params()

    def qk_norm_params(self) -> int:
        """Qwen3RMSNorm(head_dim) on q and k (Qwen3, Gemma 3); Olmo2RMSNorm over the widths."""
        if self.qk_norm == "head":
            return 2 * self._norm_params(self.head_dim)
        if self.qk_norm == "full":
            return self._norm_params(self.q_width) + self._norm_params(self.kv_width)
        return 0

    def attention_params(self) -> int:
        """Parameters of one attention block: projections, their biases, QK-norm weights and
        gpt-oss's per-head sinks (``self.sinks = nn.Parameter(torch.empty(num_attention_heads))``)."""
        h = self.hidden
        if self.arch == "deepseek":
            qk_head = self.qk_nope_dim + self.qk_rope_dim
            if self.q_lora_rank:
                q = h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.heads * qk_head
            else:
                q = h * self.heads * qk_head
            kv = (h * (self.kv_lora_rank + self.qk_rope_dim) + self.kv_lora_rank
                  + self.kv_lora_rank * self.heads * (self.qk_nope_dim + self.v_head_dim))
            o = self.heads * self.v_head_dim * h
            return q + kv + o
        qw, kvw = self.q_width, self.kv_width
        n = h * qw + 2 * h * kvw + qw * h
        if self.qkv_bias:
            n += qw + 2 * kvw
        if self.out_bias:
            n += h
        return n + self.qk_norm_params() + (self.heads if self.attn_sinks else 0)

    def mlp_params(self, ffn: int, bias: bool | None = None) -> int:
        """Parameters of one dense MLP of inner width ``ffn`` (biases: ``mlp_bias`` unless given)."""
        h = self.hidden
        bias = self.mlp_bias if bias is None else bias
        if self.mlp == "swiglu":
            n = 3 * h * ffn
            return n + (2 * ffn + h if bias else 0)
        return 2 * h * ffn + (ffn + h if bias else 0)

    def expert_params(self) -> int:
        """One routed expert; gpt-oss keeps gate_up_proj_bias (2 x ffn) and down_proj_bias (h)."""
        return self.mlp_params(self.expert_ffn_hidden, self.mlp_bias or self.expert_bias)

    def router_params(self) -> int:
        return self.experts * self.hidden + (self.experts if self.router_bias else 0)

    def moe_params(self) -> int:
        """Parameters of one mixture-of-experts block: router, routed and shared experts (and
        Qwen2-MoE's ``shared_expert_gate = nn.Linear(hidden, 1, bias=False)``)."""
        routed = self.experts * self.expert_params()
        shared = self.mlp_params(self.shared_ffn_hidden) if self.shared_experts else 0
        gate = self.hidden if self.shared_expert_gate else 0
        return self.router_params() + routed + shared + gate

    def dense_layer_params(self) -> int:
        return self.attention_params() + self.mlp_params(self.ffn_hidden) + self.layer_norm_params()

    def moe_layer_params(self) -> int:
        return self.attention_params() + self.moe_params() + self.layer_norm_params()

    def embedding_params(self) -> int:
        """Input embeddings (token, learned positions, token types, BERT's embedding norm)."""
        if not self.is_transformer:
            return 0
        n = self.vocab * self.hidden
        if self.position == "learned":
            n += self.max_positions * self.hidden
        n += self.type_vocab * self.hidden
        if self.arch == "bert":
            n += 2 * self.hidden
        return n

    def head_params(self) -> int:
        """Final norm, masked-LM transform and the output layer (zero extra when tied)."""
        h = self.hidden
        if self.arch == "bert":
            # BertOnlyMLMHead: dense h->h with bias, LayerNorm, tied decoder with its own bias
            return h * h + h + 2 * h + self.vocab
        n = self._norm_params()
        if not self.tied_embeddings:
            n += self.vocab * h
        return n

    def layer_params_total(self) -> int:
        if self.is_moe:
            return self.dense_mlp_layers * self.dense_layer_params() + self.moe_layers * self.moe_layer_params()
        return self.layers * self.dense_layer_params()

    @property
    def params_total(self) -> int:
        """All parameters, as ``sum(p.numel() for p in model.parameters())`` counts them."""
        if not self.is_transformer:
            return self.params_given
        return self.embedding_params() + self.layer_params_total() + self.head_params()

    @property
    def params_active(self) -> int:
        """Parameters a token passes through: only top-k routed experts of each MoE layer."""
        if not self.is_moe:
            return self.params_total
        inactive = (self.experts - self.top_k) * self.expert_params()
        return self.params_total - self.moe_layers * inactive

    def attention_gemm_params(self) -> int:
        """Weights of one attention block's matrix multiplies (no biases, norms or sinks)."""
        if self.arch == "deepseek":
            return self.attention_params() - self.kv_lora_rank - (self.q_lora_rank or 0)  # the latent norms
        h, qw, kvw = self.hidden, self.q_width, self.kv_width
        return h * qw + 2 * h * kvw + qw * h

    def linear_weight_params(self) -> int:
        """Weights of matrix multiplies (what autocast caches in 16 bits), lm_head included."""
        if not self.is_transformer:
            return self.params_given
        h = self.hidden
        mats = 3 if self.mlp == "swiglu" else 2
        attn = self.attention_gemm_params()
        n = self.dense_mlp_layers * (attn + mats * h * self.ffn_hidden)
        if self.is_moe:
            moe = (self.experts * h + self.experts * mats * h * self.expert_ffn_hidden
                   + mats * h * self.shared_ffn_hidden + (h if self.shared_expert_gate else 0))
            n += self.moe_layers * (attn + moe)
        n += self.vocab * h  # the output projection (tied or not, it is a GEMM weight)
        if self.arch == "bert":
            n += h * h
        return n

    def layer_count_changes(self, layers: int) -> dict:
        """The per-layer counts that follow a new number of layers (an edited dimension): the
        windowed layers keep their share (Gemma 3: 5 in 6) and at least one layer of each kind;
        leading dense layers are cut to the new depth."""
        out = {}
        if self.sliding_window_layers:
            share = round(self.sliding_window_layers * layers / self.layers)
            out["sliding_window_layers"] = min(layers - 1, max(1, share)) if layers > 1 else 0
        if self.dense_layers > layers:
            out["dense_layers"] = layers
        return out

    @property
    def kv_cache_heads(self) -> int:
        """Key/value heads transformers' cache holds: FalconAttention broadcasts grouped K/V to
        every head before ``cache.update`` under the new decoder architecture (modeling_falcon.py:
        ``num_kv_heads = self.num_heads if self.new_decoder_architecture``), so Falcon-40B's
        generate() caches 128 heads, not 8; multi-query Falcon-7B caches one."""
        if self.family == "falcon" and self.kv_heads > 1:
            return self.heads
        return self.kv_heads

    def with_changes(self, **changes) -> ModelSpec:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def summary(self) -> Text:
        if not self.is_transformer:
            return Text(QT_TRANSLATE_NOOP("Engine", "{name}: {m:.1f}M parameters (non-transformer)"),
                        name=self.name, m=self.params_total / 1e6)
        parts = [Text(QT_TRANSLATE_NOOP("Engine", "{n} layers"), n=self.layers),
                 Text(QT_TRANSLATE_NOOP("Engine", "hidden {n}"), n=self.hidden),
                 Text(QT_TRANSLATE_NOOP("Engine", "{n} heads"), n=self.heads)]
        if self.kv_heads != self.heads:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "{n} KV heads"), n=self.kv_heads))
        if self.is_moe:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "{n} experts top-{k}"), n=self.experts, k=self.top_k))
        return Text(QT_TRANSLATE_NOOP("Engine", "{name}: {b:.2f}B parameters ({parts})"), name=self.name,
                    b=self.params_total / 1e9, parts=TextList(QT_TRANSLATE_NOOP("Engine", ", "), parts))
