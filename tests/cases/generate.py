#!/usr/bin/env python3
"""Generates splice's conformance cases: exported programs plus PyTorch's eager results.

For each registered case (tests/cases/defs/*.py) and each export form it writes
<out>/<case>.<form>/:
  model.pt2                   torch.export.save of the program exported on --device, then
                              ep.run_decompositions() (form "default") or
                              ep.run_decompositions({}) (form "keep"), or the training IR as
                              torch.export.export returns it, non-strict (form "train") or
                              strict=True (form "strict", only cases registered strict=True);
                              its JSON members deflated (deflate_json_members: the same bytes,
                              a tenth of the size; weights stay stored and 64-byte aligned)
  call{k}.inputs.safetensors  the user inputs of call k, keyed by the program's input names
  call{k}.outputs.safetensors output.N for user output N (None outputs omitted; ints, floats
                              and bools as 0-d int64/float64/bool), and mutated.NAME for each
                              user input NAME the program mutates (its value after the call)
  call{k}.state.safetensors   every buffer (fully qualified name) after call k
  case.json                   calls, form, export device, torch version, dtypes and notes

The reference values come from the ORIGINAL module run eagerly on CPU (a fresh deep copy per
form, so buffers persist across its calls exactly as a KV cache does), never from the
exported program. Needs torch (2.11), safetensors and numpy; splice's build and tests do not.

  python3 tests/cases/generate.py --out tests/cases [--only 'kv_*'] [--device cuda]
  python3 tests/cases/generate.py --deflate-json-of tests/cases   # repack existing archives
"""

import argparse
import copy
import fnmatch
import glob
import json
import os
import shutil
import struct
import sys
import traceback
import warnings
import zipfile
import zlib

import torch
import torch.utils._pytree as pytree
from safetensors.torch import save_file
from torch.export.graph_signature import InputKind, OutputKind

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defs import (attention_written, core_ops, explicit_overloads, functionalize, hf_models, hf_more,  # noqa: E402,F401
                  model_ops, models, ops_more, ops_more2, state, train_ops, vision_ops, write_edges,
                  writes)
from defs.registry import CASES  # noqa: E402

# default: ep.run_decompositions(); keep: ep.run_decompositions({}); train: the training IR
# exactly as torch.export.export returns it (what many users save); strict: the same with
# strict=True (TorchDynamo traces the program), for the cases registered strict=True.
FORMS = ("default", "keep", "train", "strict")
# The forms saved as the training IR: in-place ops and views stay, no mutation outputs.
TRAINING_IR_FORMS = ("train", "strict")
# The recorded programs and results come from this PyTorch release (schema 8.17).
PINNED_TORCH = "2.11.0"

# torch 2.11 warns about its own pytree internals once per export; keep one line per case.
warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)


def case_seed(name):
    # crc32, unlike hash(), does not change between Python processes.
    return zlib.crc32(name.encode("utf-8"))


def export_program(mod, args, dynamic_shapes, device, form):
    mod = copy.deepcopy(mod).to(device)
    args = tuple(a.to(device) for a in args)
    ep = torch.export.export(mod, args, dynamic_shapes=dynamic_shapes, strict=form == "strict")
    if form in TRAINING_IR_FORMS:
        return ep  # the training IR, saved as torch.export.export returns it
    return ep.run_decompositions() if form == "default" else ep.run_decompositions({})


# Debugging metadata of each node, dropped before saving (with the example inputs):
# stack_trace names files of the machine that generated the case (the generator's and
# site-packages' paths), so it differs between hosts; the others record where a node came from
# (module path, the op before decomposition). Together they are about half of model.json (more
# for the hf_* models), and splice reads none of them. The graph, signature, shapes and weights
# are untouched.
DEBUG_METADATA = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node", "torch_fn")


def drop_debug_metadata(ep):
    # The archive would also carry a pickled copy of the example inputs (sample_inputs/model.pt,
    # ~2 KB, a quarter of a small case); call0.inputs.safetensors holds them.
    ep.example_inputs = None
    for module in ep.graph_module.modules():
        if isinstance(module, torch.fx.GraphModule):
            for n in module.graph.nodes:
                for key in DEBUG_METADATA:
                    n.meta.pop(key, None)


def inplace_ops(ep):
    """In-place ATen ops of a graph (copy_, index_copy_, add_, ...). detach_ is left out: it
    only changes autograd metadata, so splice runs it as an alias."""
    found = set()
    for n in ep.graph.nodes:
        if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload):
            continue
        name = n.target._schema.name.split("::")[-1]
        if name.endswith("_") and not name.endswith("__") and name != "detach_":
            found.add(str(n.target))
    return sorted(found)


def deflate_json_members(path):
    """Rewrites a .pt2 with its JSON members deflated. torch.export.save stores every member
    uncompressed; the program's JSON is most of a small case's bytes (18 of the committed
    cases' 32 MB) and deflates about 10x, and the tracked tree travels to the GPU host under a
    size limit. Both PyTorch's reader and splice's read deflated members (splice inflates them
    with CRC checks). Weights stay stored, their data 64-byte aligned as PyTorch writes them
    (padding in the local header's extra field, id "FB" like PyTorch's), so splice still maps
    them in place. Idempotent."""
    tmp = path + ".repack"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w") as dst:
        for old in src.infolist():
            data = src.read(old)
            info = zipfile.ZipInfo(old.filename, date_time=old.date_time)
            info.external_attr = old.external_attr
            if old.filename.endswith(".json"):
                info.compress_type = zipfile.ZIP_DEFLATED
            else:
                info.compress_type = zipfile.ZIP_STORED
                # Local header: 30 bytes, the name, then the extra field (4-byte header + pad).
                start = dst.fp.tell() + 30 + len(old.filename.encode()) + 4
                pad = -start % 64
                info.extra = struct.pack("<2sH", b"FB", pad) + bytes(pad)
            dst.writestr(info, data, compresslevel=9)
    os.replace(tmp, path)


def export_and_save(mod, args, dynamic_shapes, device, form, path, deflate_json=True):
    """Exports and saves the program; returns (ep, note). torch 2.11 cannot serialize a
    _scaled_dot_product_cudnn_attention node (CUDA, f16/bf16 with a mask): such a program is
    exported again with cuDNN attention disabled (flash, efficient or math instead)."""
    ep = export_program(mod, args, dynamic_shapes, device, form)
    drop_debug_metadata(ep)
    note = ""
    try:
        torch.export.save(ep, path)
    except Exception as e:
        if device != "cuda" or "cudnn" not in str(e):
            raise
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                          SDPBackend.MATH]):
            ep = export_program(mod, args, dynamic_shapes, device, form)
        drop_debug_metadata(ep)
        torch.export.save(ep, path)
        note = "exported with cuDNN attention disabled (torch cannot serialize it)"
    if deflate_json:
        deflate_json_members(path)
    return ep, note


def as_saved(t):
    # safetensors wants contiguous tensors that share no memory (outputs may alias).
    return t.detach().to("cpu").contiguous().clone()


def output_leaf_tensor(leaf, position):
    if isinstance(leaf, torch.Tensor):
        return as_saved(leaf)
    if isinstance(leaf, bool):  # before int: bool is an int subclass
        return torch.tensor(leaf, dtype=torch.bool)
    if isinstance(leaf, int):
        return torch.tensor(leaf, dtype=torch.int64)
    if isinstance(leaf, float):
        return torch.tensor(leaf, dtype=torch.float64)
    raise TypeError(f"output {position} is a {type(leaf).__name__}; cases return tensors, "
                    "ints, floats, bools or None")


def dtype_notes(outputs, case_notes):
    kinds = sorted({str(t.dtype).replace("torch.", "") for t in outputs.values()})
    low = [k for k in kinds if k in ("float16", "bfloat16")]
    notes = "integer and bool outputs compare exactly; float outputs with their dtype's tolerance"
    if low:
        notes += f"; {', '.join(low)} outputs are computed per op in float and rounded per op"
    return f"{case_notes}; {notes}" if case_notes else notes


def case_dir_name(c, form, device):
    # CUDA exports get their own folders so they sit beside the CPU ones.
    return f"{c.name}.{form}" + ("" if device == "cpu" else f".{device}")


def generate_form(c, mod, calls, dynamic_shapes, device, form, out_dir):
    tmp_dir = os.path.join(out_dir, case_dir_name(c, form, device) + ".tmp")
    try:
        write_form(c, mod, calls, dynamic_shapes, device, form, out_dir, tmp_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def mutated_user_inputs(ep, form, input_names):
    """The user inputs the program mutates, in the order run_decompositions() lists their
    mutation outputs. The training IR lists none (its in-place ops write the inputs directly),
    so they are read from its functional twin, ep.run_decompositions({})."""
    if form in TRAINING_IR_FORMS:
        if not inplace_ops(ep):
            return []  # nothing in place, so nothing mutated
        ep = ep.run_decompositions({})
    mutated = [s.target for s in ep.graph_signature.output_specs
               if s.kind == OutputKind.USER_INPUT_MUTATION]
    for name in mutated:
        if name not in input_names:
            raise RuntimeError(f"mutated input {name!r} is not one of the user inputs "
                               f"{input_names}")
    return mutated


def write_form(c, mod, calls, dynamic_shapes, device, form, out_dir, tmp_dir):
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(tmp_dir)
    ep, export_note = export_and_save(mod, calls[0], dynamic_shapes, device, form,
                                      os.path.join(tmp_dir, "model.pt2"))
    final_dir = os.path.join(out_dir, case_dir_name(c, form, device))
    sig = ep.graph_signature
    input_names = [s.arg.name for s in sig.input_specs if s.kind == InputKind.USER_INPUT]
    num_user_outputs = sum(1 for s in sig.output_specs if s.kind == OutputKind.USER_OUTPUT)
    if len(input_names) != len(calls[0]):
        raise RuntimeError(f"the program has {len(input_names)} user inputs {input_names}, "
                           f"the case gives {len(calls[0])}")
    mutated = mutated_user_inputs(ep, form, input_names)

    eager = copy.deepcopy(mod).to("cpu")
    torch.manual_seed(case_seed(c.name))
    output_dtypes = {}
    first_outputs = {}
    expected_error = None
    for k, inputs in enumerate(calls):
        save_file({n: as_saved(t) for n, t in zip(input_names, inputs)},
                  os.path.join(tmp_dir, f"call{k}.inputs.safetensors"))
        args = tuple(t.clone() for t in inputs)  # the module may mutate its inputs
        if c.expect_error is not None and k == c.expect_error[0]:
            expected_error = expect_eager_error(eager, args, k, c.expect_error[1])
            continue  # no outputs or state: the call must fail
        with torch.no_grad():
            result = eager(*args)
        leaves, _ = pytree.tree_flatten(result)
        if len(leaves) != num_user_outputs:
            raise RuntimeError(f"eager returned {len(leaves)} output leaves, the program has "
                               f"{num_user_outputs} user outputs")
        outputs = {f"output.{i}": output_leaf_tensor(leaf, i)
                   for i, leaf in enumerate(leaves) if leaf is not None}
        for name in mutated:
            outputs[f"mutated.{name}"] = as_saved(args[input_names.index(name)])
        save_file(outputs, os.path.join(tmp_dir, f"call{k}.outputs.safetensors"))
        buffers = {n: as_saved(b) for n, b in eager.named_buffers()}
        save_file(buffers, os.path.join(tmp_dir, f"call{k}.state.safetensors"))
        output_dtypes.update({n: str(t.dtype).replace("torch.", "") for n, t in outputs.items()})
        if k == 0:
            first_outputs = outputs

    info = {
        "case": c.name,
        "calls": len(calls),
        "form": form,
        "export_device": device,
        "torch_version": torch.__version__,
        "dynamic": dynamic_shapes is not None,
        "inputs": input_names,
        "outputs": num_user_outputs,
        "mutated_inputs": mutated,
        "buffers": [n for n, _ in eager.named_buffers()],
        "output_dtypes": output_dtypes,
        "tolerance_dtype_notes": dtype_notes(first_outputs, "; ".join(
            n for n in (c.notes, export_note) if n)),
    }
    if expected_error is not None:
        info["expect_error"] = expected_error
    tf = sys.modules.get("transformers")
    if tf is not None and any(type(m).__module__.startswith("transformers.")
                              for m in mod.modules()):
        info["transformers_version"] = tf.__version__  # the hf_* cases' model code
    with open(os.path.join(tmp_dir, "case.json"), "w") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")
    shutil.rmtree(final_dir, ignore_errors=True)
    os.rename(tmp_dir, final_dir)
    print(f"wrote {case_dir_name(c, form, device)}: {len(calls)} call(s), inputs {input_names}, "
          f"{num_user_outputs} output(s)" + (f", mutates {mutated}" if mutated else "") +
          (f", buffers {info['buffers']}" if info["buffers"] else "") +
          (f", call {expected_error['call']} fails" if expected_error else ""), flush=True)


def expect_eager_error(eager, args, k, message_contains):
    """Runs call k, which must raise; returns case.json's "expect_error" entry."""
    try:
        with torch.no_grad():
            eager(*args)
    except Exception as e:  # torch._check raises RuntimeError; others are checked by text
        message = str(e)
        if message_contains not in message:
            raise RuntimeError(f"call {k} raised {type(e).__name__}: {message!r}, expected a "
                               f"message containing {message_contains!r}") from e
        return {"call": k, "message_contains": message_contains,
                "eager_message": message.splitlines()[0] if message else type(e).__name__}
    raise RuntimeError(f"call {k} was expected to fail (expect_error) but eager returned")


def second_call(c, first):
    """A second call for a one-call case (training-IR forms record at least two calls).

    The case function is run again under another seed, and its floating-point inputs are taken
    where their shapes and dtypes match call 0's: the makers (randn, positive, the value tables
    of write_edges) give valid values under any seed, so a runtime that reuses call 0's results
    is caught. Integer and bool inputs (indices, positions, masks) stay those of call 0, where
    another draw could repeat an index or leave a range."""
    torch.manual_seed(case_seed(c.name + "#call1"))
    _, fresh_calls, _ = c.fn()
    fresh = tuple(fresh_calls[0])
    if len(fresh) != len(first):
        return tuple(t.clone() for t in first)
    return tuple(f.clone() if (isinstance(f, torch.Tensor) and f.is_floating_point()
                               and f.shape == t.shape and f.dtype == t.dtype)
                 else t.clone() for f, t in zip(fresh, first))


def generate_case(c, device, forms, out_dir):
    torch.manual_seed(case_seed(c.name))
    mod, calls, dynamic_shapes = c.fn()
    calls = [tuple(call) for call in calls]
    if len(calls) != c.calls:
        raise RuntimeError(f"declared calls={c.calls} but gives inputs for {len(calls)} calls")
    for call in calls:
        for t in call:
            if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
                raise TypeError("case inputs must be CPU tensors")
    mod.eval()
    two_calls = calls if len(calls) >= 2 else calls + [second_call(c, calls[0])]
    for form in forms:
        if form == "strict" and not c.strict:
            continue
        form_calls = two_calls if form in TRAINING_IR_FORMS else calls
        generate_form(c, mod, form_calls, dynamic_shapes, device, form, out_dir)


def selected(name, patterns):
    if not patterns:
        return True
    for p in patterns:
        if any(ch in p for ch in "*?[") and fnmatch.fnmatch(name, p):
            return True
        if not any(ch in p for ch in "*?[") and p in name:
            return True
    return False


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=here, help="output folder (default: tests/cases)")
    parser.add_argument("--only", default="",
                        help="comma-separated case name globs or substrings")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="device to export on (reference outputs are always CPU eager)")
    parser.add_argument("--forms", default=",".join(FORMS),
                        help="comma-separated export forms: default, keep, train, strict (strict: "
                             "only the cases registered strict=True)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--deflate-json-of", metavar="DIR",
                        help="repack every DIR/*/model.pt2 with its JSON deflated, and exit")
    parser.add_argument("--any-torch", action="store_true",
                        help=f"allow a torch other than the pinned {PINNED_TORCH}")
    args = parser.parse_args()
    if args.deflate_json_of:
        for path in sorted(glob.glob(os.path.join(args.deflate_json_of, "*", "model.pt2"))):
            deflate_json_members(path)
        return 0
    if not torch.__version__.startswith(PINNED_TORCH) and not args.any_torch:
        parser.error(f"the cases are pinned to torch=={PINNED_TORCH} (found {torch.__version__}); "
                     "pass --any-torch to generate with another version anyway")

    forms = [f for f in args.forms.split(",") if f]
    for f in forms:
        if f not in FORMS:
            parser.error(f"unknown form {f!r} (known: {', '.join(FORMS)})")
    patterns = [p for p in args.only.split(",") if p]
    names = [n for n in sorted(CASES) if selected(n, patterns)]
    if args.list:
        print("\n".join(names))
        return 0
    if not names:
        parser.error(f"no case matches --only {args.only!r}")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but torch sees no CUDA device")

    os.makedirs(args.out, exist_ok=True)
    failures = []
    for name in names:
        try:
            generate_case(CASES[name], args.device, forms, args.out)
        except Exception as e:  # one bad case must not lose the others
            traceback.print_exc()
            print(f"FAILED {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  flush=True)
            failures.append(name)
    print(f"{len(names) - len(failures)} of {len(names)} cases written to {args.out} "
          f"(forms {', '.join(forms)}, export device {args.device}, torch {torch.__version__})")
    if failures:
        print("failed: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
