"""Attention written out op by op, as models from before scaled_dot_product_attention (and
lerobot's SmolVLA) spell it: q·kᵀ, a scale, a mask (a `where` with a very negative fill, or an
added float mask), softmax, an optional cast of the probabilities, ·v. splice runs the ones it
can prove equal as one fused attention (docs/passes.md, fuse_written_attention and
read_grouped_kv_heads); the others stay as written. Every case name starts with attn_written_."""

import math

import torch

from .registry import case, module, randn, randbool

F32, BF16 = torch.float32, torch.bfloat16


def repeat_heads(x, rep):
    """transformers' repeat_kv: [b, kvh, s, d] -> [b, kvh * rep, s, d], each head rep times."""
    b, kvh, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kvh, rep, s, d).reshape(b, kvh * rep, s, d)


def keep_mask(rows, cols, hidden_rows=()):
    """A bool mask with some keys hidden in every row and every key hidden in `hidden_rows`
    (a padding query: eager's softmax over a row of equal fills averages v uniformly)."""
    keep = randbool(1, 1, rows, cols)
    keep[..., 0] = True
    for r in hidden_rows:
        keep[..., r, :] = False
    return keep


@case("attn_written_where_fill_gqa")
def _():
    # SmolVLA's eager_attention_forward in float32: grouped heads repeated after the rope,
    # where(mask, scores, finfo.min), softmax, matmul; two query rows see no key at all.
    def forward(self, q, k, v, keep):
        b, s, h, d = q.shape
        kr = k[:, :, :, None, :].expand(b, s, 2, 2, d).reshape(b, s, 4, d)
        vr = v[:, :, :, None, :].expand(b, s, 2, 2, d).reshape(b, s, 4, d)
        scores = torch.matmul(q.transpose(1, 2), kr.transpose(1, 2).transpose(2, 3)) * d ** -0.5
        scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
        probs = scores.softmax(dim=-1)
        return torch.matmul(probs, vr.permute(0, 2, 1, 3)).permute(0, 2, 1, 3).reshape(b, s, h * d)
    return module(forward), [(randn(1, 6, 4, 8), randn(1, 6, 2, 8), randn(1, 6, 2, 8),
                              keep_mask(6, 6, hidden_rows=(2, 5)))], None


@case("attn_written_bf16_probabilities")
def _():
    # SmolVLA's bfloat16 layout: q and k cast up to float32 for the scores, the probabilities
    # cast back to bfloat16 for the product with bfloat16 values.
    def forward(self, q, k, v, keep):
        scores = torch.matmul(q.to(F32), k.to(F32).transpose(2, 3)) * 0.25
        scores = torch.where(keep, scores, torch.finfo(F32).min)
        return torch.matmul(scores.softmax(dim=-1).to(BF16), v)
    return module(forward), [(randn(1, 2, 5, 16, dtype=BF16), randn(1, 2, 7, 16, dtype=BF16),
                              randn(1, 2, 7, 16, dtype=BF16), keep_mask(5, 7, hidden_rows=(1,)))], None


@case("attn_written_added_mask_div")
def _():
    # An added float mask (0 or finfo.min, one row all finfo.min) and a division by sqrt(d).
    def forward(self, q, k, v, keep):
        mask = torch.zeros(keep.shape).masked_fill(~keep, torch.finfo(F32).min)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask
        return torch.softmax(scores, dim=-1, dtype=F32) @ v
    return module(forward), [(randn(2, 3, 5, 8), randn(2, 3, 9, 8), randn(2, 3, 9, 4),
                              keep_mask(5, 9, hidden_rows=(3,)))], None


@case("attn_written_minus_inf_fill")
def _():
    # A fill of -inf is left as written (a row with no key would be NaN in eager; none here).
    def forward(self, q, k, v, keep):
        scores = torch.where(keep, q @ k.transpose(-1, -2), float("-inf"))
        return scores.softmax(-1) @ v
    return module(forward), [(randn(2, 5, 8), randn(2, 7, 8), randn(2, 7, 4),
                              keep_mask(5, 7)[0])], None


@case("attn_written_scores_returned")
def _():
    # The probabilities are an output too: nothing is fused.
    def forward(self, q, k, v):
        probs = (q @ k.transpose(-1, -2) * 0.3).softmax(-1)
        return probs @ v, probs
    return module(forward), [(randn(2, 5, 8), randn(2, 7, 8), randn(2, 7, 4))], None
