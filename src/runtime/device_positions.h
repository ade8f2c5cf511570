#pragma once
// Positions a recorded call reads on the device (docs/cuda.md, "CUDA graphs"). A symbol that a
// program reads with .item() from one of its inputs and uses only as where a window of fixed
// size starts — the start of a slice, the index of a select, read or written (slice_scatter,
// select_scatter) — moves data, never a size. Such a position symbol does not key a recording:
// the recording computes the position on the device from its own copy of the input
// (CallRecorder::bind_positions, which also checks the symbol's range there) and moves every window
// at the position with a copy that reads the position when it runs
// (CallRecorder::copy_at_position). So a decode loop that writes its KV cache at pos.item() replays
// one recording.
//
// A symbol u is a position symbol when
//   - it is bound by the .item() of a user input the program does not write, of one element
//     and an integer dtype, and its range has a largest value;
//   - no tensor's size, no planned buffer's size and no graph output involves it;
//   - every node reading a value derived from it is either a host node (scalar arithmetic, an
//     assert or range constraint that u's range implies) or a positional node: a slice (step
//     1), select, slice_scatter or select_scatter whose start or index is u + c, with
//     min(u) + c >= 0 (PyTorch would wrap a negative one) and, for slices, end = start + the
//     window's static size.
// Those are then the only places its value reaches, so moving them to the device is enough.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/program.h"
#include "plan/plan.h"
#include "tensor/tensor.h"

namespace splice::runtime {

// At most this many distinct offsets c of u + c per symbol (one small kernel computes them).
inline constexpr size_t kMaxPositionOffsets = 8;

struct PositionSymbol {
  std::string name;                   // "u0"
  int32_t item_node = -1;             // the node that reads it (.item()), by graph position
  const ir::Value* source = nullptr;  // the user input it is read from
  SymRange range;                     // with a largest value
  std::vector<int64_t> offsets;       // every c of a u + c a positional node starts at
};

// A slice or select (read or write) whose window starts at a position symbol plus a constant.
struct PositionalNode {
  int32_t symbol = -1;  // into DevicePositions::symbols
  int32_t offset = -1;  // into that symbol's offsets
  int64_t dim = 0;      // the dim of the sliced or written tensor that the window moves along
  int64_t extent = 1;   // the window's size along dim
  bool select = false;  // a select: the other side of the copy lacks dim
};

struct DevicePositions {
  std::vector<PositionSymbol> symbols;
  std::unordered_map<int32_t, PositionalNode> nodes;  // by graph position
  // Why a symbol the program reads with .item() is not a position symbol (for the reason a
  // recording is refused); empty when every such symbol is one.
  std::string not_positions;

  const PositionalNode* node(int32_t pos) const {
    auto it = nodes.find(pos);
    return it == nodes.end() ? nullptr : &it->second;
  }
  const PositionSymbol* symbol_of_item(int32_t pos) const {
    for (const auto& s : symbols)
      if (s.item_node == pos) return &s;
    return nullptr;
  }
};

DevicePositions find_device_positions(const ir::Program& program, const plan::Plan& plan);

// The value of `symbol` in its input `t`, when t is in host memory (nullopt when it is on a
// device: reading it would wait for the device).
Result<std::optional<int64_t>> host_position(const PositionSymbol& symbol, const Tensor& t);

// Checks the position symbols whose inputs the caller gave in host memory against their ranges
// before a replay, with the error running the call step by step gives at the .item(); inputs on
// the device are checked by the replay itself (CallRecorder::bind_positions).
Result<void> check_host_positions(const ir::Program& program, const DevicePositions& positions,
                                  const std::vector<std::pair<const ir::Value*, Tensor>>& inputs);

}  // namespace splice::runtime
