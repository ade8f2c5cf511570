"""Cases about state and aliasing: KV caches in registered buffers written at a different
position in each call, user-input mutations, outputs that alias each other or an input, and
non-tensor / None outputs."""

import torch

from .registry import case, module, same, randn, randint, batch_dim


@case("kv_cache_index_copy", calls=3, strict=True)
def _():
    # Positions 3, 7, 0: a test that wrote the same slot every call could not tell whether the
    # state persisted. The output reads the whole cache.
    def forward(self, k, pos):
        self.cache.index_copy_(2, pos, k)
        return self.cache.clone()
    calls = [(randn(1, 2, 1, 4), torch.tensor([p])) for p in (3, 7, 0)]
    return module(forward, cache=torch.zeros(1, 2, 8, 4)), calls, None


@case("kv_cache_item_slice", calls=3, strict=True)
def _():
    def forward(self, k, v, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p + 1 <= self.k_cache.shape[2])
        self.k_cache[:, :, p:p + 1] = k
        self.v_cache[:, :, p:p + 1] = v
        return self.k_cache * 2, self.v_cache.sum(dim=-1)
    calls = [(randn(1, 2, 1, 4), randn(1, 2, 1, 4, dtype=torch.float16), torch.tensor(p))
             for p in (3, 7, 0)]
    return (module(forward, k_cache=torch.zeros(1, 2, 8, 4),
                   v_cache=torch.zeros(1, 2, 8, 4, dtype=torch.float16)), calls, None)


@case("kv_cache_reads_old_state", calls=3)
def _():
    # `old` reads the buffer before the write: it must see the previous call's state.
    def forward(self, k, pos):
        old = self.cache.sum(dim=2)
        self.cache.index_copy_(2, pos, k)
        return old, self.cache + 0
    calls = [(randn(1, 2, 1, 4), torch.tensor([p])) for p in (5, 1, 7)]
    return module(forward, cache=torch.zeros(1, 2, 8, 4)), calls, None


@case("counter_buffer", calls=3, strict=True)
def _():
    def forward(self, x):
        self.count.add_(1)
        self.total.add_(x.sum())
        return x * self.count, self.total.clone()
    return (module(forward, count=torch.zeros((), dtype=torch.int64), total=torch.zeros(())),
            [(randn(3),) for _ in range(3)], None)


@case("user_input_mutation_add_", calls=2, strict=True)
def _():
    def forward(self, x):
        x.add_(1)
        return x * 2
    return module(forward), [(randn(2, 3),), (randn(2, 3),)], None


@case("user_input_mutation_select_write")
def _():
    def forward(self, x, y):
        x[0] = 5
        return x + y
    return module(forward), same(1, randint(0, 9, 3, 4, dtype=torch.int32), randint(0, 9, 3, 4, dtype=torch.int32)), None


@case("return_same_tensor_twice")
def _():
    def forward(self, x):
        z = x + 1
        return z, z
    return module(forward), same(1, randn(2, 3)), None


@case("return_same_tensor_three_times")
def _():
    def forward(self, x):
        z = x * 3
        return z, z, z
    return module(forward), same(1, randint(0, 5, 4, dtype=torch.int32)), None


@case("return_input")
def _():
    def forward(self, x, y):
        return x + y, y
    return module(forward), same(1, randn(2, 3), randn(2, 3)), None


@case("scalar_and_none_outputs", calls=2)
def _():
    def forward(self, x):
        return x.sum(dim=1), None, x.shape[0] * 2
    return module(forward), [(randn(3, 4),), (randn(5, 4),)], {"x": {0: batch_dim()}}
