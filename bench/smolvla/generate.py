#!/usr/bin/env python3
"""Exports lerobot's SmolVLA policy (VLAFlowMatching.sample_actions) with random weights, offline.

SmolVLA is lerobot's 0.45B vision-language-action policy: a SmolVLM2 backbone (SigLIP-style
vision encoder, pixel-shuffle connector, the first 16 of 32 Llama text layers) whose per-layer
keys and values feed a narrower "action expert" (0.75x width), run 10 times by a flow-matching
loop that turns noise [B, 50, 32] into an action chunk. Issue 36 wants it as a splice workload.

What this writes, for each form (train = torch.export.export as returned, default = after
run_decompositions()), into <out>/<name>.<form>/ with <name> smolvla_reduced or smolvla_full,
following tests/cases/README.md:
  model.pt2                  the exported program (debug metadata dropped, as the cases do)
  call0.inputs.safetensors   the user inputs, keyed by the program's input names
  call0.outputs.safetensors  output.0: the action chunk [1, 50, 32] of the ORIGINAL module run
                             eagerly on CPU in float32 (never the exported program)
  call0.state.safetensors    the module's buffers (none are written by the program)
  case.json                  as the conformance cases, plus lerobot's version and the config

The exported function is sample_actions(images, img_masks, lang_tokens, lang_masks, state,
noise), what SmolVLAPolicy.select_action calls after its pre-processing, for one camera:
a wrapper passes [image] and [img_mask] as the one-element lists it takes, so the program's
inputs are image [1,3,S,S] (float, in [-1, 1] as prepare_images leaves it), img_mask [1] bool,
lang_tokens [1,48] int64, lang_masks [1,48] bool (40 tokens then 8 padding), state [1,32]
float (padded to max_state_dim), noise [1,50,32] float; 10 flow-matching steps; float32.

--layout bf16 casts the VLM to bfloat16 (lerobot's layout with real weights; the expert stays
float32); the case is named <name>_bf16.

Models (--size):
  full     the real architecture: SmolVLM2-500M-Video-Instruct's config written by hand (text
           960 hidden, 2560 MLP, 32 layers of which SmolVLA keeps 16, 15 heads / 5 KV heads of
           64, vocab 49280; vision 768 hidden, 3072 MLP, 12 layers, 12 heads, 512x512 images,
           patch 16; connector scale factor 4: 1024 patches -> 64 image tokens). About 0.45B
           parameters (1.8 GB in float32 per form): for the GPU host, never committed.
  tiny     every structure at tiny widths (text 32 hidden, GQA 4/2 heads of 8, 2 layers;
           vision 32 hidden, 1 layer, 32x32 images, patch 8, scale factor 2; vocab 256): the
           committed cases tests/cases/smolvla_tiny*, written with --calls 2 --deflate-json.
  reduced  the same widths, vocabulary and loop (10 steps) with 1 vision layer on 128x128
           images (8x8 patches; scale factor 4 divides 8, giving 4 image tokens, so the
           connector's pixel shuffle is a real permutation, not the 1-token reshape a 64x64
           image would give), 2 text layers and 2 expert layers (one self-attention layer,
           one cross-attention layer, as self_attn_every_n_layers=2 alternates them).

How it runs offline (lerobot 0.4.4 pins torch < 2.11 and transformers < 5; its SmolVLA files
need only torch and transformers):
  pip install --no-deps lerobot==0.4.4
  - lerobot.policies/__init__.py imports every policy and fails on transformers 5: a bare
    package module pointing at the same folder stands in for it, so only smolvla is imported;
  - the modules that pull in draccus, accelerate, datasets or robot drivers
    (configs.policies, optim.*, policies.pretrained, policies.utils, policies.rtc.*,
    utils.utils) are replaced by stubs holding the few names the SmolVLA files import
    (get_safe_dtype keeps lerobot's behaviour on CPU and CUDA: the dtype it is given);
  - smolvlm_with_expert's AutoConfig.from_pretrained and AutoProcessor.from_pretrained (two
    hub calls) return the hand-written config and the two special-token ids (used only with
    add_image_special_tokens, off by default).

Needs torch 2.11, transformers 5.x, safetensors, numpy, lerobot 0.4.4 (--no-deps); nothing
is downloaded. Seeded (weights and inputs), so a rerun gives the same inputs and outputs (the
.pt2 zip carries a random serialization id).

  python3 bench/smolvla/generate.py --out /tmp/smolvla                    # reduced, both forms
  python3 bench/smolvla/generate.py --size full --out /tmp/smolvla        # GPU host / big RAM
  python3 bench/smolvla/generate.py --size full --device cuda --out ...   # exported on CUDA
  splice run /tmp/smolvla/smolvla_reduced.train/model.pt2 \
      --inputs /tmp/smolvla/smolvla_reduced.train/call0.inputs.safetensors \
      --outputs /tmp/out.safetensors \
      --compare /tmp/smolvla/smolvla_reduced.train/call0.outputs.safetensors
"""

import argparse
import dataclasses
import importlib.util
import json
import os
import shutil
import sys
import types
from dataclasses import dataclass, field

import torch
from safetensors.torch import save_file
from torch import nn
from torch.export.graph_signature import InputKind, OutputKind

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 36  # issue 36
FORMS = ("train", "default")
LANG_TOKENS = 48
LANG_REAL = 40  # the rest is padding (lang_masks False)


def load_case_helpers():
    """tests/cases/generate.py's export_and_save (export, drop debug metadata, save) and
    as_saved, imported by path: this file is also called generate.py."""
    path = os.path.join(REPO, "tests", "cases", "generate.py")
    spec = importlib.util.spec_from_file_location("splice_cases_generate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- lerobot without its dependencies -------------------------------------------------------

def stub_module(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def install_lerobot_stubs():
    import lerobot
    root = os.path.dirname(lerobot.__file__)
    # A package module without policies/__init__.py's imports of every policy.
    stub_module("lerobot.policies", __path__=[os.path.join(root, "policies")])
    stub_module("lerobot.policies.rtc", __path__=[os.path.join(root, "policies", "rtc")])
    stub_module("lerobot.optim", __path__=[os.path.join(root, "optim")])

    @dataclass
    class PreTrainedConfig:
        # The base's fields that SmolVLA's code reads; the real one is a draccus ChoiceRegistry.
        device: str | None = None
        input_features: dict = field(default_factory=dict)
        output_features: dict = field(default_factory=dict)

        def __post_init__(self):
            pass

        @classmethod
        def register_subclass(cls, name):
            return lambda subclass: subclass

    class Placeholder:
        def __init__(self, *args, **kwargs):
            self.args, self.kwargs = args, kwargs

    def get_safe_dtype(dtype, device):
        # lerobot.utils.utils.get_safe_dtype: float64 is refused only on mps (and some xpu).
        device = device.type if isinstance(device, torch.device) else device
        return torch.float32 if device in ("mps", "xpu") and dtype == torch.float64 else dtype

    stub_module("lerobot.configs.policies", PreTrainedConfig=PreTrainedConfig)
    stub_module("lerobot.optim.optimizers", AdamWConfig=Placeholder)
    stub_module("lerobot.optim.schedulers", CosineDecayWithWarmupSchedulerConfig=Placeholder)
    stub_module("lerobot.policies.rtc.configuration_rtc", RTCConfig=Placeholder)
    stub_module("lerobot.policies.rtc.modeling_rtc", RTCProcessor=Placeholder)
    stub_module("lerobot.policies.pretrained", PreTrainedPolicy=nn.Module)
    stub_module("lerobot.policies.utils", populate_queues=None)
    stub_module("lerobot.utils.utils", get_safe_dtype=get_safe_dtype)


# --- SmolVLM2-500M-Video-Instruct's config, by hand ---------------------------------------

# Special tokens of SmolVLM2's tokenizer (<fake_token_around_image>, <global-img>, <image>).
FAKE_IMAGE_TOKEN_ID = 49189
GLOBAL_IMAGE_TOKEN_ID = 49152
IMAGE_TOKEN_ID = 49190
TINY_VOCAB = 256


def smolvlm_config(size):
    from transformers import LlamaConfig, SmolVLMConfig
    from transformers.models.smolvlm.configuration_smolvlm import SmolVLMVisionConfig
    if size == "tiny":
        # Every structure of the full model at widths that keep the committed cases small
        # (tests/cases, issue 36: all four under 2 MiB): GQA (4 heads over 2 KV heads), a
        # pixel shuffle that permutes (4x4 patches, scale factor 2: 4 image tokens), a
        # 256-token vocabulary whose last id is the image token.
        text = LlamaConfig(
            vocab_size=TINY_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=8, hidden_act="silu",
            rms_norm_eps=1e-5, max_position_embeddings=8192,
            rope_parameters={"rope_theta": 100000.0, "rope_type": "default"},
            pad_token_id=2, tie_word_embeddings=False)
        vision = SmolVLMVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
            num_channels=3, image_size=32, patch_size=8, hidden_act="gelu_pytorch_tanh",
            layer_norm_eps=1e-6)
        scale_factor, image_token_id = 2, TINY_VOCAB - 1
    else:
        reduced = size == "reduced"
        text = LlamaConfig(
            vocab_size=49280, hidden_size=960, intermediate_size=2560,
            num_hidden_layers=2 if reduced else 32,  # SmolVLA keeps the first num_vlm_layers
            num_attention_heads=15, num_key_value_heads=5, head_dim=64, hidden_act="silu",
            rms_norm_eps=1e-5, max_position_embeddings=8192,
            rope_parameters={"rope_theta": 100000.0, "rope_type": "default"},
            pad_token_id=2, tie_word_embeddings=False)
        vision = SmolVLMVisionConfig(
            hidden_size=768, intermediate_size=3072, num_hidden_layers=1 if reduced else 12,
            num_attention_heads=12, num_channels=3, image_size=128 if reduced else 512,
            patch_size=16, hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6)
        scale_factor, image_token_id = 4, IMAGE_TOKEN_ID
    config = SmolVLMConfig(text_config=text, vision_config=vision, scale_factor=scale_factor,
                           image_token_id=image_token_id, tie_word_embeddings=False)
    patches_per_side = vision.image_size // vision.patch_size
    if patches_per_side % config.scale_factor:
        raise ValueError(f"{patches_per_side} patches per side are not divisible by the "
                         f"connector's scale factor {config.scale_factor}")
    return config


def patch_hub_calls(smolvlm_with_expert, config):
    class OfflineAutoConfig:
        @staticmethod
        def from_pretrained(model_id, *args, **kwargs):
            return config

    class OfflineAutoProcessor:
        @staticmethod
        def from_pretrained(model_id, *args, **kwargs):
            tokenizer = types.SimpleNamespace(fake_image_token_id=FAKE_IMAGE_TOKEN_ID,
                                              global_image_token_id=GLOBAL_IMAGE_TOKEN_ID)
            return types.SimpleNamespace(tokenizer=tokenizer)

    smolvlm_with_expert.AutoConfig = OfflineAutoConfig
    smolvlm_with_expert.AutoProcessor = OfflineAutoProcessor


# --- the model and its inputs ---------------------------------------------------------------

class SampleActions(nn.Module):
    """VLAFlowMatching.sample_actions for one camera, with tensors for arguments."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, image, img_mask, lang_tokens, lang_masks, state, noise):
        return self.flow.sample_actions([image], [img_mask], lang_tokens, lang_masks, state,
                                        noise)


def build(size, layout):
    install_lerobot_stubs()
    from lerobot.policies.smolvla import smolvlm_with_expert
    from lerobot.policies.smolvla.configuration_smolvla import SmolVLAConfig
    from lerobot.policies.smolvla.modeling_smolvla import VLAFlowMatching
    vlm_config = smolvlm_config(size)
    patch_hub_calls(smolvlm_with_expert, vlm_config)
    # lerobot's defaults (num_vlm_layers 16, cross_attn, self_attn_every_n_layers 2, expert
    # width 0.75, chunk 50, 10 steps, max state/action dim 32), load_vlm_weights False.
    config = SmolVLAConfig(device="cpu")
    if size in ("reduced", "tiny"):
        config.num_vlm_layers = 2  # the expert follows (num_expert_layers -1: as many)
    torch.manual_seed(SEED)
    flow = VLAFlowMatching(config).to(torch.float32).eval()
    if layout == "bf16":
        # What lerobot runs with real weights: load_vlm_weights loads the VLM in bfloat16
        # (from_pretrained(torch_dtype="bfloat16")); the action expert and the projections
        # around it stay float32, and the code casts at each boundary.
        flow.vlm_with_expert.vlm.to(torch.bfloat16)
    return SampleActions(flow).eval(), config, vlm_config


def make_inputs(vlm_config, config, call=0):
    """Call 0's inputs; a later call draws its float inputs (image, state, noise) again and
    repeats call 0's tokens and masks, as tests/cases/README.md asks of the training-IR forms."""
    g = torch.Generator().manual_seed(SEED + 1)
    side = vlm_config.vision_config.image_size
    image = torch.rand(1, 3, side, side, generator=g) * 2 - 1  # prepare_images' [-1, 1]
    img_mask = torch.ones(1, dtype=torch.bool)
    vocab = vlm_config.text_config.vocab_size
    # Ordinary text tokens: below the special tokens (the tiny vocabulary's last id is its
    # image token).
    top = IMAGE_TOKEN_ID - 100 if vocab > IMAGE_TOKEN_ID else vocab - 1
    lang_tokens = torch.randint(0, top, (1, LANG_TOKENS), generator=g)
    lang_masks = torch.arange(LANG_TOKENS)[None, :] < LANG_REAL
    lang_tokens = torch.where(lang_masks, lang_tokens, 2)  # padding token id
    state = torch.zeros(1, config.max_state_dim)
    state[:, :6] = torch.randn(1, 6, generator=g)  # a 6-joint arm, padded to 32 (pad_vector)
    noise = torch.randn(1, config.chunk_size, config.max_action_dim, generator=g)
    if call:
        g = torch.Generator().manual_seed(SEED + 1 + call)
        image = torch.rand(image.shape, generator=g) * 2 - 1
        state = torch.zeros_like(state)
        state[:, :6] = torch.randn(1, 6, generator=g)
        noise = torch.randn(noise.shape, generator=g)
    return (image, img_mask, lang_tokens, lang_masks, state, noise)


def write_form(helpers, name, mod, calls, form, device, out_dir, info_extra,
               deflate_json=False):
    """calls: [(inputs, expected output)], one per recorded call; the first is exported."""
    inputs = calls[0][0]
    final_dir = os.path.join(out_dir, f"{name}.{form}" + ("" if device == "cpu" else f".{device}"))
    tmp_dir = final_dir + ".tmp"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(tmp_dir)
    # The big models keep torch.export.save's layout (what a user's archive is); the committed
    # tiny cases deflate their JSON as every case does (tests/cases/generate.py).
    ep, note = helpers.export_and_save(mod, inputs, None, device, form,
                                       os.path.join(tmp_dir, "model.pt2"), deflate_json)
    sig = ep.graph_signature
    input_names = [s.arg.name for s in sig.input_specs if s.kind == InputKind.USER_INPUT]
    num_outputs = sum(1 for s in sig.output_specs if s.kind == OutputKind.USER_OUTPUT)
    if len(input_names) != len(inputs) or num_outputs != 1:
        raise RuntimeError(f"program inputs {input_names}, {num_outputs} outputs")
    buffers = {n: helpers.as_saved(b) for n, b in mod.named_buffers()}
    for k, (call_inputs, expected) in enumerate(calls):
        save_file({n: helpers.as_saved(t) for n, t in zip(input_names, call_inputs)},
                  os.path.join(tmp_dir, f"call{k}.inputs.safetensors"))
        save_file({"output.0": expected}, os.path.join(tmp_dir, f"call{k}.outputs.safetensors"))
        save_file(buffers, os.path.join(tmp_dir, f"call{k}.state.safetensors"))
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    info = {
        "case": name, "calls": len(calls), "form": form, "export_device": device,
        "torch_version": torch.__version__, "dynamic": False, "inputs": input_names,
        "outputs": 1, "mutated_inputs": [], "buffers": list(buffers),
        "output_dtypes": {"output.0": "float32"},
        "tolerance_dtype_notes": "; ".join(n for n in (
            "float outputs with their dtype's tolerance; 10 chained flow-matching steps", note)
            if n),
        "graph_nodes": sum(1 for _ in ep.graph.nodes), "graph_ops": ops,
        **info_extra,
    }
    with open(os.path.join(tmp_dir, "case.json"), "w") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")
    shutil.rmtree(final_dir, ignore_errors=True)
    os.rename(tmp_dir, final_dir)
    print(f"wrote {final_dir}: inputs {input_names}, {info['graph_nodes']} nodes, "
          f"{len(ops)} distinct ops", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for <name>.<form>/ (not the repo)")
    parser.add_argument("--size", choices=("tiny", "reduced", "full"), default="reduced")
    parser.add_argument("--layout", choices=("fp32", "bf16"), default="fp32",
                        help="bf16: the VLM in bfloat16, the expert in float32 (lerobot's "
                             "layout with real weights)")
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated: train,default")
    parser.add_argument("--device", default="cpu", help="export device (eager reference: CPU)")
    parser.add_argument("--calls", type=int, default=1,
                        help="calls recorded (the committed cases: 2, as training-IR cases have)")
    parser.add_argument("--deflate-json", action="store_true",
                        help="deflate the archive's JSON members (the committed tiny cases)")
    args = parser.parse_args()
    forms = args.forms.split(",")
    for form in forms:
        if form not in FORMS:
            parser.error(f"unknown form {form!r}; forms are {', '.join(FORMS)}")

    name = f"smolvla_{args.size}" + ("_bf16" if args.layout == "bf16" else "")
    helpers = load_case_helpers()
    import lerobot
    import transformers
    mod, config, vlm_config = build(args.size, args.layout)
    calls = []
    for call in range(args.calls):
        inputs = make_inputs(vlm_config, config, call)
        with torch.no_grad():
            calls.append((inputs, helpers.as_saved(mod(*(t.clone() for t in inputs)))))
    expected = calls[0][1]
    params = sum(p.numel() for p in mod.parameters())
    print(f"{name}: {params / 1e6:.1f}M parameters, output "
          f"{list(expected.shape)}, |output| max {expected.abs().max().item():.4g}", flush=True)
    info_extra = {
        "lerobot_version": lerobot.__version__,
        "transformers_version": transformers.__version__,
        "parameters": params,
        "smolvla_config": {k: v for k, v in dataclasses.asdict(config).items()
                           if isinstance(v, (int, float, str, bool))},
        "vision": {k: getattr(vlm_config.vision_config, k) for k in (
            "hidden_size", "intermediate_size", "num_hidden_layers", "image_size",
            "patch_size")},
        "text_layers_kept": config.num_vlm_layers,
        "scale_factor": vlm_config.scale_factor,
        "layout": args.layout,
    }
    if args.layout == "bf16":
        # The action chunk is float32, computed from a bfloat16 VLM's keys and values: the
        # conformance suite compares it with bfloat16's tolerance (tests/cases/README.md).
        info_extra["compute_dtype"] = "bf16"
    os.makedirs(args.out, exist_ok=True)
    for form in forms:
        write_form(helpers, name, mod, calls, form, args.device,
                   args.out, info_extra, args.deflate_json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
