"""Cases that call ATen overloads directly (torch.ops.aten.X.overload), so that every entry of
splice's op table appears in at least one exported program. Export keeps an explicit overload
call in the `keep` form (run_decompositions({})); the default form may decompose it. PyTorch
eager runs the very same overloads to produce the reference outputs."""

import torch

from .registry import case, module, same, randn, positive, randint, randbool, batch_dim

aten = torch.ops.aten
F32, I64, I32 = torch.float32, torch.int64, torch.int32


@case("ovl_scalar_overloads")
def _():
    def forward(self, x, i):
        return (aten.add.Scalar(x, 2), aten.sub.Scalar(x, 1.5), aten.mul.Scalar(i, 3),
                aten.div.Scalar(x, 4), aten.div.Scalar_mode(i, 2, rounding_mode="floor"),
                aten.rsub.Tensor(x, x * 2), aten.ne.Scalar(i, 3), aten.lt.Scalar(x, 0.0),
                aten.remainder.Scalar(i, 3), aten.fill.Scalar(x, 7.0))
    return module(forward), same(1, randn(3, 4), randint(-5, 5, 3, 4)), None


@case("ovl_where_scalar_forms")
def _():
    def forward(self, c, x):
        return (aten.where.ScalarSelf(c, 1.5, x), aten.where.Scalar(c, 2.0, -1.0),
                aten.where.ScalarOther(c, x, 0.5))
    return module(forward), same(1, randbool(3, 4), randn(3, 4)), None


@case("ovl_reductions")
def _():
    def forward(self, b, x):
        return (aten.any.dims(b, [0, 1], True), aten.all.default(b), aten.all.dim(b, 1),
                aten.all.dims(b, [0]), aten.sum.dim_IntList(x, [1]))
    return module(forward), same(1, randbool(3, 4), randn(3, 4)), None


@case("ovl_factories_and_views")
def _():
    def forward(self, x):
        e = aten.empty.memory_format([2, 3], dtype=torch.float32)
        e = aten.fill.Scalar(e, 1.0)
        s = aten.empty_strided.default([2, 3], [3, 1], dtype=torch.float32)
        s = aten.fill.Scalar(s, 2.0)
        r = aten.arange.start(2, 8)
        v = aten.reshape.default(x, [4, 3])
        a = aten.alias.default(x)
        return e + s, r, v * 2, a + 1
    return module(forward), same(1, randn(3, 4)), None


@case("ovl_matmul_linear")
def _():
    def forward(self, a, w, bias):
        return (aten.matmul.default(a, w.t()), aten.linear.default(a, w, bias),
                aten.addmm.default(bias, a, w.t(), beta=0.5, alpha=2))
    return module(forward), same(1, randn(3, 4), randn(5, 4), randn(5)), None


@case("ovl_symbolic_scalars", calls=2)
def _():
    def forward(self, x):
        n = x.shape[0]
        half = n // 2
        odd = n % 2
        y = x[: n - 1]
        return y * half + odd, x.numel(), x.stride(0)
    n = torch.export.Dim("n", min=3, max=16)  # y = x[:n-1] keeps at least 2 rows
    return module(forward), [(randn(6, 3),), (randn(5, 3),)], {"x": {0: n}}


@case("ovl_assert_async")
def _():
    def forward(self, x):
        torch._assert_async((x.abs() >= 0).all(), "non-negative magnitudes")
        return x * 2
    return module(forward), same(1, randn(3)), None


@case("ovl_constrain_range", calls=2)
def _():
    def forward(self, x, p):
        i = p.item()
        torch._check_is_size(i)
        torch._check(i <= 5)
        return x[i:i + 2] * 2
    return module(forward), [(randn(8, 2), torch.tensor(1)), (randn(8, 2), torch.tensor(5))], None


@case("tied_weights")
def _():
    # An embedding and an output projection sharing one weight (as many LMs do): the archive
    # stores it once and both parameters view the same bytes.
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)
            self.out = torch.nn.Linear(4, 10, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, ids):
            return self.out(self.emb(ids))
    return Tied(), same(1, randint(0, 10, 2, 3)), None


@case("ovl_flash_attention_for_cpu")
def _():
    # The fused CPU attention op called directly (export on CPU decomposes sdpa otherwise).
    # Only the output is returned: torch 2.11's decomposition of this op (the default form)
    # gives a logsumexp of another shape than eager's, so eager cannot be the oracle for it;
    # splice still checks the logsumexp's recorded shape at the node.
    def forward(self, q, k, v):
        out, lse = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True)
        return out
    return module(forward), same(1, randn(1, 2, 5, 8), randn(1, 2, 5, 8), randn(1, 2, 5, 8)), None


@case("constant_in_forward")
def _():
    # torch.tensor(...) inside forward: a lifted constant (lift_fresh_copy + detach_ in the
    # training IR).
    def forward(self, x):
        return x * torch.tensor([1.0, -2.0, 0.5])
    return module(forward), same(1, randn(2, 3)), None
