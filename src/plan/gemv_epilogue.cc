// GEMV-epilogue groups (see gemv_epilogue.h).
#include "plan/gemv_epilogue.h"

#include "ir/ops.h"
#include "plan/matmul_kernels.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::OpId;
using ir::Value;

bool is_one(const ir::Arg& a) {
  if (a.is<int64_t>()) return a.as<int64_t>() == 1;
  if (a.is<double>()) return a.as<double>() == 1.0;
  return a.is_none();
}

std::optional<int64_t> int_arg(const Node& node, size_t i) {
  if (i >= node.args().size()) return std::nullopt;
  const ir::Arg& a = node.arg(i);
  if (a.is<int64_t>()) return a.as<int64_t>();
  return std::nullopt;
}

}  // namespace

bool epilogue_product_op(const Node& node) {
  const OpId op = node.op_id();
  if (op != OpId::linear && op != OpId::mm && op != OpId::addmm) return false;
  if (node.outputs().size() != 1 || node.output(0) == nullptr || !node.output(0)->is_tensor())
    return false;
  const size_t x_arg = op == OpId::addmm ? 1 : 0;
  const Value* x = tensor_at(node, x_arg);
  const Value* w = tensor_at(node, x_arg + 1);
  if (x == nullptr || w == nullptr || w->type().rank() != 2 || x->type().rank() < 1) return false;
  if (op == OpId::addmm)
    return tensor_at(node, 0) != nullptr && is_one(node.arg("beta")) && is_one(node.arg("alpha"));
  return true;
}

const Value* row_view_source(const Node& node) {
  const OpId op = node.op_id();
  if ((op != OpId::view && op != OpId::_unsafe_view && op != OpId::reshape) ||
      node.outputs().size() != 1)
    return nullptr;
  const Value* in = tensor_at(node, 0);
  const Value* out = node.output(0);
  if (in == nullptr || out == nullptr || !out->is_tensor() || in->type().rank() < 1 ||
      out->type().rank() < 1 || in->type().dtype != out->type().dtype)
    return nullptr;
  // A reshape keeps the row-major order: with the last dim kept, row r of one is row r of the
  // other.
  return in->type().sizes.back() == out->type().sizes.back() ? in : nullptr;
}

std::optional<int64_t> product_column(const Value& v, const Node& product) {
  const Value* out = product.output(0);
  if (&v == out) return 0;
  const Node* node = v.producer();
  if (node == nullptr) return std::nullopt;
  if (const Value* src = row_view_source(*node)) return product_column(*src, product);
  if (node->op_id() != OpId::slice_Tensor || node->outputs().size() != 1) return std::nullopt;
  const Value* src = tensor_at(*node, 0);
  if (src == nullptr) return std::nullopt;
  const int64_t rank = src->type().rank();
  const auto dim = int_arg(*node, 1);
  const auto start = int_arg(*node, 2);
  const auto end = int_arg(*node, 3);
  const auto step = node->args().size() > 4 ? int_arg(*node, 4) : std::optional<int64_t>(1);
  if (!dim || !start || !end || step != 1 || (*dim != rank - 1 && *dim != -1) || *start < 0)
    return std::nullopt;
  // The slice's own last size says how many columns it keeps (the bounds are normalised by
  // passes/normalize_slice_bounds.cc; an end past the dim is clamped there).
  const auto width = v.type().sizes.back().constant();
  if (!width || *width != *end - *start) return std::nullopt;
  const auto base = product_column(*src, product);
  if (!base) return std::nullopt;
  return *base + *start;
}

Result<GemvEpilogueOf> gemv_epilogue_of(const ir::Graph& graph, const Group& group) {
  const auto& nodes = graph.nodes();
  GemvEpilogueOf e;
  for (int32_t pos : group.nodes) {
    if (pos < 0 || pos >= static_cast<int32_t>(nodes.size()))
      return make_error(ErrorKind::kBadArchive, "plan: a group names node {}", pos);
    const Node& node = *nodes[pos];
    if (e.product < 0) {
      // The members before the product are its RMSNorm prologue, and views of the norm's value
      // the product reads it through.
      if (epilogue_product_op(node))
        e.product = pos;
      else if (row_view_source(node) != nullptr)
        e.views.push_back(pos);
      else
        e.prologue.nodes.push_back(pos);
      continue;
    }
    if (node.outputs().size() == 1 && node.output(0) != nullptr &&
        product_column(*node.output(0), *nodes[e.product]).has_value()) {
      e.slices.push_back(pos);
      continue;
    }
    e.pointwise.nodes.push_back(pos);
  }
  if (e.product < 0)
    return make_error(ErrorKind::kBadArchive, "plan: a GEMV-epilogue group has no product");
  if (e.pointwise.nodes.empty() && e.prologue.nodes.empty())
    return make_error(ErrorKind::kBadArchive,
                      "plan: GEMV-epilogue group at '{}' has neither a prologue nor an epilogue",
                      nodes[e.product]->name());
  e.prologue.kind = GroupKind::kRmsNorm;
  e.pointwise.outputs = group.outputs;
  e.pointwise.kind = GroupKind::kPointwise;
  return e;
}

}  // namespace splice::plan
