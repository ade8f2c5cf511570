#pragma once
// What the executor resolves once per model so that a call's steps cost no lookups: a slot
// per graph value, each kernel node's argument template (constants converted once, value
// arguments as slot references), its output slots, the slots that die after it, its planned
// placement, and the static shape of every value whose dims are all constants.

#include <vector>

#include "runtime/frame.h"
#include "runtime/model_impl.h"

namespace splice::runtime {

// Fills ModelImpl::slot_of, slot_value, static_shape, exec and static_buffer_bytes from the
// program and the resolved plan (ModelImpl::placement, release_after).
Result<void> resolve_node_exec(detail::ModelImpl& m);

// Overwrites the value entries of `args` (a copy of exec.args) from the frame's slots.
Result<void> fill_args(const detail::ModelImpl& m, const detail::NodeExec& exec, const Frame& f,
                       std::vector<backend::KernelArg>& args);

// Drops every tensor that fill_args put in `args` (keeping the shape vectors' memory), so an
// argument dies when its value does and nothing outlives the call.
void release_args(const detail::NodeExec& exec, std::vector<backend::KernelArg>& args);

}  // namespace splice::runtime
