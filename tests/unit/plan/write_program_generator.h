#pragma once
// The random write programs of the planner's differential test, shared by the test
// (plan_differential_test.cc, choices from a seeded generator) and its libFuzzer target
// (tests/fuzz/fuzz_plan_differential.cc, choices from the fuzzer's bytes): a program generator
// driven by a picker, and the check that the planned and the naive plan agree bit for bit on
// every output and on the state after each call, and leave the inputs untouched.

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/parser.h"
#include "runtime/executor.h"

namespace splice::plan::differential {

// Returns a choice in [lo, hi].
using Picker = std::function<int(int lo, int hi)>;

// Choices from a Mersenne twister seeded with `seed` (uniform_int_distribution, as the
// differential test has always drawn them, so a seed still names the same program).
inline Picker seeded_picker(uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(*rng); };
}

// Choices from bytes, one byte each (taken modulo the range); once they run out, every choice
// is the lowest.
inline Picker byte_picker(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
  auto next = std::make_shared<size_t>(0);
  return [bytes, next](int lo, int hi) {
    if (*next >= bytes->size()) return lo;
    return lo + static_cast<int>((*bytes)[(*next)++] % static_cast<unsigned>(hi - lo + 1));
  };
}

// A random program in text IR. Values live in pools by width (8: the full [4, 8]; 2 and 4:
// slices); every op picks operands of the right width. Every choice goes through the picker,
// so the same choices give the same program.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(Picker pick) : pick_(std::move(pick)) {}

  std::string generate() {
    pools_[8] = {"x", "b_buf"};
    pools_[2] = {"y"};
    const int ops = pick(4, 14);
    for (int i = 0; i < ops; ++i) add_op();
    // The new state: often the newest full value (the end of a write chain on the buffer).
    std::string outputs = fmt::format("%{}", pick(0, 1) ? pools_[8].back() : any_of(8));
    std::string specs = "  output 0: buffer_mutation \"buf\"\n";
    const int n = pick(1, 3);
    for (int i = 0; i < n; ++i) {
      int w = widths()[pick(0, 2)];
      if (pools_[w].empty()) w = 8;
      outputs += fmt::format(", %{}", any_of(w));
      specs += fmt::format("  output {}: user_output\n", i + 1);
    }
    return fmt::format(
        "signature {{\n  input %b_buf: buffer \"buf\" persistent\n  input %x: user_input\n"
        "  input %y: user_input\n  input %idx: user_input\n{}}}\n"
        "graph(%b_buf: f32[4, 8], %x: f32[4, 8], %y: f32[4, 2], %idx: i64[2]) {{\n{}"
        "  return ({})\n}}\n",
        specs, body_, outputs);
  }

 private:
  static const std::array<int, 3>& widths() {
    static const std::array<int, 3> kWidths = {8, 4, 2};
    return kWidths;
  }
  int pick(int lo, int hi) { return pick_(lo, hi); }
  std::string any_of(int width) {
    auto& pool = pools_[width];
    return pool[pick(0, static_cast<int>(pool.size()) - 1)];
  }
  std::string fresh(int width) {
    std::string name = fmt::format("v{}", next_++);
    pools_[width].push_back(name);
    return name;
  }
  void line(const std::string& name, int width, const std::string& rhs) {
    body_ += fmt::format("  %{}: f32[4, {}] = {}\n", name, width, rhs);
  }

  void add_op() {
    const int kind = pick(0, 10);
    const int w = widths()[pick(0, 2)];
    if (pools_[w].empty()) return;
    switch (kind) {
      case 0: {
        const std::string a = any_of(8);
        line(fresh(8), 8, fmt::format("aten.clone.default(%{}, memory_format=None)", a));
        break;
      }
      case 1: {
        const std::string a = any_of(8);
        line(fresh(8), 8,
             fmt::format("aten.zeros_like.default(%{}, dtype=None, layout=None, device=None, "
                         "pin_memory=None, memory_format=None)",
                         a));
        break;
      }
      case 2: {
        const std::string a = any_of(w), b = any_of(w);
        line(fresh(w), w, fmt::format("aten.add.Tensor(%{}, %{}, alpha=1)", a, b));
        break;
      }
      case 3: {
        const std::string a = any_of(w);
        line(fresh(w), w,
             pick(0, 1) ? fmt::format("aten.mul.Tensor(%{}, 3)", a)
                        : fmt::format("aten.neg.default(%{})", a));
        break;
      }
      case 4: {
        if (w == 8) return;
        const int start = pick(0, 8 - w);
        const std::string a = any_of(8);
        line(fresh(w), w, fmt::format("aten.slice.Tensor(%{}, 1, {}, {}, 1)", a, start, start + w));
        break;
      }
      case 5:
      case 6: {
        if (w == 8) return;
        const int start = pick(0, 8 - w);
        const std::string base = any_of(8), src = any_of(w);
        line(fresh(8), 8,
             fmt::format("aten.slice_scatter.default(%{}, %{}, 1, {}, {}, 1)", base, src, start,
                         start + w));
        break;
      }
      case 8:
      case 9: {
        // A producer used only by the write that follows (or later): the producer_writes shape.
        if (w == 8) return;
        const int start = pick(0, 8 - w);
        const std::string src = fmt::format("p{}", next_++);
        line(src, w, fmt::format("aten.mul.Tensor(%{}, 2)", any_of(w)));
        if (kind == 9 && pick(0, 1)) add_op();  // something in between, sometimes
        const std::string base = any_of(8);
        line(fresh(8), 8,
             fmt::format("aten.slice_scatter.default(%{}, %{}, 1, {}, {}, 1)", base, src, start,
                         start + w));
        break;
      }
      case 10: {
        // A select write in its canonical form: x[:, j] = f(y[:, i]).
        const std::string sel = fmt::format("s{}", next_++), p = fmt::format("p{}", next_++),
                          u = fmt::format("u{}", next_++);
        body_ += fmt::format("  %{}: f32[4] = aten.select.int(%{}, 1, {})\n", sel, any_of(8),
                             pick(0, 7));
        body_ += fmt::format("  %{}: f32[4] = aten.neg.default(%{})\n", p, sel);
        body_ += fmt::format("  %{}: f32[4, 1] = aten.unsqueeze.default(%{}, 1)\n", u, p);
        const int j = pick(0, 7);
        const std::string base = any_of(8);
        line(fresh(8), 8,
             fmt::format("aten.slice_scatter.default(%{}, %{}, 1, {}, {}, 1)", base, u, j, j + 1));
        break;
      }
      case 7: {
        const std::string base = any_of(8), src = any_of(2);
        line(fresh(8), 8,
             fmt::format("aten.index_put.default(%{}, [None, %idx], %{}, False)", base, src));
        break;
      }
    }
  }

  Picker pick_;
  std::map<int, std::vector<std::string>> pools_;
  std::string body_;
  int next_ = 0;
};

inline Tensor random_tensor(std::mt19937& rng, DType dtype, const Shape& shape) {
  Tensor t = Tensor::empty(dtype, shape).value();
  if (dtype == DType::kInt64) {
    std::uniform_int_distribution<int64_t> d(0, 7);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = d(rng);
  } else {
    std::uniform_int_distribution<int> d(-8, 8);  // small integers: exact in any order
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(d(rng));
  }
  return t;
}

inline bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const Tensor ca = a.contiguous_copy().value(), cb = b.contiguous_copy().value();
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) == 0;
}

// The program of `text` prepared in the planned (m == 0) or the naive (m == 1) plan.
inline Result<detail::ModelImpl> prepare_mode(const std::string& text, int m) {
  SPLICE_ASSIGN_OR_RETURN(ir::Program program, ir::parse_program(text));
  runtime::PrepareOptions options;
  options.mode = m == 0 ? PlanMode::kPlanned : PlanMode::kNaive;
  return runtime::prepare(std::move(program), options);
}

// Runs `text` in the planned and the naive plan for `calls` calls (buffer "buf" starting from
// one random value, random inputs x, y and idx each call, all drawn from `rng`). Returns an
// empty string when both agree bit for bit on every output and the state after every call and
// neither writes an input; otherwise what differs. `planned`, when given, receives the planned
// model's plan.
inline std::string planned_vs_naive(const std::string& text, std::mt19937& rng, int calls = 3,
                                    Plan* planned = nullptr) {
  const Tensor initial = random_tensor(rng, DType::kFloat32, {4, 8});
  std::array<detail::ModelImpl, 2> models;
  std::array<detail::SessionState, 2> states;
  for (int m = 0; m < 2; ++m) {
    auto model = prepare_mode(text, m);
    if (!model.ok())
      return fmt::format("preparing the {} plan: {}", m == 0 ? "planned" : "naive",
                         model.error().message());
    models[m] = std::move(*model);
    auto state = runtime::open_session_state(models[m]);
    if (!state.ok()) return "opening a session: " + state.error().message();
    states[m] = std::move(*state);
    states[m].buffers["buf"] = initial.contiguous_copy().value();
  }
  if (planned != nullptr) *planned = models[0].plan;
  for (int call = 0; call < calls; ++call) {
    runtime::TensorMap inputs = {{"x", random_tensor(rng, DType::kFloat32, {4, 8})},
                                 {"y", random_tensor(rng, DType::kFloat32, {4, 2})},
                                 {"idx", random_tensor(rng, DType::kInt64, {2})}};
    std::map<std::string, Tensor> before;
    for (const auto& [name, t] : inputs) before[name] = t.contiguous_copy().value();
    std::array<runtime::CallOutputs, 2> outs;
    for (int m = 0; m < 2; ++m) {
      auto r = runtime::execute(models[m], inputs, states[m]);
      if (!r.ok())
        return fmt::format("call {}, {} plan: {}", call, m == 0 ? "planned" : "naive",
                           r.error().message());
      outs[m] = std::move(*r);
      for (auto& [fqn, t] : outs[m].new_buffers) states[m].buffers[fqn] = t;
      for (const auto& [name, t] : inputs)
        if (!same_bytes(t, before[name]))
          return fmt::format("call {}, {} plan: input {} was written", call,
                             m == 0 ? "planned" : "naive", name);
    }
    if (outs[0].user_outputs.size() != outs[1].user_outputs.size())
      return fmt::format("call {}: {} outputs planned, {} naive", call, outs[0].user_outputs.size(),
                         outs[1].user_outputs.size());
    for (size_t i = 0; i < outs[0].user_outputs.size(); ++i)
      if (!same_bytes(*outs[0].user_outputs[i], *outs[1].user_outputs[i]))
        return fmt::format("call {}: output {} differs", call, i);
    if (!same_bytes(states[0].buffers.at("buf"), states[1].buffers.at("buf")))
      return fmt::format("call {}: the state after the call differs", call);
  }
  return "";
}

}  // namespace splice::plan::differential
