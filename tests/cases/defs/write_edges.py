"""Write-semantics edge cases (write-semantics.md sections 3 and 5), one item per case, all
named w_*: a source of another dtype on every write path, select writes at -1, outputs that
are inputs or repeat, full-dim writes fed by reshape(-1), slice bounds, ranks 1-5, aliasing
(overlap, read-after-write, program order, one value placed twice, views), state across calls,
readers of the old state, .item() positions and index_put / index_copy forms."""

import torch

from .registry import case, module, same, randn, randint, randbool

F16, BF16, F32, I32, I64 = torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.int64
I8, U8, BOOL = torch.int8, torch.uint8, torch.bool

# ---- 3.1: src of another dtype, on every path ------------------------------------------
# Each pair: (name, destination dtype, source maker (shape) -> tensor). Values keep every
# conversion defined: floats into ints stay in range, ints into narrower ints wrap.


def src_f16(*shape):
    return randn(*shape, dtype=F16)


def src_f32_fractions(*shape):
    vals = torch.tensor([2.7, -2.7, 0.4, 1.9, -0.6, 8.8, 3.2, -5.5, 0.0, 126.9])
    return vals[randint(0, len(vals), *shape)]


def src_i64_signed(*shape):
    return randint(-300, 300, *shape)  # into u8: wraps mod 256 (-1 -> 255, 300 -> 44)


def src_f32_with_zeros(*shape):
    x = randn(*shape)
    return torch.where(randbool(*shape), x, torch.zeros(()))  # some exact 0.0 (-> False)


def src_bool(*shape):
    return randbool(*shape)


def src_i32_wide(*shape):
    return randint(-300, 300, *shape, dtype=I32)  # into i8: wraps


CAST_PAIRS = [
    ("f16_to_f32", F32, src_f16),
    ("f32_to_i32", I32, src_f32_fractions),
    ("i64_to_u8", U8, src_i64_signed),
    ("f32_to_bool", BOOL, src_f32_with_zeros),
    ("bool_to_f32", F32, src_bool),
    ("i32_to_i8", I8, src_i32_wide),
]


def dst(dtype, *shape):
    if dtype == BOOL:
        return randbool(*shape)
    if dtype == U8:
        return randint(0, 256, *shape, dtype=U8)
    if dtype in (I8, I32, I64):
        return randint(-100, 100, *shape, dtype=dtype)
    return randn(*shape, dtype=dtype)


def register_cast_cases(pair, dtype, make_src):
    @case(f"w_cast_full_{pair}")
    def _():
        def forward(self, x, s):
            y = x.clone()
            y[:, 0:4] = s  # covers the whole dim: a full overwrite
            return y
        return module(forward), same(1, dst(dtype, 3, 4), make_src(3, 4)), None

    @case(f"w_cast_state_{pair}", calls=2)
    def _():
        def forward(self, s):
            self.buf[:, 1:3] = s  # in-place update of a buffer
            return self.buf.clone()
        calls = [(make_src(2, 2, 3),), (make_src(2, 2, 3),)]
        return module(forward, buf=dst(dtype, 2, 5, 3)), calls, None

    @case(f"w_cast_symbolic_{pair}", calls=3)
    def _():
        def forward(self, x, s, pos):
            p = pos.item()
            torch._check(p >= 0)
            torch._check(p + 2 <= x.shape[1])
            y = x.clone()
            y[:, p:p + 2] = s
            return y
        x = dst(dtype, 3, 6)
        return module(forward), [(x, make_src(3, 2), torch.tensor(p)) for p in (2, 0, 4)], None

    @case(f"w_cast_step2_{pair}")
    def _():
        def forward(self, x, s):
            y = x.clone()
            y[:, 1::2] = s
            return y
        return module(forward), same(1, dst(dtype, 3, 8), make_src(3, 4)), None


for _pair, _dtype, _make in CAST_PAIRS:
    register_cast_cases(_pair, _dtype, _make)


@case("w_cast_slice_scatter_op_2_7_times_3")
def _():
    # write-semantics.md 3.1, literally: i32 x, src = full((4, 8), 2.7); the result * 3 is 6.
    def forward(self, x):
        src = torch.full((4, 8), 2.7, device=x.device)
        return torch.slice_scatter(x, src, 1, 0, 8) * 3
    return module(forward), same(1, randint(-9, 9, 4, 8, dtype=I32)), None


@case("w_cast_partial_2_7_times_3")
def _():
    def forward(self, x):
        y = x.clone()
        y[:, 2:6] = torch.full((4, 4), 2.7, device=x.device)
        return y * 3
    return module(forward), same(1, randint(-9, 9, 4, 8, dtype=I32)), None

# ---- 3.2: select writes at -1 ---------------------------------------------------------


@case("w_select_last_col")
def _():
    def forward(self, x, v):
        y = x.clone()
        y[:, -1] = v
        return y
    return module(forward), same(1, randn(4, 6), randn(4)), None


@case("w_select_ellipsis_last")
def _():
    def forward(self, x, v):
        y = x.clone()
        y[..., -1] = v
        return y
    return module(forward), same(1, randint(-9, 9, 2, 3, 5, dtype=I32), randn(2, 3)), None


@case("w_select_first_dim_last")
def _():
    def forward(self, x, v):
        y = x.clone()
        y[-1] = v
        return y
    return module(forward), same(1, randn(3, 4, dtype=BF16), randn(4)), None


@case("w_select_last_dynamic", calls=2)
def _():
    # The index -1 on a dynamic dim: normalised against the size of each call.
    def forward(self, x, v):
        y = x.clone()
        y[:, -1] = v
        return y
    n = torch.export.Dim("n", min=2, max=32)
    return (module(forward), [(randn(3, 6), randn(3)), (randn(3, 11), randn(3))],
            {"x": {1: n}, "v": None})

# ---- 3.3: outputs that are inputs or repeat -------------------------------------------


@case("w_return_input_only")
def _():
    def forward(self, x):
        return x
    return module(forward), same(1, randn(2, 3)), None


@case("w_return_input_and_derived")
def _():
    def forward(self, x, y):
        return y, x + y, x
    return module(forward), same(1, randn(2, 3), randn(2, 3)), None


@case("w_return_same_twice")
def _():
    def forward(self, x):
        z = x * 2
        return z, z
    return module(forward), same(1, randint(-9, 9, 3, 2, dtype=I64)), None


@case("w_return_same_three_times")
def _():
    def forward(self, x):
        z = x.clone()
        z[:, 0] = 0.0
        return z, z, z
    return module(forward), same(1, randn(2, 4)), None


@case("w_return_value_and_its_mutation", calls=2)
def _():
    # The mutated input is also returned, next to a value read before the mutation.
    def forward(self, x):
        before = x * 1
        x.mul_(2)
        return x, before
    return module(forward), [(randn(2, 3),), (randn(2, 3),)], None


@case("w_return_buffer_and_mutation", calls=3)
def _():
    def forward(self, u):
        self.acc.add_(u)
        return self.acc, self.acc * 2
    return module(forward, acc=torch.zeros(2, 3)), [(randn(2, 3),) for _ in range(3)], None

# ---- 3.5: full-dim write fed by reshape(-1) -------------------------------------------


@case("w_full_dim_write_reshape_src")
def _():
    def forward(self, x, s):
        y = torch.zeros(2, 3, 4, device=x.device)
        y[:, :, 0:4] = x.reshape(-1, 3, 4)  # full dim; the src size comes from -1
        y[:, 1:2] = s                        # a later write on the result still compiles
        return y
    return module(forward), same(1, randn(24), randn(2, 1, 4)), None

# ---- 3.7: slice bounds, steps, dims, ranks --------------------------------------------


@case("w_open_end")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 3:] = s
        return y
    return module(forward), same(1, randn(3, 7), randn(3, 4)), None


@case("w_end_beyond_size")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 2:100] = s
        return y
    return module(forward), same(1, randn(3, 7), randn(3, 5)), None


@case("w_start_below_neg_size")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, -100:2] = s
        return y
    return module(forward), same(1, randn(3, 7), randn(3, 2)), None


@case("w_empty_slice")
def _():
    def forward(self, x, s, t):
        y = x.clone()
        y[:, 5:2] = s   # end < start: nothing written
        z = x.clone()
        z[:, 4:4] = t
        return y, z + 1
    return module(forward), same(1, randn(3, 7), randn(3, 0), randn(3, 0)), None


@case("w_step_gt1")
def _():
    def forward(self, x, s, t):
        y = x.clone()
        y[::3] = s           # rows 0, 3, 6
        z = x.clone()
        z[:, 1:6:2] = t      # cols 1, 3, 5; end not a multiple of the step
        return y, z
    return module(forward), same(1, randn(7, 6), randn(3, 6), randn(7, 3)), None


@case("w_negative_dims")
def _():
    def forward(self, x, s, v):
        a = torch.slice_scatter(x, s, dim=-1, start=1, end=3)
        b = torch.select_scatter(x, v, -2, 1)
        c = torch.slice_scatter(x, s, -1, -3, -1)
        return a, b, c
    return module(forward), same(1, randn(2, 3, 5), randn(2, 3, 2), randn(2, 5)), None


@case("w_rank1")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[2:5] = s
        return y
    return module(forward), same(1, randn(8), randn(3)), None


@case("w_rank2")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[1:3, 2:] = s
        return y
    return module(forward), same(1, randint(-9, 9, 4, 6, dtype=I32), randint(-9, 9, 2, 4, dtype=I32)), None


@case("w_rank3")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 1:3, :] = s
        return y
    return module(forward), same(1, randn(2, 4, 3), randn(2, 2, 3)), None


@case("w_rank4")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, :, 2:4] = s
        return y
    return module(forward), same(1, randn(1, 2, 6, 4, dtype=F16), randn(1, 2, 2, 4, dtype=F16)), None


@case("w_rank5")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[..., 1:2, :] = s
        return y
    return module(forward), same(1, randn(2, 1, 2, 3, 4), randn(2, 1, 2, 1, 4)), None


@case("w_symbolic_bounds_sym_size", calls=3)
def _():
    def forward(self, x, t):
        y = x.clone()
        y[:, : x.shape[1] - 2] = x[:, 2:] * 2   # end from sym_size arithmetic
        y[:, x.shape[1] - 3:] = t               # start from sym_size arithmetic, open end
        return y
    n = torch.export.Dim("n", min=4, max=64)
    return (module(forward), [(randn(2, m), randn(2, 3)) for m in (7, 4, 12)],
            {"x": {1: n}, "t": None})


@case("w_item_position_first_last", calls=3)
def _():
    def forward(self, x, s, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p + 1 <= x.shape[1])
        y = x.clone()
        y[:, p:p + 1] = s
        return y
    x = randn(2, 6)
    return module(forward), [(x, randn(2, 1), torch.tensor(p)) for p in (0, 5, 3)], None

# ---- 5: aliasing ----------------------------------------------------------------------


@case("w_src_overlaps_dst")
def _():
    def forward(self, x):
        # A plain `y[:, 1:] = y[:, :-1]` is left out: eager copy_ between overlapping memory
        # is undefined (CPU smears the first column along), while the program is functional.
        y = x.clone()
        y[:, 1:] = y[:, :-1] * 2   # reads the old values
        z = x.clone()
        z[:, :-1] = z[:, 1:] + 1   # the other direction
        return y, z
    return module(forward), same(1, randn(3, 6)), None


@case("w_base_read_after_write")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 0:2] = s
        return y + x, torch.slice_scatter(x, s, 1, 3, 5) - x
    return module(forward), same(1, randn(3, 6), randn(3, 2)), None


@case("w_base_read_before_write")
def _():
    # `r` reads the base before the write; a schedule that writes in place first is wrong.
    def forward(self, x, s):
        a = x * 1
        r = a.sum(1)
        a[:, 0:2] = s
        return a, r, a.sum(1)
    return module(forward), same(1, randn(3, 5), randn(3, 2)), None


@case("w_overlapping_writes_order")
def _():
    def forward(self, x, a, b, c):
        y = x.clone()
        y[:, 0:4] = a
        y[:, 2:6] = b     # last write wins on 2:4
        y[:, 3] = c       # and a select on top
        return y
    return module(forward), same(1, randn(3, 8), randn(3, 4), randn(3, 4), randn(3)), None


@case("w_value_placed_twice")
def _():
    def forward(self, x, s):
        a = s * 2
        y = x.clone()
        y[:, 0:2] = a
        y[:, 4:6] = a
        z = torch.slice_scatter(torch.slice_scatter(x, a, 1, 0, 2), a, 1, 4, 6)
        return y, z, torch.cat([a, a]), torch.cat([a, a], dim=1)
    return module(forward), same(1, randn(3, 6), randn(3, 2)), None


@case("w_producer_with_other_readers")
def _():
    def forward(self, x):
        a = x[..., :4] * 2
        b = x[..., 4:] + 1
        res = torch.empty_like(x)
        res[..., :4] = a
        res[..., 4:] = b
        return res, a, b.sum(-1)
    return module(forward), same(1, randn(2, 3, 8)), None


@case("w_write_transposed_view")
def _():
    def forward(self, x, s):
        y = x.clone()
        y.t()[1:3] = s    # writes columns 1, 2 of y
        return y
    return module(forward), same(1, randn(4, 5), randn(2, 4)), None


@case("w_write_nested_view")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[1][:, 2:4] = s
        return y
    return module(forward), same(1, randn(3, 4, 6), randn(4, 2)), None


@case("w_write_then_reshape")
def _():
    def forward(self, x, s):
        y = x.clone()
        y[:, 1:3] = s
        return y.reshape(-1), y.view(2, -1) * 2, y.t().reshape(-1)
    return module(forward), same(1, randn(4, 5), randn(4, 2)), None


@case("w_write_via_reshaped_view")
def _():
    # A write into a view of y shows up in y.
    def forward(self, x, v):
        y = x.clone()
        z = y.view(2, 2, 6)
        z[:, 1] = v
        return y
    return module(forward), same(1, randn(4, 6), randn(2, 6)), None

# ---- 5: state across calls and readers of the old state -------------------------------


def register_kv_cases(suffix, dtype):
    def make(*shape):
        if dtype in (I32, I64):
            return randint(-50, 50, *shape, dtype=dtype)
        return randn(*shape, dtype=dtype)

    @case(f"w_kv_item_slice_3_7_0_{suffix}", calls=3)
    def _():
        def forward(self, k, pos):
            p = pos.item()
            torch._check(p >= 0)
            torch._check(p + 1 <= self.cache.shape[2])
            self.cache[:, :, p:p + 1] = k
            return self.cache * 2, self.cache.sum(dim=2)
        calls = [(make(1, 2, 1, 4), torch.tensor(p)) for p in (3, 7, 0)]
        return module(forward, cache=torch.zeros(1, 2, 8, 4, dtype=dtype)), calls, None

    @case(f"w_kv_index_copy_3_7_0_{suffix}", calls=3)
    def _():
        def forward(self, k, pos):
            self.cache.index_copy_(2, pos, k)
            return self.cache + 0
        calls = [(make(1, 2, 1, 4), torch.tensor([p])) for p in (3, 7, 0)]
        return module(forward, cache=torch.zeros(1, 2, 8, 4, dtype=dtype)), calls, None


for _suffix, _dtype in (("f32", F32), ("bf16", BF16), ("i32", I32)):
    register_kv_cases(_suffix, _dtype)


@case("w_state_reader_before_write", calls=3)
def _():
    # y reads the old buffer; the write must not reach it.
    def forward(self, u):
        y = self.buf * 1
        self.buf[:, 2:3] = u
        return y
    return module(forward, buf=randn(2, 5)), [(randn(2, 1),) for _ in range(3)], None


@case("w_state_old_sum", calls=3)
def _():
    def forward(self, u, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p + 1 <= self.buf.shape[1])
        old_sum = self.buf.sum()
        old_row = self.buf[0] + 0
        self.buf[:, p:p + 1] = u
        return old_sum, old_row, self.buf.sum()
    calls = [(randn(2, 1), torch.tensor(p)) for p in (3, 7, 0)]
    return module(forward, buf=randn(2, 8)), calls, None


@case("w_kv_item_position_out_of_range", calls=3, expect_error=(2, "cache position out of range"))
def _():
    # Call 2's position is past the cache: the run must fail with no write out of bounds.
    def forward(self, k, pos):
        p = pos.item()
        torch._check(p >= 0, lambda: "cache position out of range")
        torch._check(p + 1 <= self.cache.shape[2], lambda: "cache position out of range")
        self.cache[:, :, p:p + 1] = k
        return self.cache.sum(dim=2)
    calls = [(randn(1, 2, 1, 4), torch.tensor(p)) for p in (0, 7, 8)]
    return module(forward, cache=torch.zeros(1, 2, 8, 4)), calls, None


@case("w_item_assert_not_a_range", calls=3, expect_error=(2, "position must be even"))
def _():
    # The evenness check is no interval: only the program's _assert_scalar rejects position 3
    # (u0's range [0, 6] admits it), so this fails if splice skips the asserts and trusts ranges.
    def forward(self, x, s, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p + 2 <= x.shape[1])
        torch._check(p % 2 == 0, lambda: "position must be even")
        y = x.clone()
        y[:, p:p + 2] = s
        return y
    return module(forward), [(randn(2, 8), randn(2, 2), torch.tensor(p)) for p in (0, 6, 3)], None

# ---- index_put / index_copy -------------------------------------------------------------


@case("w_index_put_negative")
def _():
    def forward(self, x, idx, v):
        y = x.clone()
        y[idx] = v
        z = x.clone()
        z[:, idx] = v.t()
        return y, z
    return module(forward), same(1, randn(5, 5), torch.tensor([-1, -3, 0]), randn(3, 5)), None


@case("w_index_put_broadcast_values")
def _():
    def forward(self, x, idx, v, c):
        y = x.clone()
        y[idx] = v            # (4,) over the (3, 4) indexed rows
        z = x.clone()
        z[idx] = c            # a 0-d tensor
        return y, z
    return module(forward), same(1, randn(6, 4), torch.tensor([5, 0, 2]), randn(4), torch.tensor(-7.0)), None


@case("w_index_put_bool_mask")
def _():
    def forward(self, x, m):
        y = x.clone()
        y[m] = 0.5
        return y
    return module(forward), same(1, randn(3, 4), randbool(3, 4)), None


@case("w_index_put_multi_index")
def _():
    def forward(self, x, i, j, v, w, u):
        a = x.clone()
        a[i, j] = v                # two adjacent index tensors: (3, 4) values
        b = x.clone()
        b[i, :, j] = w             # non-adjacent: the indexed dim goes first, (3, 5)
        c = x.clone()
        c[i[:2, None], j[None, :2]] = u  # index tensors broadcast to a (2, 2) grid
        return a, b, c
    i = torch.tensor([0, 2, 1])
    j = torch.tensor([4, 0, 3])
    return module(forward), same(1, randn(3, 5, 6), i, j, randn(3, 6), randn(3, 5), randn(2, 2, 6)), None


@case("w_index_put_accumulate_dups")
def _():
    def forward(self, x, idx, v, i, iv):
        return (x.clone().index_put_((idx,), v, accumulate=True),
                torch.index_put(i, (idx,), iv, accumulate=True))
    idx = torch.tensor([1, 3, 1, 1, -1])  # duplicates and a negative index
    return module(forward), same(1, randn(5, 3), idx, randn(5, 3), randint(-9, 9, 5, 3),
                                 randint(-9, 9, 5, 3)), None


@case("w_index_copy_positions")
def _():
    def forward(self, x, idx, s, b, bs, i, isrc):
        return x.index_copy(0, idx, s), b.index_copy(2, idx, bs), i.index_copy(-1, idx, isrc)
    idx = torch.tensor([4, 0, 2])
    return module(forward), same(1, randn(5, 2), idx, randn(3, 2), randn(1, 2, 6, 3, dtype=BF16),
                                 randn(1, 2, 3, 3, dtype=BF16), randint(-9, 9, 2, 5, dtype=I32),
                                 randint(-9, 9, 2, 3, dtype=I32)), None

# ---- integer and bool destinations ----------------------------------------------------


def register_int_dst_case(suffix, dtype):
    @case(f"w_slice_write_dst_{suffix}")
    def _():
        def forward(self, x, s, v):
            y = x.clone()
            y[1:3, ::2] = s
            y[0, 1:4] = v
            return y
        return module(forward), same(1, dst(dtype, 4, 6), dst(dtype, 2, 3), dst(dtype, 3)), None


for _suffix, _dtype in (("i32", I32), ("i64", I64), ("u8", U8), ("i8", I8), ("bool", BOOL)):
    register_int_dst_case(_suffix, _dtype)
