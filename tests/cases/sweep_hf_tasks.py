#!/usr/bin/env python3
"""sweep_hf.py over transformers' task auto-mappings: every model type of
MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES, MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES,
MODEL_FOR_CTC_MAPPING_NAMES and MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES that sweep_hf.py does
not cover already, built generically from its config class (nothing downloaded; seeded random
weights) and run through splice in the three forms with sweep_hf.py's machinery.

Construction: the config class's defaults (AutoConfig.for_model), shrunk by shrink(): every
width (hidden sizes, intermediate sizes, embedding and convolution dims, head dims; ints and
lists of ints) divided by WIDTH_DIV, which keeps their ratios (heads still divide hidden sizes,
stage widths still double); layer counts to at most 2, stage depths to 1; vocabularies to VOCAB,
special token ids above it moved inside; the same in every sub-config (text, vision, audio).
Image and audio sizes stay the config's (or OVERRIDES'), so that window, patch and stride
arithmetic still holds. OVERRIDES holds the few per-type settings the generic shrink cannot
guess. Weights are redrawn N(0, 1/fan_in) (sweep_hf.conv_fan_in), norm scales and biases as
hf_models.randomize.

Inputs: image classifiers get pixel_values [2, C, S, S] (logits out); audio classifiers and CTC
models raw input_values [2, 4000] or input_features [2, T, F] / [2, F, T] (logits out);
image-text-to-text models pixel_values [1, C, S, S] and input_ids holding the image token as
many times as the vision tower yields features (counted with the model's get_image_features),
then 6 text tokens (logits out). A type whose model cannot be built or run in eager this way is
reported 'build: ...' (a gap of this harness, not of torch.export or splice).

  python3 tests/cases/sweep_hf_tasks.py --splice build/bin/splice [--only 'vit*'] \\
      [--forms default,keep,train] [--markdown OUT.md] [--list]
"""

import inspect
import math
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep_hf  # noqa: E402
from defs import hf_models as hf  # noqa: E402

WIDTH_DIV = 16
VOCAB = 512
MAX_LAYERS = 2
AUDIO_SAMPLES = 4000

MAPPINGS = ("IMAGE_CLASSIFICATION", "AUDIO_CLASSIFICATION", "CTC", "IMAGE_TEXT_TO_TEXT")

# Model types sweep_hf.py covers already (its base-model sweep of the same architecture).
COVERED = {"beit", "bit", "convnext", "convnextv2", "dinov2", "dinov2_with_registers",
           "efficientnet", "levit", "mobilenet_v1", "mobilenet_v2", "regnet", "resnet", "swin",
           "vit", "clip", "siglip", "whisper"}

# Per-type settings applied after shrink() (attribute paths, '.' into sub-configs).
OVERRIDES = {
    "audio-spectrogram-transformer": {"max_length": 64, "num_mel_bins": 32},
    "perceiver": {"image_size": 32, "num_latents": 16},
    "mobilevit": {"hidden_sizes": [16, 24, 32]},
    "pp_lcnet": {"scale": 0.25},
    "textnet": {"image_size": [64, 64]},
    "cvt": {"depth": (1, 2, 3)},  # its drop-path rates index stage s among depth[s] blocks
    # Vision-language models: image sizes whose patch grids the projector's pooling or pixel
    # shuffle divides (the shrunk defaults leave a grid it cannot).
    "gemma3": {"mm_tokens_per_image": 49},  # 14 x 14 patches pooled 2 x 2 to 7 x 7
    "smolvlm": {"vision_config.image_size": 256},  # 8 x 8 patches, shuffled 2 x 2
    "idefics3": {"vision_config.image_size": 256},
    "mistral3": {"vision_config.image_size": 224},  # 16 x 16 patches, merged 2 x 2
    "aya_vision": {"vision_config.image_size": 224},
    # Heads of 20 (the shrunk 80-wide tower's 16 heads would be 5 wide: its rotary halves them),
    # the merger's output as wide as the text model, and text heads of 128 (M-RoPE's sections,
    # 16 + 24 + 24, split half a head).
    "qwen2_vl": {"vision_config.num_heads": 4, "vision_config.hidden_size": 512,
                 "text_config.num_attention_heads": 4, "text_config.num_key_value_heads": 2},
    "qwen2_5_vl": {"vision_config.num_heads": 4, "vision_config.out_hidden_size": 512,
                   "text_config.num_attention_heads": 4, "text_config.num_key_value_heads": 2},
}
# Per-type input shapes the forward signature and config do not tell (batch 2).
INPUT_SHAPES = {"omniasr_ctc": (2, 1, AUDIO_SAMPLES),          # [B, 1, samples]
                "granite_speech5_ctc": (2, 32, 320),            # 4 stacked 80-bin frames
                "wav2vec2-bert": (2, 32, 160)}                  # 2 stacked 80-bin frames
# Per-type attributes shrink() leaves alone (tied to a structure it does not shrink).
KEEP = {"pp_lcnet": {"depths"}, "wav2vec2-bert": {"feature_projection_input_dim"}}

WIDTH = re.compile(r"(hidden|_dim|dim_|^dim$|dims|size|channels|width|ffn|d_model|d_latents|"
                   r"embd|inner|d_kv|d_ff)")
NOT_WIDTH = re.compile(r"(image|patch|kernel|stride|vocab|window|max_|num_|pad|layer|depth|"
                       r"ratio|chunk|batch|bucket|sample|rate|frame|seq|length|label|group|"
                       r"position|pool|spatial|merge|temporal|token|_id|index|range|eps|"
                       r"scale|factor|feature_size|mel|resolution|grid|crop|sliding|split|"
                       r"codevector|tdnn|xvector|input_size|vision_feature|select)")
LAYERS = ("num_hidden_layers", "num_layers", "encoder_layers", "decoder_layers", "n_layer",
          "n_layers", "num_encoder_layers", "num_decoder_layers", "num_self_attends_per_block",
          "depth")


def shrink_width(v):
    if v < 16:
        return v
    return v // WIDTH_DIV if v % WIDTH_DIV == 0 else max(1, round(v / WIDTH_DIV))


def is_config(v):
    return isinstance(v, hf.transformers().PretrainedConfig)


def shrink(config, token_map=None, keep=()):
    """Shrinks config in place (see the module's docstring); returns it."""
    token_map = {} if token_map is None else token_map
    layers = {}
    for key, v in list(vars(config).items()):
        if key.startswith("_") or isinstance(v, bool) or key in keep:
            continue
        if is_config(v):
            shrink(v, token_map, keep)
        elif key in LAYERS and isinstance(v, int) and v > MAX_LAYERS:
            layers[key] = (v, MAX_LAYERS)
            setattr(config, key, MAX_LAYERS)
        elif key in ("depths", "depth") and isinstance(v, (list, tuple)):
            setattr(config, key, type(v)(1 for _ in v))
        elif key == "vocab_size" and isinstance(v, int) and v > VOCAB:
            setattr(config, key, VOCAB)
        elif WIDTH.search(key) and not NOT_WIDTH.search(key):
            if isinstance(v, int):
                setattr(config, key, shrink_width(v))
            elif isinstance(v, (list, tuple)) and v and all(
                    isinstance(x, int) and not isinstance(x, bool) for x in v):
                setattr(config, key, type(v)(shrink_width(x) for x in v))
    # Heads that no longer divide the shrunk width: their gcd (KV heads then divide heads).
    width = next((getattr(config, k) for k in ("hidden_size", "embed_dim", "d_model")
                  if isinstance(getattr(config, k, None), int)), None)
    heads = getattr(config, "num_attention_heads", None)
    if width and isinstance(heads, int) and heads and width % heads:
        config.num_attention_heads = heads = math.gcd(width, heads)
    kv = getattr(config, "num_key_value_heads", None)
    if isinstance(heads, int) and isinstance(kv, int) and kv and heads % kv:
        config.num_key_value_heads = math.gcd(heads, kv)
    # Per-layer lists (layer_types, ...) follow the layer count.
    for old, new in layers.values():
        for key, v in list(vars(config).items()):
            if "layer" in key and isinstance(v, (list, tuple)) and len(v) == old:
                setattr(config, key, type(v)(v[:new]))
    # Special token ids past the shrunk vocabulary move inside it, distinct (a vision-language
    # config's image token past its text model's vocabulary too).
    vocab = getattr(config, "vocab_size", None)
    if vocab is None and is_config(getattr(config, "text_config", None)):
        vocab = getattr(config.text_config, "vocab_size", None)
    if isinstance(vocab, int) and vocab <= VOCAB:
        for key, v in list(vars(config).items()):
            if not re.search(r"(token_id|token_index|_token)$", key):
                continue
            if isinstance(v, int) and not isinstance(v, bool) and v >= vocab:
                setattr(config, key, token_map.setdefault(v, vocab - 1 - len(token_map)))
            elif isinstance(v, list) and all(isinstance(x, int) for x in v):
                setattr(config, key, [token_map.setdefault(x, vocab - 1 - len(token_map))
                                      if x >= vocab else x for x in v])
    return config


def set_path(config, path, value):
    *parents, last = path.split(".")
    for p in parents:
        config = getattr(config, p)
    setattr(config, last, value)


def config_for(model_type):
    tf = hf.transformers()
    config = shrink(tf.AutoConfig.for_model(model_type), keep=KEEP.get(model_type, ()))
    for path, value in OVERRIDES.get(model_type, {}).items():
        set_path(config, path, value)
    return config


def build_model(model_type, cls_name):
    tf = hf.transformers()
    cls = getattr(tf, cls_name)
    config = config_for(model_type)
    try:
        return sweep_hf.conv_fan_in(sweep_hf.build(config, cls))
    except Exception:
        # A model without SDPA (or an attention the config names) gets eager attention.
        config._attn_implementation = "eager"
        return sweep_hf.conv_fan_in(hf.randomize(cls(config)))


def image_size(config):
    vision = getattr(config, "vision_config", None) or config
    size = getattr(vision, "image_size", None) or getattr(config, "image_size", None) or 32
    if isinstance(size, dict):
        size = size.get("height", 32)
    if isinstance(size, (list, tuple)):
        size = size[0]
    return int(size), int(getattr(vision, "num_channels", 3) or 3)


class Logits(torch.nn.Module):
    """One keyword input (pixel_values, input_values, input_features) -> logits."""

    def __init__(self, model, key):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, x):
        out = self.model(**{self.key: x})
        return out.logits if hasattr(out, "logits") else out[0]


class ImageText(torch.nn.Module):
    """(input_ids, pixel_values) -> logits; `extra` holds the per-image inputs a model type
    needs beside them (image sizes, patch grids), constants of the exported program."""

    def __init__(self, model, extra=None):
        super().__init__()
        self.model = model
        self.extra = extra or {}

    def forward(self, input_ids, pixel_values):
        return self.model(input_ids=input_ids, pixel_values=pixel_values, **self.extra).logits


def image_classifier(model_type, cls_name):
    model = build_model(model_type, cls_name)
    params = inspect.signature(model.forward).parameters
    if "pixel_values" not in params:  # ImageGPT: colour-cluster ids
        return (Logits(model, "input_ids"),
                [(torch.randint(0, model.config.vocab_size - 1, (2, 16)),) for _ in range(2)],
                None)
    if "input_ids" in params:  # ShieldGemma 2: a prompt and an image
        return image_text(model_type, cls_name, model)
    if model_type == "siglip2":
        return siglip2(model)
    size, channels = image_size(model.config)
    return (Logits(model, "pixel_values"),
            [(torch.randn(2, channels, size, size),) for _ in range(2)], None)


def audio_model(model_type, cls_name):
    model = build_model(model_type, cls_name)
    config = model.config
    key = "input_values" if "input_values" in inspect.signature(model.forward).parameters \
        else "input_features"
    if model_type in INPUT_SHAPES:
        shape = INPUT_SHAPES[model_type]
    elif model_type == "audio-spectrogram-transformer":
        shape = (2, config.max_length, config.num_mel_bins)
    elif key == "input_values":
        shape = (2, AUDIO_SAMPLES)
    elif model_type == "whisper":
        shape = (2, config.num_mel_bins, 2 * config.max_source_positions)
    else:
        enc = getattr(config, "encoder_config", None) or config
        feat = (getattr(enc, "feature_size", None) or getattr(enc, "num_mel_bins", None)
                or getattr(enc, "input_feat_size", None) or 80)
        shape = (2, 32, feat)
    return Logits(model, key), [(torch.randn(*shape),) for _ in range(2)], None


def count_image_features(model, pixel_values, extra):
    inner = getattr(model, "model", model)
    feats = inner.get_image_features(pixel_values=pixel_values, **extra)
    if hasattr(feats, "pooler_output") and feats.pooler_output is not None:
        feats = feats.pooler_output
    if isinstance(feats, (list, tuple)):
        return sum(f.shape[-2] if f.dim() >= 2 else 1 for f in feats)
    return feats.shape[-2] * (feats.shape[0] if feats.dim() == 3 else 1)


def siglip2(model):
    """Siglip2 takes patches flattened (NaFlex): [B, patches, C*p*p], their mask and grid."""
    vision = model.config.vision_config
    n, dim = vision.num_patches, vision.num_channels * vision.patch_size ** 2
    side = int(n ** 0.5)

    class Patches(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, pixel_values):
            mask = torch.ones(pixel_values.shape[:2], dtype=torch.int64)
            shapes = torch.tensor([[side, side]] * pixel_values.shape[0])
            return self.model(pixel_values=pixel_values, pixel_attention_mask=mask,
                              spatial_shapes=shapes).logits

    return Patches(), [(torch.randn(2, n, dim),) for _ in range(2)], None


def qwen_vl_pixels(config, channels):
    """Qwen2-VL and its successors take an image as flattened patches [patches, C * t * p * p]
    with its grid (t, h, w) of patches; a 4 x 4 grid, merged 2 x 2 into 4 tokens."""
    vision = config.vision_config
    grid = (1, 4, 4)
    dim = channels * vision.temporal_patch_size * vision.patch_size ** 2
    extra = {"image_grid_thw": torch.tensor([grid])}
    return lambda: torch.randn(grid[0] * grid[1] * grid[2], dim), extra


def image_inputs(model_type, config, size, channels):
    """A maker of one image's pixel_values and the constant inputs that go with it."""
    if model_type in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl"):
        return qwen_vl_pixels(config, channels)
    if model_type in ("smolvlm", "idefics3", "idefics2"):  # [batch, images, C, H, W]
        return lambda: torch.randn(1, 1, channels, size, size), {}
    if model_type in ("mistral3", "llava_next", "llava_onevision", "aya_vision"):
        # A list, not a tensor: Pixtral's tower crops each image to its size in Python (a
        # tensor would make that size data-dependent for torch.export).
        return lambda: torch.randn(1, channels, size, size), {"image_sizes": [(size, size)]}
    return lambda: torch.randn(1, channels, size, size), {}


def image_text(model_type, cls_name, model=None):
    model = model or build_model(model_type, cls_name)
    config = model.config
    size, channels = image_size(config)
    token = getattr(config, "image_token_id", None)
    if token is None:
        token = getattr(config, "image_token_index", None)
    make_pixels, extra = image_inputs(model_type, config, size, channels)
    calls = []
    for _ in range(2):
        pixels = make_pixels()
        n = 0
        if token is not None:  # (BLIP and the like prefix the image by themselves)
            with torch.no_grad():
                n = count_image_features(model, pixels, extra)
        text = getattr(config, "text_config", config)
        ids = torch.randint(3, min(text.vocab_size, VOCAB) - 32, (1, n + 7))
        if n:
            ids[0, 1:n + 1] = token
        calls.append((ids, pixels))
    if "mm_token_type_ids" in inspect.signature(model.forward).parameters:
        extra = dict(extra, mm_token_type_ids=(calls[0][0] == token).int())  # Qwen-VL's M-RoPE
    return ImageText(model, extra), calls, None


def task_classes():
    from transformers.models.auto import modeling_auto as ma
    found = {}   # model type -> (mapping, class name)
    for mapping in MAPPINGS:
        for model_type, names in getattr(ma, f"MODEL_FOR_{mapping}_MAPPING_NAMES").items():
            if model_type in found or model_type in COVERED:
                continue
            name = names[0] if isinstance(names, (list, tuple)) else names
            found[model_type] = (mapping, name)
    return found


def register():
    makers = {"IMAGE_CLASSIFICATION": image_classifier, "AUDIO_CLASSIFICATION": audio_model,
              "CTC": audio_model, "IMAGE_TEXT_TO_TEXT": image_text}
    for model_type, (mapping, cls_name) in task_classes().items():
        name = model_type.replace("-", "_")
        sweep_hf.arch(name, f"{cls_name} ({mapping.lower()})", kind="task")(
            lambda t=model_type, c=cls_name, m=makers[mapping]: m(t, c))


if __name__ == "__main__":
    register()
    sys.exit(sweep_hf.main(kinds=("task",)))
