#!/usr/bin/env python3
"""Sweeps splice over many transformers architectures and tabulates what breaks.

Each architecture below is built from a tiny config with seeded random weights (nothing is
downloaded; the helpers and sizes of defs/hf_models.py: hidden 32, 4 heads, 2 KV heads, MLP 64,
vocab 128, 1 layer), exported in each form with generate.py's own machinery (default, keep,
train: the same programs, inputs and PyTorch-eager reference outputs a conformance case holds),
written to a scratch folder, and run call by call through the splice CLI (`splice run ...
--state-in/--state-out`, buffers chained from call to call). Every output, mutated input and
buffer is compared with eager PyTorch within the conformance suite's CPU tolerance
(tests/conformance/compare.cc: float32 |d| <= 1e-5 + 1e-4 |x|).

Each architecture x form cell is one of:
  pass              splice's results match PyTorch's
  export: MSG       torch.export (or run_decompositions) itself fails; nothing to run
  splice: MSG       splice exits non-zero (first line of its message)
  mismatch: MSG     splice runs but a result differs (key, worst error)

The architectures here are the ones tests/cases/defs/hf_models.py does not cover; those that
revealed a splice bug have a regression case (hf_more.py). The table of the last sweep is in
docs/model-coverage.md.

  python3 tests/cases/sweep_hf.py --splice build/bin/splice [--only 'qwen3,gemma*']
      [--forms default,keep,train] [--keep-dir DIR] [--markdown OUT.md]
"""

import argparse
import fnmatch
import os
import subprocess
import sys
import tempfile
import time
import traceback

import torch
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402
from defs import hf_models as hf  # noqa: E402
from defs.registry import Case  # noqa: E402

H, NH, KV, MLP, V = hf.HIDDEN, hf.HEADS, hf.KV_HEADS, hf.MLP, hf.VOCAB
ARCHS = {}


def arch(name, notes=""):
    def register(fn):
        ARCHS[name] = Case("sweep_" + name, fn, calls=2, notes=notes)
        return fn
    return register


def common(**extra):
    c = dict(hidden_size=H, intermediate_size=MLP, num_hidden_layers=1, num_attention_heads=NH,
             num_key_value_heads=KV, max_position_embeddings=64, **hf.token_ids())
    c.update(extra)
    return c


def build(config, cls):
    """hf_models.build (SDPA attention, weights redrawn); a model without SDPA support
    (Gemma2's soft-capping, ...) gets transformers' eager attention instead."""
    try:
        return hf.build(config, cls)
    except ValueError as e:
        if "scaled_dot_product_attention" not in str(e):
            raise
    config._attn_implementation = "eager"
    return hf.randomize(cls(config))


def causal_lm(config, cls, batch=2):
    return (hf.CausalLMPrefill(build(config, cls)), hf.prefill_inputs(batch),
            hf.seq_dims(("input_ids", "attention_mask")))


class Encoder(torch.nn.Module):
    """input_ids + attention_mask -> last_hidden_state."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class Seq2Seq(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          decoder_input_ids=decoder_input_ids, use_cache=False).logits


class Pixels(torch.nn.Module):
    """pixel_values (or input_features) -> last_hidden_state."""

    def __init__(self, model, key="pixel_values"):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, x):
        return self.model(**{self.key: x}).last_hidden_state


def encoder(config, cls):
    return (Encoder(build(config, cls)), hf.prefill_inputs(),
            hf.seq_dims(("input_ids", "attention_mask")))


def tf():
    return hf.transformers()

# ---- decoders ----------------------------------------------------------------------------


@arch("qwen3")
def _():
    return causal_lm(tf().Qwen3Config(head_dim=8, **common()), tf().Qwen3ForCausalLM)


@arch("gemma2", "logit soft-capping, sliding window")
def _():
    return causal_lm(tf().Gemma2Config(head_dim=8, sliding_window=4, query_pre_attn_scalar=8,
                                       attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                                       **common()), tf().Gemma2ForCausalLM)


@arch("gemma3_text")
def _():
    return causal_lm(tf().Gemma3TextConfig(head_dim=8, sliding_window=4, query_pre_attn_scalar=8,
                                           **common()), tf().Gemma3ForCausalLM)


@arch("phi", "phi-2: partial rotary, parallel block")
def _():
    return causal_lm(tf().PhiConfig(partial_rotary_factor=0.5, **common()), tf().PhiForCausalLM)


@arch("stablelm")
def _():
    return causal_lm(tf().StableLmConfig(partial_rotary_factor=0.25, **common()),
                     tf().StableLmForCausalLM)


@arch("gpt_neox")
def _():
    c = common(rotary_pct=0.25)
    c.pop("num_key_value_heads")
    return causal_lm(tf().GPTNeoXConfig(**c), tf().GPTNeoXForCausalLM)


@arch("gptj")
def _():
    return causal_lm(tf().GPTJConfig(n_embd=H, n_layer=1, n_head=NH, n_inner=MLP, rotary_dim=4,
                                     n_positions=64, **hf.token_ids()), tf().GPTJForCausalLM)


@arch("codegen")
def _():
    return causal_lm(tf().CodeGenConfig(n_embd=H, n_layer=1, n_head=NH, n_inner=MLP,
                                        rotary_dim=4, n_positions=64, n_ctx=64, **hf.token_ids()),
                     tf().CodeGenForCausalLM)


@arch("falcon")
def _():
    return causal_lm(tf().FalconConfig(hidden_size=H, num_hidden_layers=1, num_attention_heads=NH,
                                       **hf.token_ids()), tf().FalconForCausalLM)


@arch("falcon_alibi")
def _():
    return causal_lm(tf().FalconConfig(hidden_size=H, num_hidden_layers=1, num_attention_heads=NH,
                                       alibi=True, **hf.token_ids()), tf().FalconForCausalLM)


@arch("opt")
def _():
    return causal_lm(tf().OPTConfig(hidden_size=H, num_hidden_layers=1, ffn_dim=MLP,
                                    num_attention_heads=NH, word_embed_proj_dim=H,
                                    max_position_embeddings=64, **hf.token_ids()),
                     tf().OPTForCausalLM)


@arch("bloom", "alibi")
def _():
    return causal_lm(tf().BloomConfig(hidden_size=H, n_layer=1, n_head=NH, **hf.token_ids()),
                     tf().BloomForCausalLM)


@arch("gpt_neo")
def _():
    return causal_lm(tf().GPTNeoConfig(hidden_size=H, num_layers=1, num_heads=NH,
                                       attention_types=[[["global"], 1]], intermediate_size=MLP,
                                       max_position_embeddings=64, **hf.token_ids()),
                     tf().GPTNeoForCausalLM)


@arch("gpt_bigcode", "multi-query")
def _():
    return causal_lm(tf().GPTBigCodeConfig(n_embd=H, n_layer=1, n_head=NH, n_inner=MLP,
                                           n_positions=64, multi_query=True, **hf.token_ids()),
                     tf().GPTBigCodeForCausalLM)


@arch("starcoder2")
def _():
    return causal_lm(tf().Starcoder2Config(**common()), tf().Starcoder2ForCausalLM)


@arch("mixtral", "MoE, 4 experts top-2")
def _():
    return causal_lm(tf().MixtralConfig(num_local_experts=4, num_experts_per_tok=2, **common()),
                     tf().MixtralForCausalLM)


@arch("qwen2_moe", "MoE with a shared expert")
def _():
    return causal_lm(tf().Qwen2MoeConfig(num_experts=4, num_experts_per_tok=2,
                                         moe_intermediate_size=32,
                                         shared_expert_intermediate_size=32, **common()),
                     tf().Qwen2MoeForCausalLM)


@arch("qwen3_moe")
def _():
    return causal_lm(tf().Qwen3MoeConfig(head_dim=8, num_experts=4, num_experts_per_tok=2,
                                         moe_intermediate_size=32, **common()),
                     tf().Qwen3MoeForCausalLM)


@arch("olmoe")
def _():
    return causal_lm(tf().OlmoeConfig(num_experts=4, num_experts_per_tok=2, **common()),
                     tf().OlmoeForCausalLM)


@arch("olmo", "non-parametric layer norm, clip_qkv")
def _():
    return causal_lm(tf().OlmoConfig(clip_qkv=2.0, **common()), tf().OlmoForCausalLM)


@arch("olmo2")
def _():
    return causal_lm(tf().Olmo2Config(**common()), tf().Olmo2ForCausalLM)


@arch("cohere", "parallel block, interleaved rotary, logit scale")
def _():
    return causal_lm(tf().CohereConfig(**common()), tf().CohereForCausalLM)


@arch("granite", "multipliers")
def _():
    return causal_lm(tf().GraniteConfig(embedding_multiplier=2.0, residual_multiplier=0.5,
                                        attention_multiplier=0.2, logits_scaling=4.0, **common()),
                     tf().GraniteForCausalLM)


@arch("smollm", "Llama variant: tied embeddings, 1 KV head")
def _():
    c = common(tie_word_embeddings=True)
    c["num_key_value_heads"] = 1
    return causal_lm(tf().LlamaConfig(**c), tf().LlamaForCausalLM)


@arch("smollm3", "NoPE layers")
def _():
    return causal_lm(tf().SmolLM3Config(**common()), tf().SmolLM3ForCausalLM)


@arch("glm4")
def _():
    return causal_lm(tf().Glm4Config(head_dim=8, **common()), tf().Glm4ForCausalLM)


@arch("helium")
def _():
    return causal_lm(tf().HeliumConfig(head_dim=8, **common()), tf().HeliumForCausalLM)


@arch("mpt", "alibi")
def _():
    return causal_lm(tf().MptConfig(d_model=H, n_heads=NH, n_layers=1, expansion_ratio=2,
                                    max_seq_len=64, **hf.token_ids()), tf().MptForCausalLM)


@arch("xglm")
def _():
    return causal_lm(tf().XGLMConfig(d_model=H, num_layers=1, attention_heads=NH, ffn_dim=MLP,
                                     max_position_embeddings=64, **hf.token_ids()),
                     tf().XGLMForCausalLM)


@arch("mamba", "selective scan (slow path), static length: its loop over the tokens "
      "specialises the sequence length")
def _():
    model = build(tf().MambaConfig(hidden_size=H, state_size=4, num_hidden_layers=1, expand=2,
                                   conv_kernel=4, **hf.token_ids()), tf().MambaForCausalLM)
    return (hf.CausalLMIdsOnly(model),
            [(torch.randint(3, V, (2, 6)),), (torch.randint(3, V, (2, 6)),)], None)

# ---- encoders ----------------------------------------------------------------------------


def bert_like(**extra):
    c = dict(hidden_size=H, num_hidden_layers=1, num_attention_heads=NH, intermediate_size=MLP,
             max_position_embeddings=64, **hf.token_ids())
    c.update(extra)
    return c


@arch("distilbert")
def _():
    return encoder(tf().DistilBertConfig(dim=H, n_layers=1, n_heads=NH, hidden_dim=MLP,
                                         max_position_embeddings=64, **hf.token_ids()),
                   tf().DistilBertModel)


@arch("roberta")
def _():
    c = bert_like()
    c["pad_token_id"] = 1
    return encoder(tf().RobertaConfig(**c), tf().RobertaModel)


@arch("albert")
def _():
    return encoder(tf().AlbertConfig(embedding_size=16, **bert_like()), tf().AlbertModel)


@arch("electra")
def _():
    return encoder(tf().ElectraConfig(embedding_size=16, **bert_like()), tf().ElectraModel)


@arch("deberta_v2", "disentangled relative attention")
def _():
    return encoder(tf().DebertaV2Config(relative_attention=True, position_buckets=8,
                                        max_relative_positions=16, pos_att_type=["p2c", "c2p"],
                                        **bert_like()), tf().DebertaV2Model)


@arch("modernbert")
def _():
    return encoder(tf().ModernBertConfig(hidden_size=H, num_hidden_layers=1,
                                         num_attention_heads=NH, intermediate_size=MLP,
                                         max_position_embeddings=64, local_attention=4,
                                         **hf.token_ids()), tf().ModernBertModel)


@arch("clip_text")
def _():
    c = bert_like()
    return encoder(tf().CLIPTextConfig(**c), tf().CLIPTextModel)


def image_inputs(channels=3, size=16):
    return [(torch.randn(2, channels, size, size),), (torch.randn(2, channels, size, size),)]


@arch("vit", "conv2d patch embedding")
def _():
    c = bert_like(image_size=16, patch_size=4)
    for k in ("vocab_size", "pad_token_id", "bos_token_id", "eos_token_id",
              "max_position_embeddings"):
        c.pop(k)
    return Pixels(build(tf().ViTConfig(**c), tf().ViTModel)), image_inputs(), None


@arch("clip_vision")
def _():
    return (Pixels(build(tf().CLIPVisionConfig(hidden_size=H, num_hidden_layers=1,
                                                  num_attention_heads=NH, intermediate_size=MLP,
                                                  image_size=16, patch_size=4),
                            tf().CLIPVisionModel)), image_inputs(), None)


@arch("siglip_vision")
def _():
    return (Pixels(build(tf().SiglipVisionConfig(hidden_size=H, num_hidden_layers=1,
                                                    num_attention_heads=NH, intermediate_size=MLP,
                                                    image_size=16, patch_size=4),
                            tf().SiglipVisionModel)), image_inputs(), None)


@arch("dinov2")
def _():
    return (Pixels(build(tf().Dinov2Config(hidden_size=H, num_hidden_layers=1,
                                              num_attention_heads=NH, mlp_ratio=2, image_size=16,
                                              patch_size=4), tf().Dinov2Model)),
            image_inputs(), None)


class WhisperEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.encoder = model.get_encoder()

    def forward(self, input_features):
        return self.encoder(input_features=input_features).last_hidden_state


@arch("whisper_encoder", "conv1d front end")
def _():
    config = tf().WhisperConfig(d_model=H, encoder_layers=1, decoder_layers=1,
                                encoder_attention_heads=NH, decoder_attention_heads=NH,
                                encoder_ffn_dim=MLP, decoder_ffn_dim=MLP, num_mel_bins=8,
                                max_source_positions=8, max_target_positions=16,
                                vocab_size=V, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                decoder_start_token_id=1)
    model = WhisperEncoder(build(config, tf().WhisperModel))
    return model, [(torch.randn(2, 8, 16),), (torch.randn(2, 8, 16),)], None

# ---- encoder-decoders --------------------------------------------------------------------


def seq2seq(config, cls):
    calls = [(ids, mask, torch.randint(3, V, (2, 3))) for ids, mask in hf.prefill_inputs()]
    dims = hf.seq_dims(("input_ids", "attention_mask"))
    dims["decoder_input_ids"] = None
    return Seq2Seq(build(config, cls)), calls, dims


def bart_like(**extra):
    c = dict(d_model=H, encoder_layers=1, decoder_layers=1, encoder_attention_heads=NH,
             decoder_attention_heads=NH, encoder_ffn_dim=MLP, decoder_ffn_dim=MLP,
             max_position_embeddings=64, decoder_start_token_id=2, **hf.token_ids())
    c.update(extra)
    return c


@arch("bart")
def _():
    return seq2seq(tf().BartConfig(**bart_like()), tf().BartForConditionalGeneration)


@arch("mbart")
def _():
    return seq2seq(tf().MBartConfig(**bart_like()), tf().MBartForConditionalGeneration)


# ---- the sweep ---------------------------------------------------------------------------

RTOL, ATOL = 1e-4, 1e-5  # float32 on the CPU, as tests/conformance/compare.cc


def first_line(text, limit=160):
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
    return line[:limit]


def compare(expected, actual, what):
    """'' or a description of the first difference."""
    for key, e in expected.items():
        if key not in actual:
            return f"{what} {key} missing"
        a = actual[key]
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"{what} {key}: {a.dtype}{list(a.shape)} vs PyTorch {e.dtype}{list(e.shape)}"
        if not e.is_floating_point():
            if not torch.equal(a, e):
                return f"{what} {key}: {int((a != e).sum())} of {e.numel()} elements differ"
            continue
        e64, a64 = e.double(), a.double()
        bad = ~((a64 - e64).abs() <= ATOL + RTOL * e64.abs())
        bad &= ~(torch.isnan(a64) & torch.isnan(e64))
        bad &= ~(torch.isinf(e64) & (a64 == e64))
        if bad.any():
            worst = float((a64 - e64).abs().nan_to_num(float("inf")).max())
            return (f"{what} {key}: {int(bad.sum())} of {e.numel()} elements differ, "
                    f"max |d| {worst:.3g}")
    return ""


def run_splice(splice, case_dir, calls):
    """'' when every call matches, else 'splice: ...' or 'mismatch: ...'."""
    model = os.path.join(case_dir, "model.pt2")
    state = None
    for k in range(calls):
        out = os.path.join(case_dir, f"splice{k}.outputs.safetensors")
        st = os.path.join(case_dir, f"splice{k}.state.safetensors")
        cmd = [splice, "run", model, "--inputs", os.path.join(case_dir,
               f"call{k}.inputs.safetensors"), "--outputs", out, "--state-out", st, "--no-cache"]
        if state:
            cmd += ["--state-in", state]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            text = (p.stderr + p.stdout).replace(model + ": ", "").replace("splice: error: ", "")
            return f"splice: (rc {p.returncode}) " + first_line(text, 240)
        for what, exp, act in (("output", f"call{k}.outputs.safetensors", out),
                               ("state", f"call{k}.state.safetensors", st)):
            diff = compare(load_file(os.path.join(case_dir, exp)), load_file(act), what)
            if diff:
                return f"mismatch: call {k} {diff}"
        state = st
    return ""


def sweep_one(name, c, forms, splice, scratch):
    results = {}
    try:
        torch.manual_seed(generate.case_seed(c.name))
        mod, calls, dims = c.fn()
        calls = [tuple(x) for x in calls]
        mod.eval()
    except Exception as e:
        return {f: f"build: {type(e).__name__}: {first_line(str(e))}" for f in forms}
    for form in forms:
        out_dir = os.path.join(scratch, name)
        os.makedirs(out_dir, exist_ok=True)
        try:
            generate.generate_form(c, mod, calls, dims, "cpu", form, out_dir)
        except Exception as e:
            lines = (str(e) or repr(e)).strip().splitlines()
            results[form] = f"export: {type(e).__name__}: {lines[0][:200] if lines else ''}"
            continue
        case_dir = os.path.join(out_dir, generate.case_dir_name(c, form, "cpu"))
        try:
            results[form] = run_splice(splice, case_dir, len(calls)) or "pass"
        except Exception as e:
            results[form] = f"harness: {type(e).__name__}: {first_line(str(e))}"
            traceback.print_exc()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splice", default="build/bin/splice", help="the splice binary")
    parser.add_argument("--only", default="", help="comma-separated architecture globs")
    parser.add_argument("--forms", default="default,keep,train")
    parser.add_argument("--keep-dir", default="", help="write the programs here (kept)")
    parser.add_argument("--markdown", default="", help="also write the table to this file")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    patterns = [p for p in args.only.split(",") if p]
    names = [n for n in ARCHS if not patterns or any(fnmatch.fnmatch(n, p) for p in patterns)]
    if args.list:
        print("\n".join(names))
        return 0
    forms = [f for f in args.forms.split(",") if f]
    splice = os.path.abspath(args.splice)
    scratch = args.keep_dir or tempfile.mkdtemp(prefix="splice_sweep_")
    rows = []
    for name in names:
        t0 = time.time()
        res = sweep_one(name, ARCHS[name], forms, splice, scratch)
        rows.append((name, res))
        print(f"{name} ({time.time() - t0:.0f}s): " +
              "; ".join(f"{f}={res[f]}" for f in forms), flush=True)
    table = ["| architecture | " + " | ".join(forms) + " |",
             "| --- |" + " --- |" * len(forms)]
    for name, res in rows:
        cells = [res[f].replace("|", "\\|") for f in forms]
        table.append(f"| {name} | " + " | ".join(cells) + " |")
    passed = sum(1 for _, r in rows for f in forms if r[f] == "pass")
    summary = f"{passed} of {len(rows) * len(forms)} cells pass"
    print("\n".join(table) + "\n\n" + summary)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(table) + "\n\n" + summary + "\n")
    if not args.keep_dir:
        print(f"programs in {scratch} (delete when done)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
