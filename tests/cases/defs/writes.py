"""Cases for slice and index writes on local tensors (write-semantics.md sections 1-3, 5):
slice_scatter, select_scatter, index_put, index_copy and the rotary half-by-half write."""

import torch

from .registry import case, module, same, randn, randint, batch_dim

F16, BF16, F32, I32, I64 = torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.int64

# ---- slice_scatter ---------------------------------------------------------------------


@case("slice_scatter_basic")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 2:5] = s
        return y
    return module(forward), same(1, randn(4, 8), randn(4, 3)), None


@case("slice_scatter_open_end_negative_start")
def _():
    def forward(self, x, s, t):
        y = x.clone()
        y[:, 5:] = s     # end = INT64_MAX in the archive
        z = x.clone()
        z[..., -3:-1] = t
        return y, z
    return module(forward), same(1, randn(4, 8), randn(4, 3), randn(4, 2)), None


@case("slice_scatter_step")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, ::2] = s
        y[1::2, 1::3] = 0.0
        return y
    return module(forward), same(1, randn(4, 8), randn(4, 4)), None


@case("slice_scatter_dtype_cast")
def _():
    def forward(self, x, h, i):
        y = x.clone()
        y[:, 0:4] = h            # f16 into f32
        j = i.clone()
        j[:, 2:6] = x[:, 2:6] * 3  # f32 into i32 truncates toward zero
        return y, j
    x = torch.tensor([[2.7, -2.7, 0.4, 1.9, 5.5, -0.6, 3.2, 8.8]] * 3)
    return module(forward), same(1, x, randn(3, 4, dtype=F16), randint(-9, 9, 3, 8, dtype=I32)), None


@case("slice_scatter_full_overwrite_int")
def _():
    # write-semantics.md 3.1: i32 x, src = full((4, 8), 2.7): the result * 3 is 6.
    def forward(self, x):
        y = x.clone()
        y[:, 0:8] = torch.full((4, 8), 2.7, device=x.device)
        return y * 3
    return module(forward), same(1, randint(-9, 9, 4, 8, dtype=I32)), None


@case("slice_scatter_bool_and_bf16")
def _():
    def forward(self, m, x, b):
        n = m.clone()
        n[1:3] = x[1:3]          # f32 into bool: != 0
        c = b.clone()
        c[:, :2] = x[:, :2]      # f32 into bf16 rounds
        return n, c
    x = randn(4, 5)
    x[1, 1] = 0.0
    return module(forward), same(1, torch.zeros(4, 5, dtype=torch.bool), x, randn(4, 5, dtype=BF16)), None


@case("slice_scatter_dynamic_batch", calls=2)
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 1:4] = s
        return y
    b = batch_dim()
    return (module(forward), [(randn(2, 6), randn(2, 3)), (randn(5, 6), randn(5, 3))],
            {"x": {0: b}, "s": {0: b}})


@case("slice_scatter_overlapping_writes")
def _():
    def forward(self, x, a, b):
        y = x.clone()
        y[:, 0:4] = a
        y[:, 2:6] = b            # last write wins
        z = x.clone()
        z[:, 1:] = z[:, :-1] * 2  # source overlaps destination: old values
        return y, z
    return module(forward), same(1, randn(3, 8), randn(3, 4), randn(3, 4)), None

# ---- select_scatter --------------------------------------------------------------------


@case("select_scatter_last")
def _():
    def forward(self, x, v):
        y = x.clone()
        y[:, -1] = v
        return y
    return module(forward), same(1, randn(4, 6), randn(4)), None


@case("select_scatter_variants")
def _():
    def forward(self, x, v, w, u):
        a = x.clone()
        a[-1] = v
        b = x.clone()
        b[..., -1] = w
        c = x.clone()
        c[:, 1, :] = u
        return a, b, c
    return module(forward), same(1, randn(3, 4, 5), randn(4, 5), randn(3, 4), randn(3, 5)), None


@case("select_scatter_int64_from_float")
def _():
    def forward(self, x, v):
        y = x.clone()
        y[:, 0] = v
        return y
    return module(forward), same(1, randint(0, 100, 3, 4), torch.tensor([1.9, -1.9, 7.5])), None

# ---- index_put / index_copy -------------------------------------------------------------


@case("index_put")
def _():
    def forward(self, x, idx, v):
        y = x.clone()
        y[idx] = v
        return y
    return module(forward), same(1, randn(6, 4), torch.tensor([4, 0, 2]), randn(3, 4)), None


@case("index_put_negative_and_broadcast")
def _():
    def forward(self, x, idx, v):
        y = x.clone()
        y[idx] = v               # v broadcasts over the indexed rows
        z = x.clone()
        z[:, idx] = 0.5
        return y, z
    return module(forward), same(1, randn(6, 6), torch.tensor([-1, 1]), randn(6)), None


@case("index_put_two_indices")
def _():
    def forward(self, x, i, j, v):
        y = x.clone()
        y[i, j] = v
        return y
    return module(forward), same(1, randint(0, 9, 4, 5, dtype=I32), torch.tensor([0, 3, 2]),
                                 torch.tensor([4, 0, 2]), torch.tensor([7, 8, 9], dtype=I32)), None


@case("index_put_accumulate")
def _():
    def forward(self, x, idx, v):
        return x.clone().index_put_((idx,), v, accumulate=True)
    # duplicates are defined with accumulate=True
    return module(forward), same(1, randn(5, 3), torch.tensor([1, 3, 1, 1]), randn(4, 3)), None


@case("index_copy")
def _():
    def forward(self, x, idx, s, h, hs):
        return x.index_copy(0, idx, s), h.index_copy(1, idx, hs)
    idx = torch.tensor([3, 0, 5])
    return module(forward), same(1, randn(6, 2), idx, randn(3, 2), randn(2, 6, dtype=F16),
                                 randn(2, 3, dtype=F16)), None

# ---- composite write programs ----------------------------------------------------------


@case("rotary_halves_into_empty_like", strict=True)
def _():
    def forward(self, x, cos, sin):
        h = x.shape[-1] // 2
        x1 = x[..., :h]
        x2 = x[..., h:]
        out = torch.empty_like(x)
        out[..., :h] = x1 * cos - x2 * sin
        out[..., h:] = x2 * cos + x1 * sin
        return out
    return module(forward), same(1, randn(1, 4, 8, 16), randn(8, 8), randn(8, 8)), None


@case("rotary_halves_f16")
def _():
    def forward(self, x, cos, sin):
        out = torch.empty_like(x)
        out[..., :8] = x[..., :8] * cos - x[..., 8:] * sin
        out[..., 8:] = x[..., 8:] * cos + x[..., :8] * sin
        return out
    return module(forward), same(1, randn(1, 4, 8, 16, dtype=F16), randn(8, 8, dtype=F16),
                                 randn(8, 8, dtype=F16)), None


@case("write_into_clone_of_input")
def _():
    # The caller's cache must stay untouched: no USER_INPUT_MUTATION.
    def forward(self, cache, u):
        out = cache.clone()
        out[:, :, 3:4] = u
        return out
    return module(forward), same(1, randn(1, 2, 8, 4), randn(1, 2, 1, 4)), None


@case("write_then_read_base")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 0:2] = s
        return y + x, x * 2
    return module(forward), same(1, randn(3, 5), randn(3, 2)), None
