// The compiler driver (driver.h): the frontend's Program, type-checked, through the passes.
#include "compiler/driver.h"

#include "frontend/pt2/loader.h"
#include "ir/type_check.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"

namespace splice::compiler {

Result<void> canonicalize(ir::Program& program) {
  // Every node's recorded types against its op's shape rule (the verifier errs on a provable
  // disagreement); what the symbol ranges cannot decide is checked when the symbols are bound.
  SPLICE_TRY(ir::verify(program));
  SPLICE_ASSIGN_OR_RETURN(program.shape_checks, ir::check_types(program));
  // Canonical writes (src/passes): later stages only ever see the passes' output.
  SPLICE_TRY(passes::run_pipeline(program));
  SPLICE_TRY(ir::verify(program));
  return ok_result();
}

Result<ir::Program> load_program(const std::string& path) {
  SPLICE_ASSIGN_OR_RETURN(ir::Program program, pt2::load_recorded_program(path));
  auto done = canonicalize(program);
  if (!done.ok()) return done.error().with_context(path);
  return program;
}

}  // namespace splice::compiler
