# A program whose inputs and outputs dominate its memory: y = x * 2 + 1 on 100 MB of float32
# (bench/RESULTS.md, "Engine cache"). Writes io/scale.pt2 and io/scale.inputs.safetensors
# under the current folder.
import torch
from safetensors.torch import save_file

class M(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1

x = torch.randn(25_000_000)
torch.export.save(torch.export.export(M(), (x,)), "io/scale.pt2")
save_file({"x": x}, "io/scale.inputs.safetensors")
