"""The operation helpers every Hugging Face layer trace is written with (``HFOps``: PyTorch's
rules for what autograd saves, autocast's rules for dtypes, bitsandbytes' 4-bit linear layers and
PEFT's LoRA branch), what a trace needs to know besides the model (``HFLayerSpec``), and the
pieces the Llama-style and family traces share (attention kernels, the grouped experts).
"""
from __future__ import annotations

import numpy as np

from planner_app.core.models.trace import EXP, ONE, SEQ, SLOTS, SPG, TP, TPS, T, Trace, W

QLORA_COMPUTE_BYTES = 2  # bnb_4bit_compute_dtype=torch.bfloat16, as the QLoRA paper and PEFT's examples


class HFOps:
    """Operation helpers with autograd-saving and autocast rules.

    ``kind``: ``fp32`` (fp32 parameters and activations), ``amp`` (fp32 parameters under
    autocast to 16 bits), ``lp`` (16-bit parameters and activations).
    """

    # tensor parallelism over these layers is DTensor's (torch's parallelize_module): a column-parallel linear
    # saves its all-gathered input under sequence parallelism (_colwise_input); Megatron's layers do not
    dtensor_sequence_gather = True

    def __init__(self, kind: str, grad_bytes: int, lora=None):
        self.tr = Trace()
        self.kind = kind
        # autocast: over fp32 parameters ("amp") or over 16-bit ones ("lp-amp": Hugging Face
        # Trainer(bf16=True) on a model loaded in bf16)
        self.amp = kind in ("amp", "lp-amp")
        self.param_bytes = 2 if kind in ("lp", "lp-amp") else 4
        self.grad_bytes = grad_bytes
        # LoRA/QLoRA (core/training/lora.py): the base is frozen, adapters on lora.targets; QLoRA's
        # prepare_model_for_kbit_training keeps embeddings, norms and the output layer in fp32
        self.lora = lora
        self.frozen = lora is not None
        if lora is not None and lora.prepare:
            self.param_bytes = 4
        self._sp_gathered: dict[int, T] = {}  # a sequence-sharded tensor's all-gathered rest (slot SPG)

    # -- tensors and casts ----------------------------------------------------------------
    def new(self, width, nbytes, slot, name="", requires_grad=True, base=None) -> T:
        return self.tr.tensor(width, nbytes, slot, requires_grad, name, base)

    def external(self, width, nbytes, slot, name="", requires_grad=True) -> T:
        """A tensor made outside this trace (layer input, shared cos/sin, masks)."""
        return self.new(width, nbytes, slot, name, requires_grad)

    def _cast(self, x: T, nbytes: int, name: str) -> T:
        if x.nbytes == nbytes:
            return x
        y = self.new(x.width, nbytes, x.slot, name)
        self.tr.op("to", [x], [y])
        return y

    def lp(self, x: T, name="cast16") -> T:
        """Autocast's cast of an activation to 16 bits for a GEMM-class op (a new tensor)."""
        return self._cast(x, 2, name) if self.amp else x

    def f32(self, x: T, name="cast32") -> T:
        """Autocast's cast to fp32 for ops on its fp32 list (layer_norm, pow, softmax...)."""
        return self._cast(x, 4, name) if self.amp else x

    def view(self, x: T, width, name="") -> T:
        return self.new(width, x.nbytes, x.slot, name or x.name, base=x)

    # -- ops ----------------------------------------------------------------------------------
    def linear(self, x: T, out_width, out_slot, w_numel, name, adaptable: bool = True) -> T:
        """nn.Linear / Conv1D (addmm): saves its input and weight (ATen derivatives.yaml).
        ``adaptable``: a layer's linear (LoRA may target it, QLoRA quantises it); not the
        output layer."""
        split = "n" if out_slot in (TP, EXP) else ("k" if x.slot in (TP, EXP) else "")
        if adaptable:
            self.tr.linears.append((name, x.width, out_width))
        if self.frozen:
            out = self._frozen_linear(x, out_width, out_slot, w_numel, name, split, adaptable and self.lora.quant)
            if adaptable and name.rsplit(".", 1)[-1] in self.lora.targets:
                out = self._adapter(x, out, out_width, out_slot, name)
            return out
        xs = self._colwise_input(x) if out_slot == TP and self.dtensor_sequence_gather else [x]
        if self.amp and self.param_bytes == 4:
            xin = self._lp_parts(xs, name + ".in16")
            w32 = self.new(w_numel, 4, W, name + ".w", requires_grad=False)
            w16 = self.new(w_numel, 2, W, name + ".w16")
            self.tr.op("cast_w", [w32], [w16], weight_grad_bytes=w_numel * self.grad_bytes)
            out = self.new(out_width, 2, out_slot, name + ".out")
            self.tr.op(name, [*xin, w16], [out], saved=[*xin, w16], gemm=(x.width, out_width, split, 16))
            return out
        xs = self._lp_parts(xs, name + ".in16")  # autocast over 16-bit weights casts only an fp32 input
        out = self.new(out_width, xs[0].nbytes, out_slot, name + ".out")
        self.tr.op(name, xs, [out], saved=xs, weight_grad_bytes=w_numel * self.grad_bytes,
                   gemm=(x.width, out_width, split, 8 * xs[0].nbytes))
        return out

    def _lp_parts(self, xs: list, name: str) -> list:
        """``lp`` of a tensor given as parts (a gathered copy: its local part and its rest), one cast kernel
        over all of them."""
        if not self.amp or xs[0].nbytes == 2:
            return xs
        out = [self.new(t.width, 2, t.slot, name) for t in xs]
        self.tr.op("to", xs, out)
        return out

    def _colwise_input(self, x: T) -> list:
        """The input of a column-parallel linear as tensor parallelism over a Hugging Face model runs it:
        torch's ``parallelize_module`` (DTensor). Under sequence parallelism the sequence-sharded input
        is all-gathered (``PrepareModuleInput``/``ColwiseParallel``: Shard(1) to Replicate,
        torch/distributed/tensor/parallel/style.py) and the linear saves that full-length copy for its
        weight gradient (aten::mm's derivative), one copy per module input shared by the linears that
        read it (q/k/v; gate/up; the output layer). The copy is ``x`` (the local part, slot SEQ) plus
        its rest (slot SPG, zero without sequence parallelism). Megatron's sequence parallelism keeps
        only the shard and gathers again in backward (layers_megatron)."""
        if x.slot != SEQ:
            return [x]
        rest = self._sp_gathered.get(x.idx)
        if rest is None:
            rest = self.new(x.width, x.nbytes, SPG, x.name + ".sp_gathered", x.requires_grad)
            self.tr.op("sp_all_gather", [x], [rest], kind="none")  # its time is the TP communication term
            self._sp_gathered[x.idx] = rest
        return [x, rest]

    def _frozen_linear(self, x: T, out_width, out_slot, w_numel, name, split, quant: bool) -> T:
        """A linear layer whose weight needs no gradient: autograd saves its input only for the
        weight's gradient, so nothing per token is kept (the weight is a parameter, or under
        autocast its cached 16-bit copy); the backward runs the data-gradient GEMM only.
        ``quant``: bitsandbytes Linear4bit: the input cast to the compute dtype, the weight
        dequantised to it (a transient in forward and again in backward), the output cast back
        to the input's dtype."""
        if quant:
            xin = self._cast(x, QLORA_COMPUTE_BYTES, name + ".in16")
            wq = self.new(w_numel / 2, 1, W, name + ".nf4", requires_grad=False)  # 4-bit codes
            wd = self.new(w_numel, QLORA_COMPUTE_BYTES, W, name + ".w16", requires_grad=False)
            self.tr.op(name + ".dequantize", [wq], [wd])
            out = self.new(out_width, xin.nbytes, out_slot, name + ".out")
            bwd = np.zeros(SLOTS)
            bwd[W] = w_numel * QLORA_COMPUTE_BYTES  # dequantised again for the data gradient
            self.tr.op(name, [xin, wd], [out], bwd_temp=bwd, gemm=(x.width, out_width, split, 16, 1))
            return self._cast(out, x.nbytes, name + ".out_cast")
        if self.amp and self.param_bytes == 4:
            xin = self.lp(x, name + ".in16")
            w32 = self.new(w_numel, 4, W, name + ".w", requires_grad=False)
            w16 = self.new(w_numel, 2, W, name + ".w16", requires_grad=False)
            self.tr.op("cast_w", [w32], [w16])
            out = self.new(out_width, 2, out_slot, name + ".out")
            self.tr.op(name, [xin, w16], [out], saved=[w16], gemm=(x.width, out_width, split, 16, 1))
            return out
        x = self.lp(x, name + ".in16")
        out = self.new(out_width, x.nbytes, out_slot, name + ".out")
        self.tr.op(name, [x], [out], gemm=(x.width, out_width, split, 8 * x.nbytes, 1))
        return out

    def _adapter(self, x: T, base: T, out_width, out_slot, name) -> T:
        """PEFT's LoRA branch on a linear layer (core/training/lora.py): x cast to the adapters' dtype,
        dropout, lora_A (saves its input), lora_B (saves lora_A's output), scaling, the sum with
        the base's output (promoted to the wider dtype), cast back to the base's dtype. Under
        autocast the adapters' GEMMs run in 16 bits on autocast's casts of their inputs."""
        lo = self.lora
        r = lo.rank
        if self.amp:  # PEFT's cast to the adapters' dtype, then autocast's to 16 bits for the GEMM
            xa = self.dropout(self._cast(x, lo.adapter_bytes, name + ".lora_in"), lo.dropout, name + ".lora_dropout")
            a_in = self.lp(xa, name + ".lora_A.in16")
            ab = 2
        else:
            ab = lo.adapter_bytes
            xa = self.dropout(self._cast(x, ab, name + ".lora_in"), lo.dropout, name + ".lora_dropout")
            a_in = xa
        a = self.new(r, ab, x.slot, name + ".lora_A")
        self.tr.op(name + ".lora_A", [a_in], [a], saved=[a_in], weight_grad_bytes=r * x.width * lo.adapter_bytes,
                   gemm=(x.width, r, "", 8 * ab, 2))
        b = self.new(out_width, ab, out_slot, name + ".lora_B")
        self.tr.op(name + ".lora_B", [a], [b], saved=[a], weight_grad_bytes=r * out_width * lo.adapter_bytes,
                   gemm=(r, out_width, "", 8 * ab, 2))
        scaled = self.new(out_width, ab, out_slot, name + ".lora_scaled")
        self.tr.op(name + ".lora_scale", [b], [scaled])  # times a Python float: nothing saved
        total = self.new(out_width, max(base.nbytes, ab), out_slot, name + ".lora_sum")
        self.tr.op(name + ".lora_add", [base, scaled], [total])
        return self._cast(total, base.nbytes, name + ".lora_out")

    def layernorm(self, x: T, name) -> T:
        """native_layer_norm saves input, mean and rstd (fp32 per token); fp32 under autocast."""
        xin = self.f32(x, name + ".in32")
        stats = self.new(2, 4, x.slot, name + ".stats", requires_grad=False)
        out = self.new(x.width, xin.nbytes, x.slot, name + ".out")
        self.tr.op(name, [xin], [out, stats], saved=[xin, stats], kind="reduction")
        return out

    def rmsnorm(self, x: T, name) -> T:
        """LlamaRMSNorm: x.to(fp32); x*rsqrt(mean(x^2)+eps); weight * y.to(input dtype)."""
        x32 = self._cast(x, 4, name + ".x32")  # .to(torch.float32): pow saves it
        r = self.new(1, 4, x.slot, name + ".rsqrt")
        self.tr.op(name + ".pow_mean_rsqrt", [x32], [r], saved=[x32, r], kind="reduction")
        y = self.new(x.width, 4, x.slot, name + ".y32")
        self.tr.op(name + ".mul", [x32, r], [y], saved=[x32, r])
        yc = self._cast(y, x.nbytes, name + ".y")
        out = self.new(x.width, max(self.param_bytes, x.nbytes), x.slot, name + ".out")
        # weight * y saves y for the weight's gradient only (a frozen norm saves nothing)
        self.tr.op(name + ".weight", [yc], [out], saved=[] if self.frozen else [yc])
        return out

    def add(self, a: T, b: T, name="add") -> T:
        out = self.new(a.width, max(a.nbytes, b.nbytes), a.slot, name)
        self.tr.op(name, [a, b], [out])
        return out

    def mul(self, a: T, b: T, name="mul") -> T:
        """Elementwise product of two tensors that require grad: saves both."""
        out = self.new(a.width, max(a.nbytes, b.nbytes), a.slot, name)
        self.tr.op(name, [a, b], [out], saved=[a, b])
        return out

    def dropout(self, x: T, p: float, name="dropout") -> T:
        """native_dropout saves a bool mask; p == 0 returns the input (ATen Dropout.cpp)."""
        if p <= 0:
            return x
        mask = self.new(x.width, 1, x.slot, name + ".mask", requires_grad=False)
        out = self.new(x.width, x.nbytes, x.slot, name)
        self.tr.op(name, [x], [out, mask], saved=[mask])
        return out

    def unary_saving_input(self, x: T, name) -> T:
        out = self.new(x.width, x.nbytes, x.slot, name)
        self.tr.op(name, [x], [out], saved=[x])
        return out

    def gelu_tanh_python(self, x: T, name="gelu_new") -> T:
        """NewGELUActivation: 0.5*x*(1+tanh(c*(x+0.044715*pow(x,3)))) as separate ops."""
        half = self.new(x.width, x.nbytes, x.slot, name + ".half")
        self.tr.op(name + ".half", [x], [half])
        xp = self.f32(x, name + ".pow_in")  # pow is on autocast's fp32 list
        cube = self.new(x.width, xp.nbytes, x.slot, name + ".cube")
        self.tr.op(name + ".pow", [xp], [cube], saved=[xp])
        inner = self.new(x.width, max(x.nbytes, cube.nbytes), x.slot, name + ".inner")
        self.tr.op(name + ".inner", [x, cube], [inner])
        th = self.new(x.width, inner.nbytes, x.slot, name + ".tanh")
        self.tr.op(name + ".tanh", [inner], [th], saved=[th])
        one_p = self.new(x.width, th.nbytes, x.slot, name + ".onep")
        self.tr.op(name + ".onep", [th], [one_p])
        return self.mul(half, one_p, name + ".out")

    def cross_entropy_plain(self, logits: T, name="loss") -> T:
        """nn.CrossEntropyLoss on the logits as they are (BertForMaskedLM): cross_entropy_loss
        runs log_softmax(x, dtype=x.dtype), which saves its output in the logits' dtype; under
        autocast nll_loss (on the fp32 list) casts that to fp32 and saves the copy. An H200
        census of saved tensors shows exactly these two (tests/data/profiles_h200.json)."""
        ls = self.new(logits.width, logits.nbytes, logits.slot, name + ".log_softmax")
        self.tr.op(name + ".log_softmax", [logits], [ls], saved=[ls], kind="reduction")
        x = self.f32(ls, name + ".nll_in32")
        loss = self.new(0, 4, ONE, name + ".value")
        self.tr.op(name + ".nll", [x], [loss], saved=[x] if x is not ls else [], kind="none")
        return loss

    def cross_entropy_hf(self, logits: T, name="loss") -> T:
        """ForCausalLMLoss / ForMaskedLMLoss: logits.float(); cross_entropy = log_softmax + nll.

        log_softmax saves its fp32 output; nll_loss's backward makes a dense fp32 gradient.
        """
        l32 = self._cast(logits, 4, name + ".logits32")
        ls = self.new(logits.width, 4, logits.slot, name + ".log_softmax")
        self.tr.op(name + ".log_softmax", [l32], [ls], saved=[ls], kind="reduction")
        loss = self.new(0, 4, ONE, name + ".value")
        self.tr.op(name + ".nll", [ls], [loss], kind="none")
        return loss

    # -- attention ----------------------------------------------------------------------------
    def sdpa(self, q: T, k: T, v: T, heads: int, head_dim_v: int, dropout: float, fused_kernel: bool,
             gqa_expand: bool, name="sdpa") -> T:
        """torch SDPA: flash / memory-efficient kernels save q, k, v, output and the fp32
        log-sum-exp (b x heads x s); their backward keeps an fp32 dq accumulator
        (FlashAttention-2 ``dq_accum``) and, for grouped-query attention, dk/dv expanded
        to the query heads before the reduction."""
        q, k, v = self.lp(q, name + ".q16"), self.lp(k, name + ".k16"), self.lp(v, name + ".v16")
        out = self.new(heads * head_dim_v, q.nbytes, TP, name + ".out")
        lse = self.new(heads, 4, TP, name + ".lse", requires_grad=False)
        bwd = np.zeros(SLOTS)
        bwd[TP] = 4 * q.width + 4 * heads
        if gqa_expand:
            bwd[TP] += 2 * q.width * q.nbytes
        # an explicit mask rules out FlashAttention: the memory-efficient kernel computes the
        # whole square (no causal block skipping)
        self.tr.op(name, [q, k, v], [out, lse], saved=[q, k, v, out, lse], bwd_temp=bwd,
                   attn_flops=2.0 * (q.width + out.width), kind="attention" if fused_kernel else "attention_masked")
        return out

    def eager_attention(self, q: T, k: T, v: T, heads: int, dropout: float, mask_bytes: int,
                        softmax_fp32: bool, name="attn") -> T:
        """eager_attention_forward: matmul(q, k^T)*scale (+ mask), softmax, dropout, matmul(p, v).

        ``softmax_fp32``: Llama-style ``softmax(x, dtype=float32).to(q.dtype)``; otherwise
        ``softmax(x)`` (fp32 under autocast, input dtype otherwise) then ``.type(v.dtype)``.
        """
        q16, k16 = self.lp(q, name + ".q16"), self.lp(k, name + ".k16")
        scores = self.new(heads, q16.nbytes, TPS, name + ".scores")
        self.tr.op(name + ".qk", [q16, k16], [scores], saved=[q16, k16], attn_flops=2.0 * q.width, kind="bmm")
        scaled = self.new(heads, scores.nbytes, TPS, name + ".scaled")
        self.tr.op(name + ".scale", [scores], [scaled])
        if mask_bytes:
            masked = self.new(heads, max(scaled.nbytes, mask_bytes), TPS, name + ".masked")
            self.tr.op(name + ".mask", [scaled], [masked])
        else:
            masked = scaled
        sm_bytes = 4 if (softmax_fp32 or self.amp) else masked.nbytes
        sm_in = self._cast(masked, sm_bytes, name + ".sm_in") if not softmax_fp32 else masked
        probs = self.new(heads, sm_bytes, TPS, name + ".softmax")
        self.tr.op(name + ".softmax", [sm_in], [probs], saved=[probs], kind="reduction")
        probs_c = self._cast(probs, v.nbytes if not self.amp else 2, name + ".probs")
        probs_d = self.dropout(probs_c, dropout, name + ".dropout")
        pv_in, v16 = self.lp(probs_d, name + ".p16"), self.lp(v, name + ".v16")
        out = self.new(q.width, pv_in.nbytes, TP, name + ".pv")
        self.tr.op(name + ".pv", [pv_in, v16], [out], saved=[pv_in, v16], attn_flops=2.0 * q.width, kind="bmm")
        return out

    def contiguous_copy(self, x: T, name) -> T:
        """``transpose(1, 2).contiguous()`` of an eager attention output: a copy."""
        out = self.new(x.width, x.nbytes, x.slot, name)
        self.tr.op(name, [x], [out])
        return out

    def repeat_kv(self, x: T, n_rep: int, name) -> T:
        """expand + reshape: a copy with the KV heads repeated (no saved tensors)."""
        if n_rep == 1:
            return x
        out = self.new(x.width * n_rep, x.nbytes, x.slot, name)
        self.tr.op(name, [x], [out])
        return out

    def rope(self, x: T, cos: T, name) -> T:
        """apply_rotary_pos_emb: (x*cos) + (rotate_half(x)*sin); cos/sin need no grad, so
        the products save only cos and sin (shared, not per layer). q and k arrive transposed
        (``view(...).transpose(1, 2)``) and cos broadcasts over the heads, so PyTorch runs these ops
        as non-vectorised kernels (``strided``: H200 profile of Llama-3.2-1B, 12 non-vectorised
        bf16 products per layer, tests/data/kernel_profile_h200.json)."""
        dtype = max(x.nbytes, cos.nbytes)
        xc = self.new(x.width, dtype, x.slot, name + ".xcos")
        self.tr.op(name + ".xcos", [x], [xc], strided=True)
        rh = self.new(x.width, x.nbytes, x.slot, name + ".rot")
        self.tr.op(name + ".rot", [x], [rh], strided=True)
        rs = self.new(x.width, dtype, x.slot, name + ".rsin")
        self.tr.op(name + ".rsin", [rh], [rs], strided=True)
        out = self.new(x.width, dtype, x.slot, name + ".out")
        self.tr.op(name + ".out", [xc, rs], [out], strided=True)
        return out


# ---- model families -------------------------------------------------------------------------
class HFLayerSpec:
    """What the layer builders need to know besides the model (one per estimate)."""

    __slots__ = ("kind", "grad_bytes", "attention", "seq_len", "lora")

    def __init__(self, kind, grad_bytes, attention, seq_len, lora=None):
        self.kind = kind
        self.grad_bytes = grad_bytes
        self.attention = attention
        self.seq_len = seq_len
        self.lora = lora  # core/lora.LoraSpec, or None for full fine-tuning


def residual_bytes(o: HFOps) -> int:
    # The residual stream has the embeddings' dtype: fp32 under autocast or fp32 training.
    return o.param_bytes


def attention_core_hf(o: HFOps, m, spec: HFLayerSpec, q: T, k: T, v: T, mask: bool, name="attn") -> T:
    """The attention kernel as integrations/sdpa_attention.py or eager_attention_forward runs it."""
    n_rep = m.heads // m.kv_heads
    if spec.attention == "eager":
        kr = o.repeat_kv(k, n_rep, name + ".k_rep")
        vr = o.repeat_kv(v, n_rep, name + ".v_rep")
        mask_bytes = o.param_bytes if mask else 0
        out = o.eager_attention(q, kr, vr, m.heads, m.attn_dropout, mask_bytes,
                                softmax_fp32=m.arch != "gpt2", name=name)
        return o.contiguous_copy(out, name + ".out_c")
    # sdpa / flash: SDPA's grouped-query path needs no mask; with a mask, K/V are repeated
    gqa_native = n_rep > 1 and not mask
    if n_rep > 1 and mask:
        k = o.repeat_kv(k, n_rep, name + ".k_rep")
        v = o.repeat_kv(v, n_rep, name + ".v_rep")
    # flash without a mask; the memory-efficient kernel with one (both save only the log-sum-exp)
    return o.sdpa(q, k, v, m.heads, m.attn_out_width // m.heads, m.attn_dropout, not mask, gqa_native, name=name)


def needs_mask(m, spec: HFLayerSpec) -> bool:
    """A materialised attention mask: always for eager decoders; for SDPA only when a sliding
    window shorter than or equal to the sequence applies (masking_utils._ignore_causal_mask_sdpa)."""
    if m.arch == "bert":
        return False
    if spec.attention == "eager":
        return True
    return bool(m.sliding_window) and spec.seq_len >= m.sliding_window


def experts_gather_and_up(o: HFOps, m, xn: T, idx: T, eb: int, wg: int) -> T:
    """transformers 5.x's ``grouped_mm_experts_forward`` up to the gate-up output (integrations/moe.py,
    5.17): the tokens gathered in expert order, the in-place pre-mask of the EP sentinel rows
    (``masked_fill_``, whose backward masks the input gradient), the gate-up grouped GEMM (saves its
    input for the weight gradient unless frozen, ``wg`` 0) and the masked_fill of its output. A
    masked_fill with a per-row mask runs as a non-vectorised kernel (H200 profiles: 0.30-0.34 of HBM,
    tests/data/kernel_profile_lora_h200.json, kernel_ops_h200.json)."""
    h, k, fe = m.hidden, m.top_k, m.expert_ffn_hidden
    sel = o.new(k * h, eb, EXP, "experts.gather")
    o.tr.op("experts.gather", [xn], [sel], saved=[idx])
    selm = o.view(sel, k * h, "experts.gather_masked")  # in place
    o.tr.op("experts.mask0", [sel], [selm], strided=True)
    gu = o.new(2 * k * fe, eb, EXP, "experts.gate_up")
    o.tr.op("experts.gate_up", [selm], [gu], saved=[selm] if wg else [],
            weight_grad_bytes=wg * m.experts * 2 * h * fe * o.grad_bytes, gemm=(h, 2 * fe * k, "n", 8 * eb, 1 + wg, k / m.experts))
    gum = o.new(2 * k * fe, eb, EXP, "experts.gate_up_masked")
    o.tr.op("experts.mask1", [gu], [gum], strided=True)
    return gum


def experts_down_and_combine(o: HFOps, m, prod: T, wts: T, eb: int, wg: int) -> T:
    """The grouped experts' down projection (saves its input for the weight gradient unless frozen,
    ``wg`` 0), masked_fill copy, weighting by the router, un-permute and the sum over top-k
    (integrations/moe.py)."""
    h, k, fe = m.hidden, m.top_k, m.expert_ffn_hidden
    dn = o.new(k * h, eb, EXP, "experts.down")
    o.tr.op("experts.down", [prod], [dn], saved=[prod] if wg else [],
            weight_grad_bytes=wg * m.experts * h * fe * o.grad_bytes, gemm=(fe, h * k, "k", 8 * eb, 1 + wg, k / m.experts))
    dnm = o.new(k * h, eb, EXP, "experts.down_masked")
    o.tr.op("experts.mask2", [dn], [dnm], strided=True)  # masked_fill: a non-vectorised kernel (below)
    weighted = o.mul(dnm, wts, "experts.weighted")
    unperm = o.new(k * h, eb, EXP, "experts.unpermute")
    o.tr.op("experts.unpermute", [weighted], [unperm])
    out = o.new(h, eb, SEQ, "experts.sum")
    o.tr.op("experts.sum", [unperm], [out])
    return out
