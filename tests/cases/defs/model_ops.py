"""Cases for the ops that transformers models beyond the decoder family bring (found by
tests/cases/sweep_hf.py): the convolutions of vision and audio front ends (convolution in the
default form, conv1d/conv2d/conv3d and their "same"/"valid" padding forms in keep and train),
the routing ops of mixture-of-experts layers (sort, sort.stable, argsort, topk, histc,
_grouped_mm),
max.other (XGLM), square (squared-ReLU MLPs), and the CNN ops (eval batch norm in every export
spelling, max_pool2d with and without indices, adaptive_avg_pool2d (any output size) and 1d, avg_pool2d, hardswish
and hardsigmoid; ResNet, EfficientNet, RegNet, MobileNet, Swin, LeViT; max_pool3d and
avg_pool3d, torchvision's s3d). splice decomposes all of
them but sort and topk, which have kernels (passes/decompose_model_ops.cc, decompose_math.cc).
Every case name starts with m_."""

import torch
import torch.nn.functional as F

from .registry import batch_dim, case, module, same, randbool, randn, randint


@case("m_conv", notes="conv1d as Whisper's front end (padding 1, stride 2), conv2d as a ViT "
      "patch embedding (stride = kernel), conv3d with mixed strides and padding, a grouped "
      "and dilated conv1d without bias")
def _():
    def forward(self, a, w1, b1, x, w2, b2, v, w3, wg):
        return (F.conv1d(a, w1, b1, stride=2, padding=1),
                F.conv2d(x, w2, b2, stride=4),
                F.conv3d(v, w3, None, stride=(1, 2, 1), padding=(1, 0, 1)),
                F.conv1d(a, wg, None, padding=2, dilation=2, groups=2))
    return module(forward), same(1, randn(2, 4, 9), randn(6, 4, 3), randn(6),
                                 randn(2, 3, 8, 8), randn(5, 3, 4, 4), randn(5),
                                 randn(1, 2, 3, 5, 4), randn(3, 2, 2, 3, 2),
                                 randn(4, 2, 3)), None


@case("m_conv_patches", notes="patch embeddings (stride = kernel) read as one view of whole "
      "patches: an input that leaves a remainder (cropped), grouped patches, a 1x1 convolution, "
      "and a padded patch conv")
def _():
    def forward(self, x, w, wg, w1, wp):
        return (F.conv2d(x, w, None, stride=4), F.conv2d(x, wg, None, stride=(2, 3), groups=3),
                F.conv2d(x, w1), F.conv2d(x, wp, None, stride=3, padding=1))
    return module(forward), same(1, randn(2, 3, 10, 9), randn(5, 3, 4, 4), randn(6, 1, 2, 3),
                                 randn(4, 3, 1, 1), randn(2, 3, 3, 3)), None


@case("m_conv_string_padding", notes="padding=\"same\" (an even kernel pads one more at the "
      "end) and \"valid\"")
def _():
    def forward(self, a, w1, x, w2):
        return (F.conv1d(a, w1, padding="same"), F.conv2d(x, w2, padding="same", dilation=2),
                F.conv1d(a, w1, padding="valid"))
    return module(forward), same(1, randn(2, 3, 7), randn(4, 3, 4), randn(1, 2, 6, 5),
                                 randn(3, 2, 3, 2)), None


@case("m_conv_dynamic_length", calls=2, notes="LFM2's short convolution: a depthwise causal "
      "conv1d (padding kernel - 1, groups = channels) over a dynamic sequence length, cut back "
      "to the length; and a strided conv1d over the dynamic length")
def _():
    def forward(self, x, w, w2):
        n = x.shape[-1]
        return (F.conv1d(x, w, padding=2, groups=4)[..., :n],
                F.conv1d(x, w2, stride=2, padding=1))
    length = torch.export.Dim("length", min=4, max=32)
    return (module(forward), [(randn(2, 4, 7), randn(4, 1, 3), randn(3, 4, 3)),
                              (randn(2, 4, 10), randn(4, 1, 3), randn(3, 4, 3))],
            {"x": {2: length}, "w": None, "w2": None})


@case("m_sort_topk", notes="sort along either dim, descending, with NaN (sorted above every "
      "number), stable on integers with ties; topk largest and smallest")
def _():
    def forward(self, x, ids):
        nan = torch.where(x > 1.0, float("nan"), x)
        s0, i0 = torch.sort(x)
        s1, i1 = torch.sort(nan, dim=0, descending=True)
        s2, i2 = torch.sort(ids, stable=True)
        s3, i3 = torch.sort(nan, dim=-1)
        t0, j0 = torch.topk(x, 3)
        t1, j1 = torch.topk(x, 2, dim=0, largest=False)
        return s0, i0, s1, i1, s2, i2, s3, i3, t0, j0, t1, j1
    return module(forward), same(1, randn(4, 6), randint(0, 4, 2, 12)), None


# ---- sort, argsort, topk: kernels on every backend (backends/cpu/sort.cc, cuda/sort.cu) -------


def _ties_nan_zeros(rows, cols, dtype=torch.float32):
    """Halves in [-1, 1] (so every row has ties), a NaN in two rows (two in one), -0.0 beside
    0.0, inf and -inf: every case of PyTorch's sort comparator."""
    x = torch.randint(-2, 3, (rows, cols)).float() * 0.5
    x[0, 1] = x[rows - 1, 2] = x[rows - 1, cols - 1] = float("nan")
    x[1, 2], x[1, cols - 2] = -0.0, 0.0
    x[0, cols - 1], x[rows - 1, 0] = float("inf"), float("-inf")
    return x.to(dtype)


@case("m_sort_stable_orders", calls=2, notes="sort.stable (ties keep the lower index first in "
      "both directions) on float32 with ties, NaNs (largest, tied with each other), -0.0 beside "
      "0.0 and infinities, along the last dim and dim 0, descending; float64, float16, bfloat16, "
      "int32, int16, int8, uint8 and bool; an unstable sort and argsort of distinct values "
      "(PyTorch leaves the order of ties unspecified there); argsort.stable and argsort "
      "(CompositeImplicit: kept by the training IR, decomposed to a sort's indices)")
def _():
    def forward(self, x, h, b, ints, small, flags, u):
        return (*torch.sort(x, stable=True),
                *torch.sort(x, dim=0, descending=True, stable=True),
                *torch.sort(x.double(), descending=True, stable=True),
                *torch.sort(h, dim=1, stable=True),
                *torch.sort(b, descending=True, stable=True),
                *torch.sort(ints, descending=True, stable=True),
                *torch.sort(ints.to(torch.int16), dim=0, stable=True),
                *torch.sort(small, stable=True),
                *torch.sort(small.to(torch.uint8), descending=True, stable=True),
                *torch.sort(flags, stable=True),
                *torch.sort(flags, dim=0, descending=True, stable=True),
                *torch.sort(u),
                *torch.sort(u, dim=0, descending=True),
                torch.argsort(x, descending=True, stable=True),
                torch.argsort(ints, dim=0, stable=True),
                torch.argsort(u),
                torch.argsort(u, dim=0, descending=True))

    def inputs():
        return (_ties_nan_zeros(4, 9), _ties_nan_zeros(3, 10, torch.float16),
                _ties_nan_zeros(3, 10, torch.bfloat16),
                randint(-4, 4, 3, 12, dtype=torch.int32), randint(-100, 100, 5, 20, dtype=torch.int8),
                randbool(4, 17), randn(3, 40))
    return module(forward), [inputs(), inputs()], None


def _topk_without_eager_ties(x, k, dim=-1, largest=True, sorted=True):
    """x itself, after checking that eager's topk gives the stable sort's first k: splice's CPU
    kernel repeats eager's tie order exactly (heap select; tests/unit/cpu/sort_test.cc), the
    CUDA one keeps ties in index order, so a conformance case has ties only where both agree."""
    got = torch.topk(x, k, dim=dim, largest=largest, sorted=sorted).indices
    want = torch.sort(x, dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
    if not torch.equal(got, want):
        raise ValueError(f"eager's topk orders ties of this input otherwise: {x}")
    return x


@case("m_topk_orders", calls=2, notes="topk largest and smallest, k = 1, k = n, NaN (the "
      "largest), ties below the top k (a block of 0.0 and -0.0; integers), along the last dim, "
      "dim 0 and a transposed view, float16 and bfloat16, sorted=False where eager's partial "
      "sort (k * 64 <= n) returns sorted values")
def _():
    def forward(self, x, d, ints, h, b, wide):
        return (*torch.topk(x, 3), *torch.topk(x, 2, largest=False), *torch.topk(x, 1),
                *torch.topk(d, d.shape[-1]), *torch.topk(d, 2, dim=0),
                *torch.topk(d, 1, dim=0, largest=False), *torch.topk(d.t(), 2),
                *torch.topk(ints, 2), *torch.topk(h, 4), *torch.topk(b, 2, largest=False),
                *torch.topk(wide, 3, sorted=False),
                *torch.topk(wide, 2, largest=False, sorted=False))

    def inputs():
        # Rows of distinct values with a block of zeros (and -0.0) tied in the middle, a NaN.
        x = torch.cat([torch.rand(4, 4) + 1, torch.zeros(4, 3), -1 - torch.rand(4, 2)], dim=1)
        x[1, 5] = -0.0
        x[2, 1] = float("nan")
        d = randn(5, 6)
        # Integers in pairs of ties, the largest two of each row distinct.
        ints = torch.stack([torch.randperm(12) for _ in range(3)]) // 2
        ints[:, :2] = torch.tensor([20, 21])
        h, b = randn(3, 8, dtype=torch.float16), randn(2, 9, dtype=torch.bfloat16)
        wide = randn(2, 256)
        for t, k, dim, largest, srt in [(x, 3, -1, True, True), (x, 2, -1, False, True),
                                        (x, 1, -1, True, True), (d, 6, -1, True, True),
                                        (d, 2, 0, True, True), (d, 1, 0, False, True),
                                        (d.t(), 2, -1, True, True), (ints, 2, -1, True, True),
                                        (h, 4, -1, True, True), (b, 2, -1, False, True),
                                        (wide, 3, -1, True, False), (wide, 2, -1, False, False)]:
            _topk_without_eager_ties(t, k, dim, largest, srt)
        return x, d, ints, h, b, wide
    return module(forward), [inputs(), inputs()], None


@case("m_topk_vocab", notes="topk over a Llama-3 vocabulary of logits ([1, 128256] float32, "
      "k = 50: O(n log k) on the CPU, a radix sort on the GPU; the O(n^2) decomposition it "
      "replaced could not run it), and the first 64 of a descending sort of them (top-p "
      "sampling's sort). Written in the default form only (generate.py --forms default): topk "
      "and sort are the same ops in every form, and the input is 512 KB")
def _():
    def forward(self, logits):
        values, indices = torch.topk(logits, 50)
        top_values, top_indices = torch.sort(logits, descending=True)
        return values, indices, top_values[:, :64], top_indices[:, :64]
    logits = randn(1, 128256) * 4
    _topk_without_eager_ties(logits, 50)
    _topk_without_eager_ties(logits, 64)  # the sort's first 64 are distinct too
    return module(forward), [(logits,)], None


@case("m_histc", notes="histc with elements below, inside, on the top edge and above the range, "
      "and of integer-valued floats (transformers' expert counts)")
def _():
    def forward(self, x, ids):
        edge = torch.cat([x.flatten(), x.new_tensor([1.0, -1.0])])
        return (torch.histc(edge, bins=5, min=-1, max=1),
                torch.histc(ids.float(), bins=4, min=0, max=3))
    return module(forward), same(1, randn(3, 7), randint(0, 4, 16)), None


@case("m_max_other", notes="torch.max(a, b) and torch.min(a, b) (aten.max.other and "
      "aten.min.other in the training IR; XGLM clamps its attention mask so), broadcast")
def _():
    def forward(self, x, y):
        return torch.max(x, y), torch.min(x, y[0])
    return module(forward), same(1, randn(3, 4), randn(1, 4)), None


@case("m_square", notes="torch.square (aten.square in keep and train: Nemotron's, "
      "Persimmon's and Arcee's squared-ReLU MLPs) on float, int32 (wrapping) and bool (squared "
      "to int64), and square_ in place on a slice of a user input")
def _():
    def forward(self, x, i, b, y):
        y[:, 1:].square_()
        return torch.square(torch.relu(x)), torch.square(i), torch.square(b), x.square()
    return module(forward), same(1, randn(3, 5), randint(-50000, 50000, 6, dtype=torch.int32),
                                 randbool(4), randn(2, 4)), None


@case("m_grouped_mm", notes="aten._grouped_mm (transformers' MoE experts with bf16 weights; "
      "export takes bf16 only): 10 rows over 4 experts with offsets [3, 3, 7, 10] (expert 1 "
      "empty), and the 3-d x 3-d form without offsets")
def _():
    def forward(self, x, w, offs, a, b):
        return torch._grouped_mm(x, w, offs=offs), torch._grouped_mm(a, b)
    # eager's CPU kernel wants 16-byte strides: inner sizes of 8.
    offs = torch.tensor([3, 3, 7, 10], dtype=torch.int32)
    bf16 = torch.bfloat16
    return module(forward), same(1, randn(10, 8, dtype=bf16), randn(4, 8, 8, dtype=bf16), offs,
                                 randn(3, 4, 8, dtype=bf16), randn(3, 8, 8, dtype=bf16)), None


# ---- CNNs: batch norm, max pooling ------------------------------------------------------


def _with_stats(bn):
    """A BatchNorm with running statistics and affine parameters that are not the defaults."""
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(bn.num_features))
        bn.running_var.copy_(torch.rand(bn.num_features) * 2 + 0.5)
        if bn.affine:
            bn.weight.copy_(torch.randn(bn.num_features))
            bn.bias.copy_(torch.randn(bn.num_features))
    return bn


class _ResNetStem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn = _with_stats(torch.nn.BatchNorm2d(8))
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = _with_stats(torch.nn.BatchNorm2d(8))

    def forward(self, x):
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        z = torch.relu(self.bn2(self.conv2(y)) + y)
        return z, F.adaptive_avg_pool2d(z, 1), F.adaptive_avg_pool2d(z, (2, 4))


@case("m_resnet_block", calls=2, notes="a ResNet stem and basic block in eval mode: conv, "
      "batch norm with running stats, ReLU, max pool 3x3 stride 2 padding 1 (its indices "
      "unused), a residual add; the classifier head's adaptive average pool to 1x1 and to a "
      "size dividing the input's; dynamic batch")
def _():
    b = batch_dim()
    return (_ResNetStem(), [(randn(2, 3, 16, 16),), (randn(3, 3, 16, 16),)],
            {"x": {0: b}})


class _BatchNorms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.plain = _with_stats(torch.nn.BatchNorm2d(4, affine=False))
        self.one_d = _with_stats(torch.nn.BatchNorm1d(4, eps=1e-3))
        self.three_d = _with_stats(torch.nn.BatchNorm3d(4))
        self.batch_stats = torch.nn.BatchNorm2d(4, track_running_stats=False)

    def forward(self, x, v, s, t):
        return (self.plain(x), self.one_d(v), self.one_d(s), self.three_d(t),
                self.batch_stats(x))


@case("m_batch_norm", calls=2, notes="eval batch norm without affine parameters, 1-d over "
      "[N, C] and [N, C, L] with eps 1e-3, 3-d; a BatchNorm without running stats normalises "
      "by the batch's statistics (_native_batch_norm_legit.no_stats)")
def _():
    return (_BatchNorms(), [(randn(2, 4, 3, 5), randn(3, 4), randn(2, 4, 6), randn(2, 4, 2, 3, 2))
                            for _ in range(2)], None)


class _HalfBatchNorms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mixed = _with_stats(torch.nn.BatchNorm2d(4))
        self.fp16 = _with_stats(torch.nn.BatchNorm2d(4)).to(torch.float16)
        self.bf16 = _with_stats(torch.nn.BatchNorm2d(4)).to(torch.bfloat16)

    def forward(self, h, b):
        return self.mixed(h), self.mixed(b), self.fp16(h), self.bf16(b)


@case("m_batch_norm_half", calls=2, notes="float16 and bfloat16 inputs through a float32 "
      "BatchNorm (statistics and parameters in float32, computed in float32 and rounded once) "
      "and through BatchNorms converted to float16 and bfloat16")
def _():
    return (_HalfBatchNorms(), [(randn(2, 4, 3, 3, dtype=torch.float16),
                                 randn(2, 4, 3, 3, dtype=torch.bfloat16)) for _ in range(2)],
            None)


@case("m_max_pool_indices", calls=2, notes="max_pool2d with its indices read: ceil mode (a "
      "last window hanging over the edge), padding with dilation, stride other than the "
      "kernel, a 3-d input, int64 values with ties (the first maximum), windows of -inf beside "
      "the padding (a real element, never the padding), NaN (the last NaN's position)")
def _():
    def forward(self, x, c, n):
        a, ia = F.max_pool2d(x, 2, ceil_mode=True, return_indices=True)
        b, ib = F.max_pool2d(x, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2),
                             return_indices=True)
        d, id_ = F.max_pool2d(x[0], 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
        e, ie = F.max_pool2d(c, 2, stride=1, return_indices=True)
        f, if_ = F.max_pool2d(n, 3, stride=2, padding=1, return_indices=True)
        return a, ia, b, ib, d, id_, e, ie, f, if_

    def inputs():
        n = torch.randn(1, 2, 6, 6)
        n[0, 0, :2, :2] = float("-inf")
        n[0, 1, 1, 1] = float("nan")
        n[0, 1, 2, 2] = float("nan")
        n[0, 1, 4, 5] = float("nan")
        return randn(2, 3, 7, 9), randint(0, 3, 2, 2, 4, 5), n
    return module(forward), [inputs(), inputs()], None


@case("m_hard_activations", calls=2, notes="hardswish and hardsigmoid (MobileNetV3, LeViT) on "
      "float32 around their kinks (-3, 0, 3) and in bfloat16, F.hardswish(inplace=True) on a "
      "slice of a user input (hardswish_)")
def _():
    def forward(self, x, h, y):
        F.hardswish(y[:, :2], inplace=True)
        return F.hardswish(x), F.hardsigmoid(x), F.hardswish(h), F.hardsigmoid(h)
    kinks = torch.tensor([-4.0, -3.0, -2.5, 0.0, 1.5, 3.0, 3.5, float("nan")])
    return (module(forward),
            [(torch.cat([kinks, randn(8) * 4]), randn(3, 5, dtype=torch.bfloat16) * 4,
              randn(2, 4)),
             (randn(16) * 4, randn(3, 5, dtype=torch.bfloat16) * 4, randn(2, 4))], None)


@case("m_adaptive_avg_pool1d", notes="adaptive_avg_pool1d to 1 (Swin's head) and to a length "
      "dividing the input's, on [N, C, L] and [C, L]")
def _():
    def forward(self, x, y):
        return F.adaptive_avg_pool1d(x, 1), F.adaptive_avg_pool1d(x, 3), F.adaptive_avg_pool1d(y, 2)
    return module(forward), same(1, randn(2, 4, 6), randn(3, 8)), None


@case("m_adaptive_avg_pool2d_any", notes="adaptive_avg_pool2d to sizes not dividing the "
      "input's (torchvision's VGG and AlexNet pool a small image's 1x1 features up to 7x7 and "
      "6x6): larger than the input, overlapping windows of varying size, one dim dividing, "
      "[C, H, W]")
def _():
    def forward(self, x, y, z):
        return (F.adaptive_avg_pool2d(x, 7), F.adaptive_avg_pool2d(x, (6, 2)),
                F.adaptive_avg_pool2d(y, (2, 3)), F.adaptive_avg_pool2d(y, (3, 2)),
                F.adaptive_avg_pool2d(z, (4, 9)))
    return module(forward), same(1, randn(2, 3, 1, 1), randn(2, 3, 5, 4), randn(3, 7, 9)), None


@case("m_adaptive_avg_pool3d", notes="adaptive_avg_pool3d as video classifiers' heads use it "
      "(torchvision's r3d_18, mc3_18, r2plus1d_18: the global [1, 1, 1] pool), to sizes dividing "
      "the input's and not, larger than it, one int for all three dims, [C, D, H, W], bfloat16")
def _():
    def forward(self, x, z, h):
        return (F.adaptive_avg_pool3d(x, 1), F.adaptive_avg_pool3d(x, (2, 3, 2)),
                F.adaptive_avg_pool3d(x, (3, 2, 5)), F.adaptive_avg_pool3d(z, 2),
                F.adaptive_avg_pool3d(h, (1, 1, 1)))
    return module(forward), same(1, randn(2, 3, 4, 6, 4), randn(3, 5, 3, 4),
                                 randn(1, 2, 3, 4, 5, dtype=torch.bfloat16)), None


@case("m_pool3d", notes="nn.MaxPool3d and nn.AvgPool3d as torchvision's s3d uses them (the stem's "
      "(1, 3, 3) window, the branches' 3x3x3 stride 1, the head's stride-1 average) and beyond: "
      "padding, ceil mode with a last window past the padding, dilation, stride omitted, "
      "[C, T, H, W], NaN (max propagates it), int64 and bfloat16 max; average with padding "
      "counted and not, ceil mode, divisor_override (no float16 or bfloat16 average: eager's CPU "
      "avg_pool3d has no kernel for them)")
def _():
    pools = torch.nn.ModuleList([
        torch.nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True),
        torch.nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
        torch.nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), dilation=(2, 2, 1),
                           ceil_mode=True),
        torch.nn.MaxPool3d(2),
        torch.nn.MaxPool3d(3, stride=1, padding=1),
        torch.nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        torch.nn.AvgPool3d((2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 0), ceil_mode=True),
        torch.nn.AvgPool3d(2, divisor_override=3),
        torch.nn.AvgPool3d((2, 3, 3), stride=1),
        torch.nn.AvgPool3d(3, stride=2, padding=1, divisor_override=5, ceil_mode=True),
    ])

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pools = pools

        def forward(self, x, n, v, h, i):
            p = self.pools
            return (p[0](x), p[1](x), p[2](x), p[0](n), p[3](v), p[4](h), p[4](i), p[3](i),
                    p[5](x), p[6](x), p[7](x), p[8](x), p[5](v), p[9](x), p[6](v))

    n = randn(2, 3, 5, 7, 6)
    n[0, 1, 2, 3, 4] = float("nan")
    n[1, 2, 0, 0, 0] = float("nan")
    return (M(), same(1, randn(2, 3, 5, 7, 6), n, randn(3, 4, 6, 5),
                      randn(1, 2, 4, 6, 6, dtype=torch.bfloat16), randint(-50, 50, 1, 2, 4, 5, 5)),
            None)


@case("m_unfold_fold", notes="F.unfold / F.fold (aten.im2col / col2im in the training IR, "
      "MobileViTV2's patches): padding, dilation, non-square kernel and stride, overlapping "
      "blocks summed by fold, blocks that do not reach the edge, unbatched [C, H, W], bfloat16")
def _():
    def forward(self, x, c, h):
        u = F.unfold(x, 2, stride=2)
        o = F.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
        return (u, o,
                F.fold(u, (6, 6), 2, stride=2),
                F.fold(o, (6, 6), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1)),
                F.fold(F.unfold(x, 3, padding=1), (6, 6), 3, padding=1),
                F.unfold(c, 2, stride=3),
                F.fold(F.unfold(c, 2), (5, 7), 2),
                F.fold(F.unfold(h, 2, padding=1), (4, 5), 2, padding=1))
    return (module(forward),
            same(1, randn(2, 3, 6, 6), randn(3, 5, 7), randn(1, 2, 4, 5, dtype=torch.bfloat16)),
            None)


@case("m_speech_ops", notes="the ops of transformers' speech encoders (wav2vec2, SEW, "
      "conformers): avg_pool1d (padding, ceil mode, count_include_pad=False, [C, L]), glu over "
      "the last and a middle dim, torch._weight_norm over dim 0, the last dim, a middle dim and "
      "all (-1), broadcast_to, Tensor.unfold (overlapping and strided windows, a middle dim)")
def _():
    def forward(self, x, c, v, g0, g2, g1, s):
        return (F.avg_pool1d(x, 2),
                F.avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                F.avg_pool1d(c, 2, stride=1),
                F.glu(x), F.glu(v, dim=1),
                torch._weight_norm(v, g0, 0), torch._weight_norm(v, g2, 2),
                torch._weight_norm(v, g1, 1), torch._weight_norm(v, s, -1),
                torch.broadcast_to(c[:, :1], (3, 5)),
                x.unfold(2, 3, 1), x.unfold(2, 2, 3), v.unfold(1, 2, 2))
    return (module(forward),
            same(1, randn(2, 3, 8), randn(3, 5), randn(4, 6, 4), randn(4, 1, 1), randn(1, 1, 4),
                 randn(1, 6, 1), randn(())),
            None)


@case("m_avg_pool2d", notes="avg_pool2d (EfficientNet's training IR): padding counted and not, "
      "ceil mode with a last window past the padding (counted only up to it), divisor_override, "
      "a non-square kernel and stride on [C, H, W], bfloat16, one window covering the input, "
      "windows tiling it, a kernel far larger than the input (EfficientNet's)")
def _():
    def forward(self, x, c, h):
        return (F.avg_pool2d(x, 3, stride=2, padding=1),
                F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
                F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                F.avg_pool2d(x, 2, divisor_override=3),
                F.avg_pool2d(c, (2, 3), stride=(1, 2)),
                F.avg_pool2d(h, 2, stride=1, padding=1),
                F.avg_pool2d(x, 8, ceil_mode=True),
                F.avg_pool2d(x, 4),
                F.avg_pool2d(c, 320, ceil_mode=True))
    return (module(forward),
            same(1, randn(2, 3, 8, 8), randn(3, 5, 7), randn(1, 2, 4, 5, dtype=torch.bfloat16)),
            None)


@case("m_instance_norm", notes="nn.InstanceNorm2d/1d as RAFT's encoders use it (the input's "
      "statistics, affine and not), InstanceNorm3d, track_running_stats in eval (the running "
      "statistics), float16")
def _():
    torch.manual_seed(3)
    norms = torch.nn.ModuleList([torch.nn.InstanceNorm2d(3), torch.nn.InstanceNorm2d(3, affine=True),
                                 torch.nn.InstanceNorm1d(4, eps=1e-3), torch.nn.InstanceNorm3d(2),
                                 torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)])
    with torch.no_grad():
        norms[1].weight.normal_(1.0, 0.2)
        norms[1].bias.normal_(0.0, 0.2)
        norms[4].running_mean.normal_(0.0, 0.3)
        norms[4].running_var.uniform_(0.5, 1.5)
    norms.eval()

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norms = norms

        def forward(self, x, s, v, h):
            return (self.norms[0](x), self.norms[1](x), self.norms[2](s), self.norms[3](v),
                    self.norms[4](x), torch.nn.functional.instance_norm(h))
    return M(), same(1, randn(2, 3, 5, 4), randn(2, 4, 7), randn(1, 2, 3, 4, 5),
                     randn(2, 3, 6, 6, dtype=torch.float16)), None
