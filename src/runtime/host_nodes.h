#pragma once
// Nodes the runtime evaluates itself instead of calling a kernel: symbolic scalars
// (sym_size, Python operators on SymInts), .item() (binding data-dependent symbols with their
// range check), and the run-time checks (_assert_scalar, sym_constrain_range, ...).

#include "runtime/frame.h"

namespace splice::runtime {

Result<void> run_host_node(const ir::Program& program, const ir::Node& node, Frame& f);

// The error of a value read by .item() (node `item`) into `symbol` outside the symbol's range.
Error symbol_out_of_range(const ir::Node& item, const std::string& symbol, int64_t value,
                          const SymRange& range);

}  // namespace splice::runtime
