// `splice inspect MODEL` (a .pt2 archive or an engine file): the signature (user input names
// exactly as `splice run` expects them, with their expected dtype and shape), the symbols with
// their ranges, the weights, and the whole program as text IR; or, with --plan, the write and
// memory plan.
#include <cstdio>

#include "backends/backend.h"
#include "compiler/driver.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "plan/build.h"
#include "plan/engine_file.h"
#include "plan/report.h"
#include "runtime/input_binding.h"
#include "tools/splice/commands.h"

namespace splice::tools {

namespace {

std::string describe_passes() {
  std::string out = "# passes, in the order every program goes through them\n";
  for (const auto& pass : passes::default_passes())
    out += fmt::format("\n{}\n  {}\n", pass->name(), pass->description());
  return out;
}

// The program of a .pt2 archive or of an engine file compiled for `device`.
Result<ir::Program> load_any(const std::string& path, const std::string& device) {
  if (!plan::is_engine_file(path)) return compiler::load_program(path);
  SPLICE_ASSIGN_OR_RETURN(const backend::Backend* b, backend::require_backend(device));
  SPLICE_ASSIGN_OR_RETURN(plan::LoadedEngine engine, plan::load_engine_file(path, b->target()));
  return std::move(engine.program);
}

// `--plan`: an engine's own plan, or the plan a .pt2 gets for the backend in the requested
// mode (planning needs no device: a CUDA plan is made on a machine without a GPU).
Result<void> print_plan(const InspectOptions& options) {
  SPLICE_ASSIGN_OR_RETURN(const backend::Backend* b,
                          backend::require_backend(options.planning.device));
  ir::Program program;
  plan::Plan plan;
  if (plan::is_engine_file(options.model)) {
    SPLICE_ASSIGN_OR_RETURN(plan::LoadedEngine engine,
                            plan::load_engine_file(options.model, b->target()));
    program = std::move(engine.program);
    plan = std::move(engine.plan);
  } else {
    auto mode = plan::parse_plan_mode(options.planning.plan_mode);
    if (!mode) return make_error(ErrorKind::kBadUsage, "--plan-mode must be 'planned' or 'naive'");
    SPLICE_ASSIGN_OR_RETURN(program, compiler::load_program(options.model));
    plan = plan::build_plan(program, *mode, b->target());
  }
  SPLICE_TRY(plan::check_static_peak(program, plan));
  const std::string out = options.json ? plan::plan_report_json(program, plan).dump(2) + "\n"
                                       : plan::plan_report_text(program, plan);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return ok_result();
}

}  // namespace

Result<void> run_inspect(const InspectOptions& options) {
  if (options.passes) {
    std::string out = describe_passes();
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (options.model.empty()) return ok_result();
  }
  if (options.model.empty())
    return make_error(ErrorKind::kBadUsage, "inspect needs a model (or --passes)");
  if (options.plan) return print_plan(options);
  SPLICE_ASSIGN_OR_RETURN(ir::Program program, load_any(options.model, options.planning.device));
  std::string out;
  out += "# inputs (names for `splice run --inputs`)\n";
  for (const auto& spec : program.signature.inputs) {
    if (spec.kind != ir::InputKind::kUserInput || spec.value == nullptr) continue;
    if (spec.value->is_tensor())
      out += fmt::format("#   {}: {}\n", spec.value->name(),
                         runtime::describe_expected(program, *spec.value));
    else
      out += fmt::format("#   {}: {} (not a tensor: `splice run` cannot pass it)\n",
                         spec.value->name(), ir::value_kind_name(spec.value->kind()));
  }
  out += "# outputs\n";
  size_t user_index = 0;
  for (const auto& spec : program.signature.outputs) {
    if (spec.kind == ir::OutputKind::kUserOutput || spec.kind == ir::OutputKind::kLossOutput)
      out += fmt::format("#   output.{}\n", user_index++);
    else if (spec.kind == ir::OutputKind::kUserInputMutation)
      out += fmt::format("#   mutated.{}\n", spec.target);
    else if (spec.kind == ir::OutputKind::kBufferMutation)
      out += fmt::format("#   (state) {}\n", spec.target);
  }
  if (!program.weights.empty()) {
    out += fmt::format("# weights and buffers: {}\n", program.weights.size());
    for (const auto& [name, t] : program.weights)
      out += fmt::format("#   {}: {}{}\n", name, dtype_name(t.dtype()), shape_string(t.sizes()));
  }
  if (options.no_graph) {
    out += "# symbols\n";
    if (program.ranges.empty()) out += "#   (none: every shape is static)\n";
    for (const auto& [name, range] : program.ranges)
      out += fmt::format("#   {}: {}\n", name, range.to_string());
  } else {
    out += ir::print_program(program);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return ok_result();
}

}  // namespace splice::tools
