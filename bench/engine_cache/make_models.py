# Makes the two models of the engine cache measurement (bench/RESULTS.md, "Engine cache"): a
# transformers Llama with ~200 MB of float32 weights and a small one, exported with
# torch.export, plus their inputs (random weights, seeded; nothing is downloaded).
# usage: python3 make_models.py OUT_DIR [TOKENS of the 200 MB model, default 32]
import sys, torch, transformers
from safetensors.torch import save_file

out = sys.argv[1]
transformers.logging.set_verbosity_error()
torch.manual_seed(0)

def make(name, hidden, inter, layers, heads, vocab, tokens):
    cfg = transformers.LlamaConfig(hidden_size=hidden, intermediate_size=inter,
                                   num_hidden_layers=layers, num_attention_heads=heads,
                                   num_key_value_heads=heads, vocab_size=vocab,
                                   max_position_embeddings=256, tie_word_embeddings=False,
                                   use_cache=False)
    cfg._attn_implementation = "sdpa"
    m = transformers.LlamaForCausalLM(cfg).eval()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m
        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    w = Wrap(m).eval()
    ids = torch.randint(3, vocab, (1, tokens))
    with torch.no_grad():
        ep = torch.export.export(w, (ids,))
    torch.export.save(ep, f"{out}/{name}.pt2")
    save_file({"input_ids": ids}, f"{out}/{name}.inputs.safetensors")
    n = sum(p.numel() for p in m.parameters())
    print(name, f"{n} params, {n * 4 / 1e6:.1f} MB float32")

make("llama200", 512, 1536, 4, 8, 36000, int(sys.argv[2]) if len(sys.argv) > 2 else 32)
make("llama_small", 64, 128, 2, 4, 1000, 16)
