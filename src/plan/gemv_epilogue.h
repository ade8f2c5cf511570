#pragma once
// GEMV epilogues: a decode-shaped product (a GEMV, plan/matmul_kernels.h) whose value only one
// pointwise group reads — whole, or through slices of its last dim — runs with that group as
// its epilogue in one kernel, on a backend that has one (Target::gemv_epilogue). The product's
// value is never stored: each output element of the group is computed from the product's
// columns it reads, right after they are summed. What this fuses in a decoder:
//
//   gu   = linear(h, w_gate_up)        (concat_sibling_matmuls joined gate and up)
//   g    = slice(gu, -1, 0, I)
//   u    = slice(gu, -1, I, 2I)
//   s    = silu(g);  y = mul(s, u)     -> one kernel: y = silu(gu[:, j]) * gu[:, I + j]
//
// and a residual add after a projection (o = linear(a, w_o); h = add(r, o)) where no RMSNorm
// takes the add first. The product must be linear, or mm / addmm (alpha and beta 1) of a 2-d
// right operand, with at most 4 distinct column ranges read, each exactly the group's
// iteration space; the group keeps every other rule of a pointwise group (plan/fusion.h).
// A backend that finds the product's operands unfit for its kernel when the call runs (more
// rows than planned, a weight a 16-byte load cannot read) runs the product and the group one
// after the other, with the same results.

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/program.h"
#include "plan/plan.h"
#include "support/error.h"

namespace splice::plan {

// The most column ranges of one product an epilogue reads (silu(gate) * up reads two).
inline constexpr int kMaxEpilogueProducts = 4;
// The widest product that takes an RMSNorm prologue (every block of the kernel computes the
// rows' statistics again: a 128k-vocabulary head would spend more on that than it saves).
inline constexpr int64_t kMaxPrologueWidth = 16384;

// Whether `node` is a product an epilogue may follow: linear, or mm / addmm with alpha and
// beta 1, with a 2-d right operand and one tensor output.
bool epilogue_product_op(const ir::Node& node);

// The source of a view that only regroups the leading dims (view, _unsafe_view or reshape
// keeping the last dim: row r stays row r, as run_decompositions' linear makes around mm), or
// null.
const ir::Value* row_view_source(const ir::Node& node);

// Where `v` starts in `product`'s last dim: 0 for the product's value itself, `start` for a
// step-1 slice of its last dim with constant bounds, through any such slices and row views;
// nullopt for anything else.
std::optional<int64_t> product_column(const ir::Value& v, const ir::Node& product);

// A planned GEMV-epilogue group, as the runtime sees it.
struct GemvEpilogueOf {
  Group prologue;               // an RMSNorm chain before the product (kRmsNorm), or no nodes
  std::vector<int32_t> views;   // row views of the norm's value the product reads it through
  int32_t product = -1;         // the product's graph node index
  std::vector<int32_t> slices;  // the slices and row views of its value among the members
  Group pointwise;              // the other members: a pointwise group (group_program), or
                                // none (the product is stored as it is)
};

// Splits a kGemvEpilogue group into its prologue, product, slices and pointwise members;
// kBadArchive when the group is not one (no product, nothing around it).
Result<GemvEpilogueOf> gemv_epilogue_of(const ir::Graph& graph, const Group& group);

}  // namespace splice::plan
