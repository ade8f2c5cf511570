"""More transformers models (hf_*), each the regression case of an architecture that
tests/cases/sweep_hf.py found broken in splice, with the sizes and helpers of hf_models.py
(hidden 32, 4 heads, 1 layer, seeded random weights, nothing downloaded). Each is written in
the one form that shows its fix (generate.py --forms), to keep the tracked tree small:

- hf_falcon (train): Falcon's attention uses Tensor.T, aten.numpy_T in the training IR.
- hf_mixtral (default): transformers' default MoE experts (grouped_mm): sort, histc, topk and
  the transformers::grouped_mm_fallback custom op.
- hf_vit (default), hf_whisper_encoder (keep): conv2d patch embedding, conv1d front end.
- hf_grouped_mm_fallback (all forms): the custom op alone, with an empty group and rows past
  the last offset.
"""

import torch

from . import hf_models as hf
from .registry import case, randn


class Pixels(torch.nn.Module):
    """pixel_values (or input_features) -> last_hidden_state."""

    def __init__(self, model, key="pixel_values"):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, x):
        return self.model(**{self.key: x}).last_hidden_state


class WhisperEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.encoder = model.get_encoder()

    def forward(self, input_features):
        return self.encoder(input_features=input_features).last_hidden_state


def common(**extra):
    c = dict(hidden_size=hf.HIDDEN, intermediate_size=hf.MLP, num_hidden_layers=1,
             num_attention_heads=hf.HEADS, num_key_value_heads=hf.KV_HEADS,
             max_position_embeddings=64, **hf.token_ids())
    c.update(extra)
    return c


@case("hf_falcon", calls=2, notes="transformers FalconForCausalLM (Tensor.T in its attention)")
def _():
    tf = hf.transformers()
    config = tf.FalconConfig(hidden_size=hf.HIDDEN, num_hidden_layers=1,
                             num_attention_heads=hf.HEADS, **hf.token_ids())
    return (hf.CausalLMPrefill(hf.build(config, tf.FalconForCausalLM)), hf.prefill_inputs(),
            hf.seq_dims(("input_ids", "attention_mask")))


@case("hf_mixtral", calls=2, notes="transformers MixtralForCausalLM, 4 experts top-2 "
      "(grouped_mm experts: sort, histc, topk, transformers::grouped_mm_fallback)")
def _():
    tf = hf.transformers()
    config = tf.MixtralConfig(num_local_experts=4, num_experts_per_tok=2, **common())
    return (hf.CausalLMPrefill(hf.build(config, tf.MixtralForCausalLM)), hf.prefill_inputs(),
            hf.seq_dims(("input_ids", "attention_mask")))


@case("hf_vit", calls=2, notes="transformers ViTModel, 16x16 images in 4x4 patches (conv2d)")
def _():
    tf = hf.transformers()
    config = tf.ViTConfig(hidden_size=hf.HIDDEN, num_hidden_layers=1,
                          num_attention_heads=hf.HEADS, intermediate_size=hf.MLP,
                          image_size=16, patch_size=4)
    return (Pixels(hf.build(config, tf.ViTModel)),
            [(randn(2, 3, 16, 16),), (randn(2, 3, 16, 16),)], None)


@case("hf_whisper_encoder", calls=2, notes="the encoder of transformers WhisperModel (two "
      "conv1d, the second of stride 2), 8 mel bins of 16 frames")
def _():
    tf = hf.transformers()
    config = tf.WhisperConfig(d_model=hf.HIDDEN, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=hf.HEADS, decoder_attention_heads=hf.HEADS,
                              encoder_ffn_dim=hf.MLP, decoder_ffn_dim=hf.MLP, num_mel_bins=8,
                              max_source_positions=8, max_target_positions=16,
                              decoder_start_token_id=1, **hf.token_ids())
    return (WhisperEncoder(hf.build(config, tf.WhisperModel)),
            [(randn(2, 8, 16),), (randn(2, 8, 16),)], None)


@case("hf_grouped_mm_fallback", calls=2, notes="transformers::grouped_mm_fallback: 10 rows over "
      "4 experts with offsets [3, 3, 7, 9] (expert 1 empty, row 9 past the last offset: 0)")
def _():
    hf.transformers()
    import transformers.integrations.moe  # noqa: F401  registers the custom op

    class GroupedMM(torch.nn.Module):
        def forward(self, input, weight, offs):
            return torch.ops.transformers.grouped_mm_fallback(input, weight, offs)

    offs = torch.tensor([3, 3, 7, 9], dtype=torch.int32)
    return GroupedMM(), [(randn(10, 6), randn(4, 6, 5), offs),
                         (randn(10, 6), randn(4, 6, 5), offs)], None
