#!/usr/bin/env python3
"""Sweeps splice over every classification builder of torchvision.models.

Each builder of `torchvision.models.list_models(module=torchvision.models)` is built with seeded
random weights (nothing is downloaded), `num_classes` 10, in eval mode, at reduced width where
the architecture has a width knob: the builder's own `width_mult` (MobileNet V2/V3), the
family's class built from the builder's configuration scaled down (ViT, Swin, MaxViT, ConvNeXt,
EfficientNet B/V2, RegNet, DenseNet, VGG: same block kinds and layer counts, fewer channels),
and the builder as it is where the widths are fixed and the model is small (ResNet-18/34,
GoogLeNet, Inception v3, MNASNet, ShuffleNetV2, SqueezeNet). Every convolution is redrawn
N(0, 1/fan_in) and every batch-norm's running statistics and affine parameters drawn at random
(a batch norm at its initial mean 0 / variance 1 would test nothing). The input is a batch of 2
images at the smallest size the architecture accepts (its total stride, or the size its
fixed-size layers need: AlexNet 63, Inception v3 75, MaxViT and Swin a multiple of their
windows).

Each model is exported in the forms of sweep_hf.py (`default`: run_decompositions(), `keep`:
run_decompositions({}), `train`: the training IR as torch.export.export returns it) with
generate.py's machinery, written to a scratch folder, run through `splice run` (CPU) and its
logits compared with eager PyTorch's by sweep_common.py (float32 |d| <= 1e-5 + 1e-4 |x|). Cells:
pass / export: MSG / splice: MSG / mismatch: MSG. The table of the last sweep is in
docs/model-coverage.md.

  python3 tests/cases/sweep_torchvision.py --splice build/bin/splice [--only 'resnet*,vit_*']
      [--forms default,keep,train] [--keep-dir DIR] [--reuse] [--markdown OUT.md] [--list]
"""

import argparse
import fnmatch
import inspect
import os
import re
import sys
import tempfile
import time
from functools import partial

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defs.registry import Case  # noqa: E402
from sweep_common import conv_fan_in, markdown_table, report, sweep_one  # noqa: E402

CLASSES = 10
BATCH = 2


def tv():
    import torchvision
    return torchvision


def randomize(model):
    """Convolutions N(0, 1/fan_in) (conv_fan_in), and so matrices initialised to zeros (ViT's
    head, which would make every logit 0); batch norms get running means N(0, 0.1),
    variances U(0.5, 1.5), scales 1 + N(0, 0.1), shifts N(0, 0.1); ConvNeXt's layer scales
    (1e-6 at init, which would hide its blocks) 0.5 + N(0, 0.1)."""
    conv_fan_in(model)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape))
                m.bias.normal_(0.0, 0.1)
        for name, p in model.named_parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, p[0].numel() ** -0.5)
            if name.endswith("layer_scale"):
                p.copy_(0.5 + 0.1 * torch.randn(p.shape))
    return model.eval()


def images(size):
    return [(torch.randn(BATCH, 3, size, size),)]


# ---- how each builder is made small ------------------------------------------------------


def as_built(name, size, **kwargs):
    """The builder itself (widths fixed, the model small)."""
    def make():
        return tv().models.get_model(name, weights=None, num_classes=CLASSES, **kwargs), size
    return make


def mobilenet(name):
    return as_built(name, 32, width_mult=0.25)


def scaled(c, k=4, floor=8):
    return max(floor, int(c) // k)


def vit(name):
    def make():
        from torchvision.models.vision_transformer import VisionTransformer
        patch = int(re.search(r"_(\d+)$", name).group(1))
        layers = {"b": 2, "l": 3, "h": 4}[name.split("_")[1]]  # the variants' order of depth
        # Two patches a side: the class token and 4 patches.
        return VisionTransformer(image_size=2 * patch, patch_size=patch, num_layers=layers,
                                 num_heads=4, hidden_dim=32, mlp_dim=64,
                                 num_classes=CLASSES), 2 * patch
    return make


def builder_source(name):
    return inspect.getsource(tv().models.get_model_builder(name))


def swin(name):
    """The builder's depths, window and block kind; embed dim 16 and heads 1, 2, 4, 8. A
    64x64 image: 16x16 tokens in the first stage, more than a window, so windows are shifted
    (and padded for v1's 7x7 windows)."""
    def make():
        from torchvision.models import swin_transformer as st
        src = builder_source(name)
        depths = [int(d) for d in re.search(r"depths=\[([^\]]*)\]", src).group(1).split(",")]
        window = [int(w) for w in re.search(r"window_size=\[([^\]]*)\]", src).group(1).split(",")]
        v2 = "_v2_" in name
        extra = dict(block=st.SwinTransformerBlockV2, downsample_layer=st.PatchMergingV2) if v2 \
            else {}
        # The third stage is 6 or 18 blocks deep; a third of them keeps the variants apart.
        depths = [max(1, d // 3) if d > 2 else d for d in depths]
        return st.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=depths,
                                  num_heads=[1, 2, 4, 8], window_size=window,
                                  stochastic_depth_prob=0.0, num_classes=CLASSES, **extra), 64
    return make


def maxvit():
    """maxvit_t's structure (4 stages, partition attention) at 16-32 channels; a 64x64 image
    gives 16, 8, 4, 2 a side in the stages, so the partition is 2 (torchvision's is 7 at 224)."""
    def make():
        from torchvision.models.maxvit import MaxVit
        return MaxVit(input_size=(64, 64), stem_channels=16, partition_size=2,
                      block_channels=[16, 16, 32, 32], block_layers=[2, 1, 1, 1], head_dim=8,
                      stochastic_depth_prob=0.0, num_classes=CLASSES), 64
    return make


def convnext(name):
    """The builder's stage depths (27 blocks cut to 3) at widths 16, 32, 64, 128."""
    def make():
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt
        src = builder_source(name)
        depths = [int(d) for d in re.findall(r"CNBlockConfig\(\d+, (?:\d+|None), (\d+)\)", src)]
        widths = [16, 32, 64, 128]
        setting = [CNBlockConfig(widths[i], widths[i + 1] if i < 3 else None, min(d, 3))
                   for i, d in enumerate(depths)]
        return ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=CLASSES), 32
    return make


def efficientnet(name):
    """B0-B7: the builder's depth multiplier and a quarter of its width multiplier. V2: the
    builder's configuration with a quarter of the channels and at most 2 layers a stage."""
    def make():
        from torchvision.models import efficientnet as ef
        src = builder_source(name)
        norm = partial(torch.nn.BatchNorm2d, eps=1e-3)
        if "_v2_" in name:
            setting, last = ef._efficientnet_conf(name)
            for s in setting:
                s.input_channels = ef._make_divisible(s.input_channels / 4, 8)
                s.out_channels = ef._make_divisible(s.out_channels / 4, 8)
                s.num_layers = min(s.num_layers, 2)
            last = last // 4
        else:
            w = float(re.search(r"width_mult=([\d.]+)", src).group(1))
            d = float(re.search(r"depth_mult=([\d.]+)", src).group(1))
            setting, last = ef._efficientnet_conf(name, width_mult=w / 4, depth_mult=d)
        return ef.EfficientNet(setting, 0.2, stochastic_depth_prob=0.0, num_classes=CLASSES,
                               norm_layer=norm, last_channel=last), 32
    return make


def regnet(name):
    """The builder's depth, widths divided by 8 (the group width too, at least 8; the initial
    width a multiple of 8 as RegNet requires), its squeeze-excitation ratio."""
    def make():
        from torchvision.models.regnet import BlockParams, RegNet
        src = builder_source(name)
        p = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", src.split("from_init_params(")[1])}
        params = BlockParams.from_init_params(
            depth=int(p["depth"]), w_0=max(8, round(p["w_0"] / 64) * 8), w_a=p["w_a"] / 8, w_m=p["w_m"],
            group_width=max(8, int(p["group_width"]) // 8), se_ratio=p.get("se_ratio"))
        return RegNet(params, num_classes=CLASSES, stem_width=16), 32
    return make


def densenet(name):
    """The builder's block configuration; growth rate and initial features a quarter."""
    def make():
        from torchvision.models.densenet import DenseNet
        src = builder_source(name)
        growth, blocks, init = re.search(r"_densenet\((\d+), \(([\d, ]+)\), (\d+)", src).groups()
        return DenseNet(int(growth) // 4, tuple(int(b) for b in blocks.split(",")),
                        int(init) // 4, num_classes=CLASSES), 32
    return make


def small_classifier(features_out, hidden=64):
    """AlexNet's and VGG's classifier (dropout, linear, ReLU, dropout, linear, ReLU, linear) at
    a hidden width of 64 instead of 4096 (their 4096-wide layers are 90% of the weights)."""
    nn = torch.nn
    return nn.Sequential(nn.Dropout(0.5), nn.Linear(features_out, hidden), nn.ReLU(True),
                         nn.Dropout(0.5), nn.Linear(hidden, hidden), nn.ReLU(True),
                         nn.Linear(hidden, CLASSES))


def vgg(name):
    """The builder's layer configuration at an eighth of the channels; 32x32 (5 max pools to
    1x1, then the adaptive pool up to 7x7)."""
    def make():
        from torchvision.models import vgg as v
        cfg = re.search(r'_vgg\("(\w)", (True|False)', builder_source(name))
        layers = [c if c == "M" else c // 8 for c in v.cfgs[cfg.group(1)]]
        model = v.VGG(v.make_layers(layers, batch_norm=cfg.group(2) == "True"),
                      num_classes=CLASSES)
        model.classifier = small_classifier(64 * 7 * 7)
        return model, 32
    return make


def alexnet():
    """Its convolutions as built (63x63: the smallest image its 11x11 stride-4 stem and three
    3x3 stride-2 max pools leave a pixel of), the classifier at a hidden width of 64."""
    def make():
        model = tv().models.alexnet(weights=None, num_classes=CLASSES)
        model.classifier = small_classifier(256 * 6 * 6)
        return model, 63
    return make


def resnet(name):
    """ResNet-18/34 as built; the deeper ones with the builder's block, groups and width per
    group but at most 2 blocks a stage (ResNet-152's 36 blocks would be 60M weights)."""
    def make():
        from torchvision.models import resnet as r
        src = builder_source(name)
        m = re.search(r"_resnet\((\w+), \[([\d, ]+)\]", src)
        block = getattr(r, m.group(1))
        layers = [int(n) for n in m.group(2).split(",")]
        kw = {k: eval(v, {}) for k, v in  # "64 * 2": the builder's own arithmetic
              re.findall(r'_ovewrite_named_param\(kwargs, "(\w+)", ([\d *]+)\)', src)}
        if block is r.BasicBlock:
            return r.ResNet(block, layers, num_classes=CLASSES), 32
        return r.ResNet(block, [min(n, 2) for n in layers], num_classes=CLASSES, **kw), 32
    return make


def family_builder(name):
    """The function making the small model for the builder `name`, and its family."""
    if name.startswith("vit_"):
        return vit(name)
    if name.startswith("swin_"):
        return swin(name)
    if name == "maxvit_t":
        return maxvit()
    if name.startswith("convnext_"):
        return convnext(name)
    if name.startswith("efficientnet_"):
        return efficientnet(name)
    if name.startswith("regnet_"):
        return regnet(name)
    if name.startswith("densenet"):
        return densenet(name)
    if name.startswith("vgg"):
        return vgg(name)
    if name == "alexnet":
        return alexnet()
    if name.startswith(("resnet", "resnext", "wide_resnet")):
        return resnet(name)
    if name.startswith("mobilenet_"):
        return mobilenet(name)
    if name == "googlenet":
        # aux_logits off: the auxiliary heads only run in training.
        return as_built(name, 32, aux_logits=False, init_weights=True)
    if name == "inception_v3":
        return as_built(name, 75, aux_logits=False, init_weights=True)
    if name.startswith(("mnasnet", "shufflenet_v2", "squeezenet")):
        return as_built(name, 32)
    raise KeyError(f"no small configuration for {name}")


def case_for(name):
    make = family_builder(name)

    def fn():
        model, size = make()
        return randomize(model), images(size), None
    return Case("sweep_tv_" + name, fn, calls=1, notes=(make.__doc__ or "").strip())


def builders():
    return tv().models.list_models(module=tv().models)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splice", default="build/bin/splice", help="the splice binary")
    parser.add_argument("--only", default="", help="comma-separated builder globs")
    parser.add_argument("--forms", default="default,keep,train")
    parser.add_argument("--keep-dir", default="", help="write the programs here (kept)")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep-dir: run the programs already exported there")
    parser.add_argument("--markdown", default="", help="also write the table to this file")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    patterns = [p for p in args.only.split(",") if p]
    names = [n for n in builders() if not patterns or any(fnmatch.fnmatch(n, p) for p in patterns)]
    if args.list:
        print(" ".join(names))
        return 0
    forms = [f for f in args.forms.split(",") if f]
    splice = os.path.abspath(args.splice)
    scratch = args.keep_dir or tempfile.mkdtemp(prefix="splice_sweep_tv_")
    rows = []
    for name in names:
        t0 = time.time()
        try:
            c = case_for(name)
        except Exception as e:
            res = {f: f"build: {type(e).__name__}: {e}" for f in forms}
        else:
            res = sweep_one(name, c, forms, splice, scratch, args.reuse)
        rows.append((name, res))
        print(f"[torchvision] {name} ({time.time() - t0:.0f}s): " +
              "; ".join(f"{f}={res[f]}" for f in forms), flush=True)
    table = markdown_table("torchvision", rows, forms, label="builder")
    counts = ", ".join(f"{f} {sum(1 for _, r in rows if r[f] == 'pass')} of {len(rows)}"
                       for f in forms)
    table += ["", f"cells passing: {counts}", ""]
    report(table, args.markdown, scratch, args.keep_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
