// Dataflow facts for the planners (see dataflow.h).
#include "plan/dataflow.h"

#include <algorithm>
#include <array>

#include "ir/ops.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::Value;

const Value* value_of(const ir::Arg& arg) {
  auto* v = std::get_if<Value*>(&arg.data);
  return v != nullptr && *v != nullptr && (*v)->is_tensor() ? *v : nullptr;
}

}  // namespace

int DataFlow::def_of(const Value* v) const {
  auto it = def.find(v);
  return it == def.end() ? -1 : it->second;
}

const std::vector<int>& DataFlow::reads_of(const Value* v) const {
  static const std::vector<int> kNone;
  auto it = reads.find(v);
  return it == reads.end() ? kNone : it->second;
}

std::vector<int> DataFlow::transitive_reads(const Value* v) const {
  std::vector<int> out;
  std::vector<const Value*> work = {v};
  while (!work.empty()) {
    const Value* x = work.back();
    work.pop_back();
    const auto& r = reads_of(x);
    out.insert(out.end(), r.begin(), r.end());
    auto it = views.find(x);
    if (it != views.end()) work.insert(work.end(), it->second.begin(), it->second.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool DataFlow::is_graph_output(const Value* v) const {
  const auto& r = reads_of(v);
  return std::find(r.begin(), r.end(), end) != r.end();
}

const Value* DataFlow::stored_value(const Value* src, int* squeeze_dim) const {
  if (squeeze_dim != nullptr) *squeeze_dim = -1;
  auto it = viewed.find(src);
  const Node* view = src->producer();
  if (it == viewed.end() || view == nullptr || view->op_id() != ir::OpId::unsqueeze) return src;
  const Value* v = it->second;
  auto v_views = views.find(v);
  if (!reads_of(v).empty() || v_views == views.end() || v_views->second.size() != 1) return src;
  if (!view->arg(1).is<int64_t>()) return src;
  int64_t d = view->arg(1).as<int64_t>();
  if (d < 0) d += src->type().rank();
  if (d < 0 || d >= src->type().rank()) return src;
  if (squeeze_dim != nullptr) *squeeze_dim = static_cast<int>(d);
  return v;
}

DataFlow analyse(const ir::Program& program, const backend::Target& target) {
  DataFlow df;
  df.program = &program;
  df.target = &target;
  const auto& nodes = program.graph.nodes();
  df.end = static_cast<int>(nodes.size());

  // Inputs and their roles. A mutation output names its state by buffer FQN or input name.
  std::unordered_map<std::string, const Value*> mutated;  // target → new value
  const auto& outs = program.graph.outputs();
  for (size_t i = 0; i < outs.size() && i < program.signature.outputs.size(); ++i) {
    const auto& spec = program.signature.outputs[i];
    if (spec.kind != ir::OutputKind::kBufferMutation &&
        spec.kind != ir::OutputKind::kUserInputMutation)
      continue;
    if (const Value* v = value_of(outs[i])) mutated[spec.target] = v;
  }
  for (const auto& spec : program.signature.inputs) {
    if (spec.value == nullptr || !spec.value->is_tensor()) continue;
    df.def[spec.value] = -1;
    const std::string key =
        spec.kind == ir::InputKind::kUserInput ? spec.value->name() : spec.target;
    const bool can_mutate =
        spec.kind == ir::InputKind::kUserInput || spec.kind == ir::InputKind::kBuffer;
    auto m = mutated.find(key);
    if (can_mutate && m != mutated.end()) {
      df.input_role[spec.value] = InputRole::kState;
      df.mutation_of[spec.value] = m->second;
    } else {
      df.input_role[spec.value] =
          spec.kind == ir::InputKind::kUserInput ? InputRole::kInput : InputRole::kReadOnly;
    }
  }

  for (int pos = 0; pos < df.end; ++pos) {
    const Node& node = *nodes[pos];
    for (const Value* out : node.outputs())
      if (out != nullptr) df.def[out] = pos;
    const bool view = node.op().may_view();
    if (view) {
      const Value* input = node.args().empty() ? nullptr : value_of(node.arg(0));
      if (input != nullptr) {
        for (const Value* out : node.outputs()) {
          if (out == nullptr || !out->is_tensor()) continue;
          df.views[input].push_back(out);
          df.viewed[out] = input;
        }
      }
      continue;
    }
    if (node.op().reads_metadata_only()) continue;
    for (const Value* v : node.operands())
      if (v->is_tensor()) df.reads[v].push_back(pos);
  }
  for (const auto& out : outs)
    if (const Value* v = value_of(out)) df.reads[v].push_back(df.end);
  return df;
}

const Value* write_base(const Node& write) { return value_of(write.arg(0)); }

const Value* write_src(const Node& write) {
  switch (write.op_id()) {
    case ir::OpId::index_put:
      return value_of(write.arg(2));
    case ir::OpId::index_copy:
      return value_of(write.arg(3));
    default:
      return value_of(write.arg(1));  // slice_scatter / select_scatter
  }
}

int64_t example_bytes(const ir::Program& program, const Value& v) {
  SymBindings hints(program.hints.begin(), program.hints.end());
  auto bytes = byte_size_expr(v).evaluate(hints);
  return bytes.ok() ? *bytes : 0;
}

SymExpr byte_size_expr(const Value& v) {
  std::vector<SymExpr> factors = v.type().sizes;
  factors.emplace_back(static_cast<int64_t>(dtype_size(v.type().dtype)));
  return SymExpr::make(SymOp::kMul, std::move(factors));
}

}  // namespace splice::plan
