"""Cases for the ops vision front ends bring that splice decomposes (passes/decompose_range_ops.cc,
decompose_interpolation.cc): position ids from linspace and bucketize (SmolVLM's patch
buckets), and resampling — upsample_nearest2d, upsample_bilinear2d and upsample_bicubic2d in
both overloads (position-embedding interpolation, segmentation heads), by size and by scale,
with and without align_corners; grid sampling (RAFT's lookups, spatial transformers; passes/
decompose_grid_sample.cc). Every case name starts with v_."""

import torch
import torch.nn.functional as F

from .registry import case, module, same, randn, randint, randbool

F16, BF16, F64, I64 = torch.float16, torch.bfloat16, torch.float64, torch.int64


@case("v_linspace", notes="linspace in float32 (odd and even steps), int64, float16, float64 "
      "(descending), one step and no step (an int64 linspace whose float32 steps round across an "
      "integer is left out: run_decompositions() computes it in float32, eager in double)")
def _():
    def forward(self, x):
        return (x + torch.linspace(-1.5, 2, 7), torch.linspace(0, 10, 4, dtype=I64),
                torch.linspace(0, 1, 6, dtype=F16),
                torch.linspace(1, -1, 6, dtype=F64), torch.linspace(3, 4, 1),
                torch.linspace(0, 1, 0))
    return module(forward), same(1, randn(7)), None


@case("v_bucketize", notes="bucketize against sorted float boundaries (values on a boundary, "
      "below and above all, NaN), right=True as SmolVLM's patch positions use it, out_int32, "
      "int64 values and boundaries, and a Python number (bucketize.Scalar)")
def _():
    def forward(self, x, b, i, ib):
        frac = torch.arange(0, 1 - 1e-6, 1 / 8)
        patches = torch.arange(1 / 8, 1.0, 1 / 8)
        return (torch.bucketize(x, b), torch.bucketize(x, b, right=True),
                torch.bucketize(x, b, out_int32=True), torch.bucketize(i, ib, right=True),
                torch.bucketize(frac, patches, right=True), torch.bucketize(0.25, b))
    x = torch.cat([randn(2, 5), torch.tensor([[-3.0, -1.0, 0.0, 0.25, 1.0],
                                              [2.5, 9.0, float("nan"), 0.5, -0.5]])])
    b = torch.tensor([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 2.5])
    return module(forward), [(x, b, randint(-4, 12, 3, 4), torch.tensor([0, 2, 2, 5, 9]))], None


@case("v_upsample", notes="F.interpolate nearest and bilinear (the .vec overloads) by size and "
      "by scale factor, align_corners both ways, up and down, a dim left as it is, bfloat16; "
      "and the .default overloads with and without scales")
def _():
    def forward(self, x, h):
        return (F.interpolate(x, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=(7, 4), mode="nearest"),
                F.interpolate(x, scale_factor=1.5, mode="nearest"),
                F.interpolate(x, size=(8, 9), mode="bilinear", align_corners=False),
                F.interpolate(x, size=(3, 6), mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False),
                F.interpolate(h, size=(6, 4), mode="bilinear", align_corners=False),
                torch.ops.aten.upsample_nearest2d(x, [10, 3]),
                torch.ops.aten.upsample_bilinear2d(x, [7, 5], False, 1.5, None))
    return module(forward), same(1, randn(2, 3, 5, 6), randn(1, 2, 3, 5, dtype=BF16)), None


@case("v_upsample_bicubic", notes="F.interpolate bicubic (ViT's position-embedding "
      "interpolation) by size and by scale, align_corners both ways, and the .default overload. "
      "Written in the keep and train forms only: run_decompositions() turns bicubic into "
      "torch's own index arithmetic (300 KB of program, ops covered elsewhere)")
def _():
    def forward(self, x):
        return (F.interpolate(x, size=(9, 11), mode="bicubic", align_corners=False),
                F.interpolate(x, scale_factor=1.7, mode="bicubic", align_corners=True),
                torch.ops.aten.upsample_bicubic2d(x, [4, 4], False))
    return module(forward), same(1, randn(2, 3, 5, 6)), None


def _grid(*shape, dtype=torch.float32):
    """A sampling grid in [-1.3, 1.3) (some positions outside the input), its first row x at
    exact positions: the corners, centres and, for a width of 6 with align_corners, the
    half-pixel 2.5 that nearest rounds to even."""
    g = torch.rand(*shape) * 2.6 - 1.3
    g[0, 0, :7, 0] = torch.tensor([0.0, -1.0, 1.0, 0.2, -0.6, 1.3, -1.3])
    return g.to(dtype)


@case("v_grid_sample", notes="F.grid_sample (aten.grid_sampler; grid_sampler_2d after "
      "run_decompositions): bilinear, nearest and bicubic, each padding mode (zeros, border, "
      "reflection), align_corners both ways, positions outside the input and on pixel centres "
      "and half pixels, a float16 input")
def _():
    def forward(self, x, g, h, gh):
        def gs(mode, padding, align):
            return F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align)
        return (gs("bilinear", "zeros", False), gs("bilinear", "border", True),
                gs("bilinear", "reflection", False), gs("nearest", "zeros", True),
                gs("nearest", "reflection", False), gs("bicubic", "zeros", False),
                gs("bicubic", "border", True), gs("bicubic", "reflection", True),
                F.grid_sample(h, gh, mode="bilinear", padding_mode="reflection",
                              align_corners=True))
    return module(forward), same(1, randn(2, 3, 5, 6), _grid(2, 4, 7, 2),
                                 randn(1, 2, 4, 3, dtype=F16), _grid(1, 3, 7, 2, dtype=F16)), None


@case("v_as_strided_read", notes="as_strided reads of tensors that own their storage: a "
      "same-layout restride (what export leaves after Swin's pooled head), overlapping "
      "windows, an offset, and a tensor whose eager layout is a transpose")
def _():
    def forward(self, x, y):
        pooled = x.mean((-1, -2), keepdim=True)
        h = x * 2
        t = y.t() * 1.0
        return (pooled.as_strided((2, 3, 1, 1), (3, 1, 3, 3)),
                h.as_strided((3, 4), (2, 1), 1),
                (y + 1).as_strided((2, 2, 2), (4, 1, 2)),
                t.as_strided((2, 3), (1, 2)))
    return module(forward), same(1, randn(2, 3, 4, 4), randn(3, 4)), None


@case("v_masked_write", notes="writes through a bool mask that splice runs as where "
      "(masked_write_to_where): transformers 5.17's Idefics3/SmolVLM position ids "
      "(position_ids[mask] = pos_ids[mask], the mask all true from torch.ones), a mask with "
      "true and false positions, a mask over the leading dims with rows written, a mask after a "
      "whole dim, a scalar fill, a broadcast row, int64 and bfloat16, and a mask keeping nothing")
def _():
    def forward(self, x, m, y, rows, m2, b, r):
        ones = torch.ones(1, 4, 4, dtype=torch.bool)
        position_ids = torch.full((1, 16), 0)
        pos_ids = torch.arange(16).view(1, 16) * 3 + 1
        position_ids[ones.view(1, -1)] = pos_ids[ones.view(1, -1)]
        a = x.clone()
        a[m] = y[m]
        c = rows.clone()
        c[m2] = (rows * 2)[m2]
        d = rows.clone()
        d[:, m2[:4]] = 0.5
        e = b.clone()
        e[m2] = r
        f = x.clone()
        f[torch.zeros_like(m)] = y[torch.zeros_like(m)]
        return position_ids, a, c, d, e, f
    m = randbool(3, 5)
    m2 = torch.tensor([True, False, True, True, False, False])
    return module(forward), [(randn(3, 5), m, randn(3, 5), randn(6, 4, 3), m2,
                              randn(6, 3, dtype=BF16), randn(3, dtype=BF16))], None


@case("v_masked_scatter", notes="masked_scatter as vision-language models merge image features "
      "into the text embeddings (mask = ids == image token, unsqueezed and expanded), a mask "
      "broadcast against self, a source with more elements than the mask has ones, bfloat16 and "
      "int64, no masked position, and masked_scatter_ in place (the training IR)")
def _():
    def forward(self, ids, embeds, feats, x, m, h, i):
        mask = (ids == 7).unsqueeze(-1).expand_as(embeds)
        merged = embeds.masked_scatter(mask, feats)
        y = x.clone()
        y.masked_scatter_(m, torch.arange(40.0).view(5, 8))
        return (merged, x.masked_scatter(m, torch.arange(30.0)), y,
                h.masked_scatter(h > 0, -h), i.masked_scatter(m, torch.arange(100, 130)),
                x.masked_scatter(torch.zeros_like(x, dtype=torch.bool), torch.ones(12)))
    ids = torch.tensor([[1, 7, 7, 3, 7, 2]])
    m = torch.tensor([[True], [False], [True]])
    return module(forward), [(ids, randn(1, 6, 4), randn(1, 3, 4), randn(3, 5), m,
                              randn(2, 3, dtype=BF16), randint(0, 9, 3, 5))], None


@case("v_masked_scatter_short_source", calls=2,
      expect_error=(1, "Number of elements of source < number of ones in mask"),
      notes="masked_scatter whose mask has more ones than source has elements on the second "
      "call: eager refuses it, and splice must too (the decomposition's index runs past the end)")
def _():
    def forward(self, x, m, s):
        return x.masked_scatter(m, s)
    x, s = randn(2, 3), randn(4)
    few = torch.tensor([[True, False, True], [False, False, True]])
    return module(forward), [(x, few, s), (x, torch.ones(2, 3, dtype=torch.bool), s)], None
