#!/usr/bin/env python3
"""The docs name real things: every inline code span of README.md and docs/*.md that names
splice code or a file of the tree must resolve. Prints `FILE:LINE: `span`: why` for each one
that does not and exits 1; exits 0 when all resolve. Python 3 standard library only; tested by
scripts/check_docs_test.py. Both run in scripts/test's stage "docs name real things".

    scripts/check_docs.py [ROOT]     ROOT defaults to the repository this script is in.

A doc that fails names something that does not exist (any more): fix the doc to name what the
code has, not this checker. Fenced code blocks are not read; a span's text is CommonMark's
(a span may continue on the next line, never past a blank one). Each span is checked as the
first of these it looks like:

  calls      `name()`, `name(args)`, also after a return type (`Result<bool> run(ir::Program&)`):
             `name` must occur as an identifier in a source file (ops written as math,
             `slice_scatter(x, v, d, i)`, pass through the op names of src/ir/op_list.inc).
             `a::b(...)` is checked as a qualified name. Dotted names are Python or PyTorch
             (`torch.export.export()`, `.item()`, `self.contiguous_copy()`) and skipped, unless
             the first component is the stem of a tracked .py file (`hf_models.randomize`):
             then the next component must occur in that file. CUDA, cuBLAS, CUPTI and NVRTC
             calls (`cuda*`, `cu[A-Z]*`, `cublas*`, `cupti*`, `nvrtc[A-Z]*`) are NVIDIA's.
  paths      `src/plan/fusion.cc`, `runtime/node_exec.h`, `fusion.cc`, `src/support/file_writer`,
             `strided_copy.{h,cu}`, `tests/cases/*.train`. A span with a `/` whose first
             component is a folder of the tree, or one ending in a source or data extension
             (.cc .h .cu .cuh .inc .py .sh .md .txt .json .cmake .in .pt2 .safetensors), must
             name a file or folder of the tree: the path itself or any path of the tree ending
             in `/` + it (so a path given from src/ or tests/, or a bare file name, resolves),
             else a file that is it plus an extension (a module: `file_writer`, `.h` and `.cc`).
             `*`, `?` and `[...]` are globs within one path component (at least one match);
             `{a,b}` is expanded and every alternative must exist. A placeholder (`<case>.<form>/`,
             `tests/passes/<name>.txt`) ends what is checked: the folder before it must exist.
             Not checked: absolute and home paths (`/usr/local/cuda/lib64`, `~/.cache/splice`,
             `$OUT/summary.txt`: outside the tree), spans starting with `…` or `.` (elisions,
             extensions, dot files), and paths whose first component is no folder of the tree
             and that have no extension above (`torch/_refs`, PyTorch's; the ignored
             `gpu-bundle/` that scripts/gpu_test writes).
             `FILE:N` needs FILE to have at least N lines; `FILE:name` (`api.cc:Session::run`)
             needs the name's components to occur as identifiers in FILE.
  qualified  `cpu::run_into`, `ir::OpId`, `Session::measure`, `Storage::device()`: for each
             adjacent pair a::b, some source file must declare `a` (namespace, class, struct,
             enum or union) and contain the identifier `b`: `cpu::run_into` fails although
             `cpu` is a namespace, because no file of it mentions run_into. Names under std::,
             at::, c10::, torch::, testing:: (gtest), cub::, thrust::, cooperative_groups::,
             nvcuda::, cute::, cutlass::, fmt::, nlohmann::, benchmark:: and CLI:: (CLI11) are
             other projects' and skipped.
  cases      `name.default`, `name.keep`, `name.train` (globs allowed), and `name{d,k,t,s}`
             (default, keep, train, strict: write-fix-checks.md's shorthand): recorded case
             folders of tests/cases (`tests/cases/<name>.<form>/`).
  tests      `Suite.Name`, `Suite.*`, `Suite.Prefix…` where Suite is a gtest suite declared
             with TEST/TEST_F/TEST_P: a test of that suite must match. Suites registered at run
             time (the conformance suite's, one test per recorded case) are not checked. So a
             PyTorch attribute of a class that shares a suite's name is written with its module
             (`torch.Tensor.T`, not `Tensor.T`).
  identifiers  code-shaped single names: an inner `_` (`load_or_build`, `w_rank2`), a
             lower-to-upper hump (`KernelScratch`) or `kConstant`, and globs of them
             (`w_cast_*`): the name occurs as an identifier in a source file or a build file
             (CMakeLists.txt, cmake/, scripts/), or is a recorded case name, or a unit test
             binary `unit_<module>` (tests/CMakeLists.txt makes one per tests/unit/<module>/).
             Plain words (`view`, `cat`, `k0`) and commit hashes are prose or examples as often
             as names, and not checked.
  commands   a span with spaces that is not a call (`bash scripts/gpu_run.sh`, a shell
             command): each word with a `/` whose first component is a top-level folder of the
             tree must exist. Other spans with spaces are code, messages or output.

Everything else (ATen and Python names such as `aten.add.Tensor` or `torch.export.save`,
flags, JSON keys, snippets) is not checked. Source files: .cc .h .cu .cuh .inc .py under src/,
include/, tools/ and also tests/, bench/ and examples/, because the docs describe the tests,
the benchmarks and the example consumer too, and a name found only there is still a real
name. The tree is `git ls-files --cached --others --exclude-standard` (tracked files and new,
unignored ones) when ROOT is a git checkout, else every file under ROOT outside dot folders,
top-level build*/ folders and __pycache__/.
"""
import fnmatch
import os
import re
import subprocess
import sys

DOCS_GLOB_DIR = "docs"
SOURCE_DIRS = ("src", "include", "tools", "tests", "bench", "examples", "python")
SOURCE_EXTS = (".cc", ".h", ".cu", ".cuh", ".inc", ".py", ".cpp", ".hpp")
PATH_EXTS = (".cc", ".h", ".cu", ".cuh", ".inc", ".py", ".sh", ".md", ".txt", ".json",
             ".cmake", ".in", ".pt2", ".safetensors", ".cpp", ".hpp")
CASE_FORMS = ("default", "keep", "train")
FOREIGN_NAMESPACES = {"std", "at", "c10", "torch", "testing", "cub", "thrust",
                      "cooperative_groups", "nvcuda", "cute", "cutlass", "fmt", "nlohmann",
                      "benchmark", "CLI"}
FOREIGN_CALL = re.compile(r"^(cuda|cu[A-Z]|cublas|cupti|nvrtc[A-Z]|__)")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One pattern per keyword, each starting with its literal (fast to scan for); a match right
# after an identifier character (`subclass X`) is dropped where it is used.
DECLS = [(k, re.compile(k + r"\s+(?:(?:class|struct)\s+)?(?:\[\[[^\]]*\]\]\s*)?"
                        r"([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)"))
         for k in ("namespace", "class", "struct", "enum", "union")]
GTEST = re.compile(r"TEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)")
QUALIFIED = re.compile(r"^((?:[A-Za-z_]\w*::)+~?[A-Za-z_]\w*)(.*)$")
CALL = re.compile(r"^(?:[\w:<>&*,]+\s+)?((?:[A-Za-z_]\w*(?:::|\.))*[A-Za-z_]\w*)\((.*)\)$",
                  re.S)
GTEST_REF = re.compile(r"^([A-Z]\w*)\.([\w*]+)(\.\.\.|…)?$")
CASE_REF = re.compile(r"^([\w*?]+)\.(%s)$" % "|".join(CASE_FORMS))
CASE_LETTERS = {"d": "default", "k": "keep", "t": "train", "s": "strict"}
CASE_FORMS_REF = re.compile(r"^([\w*?]+)\{([dkts](?:,[dkts])*)\}$")
# A code-shaped identifier: an inner `_`, a lower-to-upper hump (CamelCase) or kConstant; a glob
# of one. Plain words (`view`, `cat`, `k0`) are too often prose or example names to check.
CODE_NAME = re.compile(r"^(?=.*(?:\w_\w|[a-z][A-Z]|^k[A-Z]))[A-Za-z_][\w*?]*$")
HEX = re.compile(r"^[0-9a-f]{7,40}$")
LINE_OR_NAME = re.compile(r"^(.*?\.[A-Za-z]+):(.+)$")


class Tree:
    """The files of the tree, its folders, and an index of the source files' identifiers."""

    def __init__(self, root):
        self.root = root
        self.files = self._list_files(root)
        self.dirs = set()
        for f in self.files:
            parts = f.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
        self.paths = sorted(self.files | self.dirs)
        self.top = {p.split("/")[0] for p in self.files if "/" in p}
        # Every folder name (any depth) for "first component is a folder of the tree".
        self.dir_names = {d.rsplit("/", 1)[-1] for d in self.dirs}
        self.idents = set()   # every identifier of the source files
        self.declared = {}    # namespace/class/struct/enum name -> set of files declaring it
        self.file_idents = {}  # source file -> its identifiers
        self.gtests = {}      # suite -> set of test names
        self.py_modules = {}  # stem of a tracked .py file -> its paths
        self.by_name = {}     # last component of a tracked path -> those paths
        # Names that are not source identifiers but are real: identifiers of the build files
        # (CMakeLists.txt, cmake/, scripts/ less this checker), recorded case names
        # (tests/cases/<name>.<form>/) and the unit test binaries (unit_<module> for each
        # tests/unit/<module>/, made by tests/CMakeLists.txt).
        self.other_names = set()
        self._names = None
        self.stems = {}       # last component of a file's path less its extension -> files
        for p in self.paths:
            self.by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
        for f in sorted(self.files):
            name = f.rsplit("/", 1)[-1]
            if "." in name[1:]:
                self.stems.setdefault(name[:name.rindex(".")], []).append(f)
            if f.endswith(".py"):
                self.py_modules.setdefault(f.rsplit("/", 1)[-1][:-3], []).append(f)
            parts = f.split("/")
            if len(parts) >= 4 and parts[:2] == ["tests", "cases"] and \
                    parts[2].rpartition(".")[2] in CASE_LETTERS.values():
                self.other_names.add(parts[2].rpartition(".")[0])
            if len(parts) >= 4 and parts[:2] == ["tests", "unit"]:
                self.other_names.add("unit_" + parts[2])
            if (parts[-1] == "CMakeLists.txt" or f.endswith((".cmake", ".cmake.in")) or
                    parts[0] == "scripts") and not parts[-1].startswith("check_docs"):
                self.other_names |= identifiers(self.read_bytes(f))
            if not (parts[0] in SOURCE_DIRS and f.endswith(SOURCE_EXTS)):
                continue
            raw = self.read_bytes(f)
            ids = identifiers(raw)
            self.file_idents[f] = ids
            self.idents |= ids
            text = raw.decode("utf-8", "replace")
            for kind, pattern in DECLS:
                for m in pattern.finditer(text):
                    if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
                        continue
                    name = m.group(1)
                    for n in name.split("::") if kind == "namespace" else [name.split("::")[-1]]:
                        self.declared.setdefault(n, set()).add(f)
            if "TEST" in ids or "TEST_F" in ids or "TEST_P" in ids:
                for suite, test in GTEST.findall(text):
                    self.gtests.setdefault(suite, set()).add(test)

    @staticmethod
    def _list_files(root):
        if os.path.exists(os.path.join(root, ".git")):
            out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                                  "--exclude-standard"], check=True, capture_output=True).stdout
            names = [n for n in out.decode().split("\0") if n]
            return {n for n in names if os.path.lexists(os.path.join(root, n))}
        files = set()
        for base, dirs, names in os.walk(root):
            rel = os.path.relpath(base, root)
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__" and
                       not (rel == "." and d.startswith("build"))]
            for n in names:
                files.add(n if rel == "." else rel.replace(os.sep, "/") + "/" + n)
        return files

    def names_matching(self, glob):
        """Source identifiers and other names (see other_names) matching a glob."""
        if self._names is None:
            self._names = "\n".join(sorted(self.idents | self.other_names))
        return re.findall(r"(?m)^%s$" % glob_regex(glob), self._names)

    def read_bytes(self, f):
        with open(os.path.join(self.root, f), "rb") as fh:
            return fh.read()

    def read(self, f):
        return self.read_bytes(f).decode("utf-8", "replace")

    def idents_of(self, f):
        if f not in self.file_idents:
            self.file_idents[f] = identifiers(self.read_bytes(f))
        return self.file_idents[f]

    def resolve(self, path):
        """Tracked files or folders that are `path` or end in `/` + path (globs allowed), else
        the files whose path less its extension is one of those (a module: `file_writer`)."""
        path = path.rstrip("/")
        if not path:
            return []
        if any(c in path for c in "*?["):
            last = re.compile(glob_regex(path.rsplit("/", 1)[-1]))
            whole = re.compile(r"(?:.*/)?%s" % glob_regex(path))
            return [p for name, ps in self.by_name.items() if last.fullmatch(name)
                    for p in ps if whole.fullmatch(p)]
        name = path.rsplit("/", 1)[-1]
        found = [p for p in self.by_name.get(name, ()) if p == path or p.endswith("/" + path)]
        if not found:
            found = [f for f in self.stems.get(name, ())
                     if f.startswith(path + ".") or ("/" + path + ".") in f]
        return found


_IDENT_TABLE = bytes(c if (48 <= c < 58 or 65 <= c < 91 or 97 <= c < 123 or c == 95) else 32
                     for c in range(256))


def identifiers(raw):
    """The identifiers of a source file's bytes (as str; words starting with a digit too,
    which no lookup asks for)."""
    return set(raw.translate(_IDENT_TABLE).decode("ascii").split())


def glob_regex(glob):
    """A glob as a regex: `*` and `?` match within one path component, `[...]` a set."""
    out = ""
    for tok in re.findall(r"\*|\?|\[[^\]]*\]|[^*?\[]+", glob):
        out += {"*": "[^/]*", "?": "[^/]"}.get(tok, tok if tok.startswith("[") else re.escape(tok))
    return out


def expand_braces(s):
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(s[:m.start()] + alt + s[m.end():]))
    return out


def inline_spans(text):
    """(line, content) of every inline code span outside fenced code blocks."""
    lines = text.split("\n")
    fence = None
    kept = []
    for line in lines:
        s = line.lstrip()
        if fence:
            if s.startswith(fence) and not s.strip().strip(fence[0]):
                fence = None
            kept.append("")
            continue
        m = re.match(r"(`{3,}|~{3,})", s)
        if m:
            fence = m.group(1)
            kept.append("")
            continue
        kept.append(line)
    spans = []
    # Blocks end at blank lines: a span never crosses one.
    block_start = 0
    block = []
    for i, line in enumerate(kept + [""]):
        if line.strip():
            if not block:
                block_start = i
            block.append(line)
            continue
        if block:
            spans.extend(_block_spans("\n".join(block), block_start + 1))
            block = []
    return spans


def _block_spans(text, first_line):
    out = []
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    i = 0
    while i < len(runs):
        start, end = runs[i]
        if start > 0 and text[start - 1] == "\\":
            i += 1
            continue
        n = end - start
        close = next((j for j in range(i + 1, len(runs)) if runs[j][1] - runs[j][0] == n), None)
        if close is None:
            i += 1
            continue
        content = text[end:runs[close][0]].replace("\n", " ")
        if len(content) > 1 and content[0] == " " and content[-1] == " " and content.strip():
            content = content[1:-1]
        out.append((first_line + text[:start].count("\n"), content))
        i = close + 1
    return out


class Checker:
    def __init__(self, tree):
        self.t = tree

    # -- the kinds of span --------------------------------------------------------------------

    def check(self, span):
        """None when the span resolves or is not checked, else why it does not resolve."""
        s = span.strip()
        if not s or not re.search(r"[A-Za-z]", s):
            return None
        if re.search(r"\s", s):
            m = CALL.match(s)
            if m and self._balanced_call(s, m):
                return self.check_call(m.group(1))
            return self.check_command(s)
        if s[0] in "-$~/.…#@\"':|!<([{*" or s[0].isdigit():
            return None
        m = CALL.match(s)
        if m and self._balanced_call(s, m):
            return self.check_call(m.group(1))
        m = LINE_OR_NAME.match(s)
        if m and self._is_path(m.group(1)):
            return self.check_path_with_suffix(m.group(1), m.group(2))
        if self._is_path(s):
            return self.check_path(s)
        if "::" in s:
            return self.check_qualified(s)
        m = CASE_REF.match(s)
        if m:
            return self.check_case(s)
        m = CASE_FORMS_REF.match(s)
        if m:
            return self.check_case_forms(m.group(1), m.group(2).split(","))
        m = GTEST_REF.match(s)
        if m and m.group(1) in self.t.gtests:
            return self.check_gtest(m.group(1), m.group(2), bool(m.group(3)))
        if "." in s and re.fullmatch(r"[\w.]+", s):
            return self.check_dotted(s)
        if CODE_NAME.match(s) and not HEX.match(s):
            return self.check_name(s)
        return None

    @staticmethod
    def _balanced_call(s, m):
        """The `(` after the name closes at the span's last character."""
        depth = 0
        for k in range(m.start(2) - 1, len(s)):
            depth += {"(": 1, ")": -1}.get(s[k], 0)
            if depth == 0:
                return k == len(s) - 1
        return False

    def _is_path(self, s):
        if "<" in s or s.startswith(("…", "...")):
            return "/" in s or s.endswith(PATH_EXTS)
        if "/" in s:
            first = s.split("/")[0]
            return first in self.t.top or first in self.t.dir_names or \
                any(e.endswith(PATH_EXTS) for e in expand_braces(s))
        return any(e.endswith(PATH_EXTS) for e in expand_braces(s)) and \
            re.fullmatch(r"[\w.*?{},\[\]-]+", s) is not None

    def check_path(self, s):
        if "<" in s:
            # A placeholder: the folder before it must exist.
            head = s[:s.index("<")]
            head = head[:head.rfind("/") + 1]
            if head and not self.t.resolve(head):
                return "no folder %s in the tree" % head
            return None
        missing = [p for p in expand_braces(s) if not self.t.resolve(p)]
        if missing:
            return "no %s in the tree" % " or ".join(missing) if len(missing) == 1 else \
                "no %s in the tree" % ", ".join(missing)
        return None

    def check_path_with_suffix(self, path, suffix):
        why = self.check_path(path)
        if why or "<" in path:
            return why
        files = [f for p in expand_braces(path) for f in self.t.resolve(p) if f in self.t.files]
        if suffix.isdigit():
            n = int(suffix)
            if not any(self.t.read(f).count("\n") + 1 >= n for f in files):
                return "%s has fewer than %d lines" % (path, n)
            return None
        names = IDENT.findall(suffix)
        for f in files:
            ids = self.t.idents_of(f)
            if all(n in ids for n in names):
                return None
        return "%s does not mention %s" % (path, suffix)

    def check_qualified(self, s):
        m = QUALIFIED.match(s)
        if not m:
            return None
        comps = [c.lstrip("~") for c in m.group(1).split("::")]
        if comps[0] in FOREIGN_NAMESPACES:
            return None
        for outer, inner in zip(comps, comps[1:]):
            decl = self.t.declared.get(outer)
            if not decl:
                return "no namespace, class, struct or enum %s in the sources" % outer
            if not any(inner in self.t.file_idents[f] for f in decl):
                return "no file that declares %s mentions %s" % (outer, inner)
        return None

    def check_call(self, name):
        if "::" in name:
            return self.check_qualified(name)
        if "." in name:
            return self.check_dotted(name)
        if FOREIGN_CALL.match(name):
            return None
        if name not in self.t.idents:
            return "%s occurs in no source file" % name
        return None

    def check_dotted(self, s):
        """Python and PyTorch names, unless the first component is a tracked .py module."""
        comps = s.split(".")
        files = self.t.py_modules.get(comps[0])
        if not files or len(comps) < 2 or not comps[1]:
            return None
        if not any(comps[1] in self.t.idents_of(f) for f in files):
            return "%s does not mention %s" % (" or ".join(files), comps[1])
        return None

    def check_case(self, s):
        if not any(p.startswith("tests/cases/") for p in self.t.resolve("tests/cases/" + s)):
            return "no recorded case tests/cases/%s" % s
        return None

    def check_case_forms(self, name, letters):
        missing = [name + "." + CASE_LETTERS[x] for x in letters
                   if self.check_case(name + "." + CASE_LETTERS[x])]
        return "no recorded case tests/cases/%s" % ", ".join(missing) if missing else None

    def check_name(self, s):
        if any(c in s for c in "*?["):
            if not self.t.names_matching(s):
                return "no identifier or case name matches %s" % s
            return None
        if s not in self.t.idents and s not in self.t.other_names:
            return "%s occurs in no source or build file and names no case" % s
        return None

    def check_gtest(self, suite, test, prefix):
        names = self.t.gtests[suite]
        if prefix:
            ok = any(n.startswith(test) for n in names)
        else:
            ok = any(fnmatch.fnmatchcase(n, test) for n in names)
        return None if ok else "gtest suite %s has no test %s%s" % (suite, test,
                                                                     "…" if prefix else "")

    def check_command(self, s):
        for word in s.split():
            word = word.strip("'\",;()")
            if "/" not in word or word[0] in "-$~/.…<" or "<" in word or "=" in word:
                continue
            if word.split("/")[0] in self.t.top:
                why = self.check_path(word)
                if why:
                    return why
        return None


def doc_files(root):
    docs = [os.path.join(DOCS_GLOB_DIR, n) for n in sorted(os.listdir(os.path.join(root, "docs")))
            if n.endswith(".md")] if os.path.isdir(os.path.join(root, "docs")) else []
    return (["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []) + docs


def check_tree(root):
    """[(file, line, span, why)] for every span of the docs under root that does not resolve."""
    tree = Tree(root)
    checker = Checker(tree)
    failures = []
    for doc in doc_files(root):
        for line, span in inline_spans(tree.read(doc)):
            why = checker.check(span)
            if why:
                failures.append((doc, line, span, why))
    return failures


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    failures = check_tree(root)
    for doc, line, span, why in failures:
        print("%s:%d: `%s`: %s" % (doc, line, span, why))
    if failures:
        print("check_docs: %d span(s) above name nothing in the tree; name what exists "
              "(scripts/check_docs.py says what is checked)" % len(failures))
        return 1
    print("check_docs: every name, call and path the docs give in backticks resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
