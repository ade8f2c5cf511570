"""Cases for ops the keep form (run_decompositions({})) records as they were written: softmax and
log_softmax with a dtype, the norm front doors (layer_norm, rms_norm), std/var, prod, min/max
and their arg forms, fmod and floor division, bitwise and logical xor, masked_fill, one-sided
clamps, more float math and activations, the shape ops tril/triu/flip/roll/pad/stack, and the
new_* factories. The default form decomposes most of them into ops covered elsewhere, so each
case also checks the decomposition end to end. Every case name starts with x2_."""

import torch
import torch.nn.functional as F

from .registry import case, module, same, randn, positive, randint, randbool

F16, BF16, F32, F64, I32, I64 = (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                 torch.int32, torch.int64)
U8 = torch.uint8


def distinct(*shape, dtype=F32):
    """A random permutation of 0..n-1 reshaped (no ties, for min/argmin indices), minus n/2."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n) - n // 2).reshape(shape).to(dtype)

# ---- normalisation ---------------------------------------------------------------------


@case("x2_softmax_dtype")
def _():
    def forward(self, x, h):
        return (F.softmax(x, dim=-1), F.log_softmax(x, dim=0), F.softmax(h, dim=1, dtype=F32),
                F.log_softmax(h, dim=-1, dtype=F32), torch.softmax(h, 0))
    return module(forward), same(1, randn(3, 5) * 3, randn(4, 6, dtype=F16)), None


@case("x2_layer_norm")
def _():
    def forward(self, x, w, b, h):
        return (F.layer_norm(x, (6,), w, b), F.layer_norm(x, (4, 6), eps=1e-3),
                F.layer_norm(h, (6,)))
    return module(forward), same(1, randn(2, 4, 6) * 2 + 1, randn(6), randn(6),
                                 randn(3, 6, dtype=BF16)), None


@case("x2_rms_norm")
def _():
    def forward(self, x, w, h, wh):
        return (F.rms_norm(x, (6,), w), F.rms_norm(x, (4, 6), eps=1e-3), F.rms_norm(h, (6,), wh),
                F.rms_norm(h, (6,)))
    return module(forward), same(1, randn(2, 4, 6) * 2, randn(6), randn(3, 6, dtype=BF16),
                                 randn(6, dtype=BF16)), None

# ---- reductions ------------------------------------------------------------------------


@case("x2_std_var")
def _():
    def forward(self, x, h):
        return (x.std(dim=1), x.var(dim=0, keepdim=True), torch.std(x, dim=1, unbiased=False),
                torch.var(x, 1, correction=0), x.std(), x.var(correction=2), h.var(dim=-1),
                torch.std(h, dim=(0, 1), keepdim=True))
    return module(forward), same(1, randn(4, 5) * 3, randn(3, 4, 2, dtype=BF16)), None


@case("x2_prod")
def _():
    def forward(self, x, i, b):
        return x.prod(), x.prod(dim=1), i.prod(0, keepdim=True), b.prod(), i.prod(dtype=F64)
    return module(forward), same(1, positive(3, 4), randint(-3, 4, 3, 4, dtype=I32),
                                 randbool(5)), None


@case("x2_min_max")
def _():
    def forward(self, x, i):
        v, idx = x.min(dim=1)
        vi, ii = i.min(0, keepdim=True)
        return (v, idx, vi, ii, x.max(), i.min(), x.argmin(), x.argmin(dim=0),
                i.argmin(1, keepdim=True), torch.min(x), torch.max(i))
    return module(forward), same(1, distinct(3, 5), distinct(4, 3, dtype=I32)), None

# ---- pointwise -------------------------------------------------------------------------


@case("x2_fmod_floordiv")
def _():
    def forward(self, x, y, i, j):
        return (torch.fmod(x, y), x.fmod(1.5), torch.fmod(i, j), i.fmod(-3),
                torch.floor_divide(x, y), i // j, i // 4, x // 0.7, torch.floor_divide(i, -3))
    nonzero = randint(1, 6, 3, 4) * (randint(0, 2, 3, 4) * 2 - 1)
    return module(forward), same(1, randn(3, 4) * 5, positive(3, 4) * 2 - 3.0,
                                 randint(-20, 20, 3, 4), nonzero), None


@case("x2_bitwise")
def _():
    def forward(self, i, j, m, n, u):
        return (i & j, i | j, i ^ j, m & n, m | n, m ^ n, i & 12, i | 3, i ^ -1,
                torch.bitwise_and(i, j), torch.bitwise_or(u, 5), torch.bitwise_xor(i, 7),
                torch.logical_xor(m, n), torch.logical_xor(i, u))
    return module(forward), same(1, randint(-50, 50, 3, 4, dtype=I32), randint(-50, 50, 4),
                                 randbool(3, 4), randbool(3, 4), randint(0, 3, 3, 4, dtype=U8)), None


@case("x2_masked_fill")
def _():
    def forward(self, x, m, i, v):
        return (x.masked_fill(m, -1.5), i.masked_fill(m[0], 7), x.masked_fill(m, v),
                x.masked_fill(~m, float("-inf")))
    return module(forward), same(1, randn(3, 4), randbool(3, 4), randint(-9, 9, 2, 4),
                                 torch.tensor(2.5)), None


@case("x2_clamp_one_side")
def _():
    def forward(self, x, lo, hi, i):
        return (x.clamp_min(-0.5), x.clamp_max(0.25), torch.clamp_min(x, lo),
                torch.clamp_max(x, hi), i.clamp_min(0), i.clamp_max(2), x.clamp(min=lo))
    return module(forward), same(1, randn(3, 4), randn(4) * 0.5, randn(3, 1) * 0.5,
                                 randint(-5, 5, 6)), None


@case("x2_float_math")
def _():
    def forward(self, x, p, u, h, i):
        return (torch.log1p(p), torch.expm1(x), torch.log2(p), torch.sinh(x), torch.cosh(x),
                torch.asin(u), torch.acos(u), torch.atan(x), torch.atan2(x, p), torch.sign(x),
                torch.sign(i), h.log1p(), h.expm1(), h.sign(), torch.atan2(h, h.flip(0)))
    unit = torch.rand(3, 4) * 1.8 - 0.9
    return module(forward), same(1, randn(3, 4) * 2, positive(3, 4), unit,
                                 positive(5, dtype=F16) - 1, randint(-3, 4, 6)), None


@case("x2_isnan_isinf")
def _():
    def forward(self, x, i):
        return torch.isnan(x), torch.isinf(x), x.isnan() | x.isinf(), torch.isnan(i)
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0, -2.0])
    return module(forward), same(1, x, randint(-3, 3, 4)), None


@case("x2_activations")
def _():
    def forward(self, x, h):
        return (F.hardtanh(x), F.hardtanh(x, -0.5, 2.0), F.leaky_relu(x), F.leaky_relu(x, 0.2),
                F.softplus(x), F.softplus(x, beta=2.0, threshold=3.0), F.elu(x), F.elu(x, 0.5),
                F.leaky_relu(h), F.elu(h), F.softplus(h), F.hardtanh(h))
    return module(forward), same(1, randn(4, 5) * 4, randn(6, dtype=BF16) * 4), None

# ---- shape ops and factories -----------------------------------------------------------


@case("x2_tril_triu")
def _():
    def forward(self, x, b, i):
        return x.tril(), x.triu(), torch.tril(x, 1), torch.triu(x, -1), b.tril(-1), i.triu(2)
    return module(forward), same(1, randn(4, 5), randn(2, 3, 3), randint(-9, 9, 3, 6)), None


@case("x2_flip_roll")
def _():
    def forward(self, x, i):
        return (x.flip(0), torch.flip(x, [0, 2]), i.flip(-1), torch.roll(x, 1, 1),
                torch.roll(x, (2, -1), (0, 2)), i.roll(3), torch.roll(i, -7, 0))
    return module(forward), same(1, randn(3, 2, 4), randint(-9, 9, 5)), None


@case("x2_pad_stack")
def _():
    def forward(self, x, y, i):
        return (F.pad(x, (1, 2)), F.pad(x, (0, 1, 2, 0), value=-1.0), F.pad(i, (2, 0)),
                F.pad(x, (-1, 1)), torch.stack([x, y]), torch.stack([x, y, x], dim=-1),
                torch.stack((i, i * 2), 1))
    return module(forward), same(1, randn(2, 3), randn(2, 3), randint(-9, 9, 4)), None


@case("x2_new_factories")
def _():
    def forward(self, x, i):
        return (x.new_zeros(2, 3), x.new_ones((4,)), i.new_full((2, 2), 7), x.new_full((3,), 0.5),
                x.new_zeros(2, dtype=I32), i.new_ones(3, dtype=F16), x.new_empty(0, 2).shape[0],
                x + x.new_ones(x.shape))
    return module(forward), same(1, randn(2, 3), randint(-9, 9, 4)), None


@case("x2_repeat_interleave_self_tensor")
def _():
    def forward(self, x, r):
        return x.repeat_interleave(r, dim=1, output_size=6), torch.repeat_interleave(x, r[:1].expand(6) * 0 + 1)
    return module(forward), same(1, randn(2, 3), torch.tensor([1, 3, 2])), None


@case("x2_view_after_transpose")
def _():
    # Views and reshapes of transposed and matmul results (splice's layouts may differ from
    # PyTorch's, and its view copies when strides rule a view out), and detach.
    def forward(self, x, w):
        y = (x.transpose(0, 1) @ w).transpose(0, 1)
        return y.reshape(-1), (x.t() * 2).reshape(-1), (x @ w.new_ones(4, 2)).view(6), x.detach() + 1
    return module(forward), same(1, randn(3, 4), randn(3, 5)), None


@case("x2_logaddexp")
def _():
    # logaddexp (defined whole in src/ir/ops/pointwise/math.h): broadcasting, an integer
    # operand lifted to float32, and the same infinity on both sides.
    def forward(self, x, y, i, s):
        return torch.logaddexp(x, y), torch.logaddexp(y, i), torch.logaddexp(s, s.flip(0))
    s = torch.tensor([float("inf"), -float("inf"), 0.0, float("-inf"), 30.0, -1e30])
    return module(forward), same(1, randn(3, 4) * 4, randn(4) * 4, randint(-3, 4, 4), s), None
