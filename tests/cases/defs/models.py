"""Model cases: a 2-layer Llama-style decoder block stack run as one prefill call (T=5 at
positions 0..4) and two decode calls (T=1 at positions 5, then 6).

hidden 64, 4 query heads of 16, 2 KV heads (grouped-query attention), SiLU-gated MLP of 128,
RMSNorm, rotary embeddings written half by half into empty_like, and per-layer K/V caches
(registered buffers of shape (1, 2, 16, 16), dim 2 = position) written with index_copy_ at the
positions given as an int64 input. Attention always runs over all 16 cache slots with a mask
that hides the slots not yet written (and the future), so the logits read the whole cache and
depend on the state the earlier calls left.

Named llama* so `--only 'attn_*,llama*' --device cuda` selects them for a CUDA export.
"""

import torch
import torch.nn.functional as F

from .registry import case

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, MLP, VOCAB, SLOTS, LAYERS = 64, 4, 2, 16, 128, 32, 16, 2
EPS = 1e-6


class HandRMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def make_norm(kind):
    if kind == "hand":
        return HandRMSNorm(HIDDEN)
    if not hasattr(torch.nn, "RMSNorm"):
        raise RuntimeError("this torch has no torch.nn.RMSNorm")
    norm = torch.nn.RMSNorm(HIDDEN, eps=EPS)
    with torch.no_grad():
        norm.weight.copy_(1 + 0.1 * torch.randn(HIDDEN))
    return norm


def linear(n_in, n_out):
    layer = torch.nn.Linear(n_in, n_out, bias=False)
    with torch.no_grad():
        layer.weight.normal_(0.0, 0.05)
    return layer


def rotary(x, cos, sin):
    # Written half by half into a fresh tensor: the pattern splice plans as one buffer.
    h = x.shape[-1] // 2
    x1 = x[..., :h]
    x2 = x[..., h:]
    res = torch.empty_like(x)
    res[..., :h] = x1 * cos - x2 * sin
    res[..., h:] = x2 * cos + x1 * sin
    return res


def repeat_kv(x, n_rep):
    # Hugging Face's repeat_kv: (b, kv, s, d) -> (b, kv * n_rep, s, d) through expand + reshape.
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class Layer(torch.nn.Module):
    def __init__(self, norm, gqa):
        super().__init__()
        self.gqa = gqa
        self.attn_norm = make_norm(norm)
        self.wq = linear(HIDDEN, HEADS * HEAD_DIM)
        self.wk = linear(HIDDEN, KV_HEADS * HEAD_DIM)
        self.wv = linear(HIDDEN, KV_HEADS * HEAD_DIM)
        self.wo = linear(HEADS * HEAD_DIM, HIDDEN)
        self.mlp_norm = make_norm(norm)
        self.gate = linear(HIDDEN, MLP)
        self.up = linear(HIDDEN, MLP)
        self.down = linear(MLP, HIDDEN)
        self.register_buffer("k_cache", torch.zeros(1, KV_HEADS, SLOTS, HEAD_DIM))
        self.register_buffer("v_cache", torch.zeros(1, KV_HEADS, SLOTS, HEAD_DIM))

    def forward(self, x, pos, cos, sin, mask):
        b, t = x.shape[0], x.shape[1]
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = rotary(q, cos, sin)
        k = rotary(k, cos, sin)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        if self.gqa == "repeat_kv":
            keys = repeat_kv(self.k_cache, HEADS // KV_HEADS)
            values = repeat_kv(self.v_cache, HEADS // KV_HEADS)
            attn = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        else:
            attn = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask,
                                                  enable_gqa=True)
        x = x + self.wo(attn.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LlamaBlocks(torch.nn.Module):
    def __init__(self, norm="hand", gqa="repeat_kv", mask="bool"):
        super().__init__()
        self.mask_kind = mask
        self.embed = torch.nn.Parameter(torch.randn(VOCAB, HIDDEN))
        self.layers = torch.nn.ModuleList([Layer(norm, gqa) for _ in range(LAYERS)])
        self.norm = make_norm(norm)
        self.lm_head = linear(HIDDEN, VOCAB)

    def forward(self, ids, pos):
        x = F.embedding(ids, self.embed)
        dtype = x.dtype
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HEAD_DIM, 2, device=x.device,
                                                   dtype=torch.float32) / HEAD_DIM))
        freqs = pos.to(torch.float32)[:, None] * inv_freq[None, :]  # (T, HEAD_DIM / 2)
        cos = freqs.cos().to(dtype)
        sin = freqs.sin().to(dtype)
        # Slot s is visible to the query at position p iff s <= p: hides unwritten slots.
        visible = torch.arange(SLOTS, device=x.device)[None, :] <= pos[:, None]  # (T, SLOTS)
        if self.mask_kind == "bool":
            mask = visible[None, None]
        else:
            mask = torch.zeros(visible.shape, dtype=dtype, device=x.device)
            mask = mask.masked_fill(~visible, float("-inf"))[None, None]
        for layer in self.layers:
            x = layer(x, pos, cos, sin, mask)
        return self.lm_head(self.norm(x))


def llama_case(dtype=torch.float32, **kw):
    model = LlamaBlocks(**kw).to(dtype)
    ids = torch.randint(0, VOCAB, (1, 7))
    calls = [(ids[:, 0:5].clone(), torch.arange(0, 5)),
             (ids[:, 5:6].clone(), torch.tensor([5])),
             (ids[:, 6:7].clone(), torch.tensor([6]))]
    seq = torch.export.Dim("seq", min=1, max=SLOTS)
    return model, calls, {"ids": {1: seq}, "pos": {0: seq}}


@case("llama_block_2layer", calls=3, strict=True)
def _():
    return llama_case()


@case("llama_block_2layer_nn_rmsnorm", calls=3,
      notes="torch.nn.RMSNorm, enable_gqa=True, additive float mask")
def _():
    return llama_case(norm="nn", gqa="enable_gqa", mask="float")


@case("llama_block_2layer_f16", calls=3)
def _():
    return llama_case(torch.float16)


@case("llama_block_2layer_bf16", calls=3)
def _():
    return llama_case(torch.bfloat16, mask="float")
