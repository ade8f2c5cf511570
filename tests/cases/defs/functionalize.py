"""Cases for functionalising the training IR (issue 14): programs whose in-place ops write
user inputs, buffers, fresh tensors and views of views, all named f_*.

The training IR (`train`, `strict` forms) keeps these writes as `copy_` into views,
`index_put_`, `index_copy_`, `add_`, `mul_`, ...; run_decompositions turns them into
slice_scatter / select_scatter / index_put and mutation outputs. Each case pins one rule of
PyTorch's semantics that a functionalisation pass must keep:

- a write through a view (of a view, of a view, ...) lands in the base, and every view taken
  before the write sees the new value;
- reshape / contiguous / flatten alias their input exactly when eager's would: a write through
  the copy a non-contiguous input gets leaves the base alone, a write through the alias does not;
- in-place ops return self, and chains of them (`y.add_(1).mul_(2)`) act on the same memory;
- writes into user inputs are returned as `mutated.NAME`, writes into buffers persist into the
  next call (positions move: 3, 7, 0), writes into fresh tensors stay local.

Cases registered strict=True are also exported with torch.export.export(strict=True).
"""

import torch
import torch.nn.functional as F

from .registry import case, module, randn, randint, randbool

F16, I32 = torch.float16, torch.int32


def two_calls(*makers):
    """Inputs for two calls, each a fresh draw of every maker."""
    return [tuple(m() for m in makers) for _ in range(2)]

# ---- writes into user inputs: the program returns them as mutated.NAME -----------------


@case("f_input_slice_write", calls=2, strict=True)
def _():
    def forward(self, x, s):
        x[:, 1:3] = s
        return x * 2
    return module(forward), two_calls(lambda: randn(3, 5), lambda: randn(3, 2)), None


@case("f_input_select_write", calls=2, strict=True)
def _():
    def forward(self, x, v):
        x[1] = v
        x[:, -1] = 0.5
        return x.sum(0)
    return module(forward), two_calls(lambda: randn(3, 4), lambda: randn(4)), None


@case("f_input_index_write", calls=2, strict=True)
def _():
    # x[idx] = v is index_put_; y accumulates over the duplicate index 1 (defined only with
    # accumulate=True).
    def forward(self, x, idx, v, y, dup, u):
        x[idx] = v
        y.index_put_((dup,), u, accumulate=True)
        return x + 1, y * 1
    idx = torch.tensor([3, 0])
    dup = torch.tensor([1, 4, 1])
    return (module(forward),
            [(randn(5, 2), idx, randn(2, 2), randn(5, 3), dup, randn(3, 3)),
             (randn(5, 2), idx.flip(0), randn(2, 2), randn(5, 3), dup.flip(0), randn(3, 3))],
            None)


@case("f_input_views_of_views", calls=2, strict=True)
def _():
    # Writes through chains of views of the input, in program order (the transposed write
    # lands on top of part of the first).
    def forward(self, x, s, v, w):
        x[1:][:, 2:4] = s
        x.transpose(0, 1)[2] = v
        x.view(2, 2, 6)[1, :, ::3] = w
        return x + 0
    return module(forward), two_calls(lambda: randn(4, 6), lambda: randn(3, 2),
                                      lambda: randn(4), lambda: randn(2, 2)), None


@case("f_input_reshape_alias_or_copy", calls=2)
def _():
    # x is contiguous: reshape(-1) is a view and the write mutates x. y.t() is not, so
    # y.t().reshape(-1) is a copy and y stays as the caller passed it (no mutated.y).
    def forward(self, x, y):
        x.reshape(-1)[0:3] = 7.0
        r = y.t().reshape(-1)
        r[0:3] = 7.0
        return x + 0, y + 0, r * 1
    return module(forward), two_calls(lambda: randn(3, 4), lambda: randn(3, 4)), None


@case("f_input_inplace_chain", calls=2)
def _():
    # Chains of in-place ops on inputs; the function returns the mutated input itself and a
    # value read before the mutations.
    def forward(self, x, i, m):
        before = x.sum()
        x.mul_(2).add_(1)
        x.clamp_(-1.5, 2.0)
        i.add_(3).mul_(2)
        i.masked_fill_(m, -1)
        return x, before, i * 1
    return module(forward), two_calls(lambda: randn(3, 4), lambda: randint(-9, 9, 3, 4, dtype=I32),
                                      lambda: randbool(3, 4)), None


@case("f_input_view_taken_before_write", calls=2)
def _():
    # v is a view of x taken before x.add_: it must see the new values.
    def forward(self, x):
        v = x[1]
        t = x.t()
        x.add_(1)
        x[0, 0] = -5.0
        return v * 2, t + 0
    return module(forward), two_calls(lambda: randn(3, 4)), None


@case("f_input_copy_from_f16", calls=2)
def _():
    # copy_ converts (f16 -> f32) and broadcasts (a row into every row, a 0-d into a column).
    def forward(self, x, h, row, c):
        x.copy_(h)
        x[1:].copy_(row)
        x[:, 0].copy_(c)
        return x.sum(1)
    return module(forward), two_calls(lambda: randn(3, 4), lambda: randn(3, 4, dtype=F16),
                                      lambda: randn(4), lambda: randn(())), None

# ---- writes into buffers: state across calls, positions 3, 7, 0 -----------------------


@case("f_buffer_select_item", calls=3, strict=True)
def _():
    # A select write at a data-dependent index (pos.item()) into a buffer. `buf[:, p] = v`
    # with an unbacked p does not export in torch 2.11 (strict or not), so the write is
    # spelled as the select + copy_ that the indexing runs in eager.
    def forward(self, v, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p < self.buf.shape[1])
        self.buf.select(1, p).copy_(v)
        return self.buf * 1
    calls = [(randn(2, 3), torch.tensor(p)) for p in (3, 7, 0)]
    return module(forward, buf=torch.zeros(2, 8, 3)), calls, None


@case("f_buffer_index_put", calls=3, strict=True)
def _():
    def forward(self, idx, v):
        self.buf[idx] = v
        return self.buf.sum(1), self.buf + 0
    calls = [(torch.tensor(i), randn(2, 4)) for i in ([1, 4], [6, 0], [3, 5])]
    return module(forward, buf=torch.zeros(8, 4)), calls, None


@case("f_buffer_views_of_views", calls=3, strict=True)
def _():
    # buf (4, 8): view(8, 4)[p] writes 4 contiguous elements, t()[p] writes column p.
    def forward(self, v, w, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p < 8)
        self.buf.view(8, 4)[p] = v
        self.buf.t()[p] = w
        self.buf[1:][:, ::4] = self.buf[1:][:, ::4] * 0.5
        return self.buf * 1
    calls = [(randn(4), randn(4), torch.tensor(p)) for p in (3, 7, 0)]
    return module(forward, buf=randn(4, 8)), calls, None


@case("f_buffer_inplace_arith", calls=3)
def _():
    def forward(self, x, m):
        self.acc.mul_(0.5).add_(x)
        self.acc[:, 0].zero_()
        self.acc.masked_fill_(m, 1.0)
        self.steps.add_(1)
        self.hits.add_(m.sum())
        return self.acc * self.steps, self.hits + 0
    calls = [(randn(2, 4), randbool(2, 4)) for _ in range(3)]
    return (module(forward, acc=torch.zeros(2, 4), steps=torch.zeros((), dtype=torch.int64),
                   hits=torch.zeros((), dtype=torch.int64)), calls, None)


@case("f_buffer_view_taken_before_write", calls=3)
def _():
    # row is a view of the buffer taken before the write through the base: it sees it.
    def forward(self, u, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p < 8)
        row = self.buf[0]
        old = self.buf.sum()
        self.buf[0].select(0, p).copy_(u)   # buf[0, p] = u (see f_buffer_select_item)
        return row * 1, old
    calls = [(randn(()), torch.tensor(p)) for p in (3, 7, 0)]
    return module(forward, buf=randn(2, 8)), calls, None


@case("f_buffer_reshape_alias_or_copy", calls=3)
def _():
    # The buffer is contiguous: reshape(-1)[p] = v writes it. Its transpose is not:
    # t().reshape(-1) is a copy, and the write into it must leave the buffer alone.
    def forward(self, v, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p < 12)
        self.buf.reshape(-1)[p] = v
        r = self.buf.t().reshape(-1)
        r[p] = 100.0
        return r * 1, self.buf + 0
    calls = [(randn(()), torch.tensor(p)) for p in (3, 7, 0)]
    return module(forward, buf=randn(3, 4)), calls, None

# ---- writes into fresh tensors ------------------------------------------------------------


@case("f_empty_written_by_slices", calls=2, strict=True)
def _():
    # Every element of the empty tensor is written before it is read.
    def forward(self, x):
        y = torch.empty(x.shape[0], 6, device=x.device)
        y[:, :2] = x
        y[:, 2:4] = x * 2
        y[:, 4:] = -x
        return y
    return module(forward), two_calls(lambda: randn(3, 2)), None


@case("f_empty_rows_int", calls=2)
def _():
    def forward(self, i):
        y = torch.empty(3, 4, dtype=torch.int32, device=i.device)
        y[0] = i
        y[1] = i * 2
        y[2] = -i
        return y
    return module(forward), two_calls(lambda: randint(-9, 9, 4, dtype=I32)), None


@case("f_zeros_writes", calls=2)
def _():
    def forward(self, s, v, idx):
        y = torch.zeros(4, 6, device=s.device)
        y[1:3, 2:5] = s
        y[:, 0] = v
        y[idx] += 1.0            # index, add, index_put
        y[:, 1:3] *= 2.0         # an in-place mul_ on a view, then copy_ onto itself
        return y
    idx = torch.tensor([3, 1])
    return module(forward), [(randn(2, 3), randn(4), idx), (randn(2, 3), randn(4), idx.flip(0))], None


@case("f_clone_index_and_slice_writes", calls=2)
def _():
    def forward(self, x, idx, v):
        y = x.clone()
        y[idx] = v
        y[:, 1:3] *= 2
        y[..., ::2] = y[..., ::2] + 1
        return y, x * 1
    idx = torch.tensor([2, 0])
    return module(forward), [(randn(3, 5), idx, randn(2, 5)), (randn(3, 5), idx.flip(0), randn(2, 5))], None


@case("f_zeros_like_full_writes", calls=2)
def _():
    def forward(self, x):
        z = torch.zeros_like(x)
        z[..., ::2] = x[..., ::2]
        f = torch.full((3,), 2.0, device=x.device)
        f[1] = x.sum()
        o = x.new_ones(2, 2)
        o[0, 1] = x[0, 0]
        return z, f, o
    return module(forward), two_calls(lambda: randn(2, 5)), None

# ---- views of views ---------------------------------------------------------------------


@case("f_view_chain_writes", calls=2, strict=True)
def _():
    # One chain per clone, so each write is checked on its own.
    def forward(self, x, s, v, w, d, u):
        a = x.clone()
        a[1:][:, 2:4] = s
        b = x.clone()
        b.transpose(0, 1)[2] = v
        c = x.clone()
        c.view(2, 2, 6)[1, :, ::3] = w
        e = x.clone()
        e[..., ::2] = d
        g = x.clone()
        g[1:3].transpose(0, 1)[1:][:, 0] = u   # slice, transpose, slice, select
        return a, b, c, e, g
    return module(forward), two_calls(lambda: randn(4, 6), lambda: randn(3, 2), lambda: randn(4),
                                      lambda: randn(2, 2), lambda: randn(4, 3), lambda: randn(5)), None


@case("f_view_chain_unsqueeze_permute", calls=2)
def _():
    def forward(self, x, s, v):
        y = x.clone()
        y.unsqueeze(0).permute(0, 2, 1)[0, 1:3] = s     # columns 1, 2 of y
        z = x.clone()
        z.flatten()[::5] = v                            # flatten of a contiguous tensor: a view
        return y, z
    return module(forward), two_calls(lambda: randn(3, 4), lambda: randn(2, 3), lambda: randn(3)), None

# ---- views read after a write through the base or another view --------------------------


@case("f_view_sees_later_write", calls=2, strict=True)
def _():
    # v and t are taken before the writes; reading them afterwards must show the writes.
    def forward(self, x):
        y = x.clone()
        v = y[:, 1:4]
        t = y.t()
        y[:, 2] = 0.0
        y[0] += 1.0
        return v * 1, t + 0, v.sum()
    return module(forward), two_calls(lambda: randn(3, 5)), None


@case("f_overlapping_views", calls=2)
def _():
    # a and b overlap on row 2: a write through either shows through the other.
    def forward(self, x):
        y = x.clone()
        a = y[0:3]
        b = y[2:5]
        a[2].fill_(7.0)
        b[0, 1:3] = -1.0
        b[1:].mul_(2)
        return a + 0, b + 0, y
    return module(forward), two_calls(lambda: randn(5, 4)), None

# ---- reshape / contiguous / flatten: alias or copy -----------------------------------------


@case("f_reshape_copy_write", calls=2, strict=True)
def _():
    # b.t() is not contiguous: reshape, contiguous and flatten copy, and the writes into the
    # copies leave b as it was.
    def forward(self, x):
        b = x.clone()
        r = b.t().reshape(-1)
        r[0:4] = 7.0
        c = b.t().contiguous()
        c[0] = -3.0
        f = b.t().flatten()
        f[1] = 9.0
        return b, r, c, f
    return module(forward), two_calls(lambda: randn(3, 4)), None


@case("f_reshape_alias_write", calls=2, strict=True)
def _():
    # b is contiguous: reshape, contiguous and flatten return views, the writes show in b.
    def forward(self, x):
        b = x.clone()
        r = b.reshape(-1)
        r[0:4] = 7.0
        c = b.reshape(2, -1)
        c[:, 0] = -1.0
        d = b.contiguous()
        d[2, 3] = 5.0
        f = b.flatten()
        f[5] = 9.0
        return b, r + 0, c * 1
    return module(forward), two_calls(lambda: randn(3, 4)), None

# ---- chains of in-place arithmetic -----------------------------------------------------------


@case("f_inplace_chain_fresh", calls=2, strict=True)
def _():
    # z is y (in-place ops return self); w starts as a fresh zeros_like.
    def forward(self, x, m, h):
        y = x.clone()
        z = y.add_(1).mul_(2)
        z.sub_(0.5).div_(4)
        y.clamp_(-0.5, 0.5)
        y.masked_fill_(m, 3.0)
        w = torch.zeros_like(x).fill_(2).add_(y)
        u = y.clone().zero_()
        u.copy_(h)
        return y, z * 1, w, u
    return module(forward), two_calls(lambda: randn(3, 4), lambda: randbool(3, 4),
                                      lambda: randn(3, 4, dtype=F16)), None


@case("f_inplace_index_accumulate_chain", calls=2)
def _():
    def forward(self, idx, v, idx2, u):
        y = torch.zeros(5, 3, device=v.device)
        y.index_put_((idx,), v, accumulate=True).mul_(2)
        y.index_add_(0, idx2, u)
        y.index_put_((idx2,), u, accumulate=True)
        return y
    idx = torch.tensor([1, 3, 1, 1, -1])   # duplicates and a negative index
    idx2 = torch.tensor([0, 0, 2])
    return (module(forward), [(idx, randn(5, 3), idx2, randn(3, 3)),
                              (idx.flip(0), randn(5, 3), idx2, randn(3, 3))], None)


@case("f_inplace_on_views", calls=2)
def _():
    def forward(self, x, m):
        y = x.clone()
        y[:, :2].mul_(3)
        y[1].add_(y[0])            # rows 0 and 1 do not overlap
        y[:, -1].zero_()
        y[..., ::2].clamp_(min=0.0)
        y[2:].masked_fill_(m[2:], -2.0)
        y.t()[0].fill_(1.0)
        return y
    return module(forward), two_calls(lambda: randn(4, 5), lambda: randbool(4, 5)), None


@case("f_inplace_returns_self_used", calls=2)
def _():
    # a is y, b is a view of y: later writes through one are seen through the others.
    def forward(self, x):
        y = x.clone()
        a = y.mul_(2)
        b = a[1:].add_(1)
        b[0].neg_()
        return a.sum(), b * 1, y
    return module(forward), two_calls(lambda: randn(3, 4)), None


@case("f_inplace_int_chain", calls=2)
def _():
    def forward(self, i, m):
        j = i.clone()
        j.add_(3).mul_(2).clamp_(-10, 10)
        j.masked_fill_(m, 0)
        j[0].sub_(1)
        return j
    return module(forward), two_calls(lambda: randint(-9, 9, 3, 4, dtype=I32),
                                      lambda: randbool(3, 4)), None

# ---- KV caches whose write position moves every call ---------------------------------------


@case("f_kv_select_item_attention", calls=3, strict=True)
def _():
    # cache[:, :, p] = k at p = pos.item(), spelled select(2, p).copy_(k) (the indexing form
    # does not export in torch 2.11, see f_buffer_select_item); attention over every slot.
    def forward(self, q, k, v, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p < self.k_cache.shape[2])
        self.k_cache.select(2, p).copy_(k)
        self.v_cache.select(2, p).copy_(v)
        scores = q @ self.k_cache.transpose(-1, -2) * 0.5
        return scores.softmax(-1) @ self.v_cache, self.k_cache.sum(2)
    calls = [(randn(1, 2, 1, 4), randn(1, 2, 4), randn(1, 2, 4), torch.tensor(p)) for p in (3, 7, 0)]
    return (module(forward, k_cache=torch.zeros(1, 2, 8, 4), v_cache=torch.zeros(1, 2, 8, 4)),
            calls, None)


@case("f_kv_index_copy_two_positions", calls=3, strict=True)
def _():
    # Two distinct positions per call.
    def forward(self, k, pos):
        self.cache.index_copy_(2, pos, k)
        return self.cache.sum(-1), self.cache * 1
    calls = [(randn(1, 2, 2, 4), torch.tensor(p)) for p in ([3, 4], [7, 1], [0, 5])]
    return module(forward, cache=torch.zeros(1, 2, 8, 4)), calls, None


@case("f_kv_cache_as_user_input", calls=3, strict=True)
def _():
    # The cache is the caller's tensor: each call returns it as mutated.cache.
    def forward(self, cache, k, pos):
        cache.index_copy_(2, pos, k)
        return cache.sum(2)
    calls = [(randn(1, 2, 8, 4), randn(1, 2, 1, 4), torch.tensor([p])) for p in (3, 7, 0)]
    return module(forward), calls, None


@case("f_kv_own_position_index_copy", calls=3, strict=True)
def _():
    # The write position is a buffer the program advances itself: each call writes k at slot
    # pos, then pos += 1, so the calls write slots 2, 3, 4 with no position input.
    def forward(self, k):
        self.cache.index_copy_(2, self.pos, k)
        self.pos.add_(1)
        return self.cache.sum(-1), self.cache * 1
    calls = [(randn(1, 2, 1, 4),) for _ in range(3)]
    return (module(forward, cache=torch.zeros(1, 2, 8, 4), pos=torch.tensor([2])),
            calls, None)


@case("f_kv_own_position_slice", calls=3)
def _():
    # The slice-assignment form: cache[:, :, p:p + 1] = k at p = pos.item(), pos advanced in
    # place; the calls write slots 5, 6, 7.
    def forward(self, k):
        p = self.pos.item()
        torch._check(p >= 0)
        torch._check(p + 1 <= self.cache.shape[2])
        self.cache[:, :, p:p + 1] = k
        self.pos += 1
        return self.cache.sum(2), self.pos * 1
    calls = [(randn(1, 2, 1, 4),) for _ in range(3)]
    return (module(forward, cache=torch.zeros(1, 2, 8, 4), pos=torch.tensor(5)),
            calls, None)


@case("f_kv_slice_item_sdpa_mask", calls=3, strict=True)
def _():
    # A decode step: k/v written at pos.item() into both caches, attention over all slots
    # with a mask that hides the slots after p.
    def forward(self, q, k, v, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p + 1 <= self.k_cache.shape[2])
        self.k_cache[:, :, p:p + 1] = k
        self.v_cache[:, :, p:p + 1] = v
        mask = (torch.arange(self.k_cache.shape[2], device=q.device) <= p)[None, None, None]
        out = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        return out, self.k_cache.sum(2), self.v_cache * 1
    calls = [(randn(1, 2, 1, 4), randn(1, 2, 1, 4), randn(1, 2, 1, 4), torch.tensor(p))
             for p in (3, 7, 0)]
    return (module(forward, k_cache=torch.zeros(1, 2, 8, 4), v_cache=torch.zeros(1, 2, 8, 4)),
            calls, None)

# ---- writes through movedim/moveaxis and diagonal views -----------------------------------


@case("f_movedim_writes", calls=2, strict=True)
def _():
    # movedim/moveaxis (int and intlist forms) are permutes: a write through them, or through
    # a view of them, lands in the base's permuted place; r is taken before the writes; a
    # reshape of a moved dim copies as eager's does, of an unmoved one it views.
    def forward(self, x, v, w):
        m = torch.movedim(x, 0, 2)                      # (2, 3, 4) -> (3, 4, 2)
        r = m[1]                                        # x[:, 1, :].t(), read after the writes
        m[:, 1] = v                                     # x[:, :, 1] = v.t()
        torch.moveaxis(x, (0, 1), (2, 0)).add_(1.0)     # the whole input through the intlist form
        self.buf.movedim(-1, 0)[2].mul_(w)              # column 2 of the buffer
        y = torch.zeros(2, 3, device=x.device)
        y.moveaxis(1, 0)[1:].fill_(2.0)                 # columns 1 and 2 of a fresh tensor
        c = torch.movedim(x, 2, 0).reshape(-1)          # not contiguous: reshape copies
        c[0] = 100.0                                    # so x keeps its element
        x.movedim(1, 1).flatten()[5] = 9.0              # the identity: a view, x[0, 1, 1] = 9
        return r + 0, self.buf * 1, y, c * 1
    return (module(forward, buf=randn(3, 4)),
            two_calls(lambda: randn(2, 3, 4), lambda: randn(3, 2), lambda: randn(3)), None)


@case("f_diagonal_writes", calls=2, strict=True)
def _():
    # Writes through diagonal views (positive, negative and past-the-end offsets, dim1 > dim2,
    # a diagonal of a slice) into an input, a buffer and a fresh tensor; d is taken before.
    def forward(self, x, v, u):
        d = x.diagonal()
        x.diagonal(1).copy_(v)                          # (4, 5): 4 elements above the diagonal
        x.diagonal(-2).fill_(7.0)                       # 2 elements below
        x[1:].diagonal().zero_()                        # a diagonal of a view
        torch.diagonal(x, 9).fill_(1.0)                 # past the end: empty, writes nothing
        torch.diagonal(self.buf, 0, 2, 0).add_(u)       # buf (3, 2, 4): dims 2 then 0, (2, 3)
        t = torch.zeros(2, 3, 4, device=x.device)
        t.diagonal(-1, 1, 2).copy_(torch.full((2, 2), 3, dtype=torch.int64, device=x.device))
        return d * 1, self.buf + 0, t
    return (module(forward, buf=randn(3, 2, 4)),
            two_calls(lambda: randn(4, 5), lambda: randn(4), lambda: randn(2, 3)), None)


# ---- grad-mode regions (higher_order.wrap_with_set_grad_enabled) --------------------------


@case("f_no_grad_region", calls=2, strict=True)
def _():
    # `with torch.no_grad():` (and M2M100's @torch.no_grad() position embedding) stays in the
    # training IR as a subgraph op: here it reads a user input, a buffer and the dynamic length
    # (a symbol), mutates a buffer in place, nests an enable_grad region, and returns two values
    # read outside it.
    def forward(self, ids, x):
        with torch.no_grad():
            mask = ids.ne(0).int()
            pos = (torch.cumsum(mask, dim=1) * mask).long()
            emb = self.table.index_select(0, pos.view(-1)).view(ids.shape[0], ids.shape[1], -1)
            self.steps.add_(1)
            scaled = x * 2
            with torch.enable_grad():
                inner = scaled + emb.detach()
        return x + emb, inner, scaled * self.steps
    length = torch.export.Dim("length", min=2, max=16)
    ids = [torch.tensor([[3, 1, 0, 0, 2], [1, 1, 1, 4, 0]]), torch.tensor([[0, 5, 6], [2, 0, 1]])]
    return (module(forward, table=randn(17, 4), steps=torch.zeros(1)),
            [(ids[0], randn(2, 5, 4)), (ids[1], randn(2, 3, 4))],
            {"ids": {1: length}, "x": {1: length}})
