#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_program_json (tests/fuzz/fuzz_program_json.cc) beside itself.

    python3 tests/fuzz/corpus/program_json/make_seeds.py

Standard library only; the outputs are committed and rerunning rewrites them byte for byte.
Seeds: the model.json of three small recorded cases (static, symbolic, training IR), and issue
34's shapes scaled down to a few KB each: an array where a node's metadata holds strings, an
unknown argument kind and unknown fields holding arrays, integers past 64 bits, arguments
nested past the readers' depth limit.
"""

import json
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "..", "cases")
CASE_SEEDS = {
    "slice_scatter_basic": "slice_scatter_basic.default",
    "add_broadcast_dynamic": "add_broadcast_dynamic.default",
    "expand_train": "expand.train",
}


def model_json(case):
    with zipfile.ZipFile(os.path.join(CASES, case, "model.pt2")) as z:
        name = next(n for n in z.namelist() if n.endswith("models/model.json"))
        return json.loads(z.read(name))


def save(name, text):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(text)


def main():
    for name, case in CASE_SEEDS.items():
        save(name + ".json", json.dumps(model_json(case)))
    base = model_json(CASE_SEEDS["slice_scatter_basic"])
    text = json.dumps(base)

    # A node's metadata holding an array (issue 34: 10^8 zeros; 1,000 here).
    m = json.loads(text)
    m["graph_module"]["graph"]["nodes"][0]["metadata"]["padding"] = [0] * 1000
    save("metadata_array.json", json.dumps(m))

    # An unknown argument kind and unknown fields whose values are arrays and objects.
    m = json.loads(text)
    node = m["graph_module"]["graph"]["nodes"][0]
    node["inputs"][0]["arg"] = {"as_future": [[1, 2], {"a": [3]}]}
    node["future_field"] = {"x": [1, 2, 3]}
    m["module_call_graph"] = [{"fqn": "", "signature": None}]
    save("unknown_kinds.json", json.dumps(m))

    # Integers past 64 bits, where an integer and where a bound is expected.
    big = "1" + "0" * 30
    save("big_integers.json",
         text.replace('"layout": 7', '"layout": ' + big, 1)
             .replace('"range_constraints": {}',
                      '"range_constraints": {"s0": {"min_val": 2, "max_val": ' + big + "}}"))

    # Arguments nested past the readers' limit of 32.
    m = json.loads(text)
    arg = {"as_int": 1}
    for _ in range(40):
        arg = {"as_string_to_argument": {"k": arg}}
    m["graph_module"]["graph"]["nodes"][0]["inputs"][0]["arg"] = arg
    save("deep_arguments.json", json.dumps(m))


if __name__ == "__main__":
    main()
