#pragma once
// The CPU's interpreter of ir::PointwiseProgram: a whole program (one op, or a planned group
// of pointwise ops with several outputs) runs as one loop over its iteration space, in tiles
// of a few hundred elements held in small per-thread buffers, node by node, each node's result
// rounded to its result dtype as the program's semantics say (ir/pointwise.h), so it is
// bitwise the same as running the ops' kernels one by one. Outputs are stored through their
// strides (a slice of a larger buffer); large iteration spaces are split over the thread pool
// of the running session.

#include <cstdint>
#include <span>

#include "ir/pointwise.h"
#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::cpu {

// The compute classes (ir::PointwiseComputeClass bits) the interpreter runs `fn` in: the
// function's own classes less those it does not implement (integer division, which records
// ZeroDivisionError, and erfinv stay with their kernels).
uint8_t interpreted_classes(ir::PointwiseFn fn);

// Runs `p` over `sizes`: inputs[i] is program input i, of rank sizes.size() with zero strides
// where it broadcasts; outputs[k] is program output k, a strided view of `sizes`. Outputs
// must not overlap the inputs (a planned group never stores into memory it reads). `p` must
// be valid (ir::validate: the planner and the loader check it once). Errors (kInternal) name
// what does not match the program.
Result<void> run_pointwise_program(const ir::PointwiseProgram& p, std::span<const Tensor> inputs,
                                   std::span<const Tensor> outputs, const Shape& sizes);

}  // namespace splice::cpu
