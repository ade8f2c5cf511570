"""Cases for the CompositeImplicit ATen ops that the training IR (the `train` form: the program as
torch.export.export returns it) keeps and the functional forms decompose: the `to` overloads,
pad in every mode, narrow, contiguous, eval-mode dropout, chunk, flatten/unflatten, the *_as
ops, movedim/moveaxis/swapaxes, einsum, baddbmm, outer, the vector norms, std_mean and
group_norm. Ops that never appear through the public API (to.other, norm.ScalarOpt_dim, ...)
are called as explicit overloads. Every case name starts with x4_."""

import torch
import torch.nn.functional as F

from .registry import case, module, same, randn, positive, randint

aten = torch.ops.aten
F16, BF16, F32, F64, I32, I64 = (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                 torch.int32, torch.int64)


@case("x4_to")
def _():
    def forward(self, x, i, h):
        return (x.to(F16), x.to(F64), i.to(F32), h.to(torch.float32), x.to("cpu") + 1,
                x.to(dtype=BF16, device="cpu"), x.to(i), i.to(x), x.to(F32) * 2, x.double(),
                aten.to.other(h, x), aten.to.other(x, x, copy=True) - 1)
    return module(forward), same(1, randn(3, 4) * 40, randint(-9, 9, 2, 3, dtype=I32),
                                 randn(2, 2, dtype=F16)), None


@case("x4_pad")
def _():
    def forward(self, x, i, m):
        return (F.pad(x, (1, 2)), F.pad(x, (1, 1, 2, 0), value=3.5), F.pad(i, (2, 1), value=-7),
                F.pad(x, (-1, 2)), F.pad(x, (2, 1), mode="reflect"),
                F.pad(x, (2, 3), mode="replicate"), F.pad(x, (2, 1), mode="circular"),
                F.pad(m, (1, 2, 2, 1), mode="reflect"), F.pad(m, (0, 2, 1, 3), mode="replicate"),
                F.pad(m, (1, 1, 2, 0), mode="circular"))
    return module(forward), same(1, randn(2, 3, 5), randint(-9, 9, 2, 4), randn(1, 2, 3, 4)), None


@case("x4_narrow")
def _():
    def forward(self, x):
        return (x.narrow(1, 1, 2), x.narrow(-1, 0, 1) * 2, torch.narrow(x, 0, -1, 1) + 1,
                x.narrow(2, 4, 0) + 0)
    return module(forward), same(1, randn(3, 4, 5)), None


@case("x4_contiguous")
def _():
    def forward(self, x):
        return x.transpose(0, 1).contiguous() + 1, x.contiguous() * 3, x[:, ::2].contiguous()
    return module(forward), same(1, randn(3, 4, 2)), None


@case("x4_dropout_eval")
def _():
    def forward(self, x):
        return F.dropout(x, p=0.3, training=False) + 1, self.drop(x * 2), F.dropout(x, 0.9, False)
    m = module(forward)
    m.drop = torch.nn.Dropout(0.5)
    m.eval()
    return m, same(1, randn(3, 4)), None


@case("x4_chunk")
def _():
    def forward(self, x):
        a, b = torch.chunk(x, 2, dim=2)
        p, q, r = x.chunk(3, 0)
        parts = x.chunk(9, 1)
        return a * 1, b + 1, p + 0, q * 2, r - 1, parts[0] + parts[-1], len(parts)
    return module(forward), same(1, randn(5, 3, 4)), None


@case("x4_flatten")
def _():
    def forward(self, x, s):
        return (torch.flatten(x) + 0, x.flatten(1) * 2, x.flatten(0, 1) + 1,
                x.unflatten(2, (2, 2)) - 1, x.unflatten(-1, (-1, 2)) * 3, s.flatten() + 1,
                x.transpose(0, 2).flatten(1) * 1)
    return module(forward), same(1, randn(2, 3, 4), randn(())), None


@case("x4_as_ops")
def _():
    def forward(self, x, y, i):
        return (x.view_as(y) + 0, x[:, :1].expand_as(x) * 1, x.type_as(i), i.type_as(x),
                x.type_as(x) + 1, x.t().reshape_as(y) * 2)
    return module(forward), same(1, randn(6, 4), randn(3, 8), randint(-5, 5, 2, dtype=I32)), None


@case("x4_movedim")
def _():
    def forward(self, x):
        return (torch.movedim(x, 0, 2) + 0, torch.movedim(x, (0, 1), (2, 0)) * 1,
                x.swapaxes(0, 1) + 1, torch.swapdims(x, -1, 0) * 2, x.moveaxis(0, -1) - 1,
                torch.moveaxis(x, [2], [0]) + 2)
    return module(forward), same(1, randn(2, 3, 4)), None


@case("x4_transpose_props", notes="Tensor.T (aten.numpy_T, Falcon's attention) and Tensor.mT")
def _():
    def forward(self, x, m):
        return x.T + 0, m.T * 2, x.mT - 1, torch.matmul(m, m.T)
    return module(forward), same(1, randn(2, 3, 4), randn(3, 5)), None


@case("x4_einsum")
def _():
    def forward(self, q, k, a, b, u, v, s):
        return (torch.einsum("bhqd,bhkd->bhqk", q, k), torch.einsum("ij,jk->ik", a, b),
                torch.einsum("bi,bj->bij", u, v), torch.einsum("ij,jk", a, b),
                torch.einsum("ii->i", s), torch.einsum("ii", s), torch.einsum("ij->", a),
                torch.einsum("ij->ji", a), torch.einsum("i,i->", u[0], u[1]),
                torch.einsum("...ij,...jk->...ik", q, k.transpose(-1, -2)),
                torch.einsum("ij,jk,kl->il", a, b, s), torch.einsum("bij->bj", q[0]),
                torch.einsum("bi,bj", u, v))
    return module(forward), same(1, randn(2, 2, 3, 4), randn(2, 2, 5, 4), randn(3, 4),
                                 randn(4, 4), randn(2, 3), randn(2, 5), randn(4, 4)), None


@case("x4_baddbmm")
def _():
    def forward(self, c, a, b, s, i, j, k):
        return (torch.baddbmm(c, a, b), torch.baddbmm(c, a, b, beta=0.5, alpha=2),
                torch.baddbmm(s, a, b, beta=0.0), torch.baddbmm(s, a, b, alpha=-1.5),
                torch.baddbmm(i, j, k, beta=2, alpha=3))
    nan = torch.full((3, 5), float("nan"))
    return module(forward), same(1, randn(2, 3, 5), randn(2, 3, 4), randn(2, 4, 5), nan,
                                 randint(-3, 3, 2, 2, 2), randint(-3, 3, 2, 2, 3),
                                 randint(-3, 3, 2, 3, 2)), None


@case("x4_outer")
def _():
    def forward(self, a, b, i):
        return torch.outer(a, b), torch.outer(i, i), a.outer(i[:3])
    return module(forward), same(1, randn(3), randn(4), randint(-5, 5, 4, dtype=I32)), None


@case("x4_vector_norm")
def _():
    def forward(self, x, h):
        inf = float("inf")
        return (torch.linalg.vector_norm(x), torch.linalg.vector_norm(x, 1, dim=1),
                torch.linalg.vector_norm(x, inf, dim=(0, 2), keepdim=True),
                torch.linalg.vector_norm(x, -inf, dim=-1), torch.linalg.vector_norm(x, 0),
                torch.linalg.vector_norm(x, 3.0, dim=0), torch.linalg.vector_norm(x, 0.5),
                torch.linalg.vector_norm(h, dim=1), torch.linalg.vector_norm(h, dtype=F32),
                torch.norm(x), torch.norm(x, p=1, dim=(0, 2), keepdim=True), x.norm(3))
    x = randn(2, 3, 4)
    x[0, 1, 2] = 0.0
    return module(forward), same(1, x, randn(3, 5, dtype=BF16)), None


@case("x4_norm_overloads")
def _():
    def forward(self, x):
        return (aten.norm.ScalarOpt_dim(x, None, [1]), aten.norm.ScalarOpt_dim(x, 1, [0, 1], True),
                aten.norm.Scalar(x), aten.norm.Scalar(x, 3))
    return module(forward), same(1, randn(3, 4)), None


@case("x4_std_mean")
def _():
    def forward(self, x, h):
        s, m = torch.std_mean(x, dim=1)
        s2, m2 = torch.std_mean(x, dim=(0, 2), correction=0, keepdim=True)
        s3, m3 = torch.std_mean(x)
        s4, m4 = torch.std_mean(h, -1, unbiased=False)
        s5, m5 = aten.std_mean.correction(x, [2], correction=2)
        return s, m, s2, m2, s3, m3, s4, m4, s5, m5
    return module(forward), same(1, randn(3, 4, 5) * 2 + 1, randn(3, 6, dtype=BF16)), None


@case("x4_group_norm")
def _():
    def forward(self, x, w, b, y, h):
        return (F.group_norm(x, 2, w, b), F.group_norm(x, 4), F.group_norm(y, 1, eps=1e-3),
                F.group_norm(h, 3), self.gn(x))
    m = module(forward)
    m.gn = torch.nn.GroupNorm(2, 4)
    with torch.no_grad():
        m.gn.weight.copy_(torch.randn(4))
        m.gn.bias.copy_(torch.randn(4))
    return m, same(1, randn(2, 4, 3) * 3 + 1, randn(4), randn(4), randn(2, 2, 3, 3),
                   randn(2, 6, 2, dtype=BF16)), None


@case("x4_tensor_split", notes="tensor_split into sections (uneven, a symbolic-free split of 7 "
      "into 3) and at indices (increasing, decreasing and negative, as slices clamp them) "
      "(Mamba's state-space split)")
def _():
    def forward(self, x):
        return (*x.tensor_split(3, dim=1), *x.tensor_split([1, 4], dim=1),
                *x.tensor_split([5, 2, -1], dim=-1), *torch.tensor_split(x, 2))
    return module(forward), same(1, randn(3, 7)), None


@case("x4_meshgrid", notes="meshgrid with 'ij' (Swin's relative position table) and 'xy' "
      "indexing, three tensors and a 0-d one, and the overload without indexing")
def _():
    def forward(self, a, b, c, s):
        ij = torch.meshgrid(a, b, indexing="ij")
        xy = torch.meshgrid(a, b, c, indexing="xy")
        plain = torch.ops.aten.meshgrid.default([b, s, a])
        return (*ij, *xy, *plain, torch.stack(torch.meshgrid(a, c, indexing="ij")).flatten(1))
    return module(forward), same(1, randn(3), randn(4), randint(0, 9, 2, dtype=torch.float32),
                                 randn(())), None


@case("x4_dropout_inplace", notes="eval-mode dropout written in place (nn.Dropout(inplace=True) "
      "in eval mode records aten.dropout_), on an intermediate and on a slice of one")
def _():
    def forward(self, x):
        h = x * 2
        F.dropout(h, 0.3, training=False, inplace=True)
        g = x + 1
        F.dropout(g[:, 1:], 0.5, training=False, inplace=True)
        return h, g
    return module(forward), same(1, randn(3, 4)), None
