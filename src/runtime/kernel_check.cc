// The load-time check that a backend runs every node of a program (kernel_check.h).
#include "runtime/kernel_check.h"

#include <set>
#include <string>
#include <variant>

namespace splice::runtime {

std::optional<DType> dispatch_dtype(const ir::Node& node) {
  for (const ir::Arg& arg : node.args()) {
    if (const auto* v = std::get_if<ir::Value*>(&arg.data)) {
      if (*v != nullptr && (*v)->is_tensor()) return (*v)->type().dtype;
    } else if (const auto* list = std::get_if<std::vector<ir::Value*>>(&arg.data)) {
      for (const ir::Value* t : *list)
        if (t != nullptr && t->is_tensor()) return t->type().dtype;
    }
  }
  for (const ir::Value* out : node.outputs())
    if (out != nullptr && out->is_tensor()) return out->type().dtype;
  return std::nullopt;
}

Result<void> check_kernels(const ir::Program& program, const backend::Target& target) {
  std::set<std::string> missing;
  std::set<std::string> refused;  // one line per op × dtype, the first node that needs it
  std::set<std::pair<ir::OpId, DType>> seen;
  for (const auto& node : program.graph.nodes()) {
    if (node->op().runs_on_host()) continue;
    if (!target.supports(node->op_id())) {
      missing.insert(node->target());
      continue;
    }
    const std::optional<DType> dtype = dispatch_dtype(*node);
    if (!dtype || !seen.insert({node->op_id(), *dtype}).second) continue;
    auto runs = target.check_runs(node->op_id(), *dtype);
    if (!runs.ok())
      refused.insert(fmt::format("{}, needed by node '{}'", runs.error().message(), node->name()));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return make_error(ErrorKind::kUnsupportedOp, "the {} backend has no kernel for {} op(s): {}",
                      target.name, missing.size(), list);
  }
  if (!refused.empty()) {
    std::string list;
    for (const auto& r : refused) list += (list.empty() ? "" : "; ") + r;
    return make_error(ErrorKind::kUnsupportedOp, "{}", list);
  }
  return ok_result();
}

}  // namespace splice::runtime
