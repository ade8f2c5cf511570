"""Cases for the rest of the ops a Llama-style model exports to (split, gather, scatter,
activations, rounding, reductions, norms, matmul forms, attention) and for dynamic shapes end
to end (batch, sequence length with bounds, symbolic slice bounds, .item() positions, inputs
whose size changes from call to call, and a position outside its torch._check range).

Attention cases are named attn_* so `--only 'attn_*,llama*' --device cuda` selects them with
the model cases for a CUDA export (flash/efficient/cudnn forms instead of the CPU ones)."""

import torch
import torch.nn.functional as F

from .registry import case, module, same, randn, positive, randint, randbool, batch_dim

F16, BF16, F32, I32, I64 = torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.int64
U8 = torch.uint8


def with_params(cls_name, build, forward):
    """A Module whose __init__ calls build(self) (to add parameters/submodules) and whose
    forward is `forward(self, ...)`."""

    def init(self):
        torch.nn.Module.__init__(self)
        build(self)

    return type(cls_name, (torch.nn.Module,), {"__init__": init, "forward": forward})()


def distinct(*shape, dtype=F32):
    """A random permutation of 0..n-1 reshaped (no ties, for max/argmax indices), minus n/2."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n) - n // 2).reshape(shape).to(dtype)


def row_perm_index(rows, cols, k):
    """(rows, k) int64: per row, k distinct column indices (no duplicate scatter targets)."""
    return torch.rand(rows, cols).argsort(dim=1)[:, :k].contiguous()

# ---- split, unbind, repeat -------------------------------------------------------------


@case("split_with_sizes")
def _():
    def forward(self, x, i):
        a, b, c = torch.split(x, [2, 3, 4], dim=1)
        p, q = i.split_with_sizes([1, 3], dim=0)
        return a * 2, b, c + 1, p, q * 3
    return module(forward), same(1, randn(4, 9), randint(-9, 9, 4, 3, dtype=I32)), None


@case("split")
def _():
    def forward(self, x, b):
        return x.split(2, dim=-1), [t * 2 for t in b.split(3, dim=0)]  # last chunks are short
    return module(forward), same(1, randn(3, 7), randn(7, 2, dtype=BF16)), None


@case("unbind")
def _():
    def forward(self, x, i):
        a, b, c = x.unbind(1)
        return a + b * c, torch.unbind(i, dim=0), i.unbind(-1)[0] * 2
    return module(forward), same(1, randn(2, 3, 4), randint(-50, 50, 2, 3)), None


@case("repeat")
def _():
    def forward(self, x, i):
        return x.repeat(2, 3), x.repeat(2, 1, 1), i.repeat(1, 2)
    return module(forward), same(1, randn(2, 3), randint(-9, 9, 3, 2, dtype=I32)), None


@case("repeat_interleave_int")
def _():
    def forward(self, x, h):
        return x.repeat_interleave(2, dim=1), torch.repeat_interleave(x, 3), h.repeat_interleave(2, dim=0)
    return module(forward), same(1, randn(2, 3), randn(2, 4, dtype=F16)), None


@case("repeat_interleave_tensor")
def _():
    # Data-dependent output size made static by output_size (sum(r) = 7).
    def forward(self, x, r):
        return torch.repeat_interleave(x, r, dim=0, output_size=7) * 2
    return module(forward), same(1, randn(4, 3), torch.tensor([2, 0, 4, 1])), None


@case("repeat_interleave_tensor_unbacked")
def _():
    # No output_size: the size is an unbacked symbol known only from r's values.
    def forward(self, x, r):
        return torch.repeat_interleave(x, r, dim=0) + 1
    return module(forward), same(1, randn(4, 3), torch.tensor([1, 3, 0, 2])), None

# ---- gather / scatter / embedding -----------------------------------------------------


@case("index_select")
def _():
    def forward(self, x, i, idx):
        return x.index_select(1, idx), i.index_select(0, idx[:2]), torch.index_select(x, -1, idx)
    return module(forward), same(1, randn(3, 6), randint(-99, 99, 6, 2), torch.tensor([5, 0, 2, 2])), None


@case("gather")
def _():
    def forward(self, x, idx, idx0):
        return torch.gather(x, 1, idx), x.gather(0, idx0)
    return module(forward), same(1, randn(3, 5), randint(0, 5, 3, 4), randint(0, 3, 2, 5)), None


@case("embedding")
def _():
    def forward(self, ids, w, wb):
        return F.embedding(ids, w), F.embedding(ids, wb) * 2
    return module(forward), same(1, torch.tensor([[1, 9, 0], [3, 3, 7]]), randn(10, 4),
                                 randn(10, 4, dtype=BF16)), None


@case("embedding_module")
def _():
    def build(self):
        self.emb = torch.nn.Embedding(12, 6)

    def forward(self, ids):
        return self.emb(ids)
    return with_params("Emb", build, forward), same(1, torch.tensor([[0, 11, 5, 5]])), None


@case("scatter_src")
def _():
    def forward(self, x, idx, src, i, isrc):
        return x.scatter(1, idx, src), i.scatter(1, idx, isrc)
    idx = row_perm_index(3, 5, 3)  # distinct targets per row: the result is defined
    return module(forward), same(1, randn(3, 5), idx, randn(3, 4), randint(0, 9, 3, 5, dtype=I32),
                                 randint(-9, 0, 3, 3, dtype=I32)), None


@case("scatter_value")
def _():
    def forward(self, x, idx, idx0, m):
        return x.scatter(1, idx, 1.5), torch.scatter(x, 0, idx0, -2.0), m.scatter(1, idx, True)
    idx = row_perm_index(3, 5, 2)
    idx0 = torch.tensor([[2, 0, 1, 1]])  # one row: each column is written once
    return module(forward), same(1, randn(3, 5), idx, idx0, torch.zeros(3, 5, dtype=torch.bool)), None


@case("index_add")
def _():
    def forward(self, x, idx, src, i, isrc):
        return x.index_add(0, idx, src), i.index_add(1, idx, isrc, alpha=2)
    idx = torch.tensor([1, 3, 1, 0])  # duplicates accumulate: defined
    return module(forward), same(1, randn(5, 3), idx, randn(4, 3), randint(-9, 9, 2, 5),
                                 randint(-9, 9, 2, 4)), None

# ---- pointwise -------------------------------------------------------------------------


@case("abs")
def _():
    def forward(self, x, i, h):
        return torch.abs(x), i.abs(), h.abs()
    return module(forward), same(1, randn(3, 4), randint(-9, 9, 6, dtype=I32), randn(5, dtype=F16)), None


@case("log")
def _():
    def forward(self, x, b):
        return torch.log(x), b.log()
    return module(forward), same(1, positive(3, 4), positive(6, dtype=BF16)), None


@case("tanh")
def _():
    def forward(self, x, h):
        return torch.tanh(x), h.tanh()
    return module(forward), same(1, randn(3, 4) * 3, randn(6, dtype=F16)), None


@case("silu_relu")
def _():
    def forward(self, x, b, i):
        return F.silu(x), F.silu(b), torch.relu(x), F.relu(b), torch.relu(i)
    return module(forward), same(1, randn(3, 4) * 3, randn(6, dtype=BF16), randint(-5, 5, 6, dtype=I32)), None


@case("gelu")
def _():
    def forward(self, x, h):
        return F.gelu(x), F.gelu(x, approximate="tanh"), F.gelu(h), F.gelu(h, approximate="tanh")
    return module(forward), same(1, randn(3, 4) * 3, randn(6, dtype=F16)), None


@case("clamp_scalar")
def _():
    def forward(self, x, i):
        return x.clamp(-0.5, 0.5), x.clamp(min=0.0), i.clamp(max=3), torch.clamp(i, -2, 2), x.clamp_max(1)
    return module(forward), same(1, randn(3, 4), randint(-9, 9, 3, 4, dtype=I32)), None


@case("clamp_tensor")
def _():
    def forward(self, x, lo, hi, i):
        return torch.clamp(x, lo, hi), x.clamp(min=lo), i.clamp(max=hi)  # i32 with f32 bound: f32
    lo = -positive(4) * 0.5
    return module(forward), same(1, randn(3, 4), lo, positive(4) * 0.5, randint(-3, 3, 3, 4, dtype=I32)), None


@case("minimum_maximum")
def _():
    def forward(self, a, b, i, j):
        return torch.minimum(a, b), torch.maximum(a, b), torch.maximum(i, j), torch.minimum(i, a)
    return module(forward), same(1, randn(3, 4), randn(4), randint(-9, 9, 3, 4, dtype=I32),
                                 randint(-9, 9, 3, 4, dtype=I32)), None


@case("reciprocal")
def _():
    def forward(self, x, h):
        return torch.reciprocal(x), h.reciprocal()
    x = positive(3, 4) * (randint(0, 2, 3, 4) * 2 - 1)  # both signs, away from 0
    return module(forward), same(1, x, positive(6, dtype=F16)), None


@case("erf")
def _():
    def forward(self, x, b):
        return torch.erf(x), b.erf()
    return module(forward), same(1, randn(3, 4) * 2, randn(6, dtype=BF16)), None


@case("floor_ceil")
def _():
    def forward(self, x, b):
        return torch.floor(x), torch.ceil(x), b.floor(), b.ceil()
    x = torch.tensor([[-2.5, -1.2, -0.7, -0.0], [0.0, 0.3, 1.0, 2.9]])
    return module(forward), same(1, x, randn(6, dtype=BF16) * 4), None


@case("round")
def _():
    def forward(self, x, h):
        return torch.round(x), h.round()  # halves go to even
    x = torch.tensor([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 3.4, -3.6]])
    return module(forward), same(1, x, torch.tensor([0.5, 1.5, 2.5, -2.5, 7.7], dtype=F16)), None


@case("round_decimals")
def _():
    def forward(self, x):
        return torch.round(x, decimals=2), torch.round(x * 100, decimals=-1)
    x = torch.tensor([[1.2345, -1.2361, 0.0049, 3.14159], [-7.777, 12.3412, 0.1, -0.5551]])
    return module(forward), same(1, x), None


@case("remainder")
def _():
    def forward(self, a, b, x, y):
        return torch.remainder(a, b), a % 3, a % -3, torch.remainder(x, y), x % -2.5, torch.fmod(a, b)
    a = randint(-20, 20, 3, 4)
    b = randint(1, 7, 3, 4) * (randint(0, 2, 3, 4) * 2 - 1)  # non-zero, both signs
    y = positive(3, 4) * (randint(0, 2, 3, 4) * 2 - 1)
    return module(forward), same(1, a, b, randn(3, 4) * 5, y), None


@case("div_rounding_modes")
def _():
    def forward(self, x, y, i):
        return (torch.div(x, y, rounding_mode="trunc"), torch.div(x, y, rounding_mode="floor"),
                torch.div(i, 3, rounding_mode="floor"), torch.div(i, -4, rounding_mode="trunc"),
                torch.floor_divide(i, 3))
    y = positive(3, 4) * (randint(0, 2, 3, 4) * 2 - 1)
    return module(forward), same(1, randn(3, 4) * 5, y, randint(-20, 20, 3, 4, dtype=I32)), None


@case("logical_or")
def _():
    def forward(self, a, b, x):
        return torch.logical_or(a, b), torch.logical_or(x, a), a | b
    x = randint(0, 3, 3, 4).to(F32)
    return module(forward), same(1, randbool(3, 4), randbool(3, 4), x), None


@case("bitwise_not")
def _():
    def forward(self, m, i, j, u):
        return torch.bitwise_not(m), ~i, j.bitwise_not(), ~u
    return module(forward), same(1, randbool(3, 4), randint(-99, 99, 5, dtype=I32), randint(-99, 99, 5),
                                 randint(0, 256, 5, dtype=U8)), None


@case("rsub")
def _():
    def forward(self, x, i, y):
        return 2 - x, 2.5 - i, 7 - i, torch.rsub(x, y), torch.rsub(x, y, alpha=2)
    return module(forward), same(1, randn(3, 4), randint(-9, 9, 3, 4, dtype=I32), randn(3, 4)), None


@case("fill")
def _():
    def forward(self, x, i, v):
        y = x.clone()
        y.fill_(2.5)
        j = i.clone()
        j.fill_(-3)
        z = x.clone()
        z.fill_(v)  # 0-d tensor value
        return y, j, z
    return module(forward), same(1, randn(3, 4), randint(0, 9, 5, dtype=I32), torch.tensor(-1.25)), None

# ---- reductions ------------------------------------------------------------------------


@case("amax_amin")
def _():
    def forward(self, x, i):
        return x.amax(dim=1), x.amin(dim=(0, 2), keepdim=True), torch.amax(i, -1), i.amin(0)
    return module(forward), same(1, randn(2, 3, 4), randint(-99, 99, 3, 5, dtype=I32)), None


@case("max_dim")
def _():
    def forward(self, x, i):
        v, idx = x.max(dim=1)
        w, jdx = torch.max(i, dim=-1, keepdim=True)
        mn = x.min(dim=0)
        return v, idx, w, jdx, mn.values, mn.indices
    return module(forward), same(1, distinct(3, 5), distinct(2, 6, dtype=I32)), None


@case("argmax")
def _():
    def forward(self, x, i):
        return x.argmax(dim=0), x.argmax(), i.argmax(dim=1, keepdim=True), x.argmin(dim=-1)
    return module(forward), same(1, distinct(3, 5), distinct(2, 6, dtype=I64)), None


@case("all")
def _():
    def forward(self, m, x):
        return m.all(), m.all(dim=1), x.all(dim=0, keepdim=True), torch.all(x)
    m = torch.ones(3, 4, dtype=torch.bool)
    m[1, 2] = False
    x = torch.ones(3, 4)
    x[2, 0] = 0.0
    return module(forward), same(1, m, x), None


@case("cumsum")
def _():
    def forward(self, x, i, m):
        return x.cumsum(1), torch.cumsum(x, dim=0), i.cumsum(-1), m.cumsum(0), x.cumsum(1, dtype=torch.float64)
    return module(forward), same(1, randn(3, 4), randint(-9, 9, 3, 4, dtype=I32), randbool(4, 2)), None


@case("var_mean")
def _():
    def forward(self, x):
        v0, m0 = torch.var_mean(x, 1, correction=0)
        v1, m1 = torch.var_mean(x, dim=(0, 2), correction=1, keepdim=True)
        return v0, m0, v1, m1, torch.var(x, dim=-1), x.std(dim=1)
    return module(forward), same(1, randn(2, 3, 5) + 1), None

# ---- norms, softmax --------------------------------------------------------------------


@case("softmax")
def _():
    def forward(self, x, h, b):
        return F.softmax(x, dim=-1), x.softmax(0), torch.softmax(h, dim=1), b.softmax(-1, dtype=torch.float32)
    return module(forward), same(1, randn(3, 5) * 3, randn(2, 6, dtype=F16), randn(2, 6, dtype=BF16)), None


@case("log_softmax")
def _():
    def forward(self, x, b):
        return F.log_softmax(x, dim=-1), torch.log_softmax(x, 0), b.log_softmax(1)
    return module(forward), same(1, randn(3, 5) * 3, randn(2, 6, dtype=BF16)), None


@case("layer_norm")
def _():
    def build(self):
        self.ln = torch.nn.LayerNorm(8)
        self.ln_plain = torch.nn.LayerNorm(8, elementwise_affine=False, eps=1e-3)
        with torch.no_grad():
            self.ln.weight.copy_(torch.randn(8) * 0.5 + 1)
            self.ln.bias.copy_(torch.randn(8) * 0.1)

    def forward(self, x, b):
        return self.ln(x), self.ln_plain(x), F.layer_norm(b, (8,))
    return with_params("LN", build, forward), same(1, randn(2, 3, 8) * 2 + 1, randn(4, 8, dtype=BF16)), None

# ---- matmul forms ----------------------------------------------------------------------


@case("addmm")
def _():
    def forward(self, bias, a, b, c):
        return torch.addmm(bias, a, b), torch.addmm(c, a, b, beta=0.5, alpha=2.0)
    return module(forward), same(1, randn(4), randn(3, 5), randn(5, 4), randn(3, 4)), None


@case("matmul")
def _():
    def forward(self, v5, m35, m54, b235, b1235):
        return (torch.matmul(v5, v5), m35 @ v5, torch.matmul(v5, m54), b235 @ m54,
                torch.matmul(b1235, m54), b235 @ v5, torch.matmul(b1235, b235.transpose(-1, -2)))
    return module(forward), same(1, randn(5), randn(3, 5), randn(5, 4), randn(2, 3, 5),
                                 randn(2, 1, 3, 5)), None


@case("linear")
def _():
    def build(self):
        self.fc = torch.nn.Linear(6, 4)
        self.nobias = torch.nn.Linear(6, 3, bias=False)

    def forward(self, x, y):
        return self.fc(x), self.nobias(y), F.linear(x, self.fc.weight)
    return with_params("Lin", build, forward), same(1, randn(5, 6), randn(2, 3, 6)), None

# ---- attention (attn_*: also exported on CUDA) -----------------------------------------


def qkv(b, hq, hkv, tq, tk, d, dtype=F32):
    return randn(b, hq, tq, d, dtype=dtype), randn(b, hkv, tk, d, dtype=dtype), randn(b, hkv, tk, d, dtype=dtype)


def visible_mask(tq, tk):
    """Random bool mask (1, 1, tq, tk) where each query row sees at least its own diagonal."""
    m = randbool(1, 1, tq, tk)
    for t in range(tq):
        m[0, 0, t, min(t, tk - 1)] = True
    return m


@case("attn_causal")
def _():
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return module(forward), same(1, *qkv(1, 2, 2, 8, 8, 16)), None


@case("attn_bool_mask")
def _():
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return module(forward), same(1, *qkv(2, 2, 2, 6, 8, 16), visible_mask(6, 8)), None


@case("attn_float_mask")
def _():
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    mask = randn(1, 2, 8, 8)
    mask = mask.masked_fill(torch.ones(8, 8, dtype=torch.bool).triu(1), float("-inf"))  # diagonal finite
    return module(forward), same(1, *qkv(1, 2, 2, 8, 8, 16), mask), None


@case("attn_scale")
def _():
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, scale=0.3), F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5)
    return module(forward), same(1, *qkv(1, 2, 2, 8, 8, 16)), None


@case("attn_gqa")
def _():
    def forward(self, q, k, v, mask):
        return (F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True))
    return module(forward), same(1, *qkv(1, 4, 2, 8, 8, 16), visible_mask(8, 8)), None


@case("attn_decode_q1_mask")
def _():
    # One query over a 16-slot cache of which 6 are valid (the decode step of a KV cache).
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    mask = (torch.arange(16) < 6).reshape(1, 1, 1, 16)
    return module(forward), same(1, *qkv(1, 2, 2, 1, 16, 16), mask), None


@case("attn_causal_bf16")
def _():
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return module(forward), same(1, *qkv(1, 2, 2, 8, 8, 16, BF16)), None


@case("attn_mask_bf16")
def _():
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return module(forward), same(1, *qkv(1, 2, 2, 8, 8, 16, BF16), visible_mask(8, 8)), None


@case("attn_gqa_bf16")
def _():
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True, scale=0.2)
    return module(forward), same(1, *qkv(1, 4, 2, 8, 8, 16, BF16)), None


@case("attn_dynamic_seq", calls=3)
def _():
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    seq = torch.export.Dim("seq", min=2, max=64)
    calls = [qkv(1, 2, 2, t, t, 16) for t in (8, 3, 13)]
    return module(forward), calls, {"q": {2: seq}, "k": {2: seq}, "v": {2: seq}}

# ---- dynamic shapes end to end (dyn_*) --------------------------------------------------


@case("dyn_batch_mlp", calls=3)
def _():
    def forward(self, x, w, b):
        return torch.relu(x @ w + b).sum(-1), x.shape[0] + 1
    b = batch_dim()
    w, bias = randn(6, 5), randn(5)
    return (module(forward), [(randn(n, 6), w, bias) for n in (3, 2, 9)],
            {"x": {0: b}, "w": None, "b": None})


@case("dyn_seq_min_max", calls=3)
def _():
    # Sizes at the bounds: min 2 is not allowed in the example (0/1 specialisation), max 32 is.
    def forward(self, x):
        t = x.shape[1]
        pos = torch.arange(t, device=x.device, dtype=torch.float32)
        return x.cumsum(1) + pos[:, None], x.mean(1), x.softmax(1)
    seq = torch.export.Dim("seq", min=2, max=32)
    return module(forward), [(randn(2, n, 4),) for n in (5, 32, 2)], {"x": {1: seq}}


@case("dyn_symbolic_slice_bounds", calls=3)
def _():
    def forward(self, x, y):
        a = x[:, : x.shape[1] - 2] * 2
        b = y[:, x.shape[1] - 3:] + 1
        z = y.clone()
        z[:, : x.shape[1] - 2] = a       # symbolic end on a write
        z[:, x.shape[1] - 1:] = 0.0      # symbolic start, open end
        return a, b, z
    seq = torch.export.Dim("seq", min=4, max=64)
    return (module(forward), [(randn(2, n), randn(2, n)) for n in (6, 9, 4)],
            {"x": {1: seq}, "y": {1: seq}})


@case("dyn_item_position", calls=3)
def _():
    def forward(self, x, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p + 2 <= x.shape[1])
        return x[:, p:p + 2] * 2, x.narrow(1, p, 1) + 1
    x = randn(3, 8)
    return module(forward), [(x, torch.tensor(p)) for p in (3, 0, 6)], None


@case("dyn_calls_vary_seq", calls=3)
def _():
    # The same program runs on three sequence lengths; each call has its own inputs/outputs.
    def forward(self, x, w):
        h = x @ w
        scores = (h @ h.transpose(1, 2)).softmax(-1)
        return scores @ x, h.mean(dim=1)
    seq = torch.export.Dim("seq", min=2, max=16)
    w = randn(4, 4) * 0.5
    return module(forward), [(randn(1, n, 4), w) for n in (5, 12, 3)], {"x": {1: seq}, "w": None}


@case("dyn_item_position_out_of_range", calls=3, expect_error=(2, "position out of range"))
def _():
    # Call 2's position is outside the torch._check range: the run must fail, never read.
    def forward(self, x, pos):
        p = pos.item()
        torch._check(p >= 0, lambda: "position out of range")
        torch._check(p + 2 <= x.shape[1], lambda: "position out of range")
        return x[:, p:p + 2] + 1
    x = randn(2, 8)
    return module(forward), [(x, torch.tensor(p)) for p in (2, 6, 7)], None
