"""torch.nn.functional.multi_head_attention_forward with torch 1.13's
signature and results, as TorchScript (kiln.script of a module calling it
compiles it). Sequence-first layout: query (L, N, E), key and value (S, N, E),
or unbatched (L, E) and (S, E)."""
import math
from typing import List, Optional, Tuple

import kiln
from kiln import Tensor


def _append_zero_column(t: Tensor) -> Tensor:
    # F.pad(t, (0, 1)): one more column of zeros (False for bool masks).
    size: List[int] = list(t.size())
    size[-1] = 1
    return kiln.cat([t, kiln.zeros(size, dtype=t.dtype)], -1)


def _in_projection(query: Tensor, key: Tensor, value: Tensor, w: Tensor, b: Optional[Tensor]
                   ) -> Tuple[Tensor, Tensor, Tensor]:
    e = query.size(-1)
    if key is value:
        if query is key:
            qkv = kiln.linear(query, w, b).chunk(3, -1)
            return qkv[0], qkv[1], qkv[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q: Optional[Tensor] = None
        b_kv: Optional[Tensor] = None
        if b is not None:
            b_q, b_kv = b.split([e, e * 2])
        kv = kiln.linear(key, w_kv, b_kv).chunk(2, -1)
        return kiln.linear(query, w_q, b_q), kv[0], kv[1]
    ws = w.chunk(3)
    b_q2: Optional[Tensor] = None
    b_k2: Optional[Tensor] = None
    b_v2: Optional[Tensor] = None
    if b is not None:
        bs = b.chunk(3)
        b_q2, b_k2, b_v2 = bs[0], bs[1], bs[2]
    return kiln.linear(query, ws[0], b_q2), kiln.linear(key, ws[1], b_k2), kiln.linear(value, ws[2], b_v2)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Optional[Tensor],
    in_proj_bias: Optional[Tensor],
    bias_k: Optional[Tensor],
    bias_v: Optional[Tensor],
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Optional[Tensor],
    training: bool = True,
    key_padding_mask: Optional[Tensor] = None,
    need_weights: bool = True,
    attn_mask: Optional[Tensor] = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Optional[Tensor] = None,
    k_proj_weight: Optional[Tensor] = None,
    v_proj_weight: Optional[Tensor] = None,
    static_k: Optional[Tensor] = None,
    static_v: Optional[Tensor] = None,
    average_attn_weights: bool = True,
) -> Tuple[Tensor, Optional[Tensor]]:
    is_batched = query.dim() == 3
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len = query.size(0)
    bsz = query.size(1)
    embed_dim = query.size(2)
    assert embed_dim == embed_dim_to_check, \
        "was expecting embedding dimension of {}, but got {}".format(embed_dim_to_check, embed_dim)
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, "embed_dim {} not divisible by num_heads {}".format(embed_dim, num_heads)

    if not use_separate_proj_weight:
        assert in_proj_weight is not None, "use_separate_proj_weight is False but in_proj_weight is None"
        q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias)
    else:
        assert q_proj_weight is not None, "use_separate_proj_weight is True but q_proj_weight is None"
        assert k_proj_weight is not None, "use_separate_proj_weight is True but k_proj_weight is None"
        assert v_proj_weight is not None, "use_separate_proj_weight is True but v_proj_weight is None"
        b_q: Optional[Tensor] = None
        b_k: Optional[Tensor] = None
        b_v: Optional[Tensor] = None
        if in_proj_bias is not None:
            bs = in_proj_bias.chunk(3)
            b_q, b_k, b_v = bs[0], bs[1], bs[2]
        q = kiln.linear(query, q_proj_weight, b_q)
        k = kiln.linear(key, k_proj_weight, b_k)
        v = kiln.linear(value, v_proj_weight, b_v)

    if attn_mask is not None:
        if attn_mask.dtype == kiln.uint8:
            attn_mask = attn_mask.to(kiln.bool)
        else:
            assert attn_mask.is_floating_point() or attn_mask.dtype == kiln.bool, \
                "Only float, byte, and bool types are supported for attn_mask, not {}".format(attn_mask.dtype)
        if attn_mask.dim() == 2:
            if attn_mask.size(0) != tgt_len or attn_mask.size(1) != key.size(0):
                raise RuntimeError("The shape of the 2D attn_mask is {}, but should be {}.".format(
                    attn_mask.size(), [tgt_len, key.size(0)]))
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.size(0) != bsz * num_heads or attn_mask.size(1) != tgt_len \
                    or attn_mask.size(2) != key.size(0):
                raise RuntimeError("The shape of the 3D attn_mask is {}, but should be {}.".format(
                    attn_mask.size(), [bsz * num_heads, tgt_len, key.size(0)]))
        else:
            raise RuntimeError("attn_mask's dimension {} is not supported".format(attn_mask.dim()))
    if key_padding_mask is not None and key_padding_mask.dtype == kiln.uint8:
        key_padding_mask = key_padding_mask.to(kiln.bool)

    if bias_k is not None and bias_v is not None:
        assert static_k is None, "bias cannot be added to static key."
        assert static_v is None, "bias cannot be added to static value."
        k = kiln.cat([k, bias_k.repeat([1, bsz, 1])])
        v = kiln.cat([v, bias_v.repeat([1, bsz, 1])])
        if attn_mask is not None:
            attn_mask = _append_zero_column(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _append_zero_column(key_padding_mask)
    else:
        assert bias_k is None
        assert bias_v is None

    q = q.contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.contiguous().view(k.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = static_k
    if static_v is None:
        v = v.contiguous().view(v.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = static_v

    if add_zero_attn:
        zero_attn_shape = [bsz * num_heads, 1, head_dim]
        k = kiln.cat([k, kiln.zeros(zero_attn_shape, dtype=k.dtype)], 1)
        v = kiln.cat([v, kiln.zeros(zero_attn_shape, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _append_zero_column(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _append_zero_column(key_padding_mask)

    src_len = k.size(1)
    if key_padding_mask is not None:
        assert key_padding_mask.size(0) == bsz and key_padding_mask.size(1) == src_len, \
            "expecting key_padding_mask shape of {}, but got {}".format([bsz, src_len], key_padding_mask.size())
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            [-1, num_heads, -1, -1]).reshape(bsz * num_heads, 1, src_len)
        if attn_mask is None:
            attn_mask = key_padding_mask
        elif attn_mask.dtype == kiln.bool:
            attn_mask = attn_mask.logical_or(key_padding_mask)
        else:
            attn_mask = attn_mask.masked_fill(key_padding_mask, float("-inf"))

    if attn_mask is not None and attn_mask.dtype == kiln.bool:
        new_attn_mask = kiln.zeros(attn_mask.size(), dtype=q.dtype)
        new_attn_mask.masked_fill_(attn_mask, float("-inf"))
        attn_mask = new_attn_mask

    if not training:
        dropout_p = 0.0

    q = q / math.sqrt(float(head_dim))
    if attn_mask is not None:
        attn = kiln.baddbmm(attn_mask, q, k.transpose(-2, -1))
    else:
        attn = kiln.bmm(q, k.transpose(-2, -1))
    attn = kiln.softmax(attn, -1)
    if dropout_p > 0.0:
        attn = kiln.dropout(attn, dropout_p, True)
    attn_output = kiln.bmm(attn, v)
    attn_output = attn_output.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
    attn_output = kiln.linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    if need_weights:
        weights = attn.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.sum(1) / num_heads
        if not is_batched:
            weights = weights.squeeze(0)
        return attn_output, weights
    return attn_output, None
