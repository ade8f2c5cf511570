#pragma once
// RMSNorm as one kernel: the chain an exported RMSNorm decomposes into, recognised in the graph
// so a backend that runs it (Target::fused_rms_norm) gets it as one row kernel instead of a
// pointwise group, a mean (a reduction) and a second pointwise group. The pattern, as
// transformers' LlamaRMSNorm and hand-written norms export it (pow(2) is already mul(x, x)
// after the passes; `_to_copy` marks the casts, each optional):
//
//   a    = add(x, residual)                  optional: the residual add before the norm
//   xf   = _to_copy(a, dtype=float32)        optional (then xf is a: a model computing its
//                                            norm in float16 rounds every step below to it)
//   sq   = mul(xf, xf)  |  pow(xf, 2)
//   m    = mean.dim(sq, [-1], keepdim=True)
//   v    = add(m, eps)                       eps a number
//   r    = rsqrt(v)
//   y    = mul(xf, r)   |  mul(r, xf)
//   yt   = _to_copy(y, dtype=C)              optional (C: the model's dtype)
//   out  = mul(yt, w)   |  mul(w, yt)        optional: w of sizes [H] (or 1 .. 1, H)
//
// Every value from xf to yt must be read by the chain alone (nothing stores them); a, the
// residual sum, may be read elsewhere (the kernel stores it too). Between the first and the
// last member only `_assert_tensor_metadata` may run (it checks nothing at run time), so the
// kernel can run where the last member was. Each refusal says why, for `inspect --plan`.

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/program.h"
#include "plan/plan.h"
#include "support/error.h"

namespace splice::plan {

// One chain's operands (see above).
struct RmsNormChain {
  std::vector<int32_t> nodes;           // members, in program order (the add first when fused)
  const ir::Value* x = nullptr;         // the add's first operand, or the norm's input
  const ir::Value* residual = nullptr;  // the add's second operand (null without the add)
  const ir::Value* sum = nullptr;       // the add's value (null without the add)
  const ir::Value* weight = nullptr;    // null: no weight
  const ir::Value* out = nullptr;       // the last member's value
  DType stat = DType::kFloat32;         // the dtype of xf .. y (float32 where the model upcasts)
  DType cast = DType::kFloat32;         // the dtype y is rounded to before the weight (stat
                                        // without a cast)
  double eps = 0;
};

// Who reads each value — the nodes (graph indices) that take it as an operand, with
// `_assert_tensor_metadata` left out (it checks nothing at run time) — each node's position,
// and the values the graph returns.
struct GraphUses {
  std::unordered_map<const ir::Value*, std::vector<int32_t>> users;
  std::unordered_map<const ir::Node*, int32_t> position;
  std::unordered_set<const ir::Value*> outputs;
};
GraphUses graph_uses(const ir::Graph& graph);

// The chain around `mean` (a graph node index of an aten.mean.dim), or an error whose message
// says why it is not one ("'mean_1' reduces dim 0, not the last"). With `fuse_add` false the
// residual add stays outside the chain. `pinned`, when given, names values the chain must not
// compute (the planner's: a value a write's destination receives straight from its producer).
Result<RmsNormChain> match_rms_norm(const ir::Graph& graph, int32_t mean, const GraphUses& uses,
                                    bool fuse_add,
                                    const std::function<bool(const ir::Value*)>& pinned = {});

// The chain of a planned RMSNorm group (the runtime's view): matched again at its mean member
// and required to have exactly the group's members; kBadArchive otherwise.
Result<RmsNormChain> rms_norm_of(const ir::Graph& graph, const Group& group);
// The same with the graph's uses already indexed: a caller resolving many groups of one graph
// (the fuser, the executor at load) builds them once — per group, the index was most of the
// time SmolVLA's 363 RMSNorm groups took to plan and load.
Result<RmsNormChain> rms_norm_of(const ir::Graph& graph, const Group& group, const GraphUses& uses);

}  // namespace splice::plan
