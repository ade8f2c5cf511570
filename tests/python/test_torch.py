"""The Python API with torch (skipped, saying so, where torch is not installed): torch.export
-> splice.compile -> the same values as eager, for a KV-cache decoder carrying its cache over 8
calls and for a transformers Llama; the outputs bit-identical to `splice run` on the same saved
program; torch tensors read and written in place. On a machine with a GPU the same on CUDA
tensors."""

import os
import shutil
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the numpy tests cover the API")

import splice  # noqa: E402 (after the skip)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class StaticCacheDecoder(torch.nn.Module):
    """One attention layer over a static KV cache written with index_copy_ at `pos`."""

    def __init__(self, hidden=32, heads=4, slots=16):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.register_buffer("k_cache", torch.zeros(1, heads, slots, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, slots, self.head_dim))

    def forward(self, x, pos):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        slots = torch.arange(self.k_cache.shape[2])
        mask = slots[None, :] <= pos[:, None]  # the positions written so far, causally
        y = torch.nn.functional.scaled_dot_product_attention(q, self.k_cache, self.v_cache,
                                                             attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


def splice_binary():
    for candidate in (os.environ.get("SPLICE_BINARY"), shutil.which("splice"),
                      os.path.join(ROOT, "build", "bin", "splice")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def decode_steps(device):
    torch.manual_seed(0)
    eager = StaticCacheDecoder().eval().to(device)
    exported_from = StaticCacheDecoder().eval().to(device)
    exported_from.load_state_dict(eager.state_dict())
    x0, pos0 = torch.randn(1, 1, 32, device=device), torch.tensor([0], device=device)
    ep = torch.export.export(exported_from, (x0, pos0))
    engine = splice.compile(ep, device=device, cache_dir="")
    for step in range(8):
        x = torch.randn(1, 1, 32, device=device)
        pos = torch.tensor([step], device=device)
        with torch.no_grad():
            expected = eager(x, pos)
        got = engine(x, pos)
        assert isinstance(got, torch.Tensor) and got.device.type == torch.device(device).type
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(engine.state["k_cache"], eager.k_cache, rtol=1e-4, atol=1e-5)
    engine.reset()
    assert torch.count_nonzero(engine.state["v_cache"]) == 0


def test_a_kv_cache_decoder_carries_its_state_over_eight_calls():
    decode_steps("cpu")


def test_torch_tensors_are_read_and_written_in_place():
    class SliceWrite(torch.nn.Module):
        def forward(self, x, s):
            x[:, 1:3] = s
            return x * 2

    x, s = torch.randn(3, 5), torch.randn(3, 2)
    ep = torch.export.export(SliceWrite(), (x.clone(), s))
    engine = splice.compile(ep, cache_dir="")
    expected_x = x.clone()
    expected = SliceWrite()(expected_x, s)
    pointer = x.data_ptr()
    got = engine(x, s)
    assert x.data_ptr() == pointer
    torch.testing.assert_close(x, expected_x)
    torch.testing.assert_close(got, expected)
    strided = torch.randn(5, 3).t()  # not contiguous: a copy runs, and is written back
    expected_strided = strided.clone()
    SliceWrite()(expected_strided, s)
    engine(strided, s)
    torch.testing.assert_close(strided, expected_strided)


def test_a_transformers_llama_matches_eager_and_the_cli(tmp_path):
    transformers = pytest.importorskip("transformers")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2,
                                      vocab_size=128, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(config).eval()

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    ids = torch.randint(0, 128, (2, 8))
    ep = torch.export.export(Logits(model), (ids,))
    engine = splice.compile(ep, cache_dir="")
    with torch.no_grad():
        expected = Logits(model)(ids)
    got = engine(ids)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)

    binary = splice_binary()
    if binary is None:
        pytest.skip("no splice CLI found (SPLICE_BINARY, PATH, build/bin)")
    archive = tmp_path / "llama.pt2"
    torch.export.save(ep, str(archive))
    safetensors_torch.save_file({"input_ids": ids}, str(tmp_path / "in.safetensors"))
    subprocess.run([binary, "run", str(archive), "--no-cache", "--inputs",
                    str(tmp_path / "in.safetensors"), "--outputs",
                    str(tmp_path / "out.safetensors")], check=True)
    cli = safetensors_torch.load_file(str(tmp_path / "out.safetensors"))["output.0"]
    assert torch.equal(splice.load(str(archive), cache_dir="")(ids), cli)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_cuda_tensors_in_and_out():
    decode_steps("cuda")
