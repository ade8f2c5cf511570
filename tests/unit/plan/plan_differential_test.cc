// Differential test of the planner: random programs of slice writes, index writes, views,
// clones and pointwise ops over shared bases and a mutated buffer, each run for several calls
// with the planned plan and with the naive plan (every write copies its base: trivially
// correct), which must agree bit for bit on every output, on the state after each call, and
// leave the inputs untouched. The recorded cases check the planner against PyTorch on the
// patterns of write-semantics.md; this one looks for orderings nobody thought to record.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include <fmt/format.h>

#include "ir/parser.h"
#include "runtime/executor.h"

namespace splice::plan {
namespace {

// A random program in text IR. Values live in pools by width (8: the full [4, 8]; 2 and 4:
// slices); every op picks operands of the right width.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint32_t seed) : rng_(seed) {}

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
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
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

  std::mt19937 rng_;
  std::map<int, std::vector<std::string>> pools_;
  std::string body_;
  int next_ = 0;
};

Tensor random_tensor(std::mt19937& rng, DType dtype, const Shape& shape) {
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

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const Tensor ca = a.contiguous_copy().value(), cb = b.contiguous_copy().value();
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) == 0;
}

// The program of `text` prepared in the planned (m == 0) or the naive (m == 1) plan.
Result<detail::ModelImpl> prepare_mode(const std::string& text, int m) {
  SPLICE_ASSIGN_OR_RETURN(ir::Program program, ir::parse_program(text));
  runtime::PrepareOptions options;
  options.mode = m == 0 ? PlanMode::kPlanned : PlanMode::kNaive;
  return runtime::prepare(std::move(program), options);
}

struct ModeRun {
  detail::ModelImpl model;
  detail::SessionState state;
};

TEST(PlanDifferential, PlannedAndNaivePlansAgreeOnRandomWritePrograms) {
  constexpr int kPrograms = 1000;
  int in_place = 0, placed = 0, state_in_place = 0;
  for (uint32_t seed = 1; seed <= kPrograms; ++seed) {
    const std::string text = ProgramGenerator(seed).generate();
    SCOPED_TRACE(fmt::format("seed {}:\n{}", seed, text));
    std::mt19937 rng(seed);
    const Tensor initial = random_tensor(rng, DType::kFloat32, {4, 8});
    std::array<ModeRun, 2> runs;
    for (int m = 0; m < 2; ++m) {
      auto model = prepare_mode(text, m);
      ASSERT_TRUE(model.ok()) << model.error().message();
      runs[m].model = std::move(*model);
      runs[m].state = runtime::open_session_state(runs[m].model).value();
      runs[m].state.buffers["buf"] = initial.contiguous_copy().value();
    }
    for (const auto& d : runs[0].model.plan.writes) {
      in_place +=
          d.strategy == WriteStrategy::kReuseBase || d.strategy == WriteStrategy::kInPlaceState;
      placed += d.src == SrcMode::kProducerWrites;
      state_in_place += d.strategy == WriteStrategy::kInPlaceState;
    }
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE(fmt::format("call {}", call));
      runtime::TensorMap inputs = {{"x", random_tensor(rng, DType::kFloat32, {4, 8})},
                                   {"y", random_tensor(rng, DType::kFloat32, {4, 2})},
                                   {"idx", random_tensor(rng, DType::kInt64, {2})}};
      std::map<std::string, Tensor> before;
      for (const auto& [name, t] : inputs) before[name] = t.contiguous_copy().value();
      std::array<runtime::CallOutputs, 2> outs;
      for (int m = 0; m < 2; ++m) {
        auto r = runtime::execute(runs[m].model, inputs, runs[m].state);
        ASSERT_TRUE(r.ok()) << r.error().message();
        outs[m] = std::move(*r);
        for (auto& [fqn, t] : outs[m].new_buffers) runs[m].state.buffers[fqn] = t;
        for (const auto& [name, t] : inputs)
          ASSERT_TRUE(same_bytes(t, before[name])) << "input " << name << " was written";
      }
      ASSERT_EQ(outs[0].user_outputs.size(), outs[1].user_outputs.size());
      for (size_t i = 0; i < outs[0].user_outputs.size(); ++i)
        EXPECT_TRUE(same_bytes(*outs[0].user_outputs[i], *outs[1].user_outputs[i]))
            << "output " << i;
      EXPECT_TRUE(same_bytes(runs[0].state.buffers.at("buf"), runs[1].state.buffers.at("buf")))
          << "state after the call";
      if (::testing::Test::HasFailure()) return;
    }
  }
  // The programs must exercise the interesting plans, not only copies.
  EXPECT_GT(in_place, kPrograms / 4);
  EXPECT_GT(placed, kPrograms / 4);
  EXPECT_GT(state_in_place, kPrograms / 20);
}

TEST(PlanDifferential, AProducerOfALaterLinkRunsBeforeItsBaseExists) {
  // Found by the random programs (seed 236): p2 stores into v7's destination at position 2,
  // before v6 (v7's base, the previous link of the in-place chain) exists; the destination is
  // the chain's first base v1, and v6 must not be needed to find it.
  const char* text = R"(signature {
  input %x: user_input
  input %y: user_input
  output 0: user_output
}
graph(%x: f32[4, 8], %y: f32[4, 2]) {
  %v1: f32[4, 8] = aten.clone.default(%x, memory_format=None)
  %p2: f32[4, 2] = aten.mul.Tensor(%y, 2)
  %p4: f32[4, 2] = aten.neg.default(%y)
  %v6: f32[4, 8] = aten.slice_scatter.default(%v1, %p4, 1, 6, 8, 1)
  %v7: f32[4, 8] = aten.slice_scatter.default(%v6, %p2, 1, 2, 4, 1)
  return (%v7)
}
)";
  std::mt19937 rng(236);
  runtime::TensorMap inputs = {{"x", random_tensor(rng, DType::kFloat32, {4, 8})},
                               {"y", random_tensor(rng, DType::kFloat32, {4, 2})}};
  std::array<Tensor, 2> results;
  for (int m = 0; m < 2; ++m) {
    auto model = prepare_mode(text, m);
    ASSERT_TRUE(model.ok()) << model.error().message();
    if (m == 0) {
      ASSERT_EQ(model->plan.writes.size(), 2u);
      EXPECT_EQ(model->plan.writes[1].src, SrcMode::kProducerWrites);
      EXPECT_EQ(model->plan.writes[1].dest_value, "v1");
    }
    detail::SessionState state = runtime::open_session_state(*model).value();
    auto r = runtime::execute(*model, inputs, state);
    ASSERT_TRUE(r.ok()) << r.error().message();
    results[m] = *r->user_outputs[0];
  }
  EXPECT_TRUE(same_bytes(results[0], results[1]));
}

}  // namespace
}  // namespace splice::plan
