"""Cases for single core ops: views, factories, pointwise math, comparisons, reductions,
matmul and cat. One tiny module per op (or per op variant worth its own case)."""

import torch

from .registry import case, module, same, randn, positive, randint, randbool, batch_dim

F16, BF16, F32, I32, I64 = torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.int64

# ---- views and shape ops ---------------------------------------------------------------


@case("view")
def _():
    def forward(self, x):
        return x.view(3, 8) + 1
    return module(forward), same(1, randn(2, 3, 4)), None


@case("view_dynamic_batch", calls=2)
def _():
    def forward(self, x):
        return x.view(x.shape[0], -1) * 2
    return module(forward), [(randn(2, 3, 4),), (randn(5, 3, 4),)], {"x": {0: batch_dim()}}


@case("reshape")
def _():
    def forward(self, x):
        return x.transpose(0, 1).reshape(-1, 2)  # reshape of a non-contiguous view copies
    return module(forward), same(1, randint(-50, 50, 2, 3, 4)), None


@case("permute")
def _():
    def forward(self, x):
        return x.permute(2, 0, 1) * 1.5
    return module(forward), same(1, randn(2, 3, 4, dtype=F16)), None


@case("transpose")
def _():
    def forward(self, x):
        return x.transpose(-1, -2).contiguous()
    return module(forward), same(1, randn(2, 3, 4, dtype=BF16)), None


@case("t")
def _():
    def forward(self, x):
        return x.t() + 0
    return module(forward), same(1, randint(0, 9, 3, 5, dtype=I32)), None


@case("unsqueeze")
def _():
    def forward(self, x):
        return x.unsqueeze(0) + x.unsqueeze(-1)
    return module(forward), same(1, randn(4)), None


@case("squeeze")
def _():
    def forward(self, x):
        return x.squeeze(1) * 2, x.squeeze()
    return module(forward), same(1, randn(3, 1, 4, 1)), None


@case("expand")
def _():
    def forward(self, x):
        return x.expand(3, 4, 5) + 0, x.expand(-1, 4, -1).sum(1)
    return module(forward), same(1, randn(3, 1, 5)), None


@case("slice")
def _():
    def forward(self, x):
        return x[:, 1:3] * 2, x[1:, ::2] + 0
    return module(forward), same(1, randn(4, 6)), None


@case("select")
def _():
    def forward(self, x):
        return x[:, -1] + 0, x[0] * 2
    return module(forward), same(1, randn(3, 5)), None


@case("clone")
def _():
    def forward(self, x):
        return x.clone()
    return module(forward), same(1, randbool(3, 4)), None


@case("to_copy_f16")
def _():
    def forward(self, x):
        return x.to(torch.float16), x.to(torch.int32), x.to(torch.bool)
    # values chosen away from .5 ties and inside int32's range
    return module(forward), same(1, torch.tensor([[-2.7, -0.2, 0.0, 1.3], [2.9, 100.4, -7.6, 3.1]])), None


@case("to_copy_int_to_float")
def _():
    def forward(self, x):
        return x.to(torch.bfloat16), x.to(torch.float64), x.to(torch.uint8)
    return module(forward), same(1, randint(0, 200, 2, 5)), None


@case("empty_like_fully_written")
def _():
    def forward(self, x):
        y = torch.empty_like(x)
        y.copy_(x * 2)
        return y
    return module(forward), same(1, randn(3, 4)), None

# ---- factories -------------------------------------------------------------------------


@case("zeros_ones_full", calls=2)
def _():
    def forward(self, x):
        n = x.shape[0]
        z = torch.zeros(n, 3, device=x.device)
        o = torch.ones(n, 3, dtype=torch.int32, device=x.device)
        f = torch.full((n, 3), 2.5, dtype=torch.float16, device=x.device)
        return x + z, o * 2, f, torch.zeros_like(x), torch.ones_like(x, dtype=torch.bool)
    return module(forward), [(randn(2, 3),), (randn(4, 3),)], {"x": {0: batch_dim()}}


@case("arange")
def _():
    def forward(self, x):
        a = torch.arange(x.shape[1], device=x.device)
        b = torch.arange(1, 10, 3, dtype=torch.float32, device=x.device)
        return x + a, a, b, torch.arange(0.0, 1.0, 0.25, device=x.device)
    return module(forward), same(1, randn(2, 5)), None

# ---- arithmetic ------------------------------------------------------------------------


@case("add_scalar")
def _():
    def forward(self, x, i):
        return x + 2, x + 2.5, i + 3, i + 2.5, i * 3, x - 1, 10 - i, x / 4, i / 2
    return module(forward), same(1, randn(2, 3), randint(-9, 9, 2, 3, dtype=I32)), None


@case("add_broadcast")
def _():
    def forward(self, x, y):
        return x + y, x - y, x * y, x / y
    return module(forward), same(1, randn(2, 3, 4), positive(3, 1)), None


@case("add_broadcast_dynamic", calls=2)
def _():
    def forward(self, x, y):
        return x + y, torch.add(x, y, alpha=2), torch.sub(x, y, alpha=3)
    b = batch_dim()
    return (module(forward), [(randn(2, 4), randn(4)), (randn(6, 4), randn(4))],
            {"x": {0: b}, "y": None})


@case("add_mixed_int32_float32")
def _():
    def forward(self, i, x):
        return i + x, i * x, x - i
    return module(forward), same(1, randint(-5, 5, 3, 4, dtype=I32), randn(3, 4)), None


@case("mul_mixed_f16_f32")
def _():
    def forward(self, h, x):
        return h * x, h + x, h * 3.0, h + h
    return module(forward), same(1, randn(3, 4, dtype=F16), randn(3, 4)), None


@case("mul_mixed_bf16_int64")
def _():
    def forward(self, b, i):
        return b * i, b + 1, i * b.sum()
    return module(forward), same(1, randn(2, 3, dtype=BF16), randint(-3, 3, 2, 3)), None


@case("div_int64_true_division")
def _():
    def forward(self, a, b):
        return a / b, a / 3, torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc")
    a = randint(-20, 20, 3, 4)
    b = randint(1, 7, 3, 4) * (randint(0, 2, 3, 4) * 2 - 1)  # non-zero, both signs
    return module(forward), same(1, a, b), None


@case("neg")
def _():
    def forward(self, x, i, h):
        return -x, torch.neg(i), -h
    return module(forward), same(1, randn(3, 4), randint(-9, 9, 3, dtype=I32), randn(4, dtype=F16)), None


@case("pow_tensor_scalar")
def _():
    def forward(self, x, i):
        return x ** 2, x ** 0.5, x ** -1, i ** 2, torch.pow(x, 3.0)
    return module(forward), same(1, positive(3, 4), randint(-5, 5, 6)), None


@case("pow_special_exponents_edge_values")
def _():
    # The exponents ATen's pow kernels compute without pow (x * x, sqrt, rsqrt, reciprocal,
    # x * x * x, 1 / (x * x)), at the values where pow and those differ: -inf, -0, NaN.
    def forward(self, x, b, h):
        return (x ** 2, x ** 0.5, x ** -0.5, x ** -1, x ** 3, x ** -2.0, x ** 2.5,
                b ** 2, b ** 0.5, b ** -0.5, b ** -1, b ** 3, h ** 2, h ** 0.5, h ** -1)
    edge = [float("-inf"), -2.5, -1.0, -0.0, 0.0, 0.3, 1.0, 1.7, 3e5, float("inf"), float("nan")]
    x = torch.tensor(edge + [float(v) for v in randn(5)], dtype=torch.float32)
    return module(forward), same(1, x, x.to(BF16), x.to(F16)), None


@case("pow_tensor_tensor")
def _():
    def forward(self, x, e, h):
        return x ** e, 2.0 ** e, h ** h
    return module(forward), same(1, positive(3, 4), randn(3, 4), positive(5, dtype=F16)), None


@case("sqrt_rsqrt")
def _():
    def forward(self, x, h, b):
        return torch.sqrt(x), torch.rsqrt(x), torch.sqrt(h), torch.rsqrt(b)
    return module(forward), same(1, positive(3, 4), positive(8, dtype=F16), positive(8, dtype=BF16)), None


@case("sqrt_of_int")
def _():
    def forward(self, i):
        return torch.sqrt(i), torch.exp(i)  # integer inputs compute in the default float dtype
    return module(forward), same(1, randint(0, 10, 5)), None


@case("exp_sin_cos")
def _():
    def forward(self, x, h, b):
        return torch.exp(x), torch.sin(x), torch.cos(x), torch.exp(h), torch.sin(b), torch.cos(h)
    return module(forward), same(1, randn(3, 4), randn(8, dtype=F16), randn(8, dtype=BF16)), None


@case("sigmoid")
def _():
    def forward(self, x, h, b):
        return torch.sigmoid(x), torch.sigmoid(h), torch.sigmoid(b)
    return module(forward), same(1, randn(3, 4) * 4, randn(8, dtype=F16), randn(8, dtype=BF16)), None

# ---- where, comparisons, logic --------------------------------------------------------


@case("where")
def _():
    def forward(self, c, x, y, i):
        return torch.where(c, x, y), torch.where(c, x, 0.0), torch.where(c, i, x), torch.where(x > 0, i, -1)
    return module(forward), same(1, randbool(3, 4), randn(3, 4), randn(4), randint(-5, 5, 3, 4, dtype=I32)), None


@case("comparisons")
def _():
    def forward(self, a, b):
        return a == b, a != b, a < b, a <= b, a > b, a >= b
    return module(forward), same(1, randint(0, 3, 4, 5), randint(0, 3, 4, 5)), None


@case("comparisons_scalar_mixed")
def _():
    def forward(self, x, i, h):
        return x > 0, i <= 2, i == 1.0, torch.eq(x, i), torch.lt(h, x), torch.ge(h, 0.5)
    return module(forward), same(1, randn(3, 4), randint(0, 4, 3, 4, dtype=I32), randn(3, 4, dtype=F16)), None


@case("logical")
def _():
    def forward(self, a, b, x):
        return torch.logical_not(a), torch.logical_and(a, b), torch.logical_not(x), torch.logical_and(x, b)
    x = randint(0, 3, 3, 4).to(torch.float32)  # zeros and non-zeros
    return module(forward), same(1, randbool(3, 4), randbool(3, 4), x), None


@case("any")
def _():
    def forward(self, m, x):
        return m.any(), m.any(dim=1), m.any(dim=0, keepdim=True), x.any(dim=-1)
    m = torch.zeros(4, 5, dtype=torch.bool)
    m[1, 2] = True
    m[3, 0] = True
    x = torch.zeros(4, 5)
    x[2, 4] = -0.5
    return module(forward), same(1, m, x), None

# ---- reductions ------------------------------------------------------------------------


@case("sum")
def _():
    def forward(self, x, i, m):
        return (x.sum(), x.sum(dim=1), x.sum(dim=(0, 2), keepdim=True), x.sum(-1, dtype=torch.float64),
                i.sum(1), m.sum(dim=0))
    return module(forward), same(1, randn(2, 3, 4), randint(-9, 9, 3, 4, dtype=I32), randbool(3, 4)), None


@case("sum_f16")
def _():
    def forward(self, h, b):
        return h.sum(dim=-1), b.sum(dim=0, keepdim=True), h.sum(dtype=torch.float32)
    return module(forward), same(1, randn(4, 16, dtype=F16), randn(4, 16, dtype=BF16)), None


@case("mean")
def _():
    def forward(self, x, h):
        return x.mean(), x.mean(dim=-1), x.mean(dim=(0, 1), keepdim=True), h.mean(dim=1)
    return module(forward), same(1, randn(2, 3, 4), randn(4, 8, dtype=F16)), None


@case("mean_dynamic", calls=2)
def _():
    def forward(self, x):
        return x.mean(dim=0), x.mean(dim=1, keepdim=True)
    return module(forward), [(randn(3, 5),), (randn(7, 5),)], {"x": {0: batch_dim()}}

# ---- matmul ----------------------------------------------------------------------------


@case("mm")
def _():
    def forward(self, a, b):
        return torch.mm(a, b), a @ b
    return module(forward), same(1, randn(3, 5), randn(5, 4)), None


@case("mm_f16_bf16")
def _():
    def forward(self, a, b, c, d):
        return torch.mm(a, b), torch.mm(c, d)
    return module(forward), same(1, randn(4, 8, dtype=F16), randn(8, 3, dtype=F16),
                                 randn(4, 8, dtype=BF16), randn(8, 3, dtype=BF16)), None


@case("bmm")
def _():
    def forward(self, a, b):
        return torch.bmm(a, b)
    return module(forward), same(1, randn(2, 3, 5), randn(2, 5, 4)), None


@case("bmm_dynamic", calls=2)
def _():
    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2))
    b = batch_dim()
    return (module(forward), [(randn(2, 3, 4), randn(2, 5, 4)), (randn(3, 3, 4), randn(3, 5, 4))],
            {"a": {0: b}, "b": {0: b}})

# ---- cat -------------------------------------------------------------------------------


@case("cat")
def _():
    def forward(self, a, b, c):
        return torch.cat([a, b, c]), torch.cat([a, b], dim=-1), torch.cat((a, c), 1)
    return module(forward), same(1, randn(2, 3), randn(2, 3), randn(2, 3)), None


@case("cat_mixed_dtype")
def _():
    def forward(self, i, x, e):
        return torch.cat([i, x], dim=0), torch.cat([x, e], dim=-1)  # e is empty along dim 1
    return module(forward), same(1, randint(-3, 3, 2, 4, dtype=I32), randn(3, 4), randn(3, 0)), None


@case("cat_dynamic", calls=2)
def _():
    def forward(self, a, b):
        return torch.cat([a, b], dim=0)
    return (module(forward), [(randn(2, 4), randn(3, 4)), (randn(5, 4), randn(2, 4))],
            {"a": {0: batch_dim("na")}, "b": {0: batch_dim("nb")}})

# ---- diagonal_scatter --------------------------------------------------------------------


@case("diagonal_scatter", calls=2)
def _():
    # Offsets above, below and past the end (an empty diagonal), dim1 > dim2, an int64 src
    # cast into f32, and a dynamic batch dim beside the diagonal's dims.
    def forward(self, x, a, b, e, i, y, c):
        return (torch.diagonal_scatter(x, a, 1), torch.diagonal_scatter(x, b, -2, 1, 0),
                torch.diagonal_scatter(x, e, 6), torch.diagonal_scatter(x, i),
                torch.diagonal_scatter(y, c, 0, 2, 1) * 1)
    b = batch_dim()
    calls = [(randn(4, 5), randn(4), randn(3), randn(0), randint(-5, 5, 4), randn(n, 3, 4),
              randn(n, 3)) for n in (2, 3)]
    return module(forward), calls, {"x": None, "a": None, "b": None, "e": None, "i": None,
                                    "y": {0: b}, "c": {0: b}}
