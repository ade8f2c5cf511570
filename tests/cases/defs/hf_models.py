"""Real models from the transformers library, built from config objects with tiny sizes and
seeded random weights (nothing is downloaded), all named hf_*.

Decoders: Llama, Qwen2, Mistral, Gemma, Phi-3, GPT-2; encoders: BERT; encoder-decoder: T5.
Sizes: hidden 32, 4 heads of 8, 2 KV heads where the model has grouped-query attention,
MLP 64, vocab 128; 1 layer (2 for the static-cache decode cases, so the per-layer caches are
checked); the programs are a few hundred KB, mostly graph. The weights are redrawn after
construction (matrices N(0, 1/fan)), so activations and logits are O(1) instead of
transformers' N(0, 0.02) initialisation, which makes every logit nearly equal and the
comparison weak.

Forms of the programs:
- prefill (hf_<model>): input_ids + attention_mask, use_cache=False, returns the logits (BERT:
  last_hidden_state and pooler_output; T5: the logits for decoder_input_ids). Batch 2 with the
  second row right-padded (mask zeros at the end), and a dynamic sequence length: call 0 has
  8 tokens, call 1 has 5. GPT-2 runs batch 1 (right-padded in call 1): at batch 2, torch 2.11's
  run_decompositions() fails on its attention.
- ids only (hf_llama_ids_only): input_ids alone; transformers then looks for packed sequences
  in the position ids, which puts aten.diff into the training IR.
- decode with a static KV cache (hf_<model>_static_cache): StaticDecoder below, a thin wrapper
  of ours around transformers' StaticCache (cache_utils), whose layers write the cache with
  index_copy_ at the positions it derives from cumulative_length. The cache tensors are this
  module's registered buffers (key_cache_{i}, value_cache_{i}, cumulative_length_{i}) and are
  re-bound into the StaticCache on every call, so torch.export sees them as buffers (mutated
  in place: index_copy_, copy_, add_) and .to(device) moves them. transformers' own
  TorchExportableModuleWithStaticCache (integrations/executorch.py) keeps the cache tensors
  only in the StaticCache object: non-strict export (transformers 5.24, torch 2.11) then lifts
  them as constants that the program mutates, and run_decompositions() fails ("expected
  compiled_fn to be GraphModule"), hence the wrapper. Calls: a prefill of 4 tokens at
  positions 0-3, then one token at position 4, then one at 5; the logits read every slot
  written so far (slots after the position are masked), the state holds the whole cache.

transformers is imported when a case is built, not when the module is registered, so the
other cases need only torch. The reference outputs come from these modules run eagerly on
CPU, as for every case.
"""

import torch

from .registry import case

VOCAB, HIDDEN, HEADS, KV_HEADS, MLP = 128, 32, 4, 2, 64
SLOTS = 16                 # static cache length
PREFILL_LENGTHS = (8, 5)   # tokens in the two prefill calls


def transformers():
    try:
        import transformers as tf
    except ImportError as e:
        raise RuntimeError("the hf_* cases need the transformers library (pip install "
                           "transformers); they download nothing") from e
    tf.logging.set_verbosity_error()
    return tf


def token_ids(cfg_vocab=VOCAB):
    return dict(vocab_size=cfg_vocab, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def decoder_config(kind, layers):
    tf = transformers()
    common = dict(hidden_size=HIDDEN, intermediate_size=MLP, num_hidden_layers=layers,
                  num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                  max_position_embeddings=64, **token_ids())
    if kind == "llama":
        return tf.LlamaConfig(**common), tf.LlamaForCausalLM
    if kind == "qwen2":
        return tf.Qwen2Config(**common), tf.Qwen2ForCausalLM
    if kind == "mistral":
        return tf.MistralConfig(sliding_window=4, **common), tf.MistralForCausalLM
    if kind == "gemma":
        return tf.GemmaConfig(head_dim=HIDDEN // HEADS, **common), tf.GemmaForCausalLM
    if kind == "phi3":
        return tf.Phi3Config(**common), tf.Phi3ForCausalLM
    if kind == "gpt2":
        return (tf.GPT2Config(n_embd=HIDDEN, n_layer=layers, n_head=HEADS, n_inner=MLP,
                              n_positions=64, **token_ids()), tf.GPT2LMHeadModel)
    raise ValueError(kind)


def randomize(model):
    """Redraws every parameter (the generator has seeded torch): matrices N(0, 1/fan), 1-d
    weights (norm scales) 1 + N(0, 0.1), biases N(0, 0.1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, p.shape[-1] ** -0.5)
            elif name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape))
            else:
                p.copy_(0.1 * torch.randn(p.shape))
    return model.eval()


def build(config, cls, attn="sdpa"):
    # "eager": transformers' attention written out (matmul, scale, added mask, softmax in
    # float32, matmul; repeat_kv for grouped heads), which splice fuses (fuse_written_attention).
    config._attn_implementation = attn
    return randomize(cls(config))


def prefill_inputs(batch=2):
    """Two calls (8 then 5 tokens); the last row is right-padded by 2 (in call 1 only when
    the batch is 1)."""
    calls = []
    for k, t in enumerate(PREFILL_LENGTHS):
        ids = torch.randint(3, VOCAB, (batch, t))
        mask = torch.ones(batch, t, dtype=torch.int64)
        if batch > 1 or k == 1:
            mask[-1, t - 2:] = 0
            ids[-1, t - 2:] = 0
        calls.append((ids, mask))
    return calls


def seq_dims(names):
    # Dim.DYNAMIC (range [2, oo)): a named Dim, bounded or not, makes torch 2.11 fail on a
    # guard it cannot prove for these models, min(8*seq, 16*seq) == 8*seq.
    return {n: {1: torch.export.Dim.DYNAMIC} for n in names}


class CausalLMPrefill(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits


class CausalLMIdsOnly(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


class StaticDecoder(torch.nn.Module):
    """A decoder with transformers' StaticCache whose tensors are this module's buffers.
    tests/cases/sweep_hf.py's StaticCacheDecoder is this module with another new_cache."""

    def __init__(self, model, slots):
        super().__init__()
        self.model = model
        self.cache = self.new_cache(model, slots)
        for i, layer in enumerate(self.cache.layers):
            self.register_buffer(f"key_cache_{i}", layer.keys.clone())
            self.register_buffer(f"value_cache_{i}", layer.values.clone())
            self.register_buffer(f"cumulative_length_{i}", layer.cumulative_length.clone())

    def forward(self, input_ids, cache_position):
        for i, layer in enumerate(self.cache.layers):
            # Attribute reads through self: export sees the buffers, .to() has moved them.
            layer.keys = getattr(self, f"key_cache_{i}")
            layer.values = getattr(self, f"value_cache_{i}")
            layer.cumulative_length = getattr(self, f"cumulative_length_{i}")
            layer.device = input_ids.device
            # As transformers' executorch wrapper does: the cache writes at cache_position.
            layer.cumulative_length.copy_(cache_position[0])
        return self.model(input_ids=input_ids, cache=self.cache, use_cache=True).logits

    @staticmethod
    def new_cache(model, slots):
        """The StaticCache of `slots` positions for batch 1, its tensors allocated (float32)."""
        from transformers.cache_utils import StaticCache
        config = model.config
        cache = StaticCache(config=config, max_cache_len=slots)
        head_dim = (getattr(config, "head_dim", None)
                    or config.hidden_size // config.num_attention_heads)
        cache.early_initialization(1, config.num_key_value_heads, head_dim, torch.float32, "cpu")
        return cache


def prefill_case(kind, layers=1, batch=2, attn="sdpa"):
    config, cls = decoder_config(kind, layers)
    return (CausalLMPrefill(build(config, cls, attn)), prefill_inputs(batch),
            seq_dims(("input_ids", "attention_mask")))


def static_cache_case(kind, layers=2, attn="sdpa"):
    config, cls = decoder_config(kind, layers)
    model = StaticDecoder(build(config, cls, attn), SLOTS).eval()
    ids = torch.randint(3, VOCAB, (1, 6))
    calls = [(ids[:, 0:4].clone(), torch.arange(0, 4)),
             (ids[:, 4:5].clone(), torch.tensor([4])),
             (ids[:, 5:6].clone(), torch.tensor([5]))]
    seq = torch.export.Dim("seq", min=1, max=SLOTS)
    return model, calls, {"input_ids": {1: seq}, "cache_position": {0: seq}}

# ---- decoders: prefill -------------------------------------------------------------------


@case("hf_llama", calls=2, notes="transformers LlamaForCausalLM")
def _():
    return prefill_case("llama")


@case("hf_llama_eager", calls=2, notes="transformers LlamaForCausalLM, attention written out "
      "(attn_implementation eager: repeat_kv, added float mask, softmax in float32)")
def _():
    return prefill_case("llama", attn="eager")


@case("hf_llama_ids_only", calls=2, notes="transformers LlamaForCausalLM, input_ids only")
def _():
    config, cls = decoder_config("llama", 1)
    calls = [(ids,) for ids, _ in prefill_inputs()]
    return CausalLMIdsOnly(build(config, cls)), calls, seq_dims(("input_ids",))


@case("hf_qwen2", calls=2, notes="transformers Qwen2ForCausalLM (q/k/v biases)")
def _():
    return prefill_case("qwen2")


@case("hf_mistral", calls=2, notes="transformers MistralForCausalLM, sliding window 4")
def _():
    return prefill_case("mistral")


@case("hf_gemma", calls=2, notes="transformers GemmaForCausalLM (GELU MLP, 1 + w RMSNorm)")
def _():
    return prefill_case("gemma")


@case("hf_phi3", calls=2, notes="transformers Phi3ForCausalLM (fused qkv and gate_up)")
def _():
    return prefill_case("phi3")


@case("hf_gpt2", calls=2, notes="transformers GPT2LMHeadModel (Conv1D, learned positions), "
      "batch 1")
def _():
    # Batch 1: at batch 2, run_decompositions() of torch 2.11 fails on GPT-2's attention
    # ("Cannot view a tensor with shape [2, 8, 32] and strides (32, 64, 1) as (16, 32)").
    return prefill_case("gpt2", batch=1)

# ---- decoders: decode with a static KV cache ---------------------------------------------


@case("hf_llama_static_cache", calls=3,
      notes="transformers LlamaForCausalLM with StaticCache (index_copy_), 2 layers")
def _():
    return static_cache_case("llama")


@case("hf_qwen2_static_cache", calls=3,
      notes="transformers Qwen2ForCausalLM with StaticCache (index_copy_), 2 layers")
def _():
    return static_cache_case("qwen2")


@case("hf_qwen2_static_cache_eager", calls=3,
      notes="transformers Qwen2ForCausalLM with StaticCache, attention written out (eager)")
def _():
    return static_cache_case("qwen2", attn="eager")

# ---- encoders ----------------------------------------------------------------------------


class BertEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


@case("hf_bert", calls=2, notes="transformers BertModel (last_hidden_state, pooler_output)")
def _():
    tf = transformers()
    config = tf.BertConfig(hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=HEADS,
                           intermediate_size=MLP, max_position_embeddings=64, **token_ids())
    return (BertEncoder(build(config, tf.BertModel)), prefill_inputs(),
            seq_dims(("input_ids", "attention_mask")))


class T5Seq2Seq(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          decoder_input_ids=decoder_input_ids, use_cache=False).logits


@case("hf_t5", calls=2, notes="transformers T5ForConditionalGeneration (relative position "
      "buckets), encoder and decoder of 1 layer")
def _():
    tf = transformers()
    config = tf.T5Config(d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=MLP, num_layers=1,
                         num_decoder_layers=1, num_heads=HEADS, relative_attention_num_buckets=8,
                         relative_attention_max_distance=16, decoder_start_token_id=0,
                         **token_ids())
    calls = [(ids, mask, torch.randint(3, VOCAB, (2, 3))) for ids, mask in prefill_inputs()]
    dims = seq_dims(("input_ids", "attention_mask"))
    dims["decoder_input_ids"] = None
    return T5Seq2Seq(build(config, tf.T5ForConditionalGeneration)), calls, dims
