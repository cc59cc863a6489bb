"""Model description: the architecture dimensions the engine sizes, and parameter counts.

Parameter counts follow the Hugging Face implementations layer by layer (GPT2LMHeadModel,
LlamaForCausalLM / Mistral / Qwen2, BertForMaskedLM, MixtralForCausalLM,
DeepseekV3ForCausalLM), so that ``ModelSpec.params_total`` equals
``sum(p.numel() for p in model.parameters())`` for the matching model
(tests/data/hf_param_counts.json holds PyTorch's counts).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from planner_app.core.errors import InputError, require_choice, require_float, require_int
from planner_app.core.text import QT_TRANSLATE_NOOP, Text, TextList

ARCHS = ("gpt2", "llama", "bert", "moe", "deepseek", "cnn")
POSITIONS = ("learned", "rope", "none")
NORMS = ("layernorm", "rmsnorm")
MLPS = ("swiglu", "gelu", "gelu_tanh")


@dataclass(frozen=True)
class ModelSpec:
    """One model architecture. Sizes are counts (not bytes); 0 means "not used".

    ``arch``: ``gpt2`` (GPT-2 style decoder: learned positions, LayerNorm, GELU MLP, biases),
    ``llama`` (RoPE, RMSNorm, SwiGLU, grouped-query attention: Llama, Mistral, Qwen2),
    ``bert`` (post-norm encoder with a masked-LM head), ``moe`` (Llama-style attention with a
    mixture-of-experts MLP: Mixtral), ``deepseek`` (multi-head latent attention + MoE with
    shared experts and leading dense layers: DeepSeek-V2/V3), ``cnn`` (a non-transformer
    described by its parameter count, forward FLOPs and activation bytes per sample).
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
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def dense_mlp_layers(self) -> int:
        return self.dense_layers if self.is_moe else self.layers

    # ---- parameter counts (Hugging Face layouts) --------------------------------------
    def _norm_params(self) -> int:
        return 2 * self.hidden if (self.norm == "layernorm" or self.norm_bias) else self.hidden

    def attention_params(self) -> int:
        """Parameters of one attention block (projections and their biases)."""
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
        return n

    def mlp_params(self, ffn: int) -> int:
        """Parameters of one dense MLP of inner width ``ffn``."""
        h = self.hidden
        if self.mlp == "swiglu":
            n = 3 * h * ffn
            return n + (2 * ffn + h if self.mlp_bias else 0)
        return 2 * h * ffn + (ffn + h if self.mlp_bias else 0)

    def moe_params(self) -> int:
        """Parameters of one mixture-of-experts block: router, routed and shared experts."""
        router = self.experts * self.hidden
        routed = self.experts * self.mlp_params(self.expert_ffn_hidden)
        shared = self.mlp_params(self.expert_ffn_hidden * self.shared_experts) if self.shared_experts else 0
        return router + routed + shared

    def dense_layer_params(self) -> int:
        return self.attention_params() + self.mlp_params(self.ffn_hidden) + 2 * self._norm_params()

    def moe_layer_params(self) -> int:
        return self.attention_params() + self.moe_params() + 2 * self._norm_params()

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
        inactive = (self.experts - self.top_k) * self.mlp_params(self.expert_ffn_hidden)
        return self.params_total - self.moe_layers * inactive

    def linear_weight_params(self) -> int:
        """Weights of matrix multiplies (what autocast caches in 16 bits), lm_head included."""
        if not self.is_transformer:
            return self.params_given
        h = self.hidden
        per_dense = self.attention_params() + self.mlp_params(self.ffn_hidden)
        bias_attn = (self.q_width + 2 * self.kv_width if self.qkv_bias else 0) + (h if self.out_bias else 0)
        bias_mlp = ((2 * self.ffn_hidden + h) if self.mlp == "swiglu" else (self.ffn_hidden + h)) if self.mlp_bias else 0
        if self.arch == "deepseek":
            bias_attn = self.kv_lora_rank + (self.q_lora_rank or 0)  # the latent norms
        per_dense -= bias_attn + bias_mlp
        if self.is_moe:
            per_moe = self.attention_params() - bias_attn + self.moe_params()
            n = self.dense_mlp_layers * per_dense + self.moe_layers * per_moe
        else:
            n = self.layers * per_dense
        n += self.vocab * h  # the output projection (tied or not, it is a GEMM weight)
        if self.arch == "bert":
            n += h * h
        return n

    def with_changes(self, **changes) -> "ModelSpec":
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
