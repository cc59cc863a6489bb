"""Layer traces of Megatron-LM / Transformer Engine style implementations
(``--framework megatron``): fused LayerNorm/RMSNorm, fused bias-dropout-add, fused
softmax or flash attention, fused SwiGLU, vocab-parallel cross entropy.

For a GPT layer with dropout and non-flash attention, the saved bytes are exactly
Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
Models", sec. 4.1, eq. 1): 34sbh + 5as^2b per layer in 16-bit, split by tensor and
sequence parallelism as in their Table 2. The same per-tensor accounting generalises to
grouped-query attention (K/V of width kv), SwiGLU (fc1 output 2f, swiglu output f),
flash attention (softmax statistics instead of the s^2 terms) and MoE experts.
"""
from __future__ import annotations

import numpy as np

from planner_app.core.models.hf_ops import HFLayerSpec, HFOps
from planner_app.core.models.trace import EXP, ONE, SEQ, SLOTS, TP, TPS, T


class MegatronOps(HFOps):
    """16-bit activations (``lp``), fused kernels; fp8 saves GEMM inputs in 1 byte. Sequence parallelism keeps
    the sharded GEMM input and gathers it again in backward (Megatron-LM's
    LinearWithGradAccumulationAndAsyncCommunication), so no gathered copy is saved."""

    dtensor_sequence_gather = False

    def __init__(self, grad_bytes: int, fp8: bool):
        super().__init__("lp", grad_bytes)
        self.fp8 = fp8

    def linear(self, x: T, out_width, out_slot, w_numel, name, adaptable: bool = True) -> T:
        """A GEMM saves its input (in fp8 under Transformer Engine's fp8 recipe)."""
        split = "n" if out_slot in (TP, EXP) else ("k" if x.slot in (TP, EXP) else "")
        if self.fp8:
            # Transformer Engine's cast-transpose writes the fp8 input and its transpose (for
            # the weight gradient); the transpose is what backward keeps
            xq = self.new(x.width, 1, x.slot, name + ".in8")
            xt = self.new(x.width, 1, x.slot, name + ".in8_t")
            self.tr.op(name + ".cast_transpose", [x], [xq, xt])
            out = self.new(out_width, 2, out_slot, name + ".out")
            self.tr.op(name, [xq, xt], [out], saved=[xt], weight_grad_bytes=w_numel * self.grad_bytes,
                       gemm=(x.width, out_width, split, 8))
            return out
        return super().linear(x, out_width, out_slot, w_numel, name, adaptable)

    def norm(self, x: T, name) -> T:
        """Fused LayerNorm/RMSNorm: saves the input (2 bytes) and fp32 statistics."""
        stats = self.new(2, 4, x.slot, name + ".stats", requires_grad=False)
        out = self.new(x.width, 2, x.slot, name + ".out")
        self.tr.op(name, [x], [out, stats], saved=[x, stats], kind="reduction")
        return out

    def bias_dropout_add(self, x: T, residual: T, p: float, name) -> T:
        """Fused bias-dropout-add: saves the 1-byte dropout mask (Korthikanti: sbh)."""
        out = self.new(residual.width, 2, SEQ, name)
        if p > 0:
            mask = self.new(x.width, 1, x.slot, name + ".mask", requires_grad=False)
            self.tr.op(name, [x, residual], [out, mask], saved=[mask])
        else:
            self.tr.op(name, [x, residual], [out])
        return out

    def core_attention(self, q: T, k: T, v: T, heads: int, p: float, flash: bool, selective: bool, name) -> T:
        """Flash: saves q, k, v, output and the fp32 softmax statistics. Unfused
        (Korthikanti sec. 4.1): softmax output 2as^2b, dropout mask as^2b, dropout output
        2as^2b on top of q, k, v. Selective recomputation drops the s^2 tensors."""
        out = self.new(q.width, 2, TP, name + ".out")
        if flash:
            lse = self.new(heads, 4, TP, name + ".lse", requires_grad=False)
            flash_bwd = np.zeros(SLOTS)
            flash_bwd[TP] = 4 * q.width + 4 * heads
            self.tr.op(name, [q, k, v], [out, lse], saved=[q, k, v, out, lse], bwd_temp=flash_bwd,
                       attn_flops=2.0 * (q.width + out.width))
            return out
        # unfused: QK^T, Megatron's fused scale-mask-softmax, dropout, attention over V
        scores = self.new(heads, 2, TPS, name + ".scores")
        self.tr.op(name + ".qk", [q, k], [scores], saved=[q, k], attn_flops=2.0 * q.width, kind="bmm")
        probs = self.new(heads, 2, TPS, name + ".softmax")
        self.tr.op(name + ".softmax", [scores], [probs], saved=[] if selective else [probs], kind="reduction")
        dropped = probs
        if p > 0:
            mask = self.new(heads, 1, TPS, name + ".dropout_mask", requires_grad=False)
            dropped = self.new(heads, 2, TPS, name + ".dropout")
            self.tr.op(name + ".dropout", [probs], [dropped, mask], saved=[] if selective else [mask])
        bwd: np.ndarray | None = None
        if selective:
            bwd = np.zeros(SLOTS)
            bwd[TPS] = 5 * heads  # the recomputed score tensors live during this layer's backward
        self.tr.op(name + ".pv", [dropped, v], [out], saved=[v] if selective else [dropped, v],
                   attn_flops=2.0 * out.width, kind="bmm", bwd_temp=bwd)
        return out


def megatron_layer(m, spec: HFLayerSpec, moe: bool, fp8: bool, selective: bool):
    """One transformer layer as Megatron-core builds it (pre-norm)."""
    o = MegatronOps(spec.grad_bytes, fp8)
    h = m.hidden
    flash = spec.attention != "eager"
    x = o.external(h, 2, SEQ, "x")
    xn = o.norm(x, "input_norm")
    qkv_w = m.q_width + 2 * m.kv_width
    qkv = o.linear(xn, qkv_w, TP, h * qkv_w, "linear_qkv")
    q, k, v = o.view(qkv, m.q_width, "q"), o.view(qkv, m.kv_width, "k"), o.view(qkv, m.kv_width, "v")
    if m.position == "rope":  # fused RoPE: new q and k, saves only the frequencies
        q2 = o.new(m.q_width, 2, TP, "q_rope")
        k2 = o.new(m.kv_width, 2, TP, "k_rope")
        o.tr.op("rope", [q, k], [q2, k2])
        q, k = q2, k2
    att = o.core_attention(q, k, v, m.heads, m.attn_dropout, flash, selective, "core_attention")
    proj = o.linear(att, h, SEQ, m.attn_out_width * h, "linear_proj")
    x2 = o.bias_dropout_add(proj, x, m.hidden_dropout, "bda1")
    xn2 = o.norm(x2, "pre_mlp_norm")
    if moe:
        mlp = _megatron_moe(o, m, xn2)
    elif m.mlp == "swiglu":
        fc1 = o.linear(xn2, 2 * m.ffn_hidden, TP, 2 * h * m.ffn_hidden, "linear_fc1")
        act = o.new(m.ffn_hidden, 2, TP, "swiglu")
        o.tr.op("swiglu", [fc1], [act], saved=[fc1])
        mlp = o.linear(act, h, SEQ, m.ffn_hidden * h, "linear_fc2")
    else:
        fc1 = o.linear(xn2, m.ffn_hidden, TP, h * m.ffn_hidden, "linear_fc1")
        act = o.unary_saving_input(fc1, "gelu")
        mlp = o.linear(act, h, SEQ, m.ffn_hidden * h, "linear_fc2")
    out = o.bias_dropout_add(mlp, x2, m.hidden_dropout, "bda2")
    return o.tr, x, out


def _megatron_moe(o: MegatronOps, m, xn: T) -> T:
    """Router (fp32 softmax), token permutation, grouped GEMMs with fused SwiGLU, unpermute."""
    h, k, fe = m.hidden, m.top_k, m.expert_ffn_hidden
    logits = o.linear(xn, m.experts, SEQ, h * m.experts, "router")
    probs = o.new(m.experts, 4, SEQ, "router.probs")
    o.tr.op("router.softmax_topk", [logits], [probs], saved=[probs], kind="reduction")
    perm = o.new(k * h, 2, EXP, "permuted_tokens")
    o.tr.op("permute", [xn], [perm])
    fc1 = o.linear(perm, 2 * k * fe, EXP, 2 * m.experts * h * fe, "experts.fc1")
    act = o.new(k * fe, 2, EXP, "experts.swiglu")
    o.tr.op("experts.swiglu", [fc1], [act], saved=[fc1])
    fc2 = o.linear(act, k * h, EXP, m.experts * fe * h, "experts.fc2")
    out = o.new(h, 2, SEQ, "unpermute")
    o.tr.op("unpermute", [fc2, probs], [out], saved=[fc2])
    if m.shared_experts:
        sf = fe * m.shared_experts
        s1 = o.linear(xn, 2 * sf, TP, 2 * h * sf, "shared.fc1")
        sa = o.new(sf, 2, TP, "shared.swiglu")
        o.tr.op("shared.swiglu", [s1], [sa], saved=[s1])
        out = o.add(out, o.linear(sa, h, SEQ, sf * h, "shared.fc2"), "shared.add")
    return out


def megatron_embedding(m, spec: HFLayerSpec, fp8: bool):
    o = MegatronOps(spec.grad_bytes, fp8)
    ids = o.external(1, 8, SEQ, "input_ids", requires_grad=False)
    e = o.new(m.hidden, 2, SEQ, "embed")
    o.tr.op("embedding", [ids], [e], saved=[ids], weight_grad_bytes=m.vocab * m.hidden * spec.grad_bytes)
    x = o.dropout(e, m.embed_dropout, "embedding_dropout")
    return o.tr, ids, x


def megatron_head(m, spec: HFLayerSpec, fp8: bool):
    """Final norm, output layer and vocab-parallel cross entropy (saves fp32 softmax)."""
    o = MegatronOps(spec.grad_bytes, fp8)
    x = o.external(m.hidden, 2, SEQ, "x")
    xn = o.norm(x, "final_norm")
    logits = o.new(m.vocab, 2, TP, "logits")
    o.tr.op("output_layer", [xn], [logits], saved=[xn], weight_grad_bytes=m.vocab * m.hidden * spec.grad_bytes,
            gemm=(m.hidden, m.vocab, "n", 8 if fp8 else 16))
    sm = o.new(m.vocab, 4, TP, "vocab_parallel_ce.softmax")
    o.tr.op("vocab_parallel_ce", [logits], [sm], saved=[sm], kind="reduction")
    loss = o.new(0, 4, ONE, "loss")
    o.tr.op("loss", [sm], [loss], kind="none")
    return o.tr, x, loss

