#!/usr/bin/env python3
"""Sweeps splice over many transformers architectures and tabulates what breaks.

Each architecture below is built from a tiny config with seeded random weights (nothing is
downloaded; the helpers and sizes of defs/hf_models.py: hidden 32, 4 heads, 2 KV heads, MLP 64,
vocab 128, 1 layer), exported in each form with generate.py's own machinery (default, keep,
train: the same programs, inputs and PyTorch-eager reference outputs a conformance case holds),
written to a scratch folder, and run call by call through the splice CLI (`splice run ...
--state-in/--state-out`, buffers chained from call to call). Every output, mutated input and
buffer is compared with eager PyTorch within the conformance suite's CPU tolerance
(tests/conformance/compare.cc: float32 |d| <= 1e-5 + 1e-4 |x|). The harness is
sweep_common.py's, shared with sweep_torchvision.py.

Each architecture x form cell is one of:
  pass              splice's results match PyTorch's
  export: MSG       torch.export (or run_decompositions) itself fails; nothing to run
  splice: MSG       splice exits non-zero (first line of its message)
  mismatch: MSG     splice runs but a result differs (key, worst error)

The architectures here are the ones tests/cases/defs/hf_models.py does not cover; those that
revealed a splice bug have a regression case (hf_more.py). The table of the last sweep is in
docs/model-coverage.md.

  python3 tests/cases/sweep_hf.py --splice build/bin/splice [--only 'qwen3,gemma*']
      [--config base,fp16,bf16,b1,dynbatch,cache,hf_cache,dyncache] [--reuse]
      [--forms default,keep,train] [--keep-dir DIR] [--markdown OUT.md]
"""

import argparse
import fnmatch
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_common import conv_fan_in, markdown_table, report, sweep_one  # noqa: E402
from defs import hf_models as hf  # noqa: E402
from defs.registry import Case  # noqa: E402

H, NH, KV, MLP, V = hf.HIDDEN, hf.HEADS, hf.KV_HEADS, hf.MLP, hf.VOCAB
ARCHS = {}


KINDS = {}      # name -> "decoder" (a causal LM, swept in every configuration), "other", or
                # "task" (sweep_hf_tasks.py's auto-mapping types)
IN_BASE = {}    # name -> False for the decoders hf_models.py covers (base configuration only)


def arch(name, notes="", kind="other", base=True):
    def register(fn):
        ARCHS[name] = Case("sweep_" + name, fn, calls=2, notes=notes)
        KINDS[name] = kind
        IN_BASE[name] = base
        return fn
    return register


def decoder(name, notes="", base=True):
    return arch(name, notes, kind="decoder", base=base)


# ---- configurations ----------------------------------------------------------------------
#
# base      fp32, batch 2 (second row right-padded), attention mask, dynamic sequence length
#           (8 then 5 tokens), no KV cache: the first sweep's configuration.
# fp16      base with the model in float16 (compared with float16's tolerance)
# bf16      base with the model in bfloat16
# b1        batch 1, input_ids only (no attention mask), dynamic sequence length
# dynbatch  base with a dynamic batch dim as well: batch 2 of 8 tokens, then batch 3 of 5
# cache     decode with transformers' StaticCache (StaticCacheDecoder below): the cache is the
#           module's buffers, written with index_copy_ at cache_position; calls: a prefill of 4
#           tokens at 0-3, then one token at 4, then one at 5, state chained; compares the
#           logits and every cache buffer
# hf_cache  the same with transformers' own export wrapper
#           (integrations.executorch.TorchExportableModuleWithStaticCache, the module
#           convert_and_export_with_cache exports)
# dyncache  a prefill with use_cache=True returning the logits and the DynamicCache's keys and
#           values of every layer as outputs
CONFIGS = ("base", "fp16", "bf16", "b1", "dynbatch", "cache", "hf_cache", "dyncache")
CONFIG = {"name": "base"}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
SLOTS = 16


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


class HFStaticCacheDecoder(torch.nn.Module):
    """transformers' TorchExportableModuleWithStaticCache (what convert_and_export_with_cache
    exports), called with the keywords it expects: its forward's second parameter is
    inputs_embeds, not cache_position."""

    def __init__(self, model, slots):
        super().__init__()
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
        model.generation_config.use_cache = True
        model.generation_config.cache_implementation = "static"
        with torch.no_grad():
            self.wrapped = TorchExportableModuleWithStaticCache(model, batch_size=1,
                                                                max_cache_len=slots,
                                                                device=torch.device("cpu"))

    def forward(self, input_ids, cache_position):
        return self.wrapped(input_ids=input_ids, cache_position=cache_position)


class StaticCacheDecoder(hf.StaticDecoder):
    """hf_models.StaticDecoder for any decoder: transformers' StaticCache, its sliding-window
    layers replaced by plain static layers (as TorchExportableModuleWithStaticCache does), in
    the model's dtype; its tensors are the module's buffers, re-bound into the cache on every
    call so that export sees buffers written in place (index_copy_ at cache_position, copy_,
    add_)."""

    @staticmethod
    def new_cache(model, slots):
        from transformers.cache_utils import StaticCache, StaticLayer, StaticSlidingWindowLayer
        from transformers.configuration_utils import get_head_shapes
        config = model.config.get_text_config()
        cache = StaticCache(config=config, max_cache_len=slots)
        for i, layer in enumerate(cache.layers):
            if isinstance(layer, StaticSlidingWindowLayer) or type(layer) is not StaticLayer:
                cache.layers[i] = StaticLayer(slots)
        heads, head_dim = get_head_shapes(config)
        with torch.no_grad():
            cache.early_initialization(1, heads, head_dim, model.dtype, "cpu")
        return cache


class DynamicCachePrefill(torch.nn.Module):
    """A prefill with use_cache=True: the logits, then every layer's keys and values."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=True)
        cache = out.past_key_values
        kv = []
        for layer in cache.layers:
            kv += [layer.keys, layer.values]
        return (out.logits, *kv)


def ids_only_calls(batch, lengths=hf.PREFILL_LENGTHS):
    return [(torch.randint(3, V, (batch, t)),) for t in lengths]


def dynbatch_calls():
    calls = []
    for batch, t in ((2, 8), (3, 5)):
        ids = torch.randint(3, V, (batch, t))
        mask = torch.ones(batch, t, dtype=torch.int64)
        mask[-1, t - 2:] = 0
        ids[-1, t - 2:] = 0
        calls.append((ids, mask))
    return calls


def causal_lm(config, cls, batch=2):
    """The decoder in the configuration being swept (CONFIG)."""
    name = CONFIG["name"]
    if name in ("cache", "hf_cache"):
        wrapper = StaticCacheDecoder if name == "cache" else HFStaticCacheDecoder
        model = wrapper(build(config, cls), SLOTS).eval()
        ids = torch.randint(3, V, (1, 6))
        calls = [(ids[:, 0:4].clone(), torch.arange(0, 4)),
                 (ids[:, 4:5].clone(), torch.tensor([4])),
                 (ids[:, 5:6].clone(), torch.tensor([5]))]
        seq = torch.export.Dim("seq", min=1, max=SLOTS)
        return model, calls, {"input_ids": {1: seq}, "cache_position": {0: seq}}
    model = build(config, cls)
    if name in DTYPES:
        model = model.to(DTYPES[name])
    if name == "b1":
        return hf.CausalLMIdsOnly(model), ids_only_calls(1), hf.seq_dims(("input_ids",))
    if name == "dynbatch":
        dims = {n: {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}
                for n in ("input_ids", "attention_mask")}
        return hf.CausalLMPrefill(model), dynbatch_calls(), dims
    if name == "dyncache":
        return (DynamicCachePrefill(model), hf.prefill_inputs(batch),
                hf.seq_dims(("input_ids", "attention_mask")))
    return (hf.CausalLMPrefill(model), hf.prefill_inputs(batch),
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
# The decoders of hf_models.py: conformance cases in the base configuration already, swept in
# the others.


def hf_decoder(kind):
    config, cls = hf.decoder_config(kind, 1)
    return causal_lm(config, cls, batch=1 if kind == "gpt2" else 2)


for _kind in ("llama", "qwen2", "mistral", "gemma", "phi3", "gpt2"):
    decoder(_kind, "hf_models.py", base=False)(lambda k=_kind: hf_decoder(k))


@decoder("qwen3")
def _():
    return causal_lm(tf().Qwen3Config(head_dim=8, **common()), tf().Qwen3ForCausalLM)


@decoder("gemma2", "logit soft-capping, sliding window")
def _():
    return causal_lm(tf().Gemma2Config(head_dim=8, sliding_window=4, query_pre_attn_scalar=8,
                                       attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                                       **common()), tf().Gemma2ForCausalLM)


@decoder("gemma3_text")
def _():
    return causal_lm(tf().Gemma3TextConfig(head_dim=8, sliding_window=4, query_pre_attn_scalar=8,
                                           **common()), tf().Gemma3ForCausalLM)


@decoder("phi", "phi-2: partial rotary, parallel block")
def _():
    return causal_lm(tf().PhiConfig(partial_rotary_factor=0.5, **common()), tf().PhiForCausalLM)


@decoder("stablelm")
def _():
    return causal_lm(tf().StableLmConfig(partial_rotary_factor=0.25, **common()),
                     tf().StableLmForCausalLM)


@decoder("gpt_neox")
def _():
    c = common(rotary_pct=0.25)
    c.pop("num_key_value_heads")
    return causal_lm(tf().GPTNeoXConfig(**c), tf().GPTNeoXForCausalLM)


@decoder("gptj")
def _():
    return causal_lm(tf().GPTJConfig(n_embd=H, n_layer=1, n_head=NH, n_inner=MLP, rotary_dim=4,
                                     n_positions=64, **hf.token_ids()), tf().GPTJForCausalLM)


@decoder("codegen")
def _():
    return causal_lm(tf().CodeGenConfig(n_embd=H, n_layer=1, n_head=NH, n_inner=MLP,
                                        rotary_dim=4, n_positions=64, n_ctx=64, **hf.token_ids()),
                     tf().CodeGenForCausalLM)


@decoder("falcon")
def _():
    return causal_lm(tf().FalconConfig(hidden_size=H, num_hidden_layers=1, num_attention_heads=NH,
                                       **hf.token_ids()), tf().FalconForCausalLM)


@decoder("falcon_alibi")
def _():
    return causal_lm(tf().FalconConfig(hidden_size=H, num_hidden_layers=1, num_attention_heads=NH,
                                       alibi=True, **hf.token_ids()), tf().FalconForCausalLM)


@decoder("opt")
def _():
    return causal_lm(tf().OPTConfig(hidden_size=H, num_hidden_layers=1, ffn_dim=MLP,
                                    num_attention_heads=NH, word_embed_proj_dim=H,
                                    max_position_embeddings=64, **hf.token_ids()),
                     tf().OPTForCausalLM)


@decoder("bloom", "alibi")
def _():
    return causal_lm(tf().BloomConfig(hidden_size=H, n_layer=1, n_head=NH, **hf.token_ids()),
                     tf().BloomForCausalLM)


@decoder("gpt_neo")
def _():
    return causal_lm(tf().GPTNeoConfig(hidden_size=H, num_layers=1, num_heads=NH,
                                       attention_types=[[["global"], 1]], intermediate_size=MLP,
                                       max_position_embeddings=64, **hf.token_ids()),
                     tf().GPTNeoForCausalLM)


@decoder("gpt_bigcode", "multi-query")
def _():
    return causal_lm(tf().GPTBigCodeConfig(n_embd=H, n_layer=1, n_head=NH, n_inner=MLP,
                                           n_positions=64, multi_query=True, **hf.token_ids()),
                     tf().GPTBigCodeForCausalLM)


@decoder("starcoder2")
def _():
    return causal_lm(tf().Starcoder2Config(**common()), tf().Starcoder2ForCausalLM)


@decoder("mixtral", "MoE, 4 experts top-2")
def _():
    return causal_lm(tf().MixtralConfig(num_local_experts=4, num_experts_per_tok=2, **common()),
                     tf().MixtralForCausalLM)


@decoder("qwen2_moe", "MoE with a shared expert")
def _():
    return causal_lm(tf().Qwen2MoeConfig(num_experts=4, num_experts_per_tok=2,
                                         moe_intermediate_size=32,
                                         shared_expert_intermediate_size=32, **common()),
                     tf().Qwen2MoeForCausalLM)


@decoder("qwen3_moe")
def _():
    return causal_lm(tf().Qwen3MoeConfig(head_dim=8, num_experts=4, num_experts_per_tok=2,
                                         moe_intermediate_size=32, **common()),
                     tf().Qwen3MoeForCausalLM)


@decoder("olmoe")
def _():
    return causal_lm(tf().OlmoeConfig(num_experts=4, num_experts_per_tok=2, **common()),
                     tf().OlmoeForCausalLM)


@decoder("olmo", "non-parametric layer norm, clip_qkv")
def _():
    return causal_lm(tf().OlmoConfig(clip_qkv=2.0, **common()), tf().OlmoForCausalLM)


@decoder("olmo2")
def _():
    return causal_lm(tf().Olmo2Config(**common()), tf().Olmo2ForCausalLM)


@decoder("cohere", "parallel block, interleaved rotary, logit scale")
def _():
    return causal_lm(tf().CohereConfig(**common()), tf().CohereForCausalLM)


@decoder("granite", "multipliers")
def _():
    return causal_lm(tf().GraniteConfig(embedding_multiplier=2.0, residual_multiplier=0.5,
                                        attention_multiplier=0.2, logits_scaling=4.0, **common()),
                     tf().GraniteForCausalLM)


@decoder("smollm", "Llama variant: tied embeddings, 1 KV head")
def _():
    c = common(tie_word_embeddings=True)
    c["num_key_value_heads"] = 1
    return causal_lm(tf().LlamaConfig(**c), tf().LlamaForCausalLM)


@decoder("smollm3", "NoPE layers")
def _():
    return causal_lm(tf().SmolLM3Config(**common()), tf().SmolLM3ForCausalLM)


@decoder("glm4")
def _():
    return causal_lm(tf().Glm4Config(head_dim=8, **common()), tf().Glm4ForCausalLM)


@decoder("helium")
def _():
    return causal_lm(tf().HeliumConfig(head_dim=8, **common()), tf().HeliumForCausalLM)


@decoder("mpt", "alibi")
def _():
    return causal_lm(tf().MptConfig(d_model=H, n_heads=NH, n_layers=1, expansion_ratio=2,
                                    max_seq_len=64, **hf.token_ids()), tf().MptForCausalLM)


@decoder("xglm")
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


# ---- decoders added by the second sweep --------------------------------------------------


@decoder("nemotron", "squared-ReLU MLP, layer norm 1p, partial rotary")
def _():
    return causal_lm(tf().NemotronConfig(head_dim=8, partial_rotary_factor=0.5, **common()),
                     tf().NemotronForCausalLM)


@decoder("glm", "GLM-4 0414's predecessor: interleaved partial rotary, fused gate_up")
def _():
    return causal_lm(tf().GlmConfig(head_dim=8, **common()), tf().GlmForCausalLM)


@decoder("cohere2", "sliding-window and NoPE global layers")
def _():
    c = common(num_hidden_layers=2, sliding_window=4,
               layer_types=["sliding_attention", "full_attention"])
    return causal_lm(tf().Cohere2Config(**c), tf().Cohere2ForCausalLM)


@decoder("granitemoe", "MoE, multipliers")
def _():
    return causal_lm(tf().GraniteMoeConfig(num_local_experts=4, num_experts_per_tok=2,
                                           embedding_multiplier=2.0, residual_multiplier=0.5,
                                           attention_multiplier=0.2, logits_scaling=4.0,
                                           **common()), tf().GraniteMoeForCausalLM)


@decoder("exaone4", "QK norm, post-norm")
def _():
    return causal_lm(tf().Exaone4Config(head_dim=8, **common()), tf().Exaone4ForCausalLM)


@decoder("persimmon", "squared ReLU, QK layer norm, partial rotary")
def _():
    c = common(partial_rotary_factor=0.5)
    c.pop("num_key_value_heads")
    return causal_lm(tf().PersimmonConfig(**c), tf().PersimmonForCausalLM)


@decoder("arcee", "ReLU^2 MLP without gate")
def _():
    return causal_lm(tf().ArceeConfig(**common()), tf().ArceeForCausalLM)


@decoder("apertus", "xIELU activation, QK norm")
def _():
    return causal_lm(tf().ApertusConfig(**common()), tf().ApertusForCausalLM)


@decoder("ernie4_5")
def _():
    return causal_lm(tf().Ernie4_5Config(head_dim=8, **common()), tf().Ernie4_5ForCausalLM)


@decoder("hunyuan_v1_dense", "QK norm")
def _():
    return causal_lm(tf().HunYuanDenseV1Config(head_dim=8, **common()),
                     tf().HunYuanDenseV1ForCausalLM)


@decoder("seed_oss")
def _():
    return causal_lm(tf().SeedOssConfig(head_dim=8, **common()), tf().SeedOssForCausalLM)


@decoder("ministral", "Mistral with sliding window layers")
def _():
    return causal_lm(tf().MinistralConfig(head_dim=8, sliding_window=4, **common()),
                     tf().MinistralForCausalLM)


@decoder("olmo3", "sliding-window layers")
def _():
    return causal_lm(tf().Olmo3Config(sliding_window=4, **common()), tf().Olmo3ForCausalLM)


@decoder("vaultgemma")
def _():
    return causal_lm(tf().VaultGemmaConfig(head_dim=8, query_pre_attn_scalar=8, sliding_window=4,
                                           **common()), tf().VaultGemmaForCausalLM)


@decoder("deepseek_v3", "multi-head latent attention, MoE with a shared expert")
def _():
    return causal_lm(tf().DeepseekV3Config(q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=4,
                                           qk_nope_head_dim=4, v_head_dim=8, n_routed_experts=4,
                                           num_experts_per_tok=2, n_group=1, topk_group=1,
                                           moe_intermediate_size=16, first_k_dense_replace=0,
                                           **common(num_key_value_heads=NH)),
                     tf().DeepseekV3ForCausalLM)


@decoder("gpt_oss", "attention sinks, MoE with clamped SwiGLU, sliding window")
def _():
    return causal_lm(tf().GptOssConfig(head_dim=8, num_local_experts=4, num_experts_per_tok=2,
                                       sliding_window=4, **common()), tf().GptOssForCausalLM)


@decoder("lfm2", "short convolutions and attention layers")
def _():
    c = common(num_hidden_layers=2, layer_types=["conv", "full_attention"], conv_L_cache=3)
    return causal_lm(tf().Lfm2Config(**c), tf().Lfm2ForCausalLM)

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


@arch("vit_interpolate", "position embeddings interpolated (bicubic) to another resolution")
def _():
    c = bert_like(image_size=16, patch_size=4)
    for k in ("vocab_size", "pad_token_id", "bos_token_id", "eos_token_id",
              "max_position_embeddings"):
        c.pop(k)

    class Resized(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = build(tf().ViTConfig(**c), tf().ViTModel)

        def forward(self, x):
            return self.model(pixel_values=x, interpolate_pos_encoding=True).last_hidden_state

    return Resized(), image_inputs(size=24), None


@arch("smolvlm_vision", "SmolVLM's vision tower: patch position ids from bucketize")
def _():
    config = tf().SmolVLMVisionConfig(hidden_size=H, num_hidden_layers=1, num_attention_heads=NH,
                                      intermediate_size=MLP, image_size=16, patch_size=4)
    return Pixels(build(config, tf().SmolVLMVisionTransformer)), image_inputs(), None


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

# ---- encoders and vision models added by the second sweep --------------------------------


@arch("xlm_roberta")
def _():
    c = bert_like()
    c["pad_token_id"] = 1
    return encoder(tf().XLMRobertaConfig(**c), tf().XLMRobertaModel)


@arch("camembert")
def _():
    c = bert_like()
    c["pad_token_id"] = 1
    return encoder(tf().CamembertConfig(**c), tf().CamembertModel)


@arch("mobilebert", "bottlenecks, no-norm layers")
def _():
    return encoder(tf().MobileBertConfig(embedding_size=16, intra_bottleneck_size=16,
                                         true_hidden_size=16, num_feedforward_networks=2,
                                         **bert_like()), tf().MobileBertModel)


@arch("data2vec_text")
def _():
    c = bert_like()
    c["pad_token_id"] = 1
    return encoder(tf().Data2VecTextConfig(**c), tf().Data2VecTextModel)


@arch("ernie")
def _():
    return encoder(tf().ErnieConfig(**bert_like()), tf().ErnieModel)


@arch("esm", "rotary encoder")
def _():
    c = bert_like(position_embedding_type="rotary", mask_token_id=3)
    c.pop("bos_token_id")
    c.pop("eos_token_id")
    return encoder(tf().EsmConfig(**c), tf().EsmModel)


def vision_inputs(size=32):
    return image_inputs(size=size)


@arch("beit", "relative position bias")
def _():
    c = bert_like(image_size=16, patch_size=4, use_relative_position_bias=True)
    for k in ("vocab_size", "pad_token_id", "bos_token_id", "eos_token_id",
              "max_position_embeddings"):
        c.pop(k)
    return Pixels(build(tf().BeitConfig(**c), tf().BeitModel)), image_inputs(), None


@arch("swin", "windowed attention, patch merging")
def _():
    return (Pixels(build(tf().SwinConfig(image_size=32, patch_size=4, embed_dim=16,
                                         depths=[1, 1], num_heads=[2, 4], window_size=4),
                         tf().SwinModel)), vision_inputs(), None)


@arch("convnext", "depthwise 7x7 convolutions, layer norm")
def _():
    return (Pixels(build(tf().ConvNextConfig(num_channels=3, hidden_sizes=[8, 16], num_stages=2,
                                             depths=[1, 1], image_size=32), tf().ConvNextModel)),
            vision_inputs(), None)


@arch("convnextv2", "global response norm")
def _():
    return (Pixels(build(tf().ConvNextV2Config(num_channels=3, hidden_sizes=[8, 16], num_stages=2,
                                               depths=[1, 1], image_size=32),
                         tf().ConvNextV2Model)), vision_inputs(), None)


@arch("resnet", "batch norm, max pool")
def _():
    return (Pixels(conv_fan_in(build(tf().ResNetConfig(embedding_size=8, hidden_sizes=[8, 16],
                                                       depths=[1, 1], layer_type="bottleneck"),
                                     tf().ResNetModel))), vision_inputs(), None)


@arch("regnet", "grouped convolutions, squeeze-excitation")
def _():
    return (Pixels(conv_fan_in(build(tf().RegNetConfig(embedding_size=8, hidden_sizes=[8, 16],
                                                       depths=[1, 1], groups_width=4),
                                     tf().RegNetModel))), vision_inputs(), None)


@arch("mobilenet_v2", "depthwise convolutions, ReLU6, TF padding")
def _():
    return (Pixels(conv_fan_in(build(tf().MobileNetV2Config(image_size=32, depth_multiplier=0.25),
                                     tf().MobileNetV2Model))), vision_inputs(), None)


@arch("tv_mobilenet_v3", "torchvision's MobileNetV3-Small (width 0.25): hard-swish, "
      "squeeze-excitation, and its classifier's nn.Dropout(inplace=True) (aten.dropout_)")
def _():
    import torchvision
    model = conv_fan_in(torchvision.models.mobilenet_v3_small(width_mult=0.25, num_classes=10))
    return model.eval(), vision_inputs(), None


@arch("efficientnet", "depthwise convolutions, squeeze-excitation, SiLU")
def _():
    return (Pixels(conv_fan_in(build(tf().EfficientNetConfig(image_size=32, width_coefficient=0.25,
                                                             depth_coefficient=0.25,
                                                             hidden_dim=320),
                                     tf().EfficientNetModel))), vision_inputs(), None)


@arch("mobilenet_v1", "depthwise separable convolutions, batch norm, ReLU6, TF padding")
def _():
    return (Pixels(conv_fan_in(build(tf().MobileNetV1Config(image_size=32, depth_multiplier=0.25),
                                     tf().MobileNetV1Model))), vision_inputs(), None)


@arch("bit", "weight-standardised convolutions, group norm, max pool with dynamic padding")
def _():
    return (Pixels(conv_fan_in(build(tf().BitConfig(embedding_size=8, hidden_sizes=[8, 16],
                                                    depths=[1, 1], num_groups=4),
                                     tf().BitModel))), vision_inputs(), None)


@arch("levit", "attention biases, hard-swish")
def _():
    return (Pixels(build(tf().LevitConfig(image_size=32, hidden_sizes=[16, 32, 48],
                                          num_attention_heads=[1, 2, 3], depths=[1, 1, 1],
                                          key_dim=[8, 8, 8]), tf().LevitModel)),
            vision_inputs(), None)


@arch("dinov2_with_registers")
def _():
    return (Pixels(build(tf().Dinov2WithRegistersConfig(hidden_size=H, num_hidden_layers=1,
                                                        num_attention_heads=NH, mlp_ratio=2,
                                                        image_size=16, patch_size=4,
                                                        num_register_tokens=2),
                         tf().Dinov2WithRegistersModel)), image_inputs(), None)


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



@arch("pegasus", "sinusoidal positions")
def _():
    return seq2seq(tf().PegasusConfig(**bart_like()), tf().PegasusForConditionalGeneration)


@arch("marian", "sinusoidal positions")
def _():
    return seq2seq(tf().MarianConfig(decoder_vocab_size=V, **bart_like()),
                   tf().MarianMTModel)


@arch("blenderbot")
def _():
    return seq2seq(tf().BlenderbotConfig(**bart_like()),
                   tf().BlenderbotForConditionalGeneration)


@arch("m2m100", "sinusoidal positions")
def _():
    return seq2seq(tf().M2M100Config(**bart_like()), tf().M2M100ForConditionalGeneration)


# ---- the sweep ---------------------------------------------------------------------------

def selected_names(config, patterns, kinds=None):
    names = [n for n in ARCHS if not patterns or any(fnmatch.fnmatch(n, p) for p in patterns)]
    if kinds:
        names = [n for n in names if KINDS[n] in kinds]
    if config == "base":
        return [n for n in names if IN_BASE[n]]
    return [n for n in names if KINDS[n] == "decoder"]


def sweep_config(config, patterns, forms, splice, scratch, reuse, kinds=None):
    CONFIG["name"] = config
    rows = []
    for name in selected_names(config, patterns, kinds):
        t0 = time.time()
        res = sweep_one(name, ARCHS[name], forms, splice, os.path.join(scratch, config), reuse,
                        lowp=config in DTYPES)
        rows.append((name, res))
        print(f"[{config}] {name} ({time.time() - t0:.0f}s): " +
              "; ".join(f"{f}={res[f]}" for f in forms), flush=True)
    table = markdown_table(config, rows, forms)
    passed = sum(1 for _, r in rows for f in forms if r[f] == "pass")
    rounding = sum(1 for _, r in rows for f in forms if r[f].startswith("rounding:"))
    table += ["", f"{config}: {passed} of {len(rows) * len(forms)} cells pass" +
              (f", {rounding} more within rounding" if rounding else ""), ""]
    return table


def main(kinds=None):
    """kinds: sweep only the architectures of these kinds (sweep_hf_tasks.py's "task")."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splice", default="build/bin/splice", help="the splice binary")
    parser.add_argument("--only", default="", help="comma-separated architecture globs")
    parser.add_argument("--forms", default="default,keep,train")
    parser.add_argument("--config", default="base",
                        help="comma-separated configurations: " + ",".join(CONFIGS) +
                        " (the decoders only, but for base)")
    parser.add_argument("--keep-dir", default="", help="write the programs here (kept)")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep-dir: run the programs already exported there")
    parser.add_argument("--markdown", default="", help="also write the tables to this file")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    patterns = [p for p in args.only.split(",") if p]
    configs = [c for c in args.config.split(",") if c]
    for config in configs:
        if config not in CONFIGS:
            parser.error(f"unknown configuration {config!r}; one of {', '.join(CONFIGS)}")
    if args.list:
        for config in configs:
            print(f"{config}: " + " ".join(selected_names(config, patterns, kinds)))
        return 0
    forms = [f for f in args.forms.split(",") if f]
    splice = os.path.abspath(args.splice)
    scratch = args.keep_dir or tempfile.mkdtemp(prefix="splice_sweep_")
    tables = []
    for config in configs:
        tables += sweep_config(config, patterns, forms, splice, scratch, args.reuse, kinds)
    report(tables, args.markdown, scratch, args.keep_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
