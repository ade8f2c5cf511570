#!/usr/bin/env python3
"""splice from Python in a few lines: export a transformers Llama (a small config, random
weights: nothing is downloaded), compile it with splice, call it with torch tensors and compare
with eager PyTorch; then save an engine file and load it back.

    pip install .  &&  pip install torch transformers
    python3 examples/python/compile_and_run.py [--device cuda]
"""

import argparse
import os
import tempfile

import torch
import transformers

import splice


class Logits(torch.nn.Module):
    """The model's logits for a batch of token ids (no KV cache)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    device = parser.parse_args().device
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2,
                                      vocab_size=256, max_position_embeddings=128)
    model = Logits(transformers.LlamaForCausalLM(config).eval()).to(device)
    ids = torch.randint(0, 256, (1, 16), device=device)

    ep = torch.export.export(model, (ids,))          # 1. export
    engine = splice.compile(ep, device=device)       # 2. compile
    logits = engine(ids)                             # 3. call
    with torch.no_grad():
        expected = model(ids)
    print(f"splice vs eager: max |difference| {(logits - expected).abs().max().item():.3g}")
    print(f"bench: {engine.bench(ids, iters=20)['median_ms']:.3f} ms per call")

    with tempfile.TemporaryDirectory() as folder:   # 4. an engine file, loaded back
        path = os.path.join(folder, "llama.splice")
        engine.save(path)
        again = splice.load(path, device=device)
        print(f"engine file: same logits bit for bit: {torch.equal(again(ids), logits)}")


if __name__ == "__main__":
    main()
