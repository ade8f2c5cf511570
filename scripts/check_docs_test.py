#!/usr/bin/env python3
"""Tests of scripts/check_docs.py on a fake tree made in a temporary folder (removed after each
test, and nothing else): real names, calls and paths pass, and a nonexistent one of each kind
is reported as FILE:LINE: `span`: why, with exit status 1. Run by scripts/test's stage "docs
name real things"; standard library only:  python3 scripts/check_docs_test.py
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_docs  # noqa: E402

FILES = {
    "CMakeLists.txt": "option(SPLICE_CUDA \"the CUDA backend\" OFF)\n",
    "scripts/test": "#!/bin/sh\n",
    "src/backends/cpu/args.h":
        "namespace splice::cpu {\nResult<Outputs> run_kernel(const KernelCall& call);\n}\n",
    "src/backends/backend.h":
        "namespace splice::backend {\nclass Backend {\n  void wait_for(void* queue);\n};\n}\n",
    "src/plan/fusion.cc": "// plan_fusion\nFusionPlan plan_fusion() { return {}; }\n",
    "src/support/file_writer.h": "struct PendingFile {};\n",
    "src/support/file_writer.cc": "#include \"support/file_writer.h\"\n",
    "src/ir/op_list.inc": "SPLICE_OP(slice_scatter, \"aten.slice_scatter.default\")\n",
    "include/splice/splice.h":
        "namespace splice {\nclass Session {\n public:\n  void measure();\n"
        "  static constexpr int kMaxRecordedShapes = 4;\n};\n}\n",
    "tools/splice/main.cc": "int main() { return 0; }\n",
    "tests/unit/runtime/api_test.cc":
        "TEST(Api, OutputsAreOwnedByTheCaller) {}\nTEST(Api, ManySessionsShareWeights) {}\n",
    "tests/cases/w_rank2.default/model.pt2": "",
    "tests/cases/w_rank2.keep/model.pt2": "",
    "tests/cases/defs/hf_models.py": "def randomize(model):\n    pass\n",
    "tests/passes/fold.txt": "a\nb\nc\n",
    # Not part of the tree: build folders are skipped.
    "build/generated.h": "namespace splice::cpu { void run_into(); }\n",
}

GOOD = """# Good

Names: `cpu::run_kernel`, `backend::Backend`, `Backend::wait_for(session, queue)`,
`Session::measure`, `splice::Session::kMaxRecordedShapes`, `std::call_once`, `at::Tensor`.
Calls: `run_kernel(call)`, `plan_fusion()`, `slice_scatter(x, src, 1, 0, 8)`,
`torch.export.export()`, `.item()`, `self.contiguous_copy()`, `cudaMemcpyAsync()`,
`hf_models.randomize`, `Result<void> run_kernel(const KernelCall&)`.
Paths: `src/plan/fusion.cc`, `plan/fusion.cc`, `fusion.cc`, `src/support/file_writer`,
`src/support/file_writer.{h,cc}`, `tests/cases/*.default`, `tests/passes/<name>.txt`,
`<case>.<form>/`, `tests/passes/fold.txt:3`, `args.h:run_kernel`, `scripts/test`,
`bash scripts/test --fast`, `/usr/local/cuda/lib64`, `$OUT/summary.txt`, `torch/_refs`.
Tests and cases: `Api.OutputsAreOwnedByTheCaller`, `Api.*`, `Api.ManySessions…`,
`w_rank2.keep`, `w_rank2{d,k}`, `w_rank*`. Names: `kMaxRecordedShapes`, `SPLICE_CUDA`,
`PendingFile`, `unit_runtime`. Not checked: `aten.add.Tensor`, `x[:, -1] = v`, `view`, `dc0fe40`.
A span over two lines: `Session::
measure`; a double-backtick span: ``plan_fusion()``.

```
cpu::run_into and src/no/such/file.cc in a fenced block are not read
```
"""

BAD = """# Bad

`cpu::run_into`
`Sesion::measure`
`plan_fusoin()`
`src/plan/fusoin.cc`
`tests/passes/fold.txt:9`
`args.h:run_into`
`tests/cases/*.trian`
`Api.NoSuchTest`
`w_rank9.keep`
`w_rank2{d,t}`
`kMaxRecordedShape`
`hf_models.randomise`
`bash scripts/tset`
`src/plan/fusion.{cc,h}`
`tests/pases/<name>.txt`
"""

EXPECTED_BAD = [
    (3, "cpu::run_into", "no file that declares cpu mentions run_into"),
    (4, "Sesion::measure", "no namespace, class, struct or enum Sesion in the sources"),
    (5, "plan_fusoin()", "plan_fusoin occurs in no source file"),
    (6, "src/plan/fusoin.cc", "no src/plan/fusoin.cc in the tree"),
    (7, "tests/passes/fold.txt:9", "tests/passes/fold.txt has fewer than 9 lines"),
    (8, "args.h:run_into", "args.h does not mention run_into"),
    (9, "tests/cases/*.trian", "no tests/cases/*.trian in the tree"),
    (10, "Api.NoSuchTest", "gtest suite Api has no test NoSuchTest"),
    (11, "w_rank9.keep", "no recorded case tests/cases/w_rank9.keep"),
    (12, "w_rank2{d,t}", "no recorded case tests/cases/w_rank2.train"),
    (13, "kMaxRecordedShape",
     "kMaxRecordedShape occurs in no source or build file and names no case"),
    (14, "hf_models.randomise", "tests/cases/defs/hf_models.py does not mention randomise"),
    (15, "bash scripts/tset", "no scripts/tset in the tree"),
    (16, "src/plan/fusion.{cc,h}", "no src/plan/fusion.h in the tree"),
    (17, "tests/pases/<name>.txt", "no folder tests/pases/ in the tree"),
]


class CheckDocsTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="check_docs_test.")
        for path, text in FILES.items():
            self.write(path, text)

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)

    def run_checker(self):
        return subprocess.run([sys.executable, os.path.join(HERE, "check_docs.py"), self.root],
                              capture_output=True, text=True)

    def test_real_names_calls_and_paths_pass(self):
        self.write("README.md", GOOD)
        self.write("docs/good.md", GOOD)
        self.assertEqual(check_docs.check_tree(self.root), [])
        r = self.run_checker()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_each_kind_of_missing_thing_is_reported(self):
        self.write("README.md", GOOD)
        self.write("docs/bad.md", BAD)
        got = [(line, span, why) for doc, line, span, why in check_docs.check_tree(self.root)]
        self.assertEqual(got, EXPECTED_BAD)
        self.assertTrue(all(doc == "docs/bad.md"
                            for doc, *_ in check_docs.check_tree(self.root)))
        r = self.run_checker()
        self.assertEqual(r.returncode, 1)
        self.assertIn("docs/bad.md:3: `cpu::run_into`: no file that declares cpu mentions "
                      "run_into\n", r.stdout)
        self.assertIn("docs/bad.md:17: `tests/pases/<name>.txt`:", r.stdout)

    def test_spans(self):
        # An unclosed backtick is literal; a span may cross a line but not a blank line;
        # fenced blocks are not read.
        text = "a `x` b ``y ` z`` c `unclosed\n\n`p\nq`\n```\nfenced `no`\n```\n`r`"
        self.assertEqual(check_docs.inline_spans(text),
                         [(1, "x"), (1, "y ` z"), (3, "p q"), (8, "r")])


if __name__ == "__main__":
    unittest.main(verbosity=1)
