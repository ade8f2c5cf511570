#pragma once
// Nodes the runtime evaluates itself instead of calling a kernel: symbolic scalars
// (sym_size, Python operators on SymInts), .item() (binding data-dependent symbols with their
// range check), and the run-time checks (_assert_scalar, sym_constrain_range, ...).

#include "runtime/frame.h"

namespace splice::runtime {

Result<void> run_host_node(const ir::Program& program, const ir::Node& node, Frame& f);

}  // namespace splice::runtime
