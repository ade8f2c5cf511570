// The PointwiseProgram interpreter (see pointwise_program.h). The iteration space is cut into
// tiles of kTile elements in row-major order. Per tile, every input is gathered into a slot
// in its own dtype (or, for a tile of whole chunks of an input that walks the space densely,
// read where it is; an output that does is likewise computed in place), every node converts its
// operands into its compute dtype (c10's rules, cast_value), applies its function over the tile's
// elements rounded up to whole chunks (pointwise_fns.h) and rounds the result into its result
// dtype, and every output is scattered through its strides. Slots are per-thread scratch, so tiles
// run in parallel over the session's pool; each element is computed by the same code whatever the
// split, so results do not depend on the thread count.
#include "backends/cpu/pointwise_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_fns.h"
#include "tensor/convert.h"

namespace splice::cpu {

namespace {

using ir::PointwiseFn;
using ir::PointwiseNode;
using ir::PointwiseProgram;
using ir::PointwiseRef;

// Elements per tile: the slots of a program of a few dozen nodes stay in L1/L2.
constexpr int64_t kTile = pointwise::kTileElements;
// Bytes of one slot: kTile elements of the widest dtype.
constexpr size_t kSlotBytes = kTile * 8;

// n elements of `from` at src converted into `to` at dst (c10's conversion).
void convert_array(DType from, const std::byte* src, DType to, std::byte* dst, int64_t n) {
  dispatch_dtype(from, [&](auto ft) {
    using F = typename decltype(ft)::type;
    dispatch_dtype(to, [&](auto tt) {
      using T = typename decltype(tt)::type;
      const F* s = reinterpret_cast<const F*>(src);
      T* __restrict d = reinterpret_cast<T*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = cast_value<T, F>(s[i]);
    });
  });
}

// Calls f(std::integral_constant<int64_t, size>) for an element of 1, 2, 4 or 8 bytes (every
// dtype's size), so that the copies below have a constant size: a memcpy of constant size
// compiles to one move and keeps the bytes' own type (the slots are read as the dtype later).
template <typename F>
void with_element_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(std::integral_constant<int64_t, 1>{});
    case 2:
      return f(std::integral_constant<int64_t, 2>{});
    case 4:
      return f(std::integral_constant<int64_t, 4>{});
    default:
      return f(std::integral_constant<int64_t, 8>{});
  }
}

// Copies `n` elements of `size` bytes between a packed array and a strided run. Runs are
// short in small models (a head's 8 elements, a broadcast scale's 1): elements move by
// copies of constant size, never through a library memcpy call each.
void gather_run(const std::byte* src, int64_t stride, size_t size, std::byte* dst, int64_t n) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * size);
    return;
  }
  with_element_size(size, [&](auto element) {
    constexpr int64_t kSize = decltype(element)::value;
    if (stride == 0) {
      // A broadcast input: its one element n times, from a copy the loop need not reload (a
      // loop the compiler vectorises, as it cannot the strided one below).
      std::byte value[kSize];
      std::memcpy(value, src, kSize);
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * kSize, value, kSize);
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * kSize, src + i * stride * kSize, kSize);
  });
}
void scatter_run(const std::byte* src, std::byte* dst, int64_t stride, size_t size, int64_t n) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * size);
    return;
  }
  with_element_size(size, [&](auto element) {
    constexpr int64_t kSize = decltype(element)::value;
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * kSize, src + i * kSize, kSize);
  });
}

// The multi-index of the iteration space: inline up to kInlineRank dims (no allocation on
// the per-tile path), on the heap beyond.
constexpr size_t kInlineRank = 12;
class Index {
 public:
  explicit Index(size_t rank) : rank_(rank) {
    if (rank > kInlineRank) heap_.assign(rank, 0);
  }
  int64_t* data() { return rank_ > kInlineRank ? heap_.data() : inline_; }
  size_t size() const { return rank_; }

 private:
  size_t rank_;
  int64_t inline_[kInlineRank] = {};
  std::vector<int64_t> heap_;
};

// Calls f(tile_offset, index, run_length) for every run of the innermost dim inside
// [start, start + n) of the row-major iteration space.
template <typename F>
void for_each_run(const Shape& sizes, int64_t start, int64_t n, F&& f) {
  const size_t rank = sizes.size();
  Index index(rank);
  int64_t* idx = index.data();
  if (rank == 0) {
    f(int64_t{0}, idx, int64_t{1});
    return;
  }
  int64_t rest = start;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = rest % sizes[d];
    rest /= sizes[d];
  }
  int64_t done = 0;
  while (done < n) {
    const int64_t len = std::min(n - done, sizes[rank - 1] - idx[rank - 1]);
    f(done, idx, len);
    done += len;
    idx[rank - 1] += len;
    for (size_t d = rank - 1; d > 0 && idx[d] == sizes[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

int64_t offset_of(const int64_t* idx, const Shape& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < strides.size(); ++d) off += idx[d] * strides[d];
  return off;
}

// Merges the dims of the iteration space that every tensor walks as one (a dim whose stride is
// the next dim's stride times its size, in every tensor alike) and drops dims of size 1, so
// that runs of the innermost dim are as long as the tensors' layout allows: a contiguous
// [1, T, 64] program walks one run of T*64 elements, not T runs of 64. The tensors become views
// over the merged space; the row-major element order, and so every tile, stays the same.
Shape coalesce_dims(const Shape& sizes, std::vector<Tensor>& tensors) {
  Shape merged;
  std::vector<Shape> strides(tensors.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool joins = !merged.empty();
    for (size_t i = 0; i < tensors.size() && joins; ++i)
      joins = strides[i].back() == tensors[i].strides()[d] * sizes[d];
    if (joins) {
      merged.back() *= sizes[d];
      for (size_t i = 0; i < tensors.size(); ++i) strides[i].back() = tensors[i].strides()[d];
    } else {
      merged.push_back(sizes[d]);
      for (size_t i = 0; i < tensors.size(); ++i) strides[i].push_back(tensors[i].strides()[d]);
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    tensors[i] = tensors[i].view_as(merged, std::move(strides[i]), tensors[i].offset());
  return merged;
}

// Whether t walks the iteration space in row-major order with unit steps: element i of the
// space is element i of t's memory, so a tile of it is one range of memory.
bool dense_in(const Tensor& t, const Shape& sizes) {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && t.strides()[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

class Interpreter {
 public:
  Interpreter(const PointwiseProgram& p, std::span<const Tensor> inputs,
              std::span<const Tensor> outputs, const Shape& sizes)
      : p_(p), inputs_(inputs), outputs_(outputs), sizes_(sizes) {
    uses_index_ = false;
    for (const PointwiseNode& node : p.nodes)
      for (const PointwiseRef& r : node.operands)
        uses_index_ = uses_index_ || r.kind == PointwiseRef::Kind::kLinearIndex;
    // Dense inputs are read in place and dense outputs computed in place, a whole tile at a
    // time (run_tiles): no copy into or out of the scratch slots. An output whose storage an
    // input shares keeps its slot: every input of a tile is read before any node stores.
    for (const Tensor& in : inputs) in_place_input_.push_back(dense_in(in, sizes));
    std::vector<bool> node_taken(p.nodes.size(), false);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Tensor& out = outputs[k];
      const int32_t node = p.outputs[k].node;
      bool ok = dense_in(out, sizes) && !node_taken[node] && out.dtype() == p.nodes[node].result;
      for (const Tensor& in : inputs) ok = ok && in.storage()->data() != out.storage()->data();
      if (ok) node_taken[node] = true;
      in_place_output_.push_back(ok);
    }
  }

  // Runs tiles [first, last) with this thread's scratch.
  void run_tiles(int64_t first, int64_t last, int64_t numel) const {
    // Slots: inputs, constants, nodes, the linear index, 4 operand temporaries, 1 result.
    const size_t count = p_.inputs.size() + p_.constants.size() + p_.nodes.size() + 6;
    thread_local std::vector<std::byte> scratch;
    if (scratch.size() < count * kSlotBytes) scratch.resize(count * kSlotBytes);
    std::byte* base = scratch.data();
    auto slot = [&](size_t i) { return base + i * kSlotBytes; };
    const size_t c0 = p_.inputs.size(), n0 = c0 + p_.constants.size();
    const size_t index_slot = n0 + p_.nodes.size(), temp0 = index_slot + 1;
    // Constants, materialised in their dtype as a 0-d tensor holds them, as many elements as
    // the largest tile computes.
    const int64_t most = pointwise::chunked_count(std::min(kTile, numel - first * kTile));
    for (size_t k = 0; k < p_.constants.size(); ++k) {
      const auto& c = p_.constants[k];
      dispatch_dtype(c.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T v;
        if (c.value.is_double())
          v = cast_value<T, double>(c.value.to_double());
        else if (c.value.is_bool())
          v = cast_value<T, bool>(c.value.to_bool());
        else
          v = cast_value<T, int64_t>(c.value.to_int());
        T* d = reinterpret_cast<T*>(slot(c0 + k));
        for (int64_t i = 0; i < most; ++i) d[i] = v;
      });
    }
    // Where each input and node value of the current tile is: its slot, or in place.
    std::vector<const std::byte*> input_at(inputs_.size());
    std::vector<std::byte*> node_at(p_.nodes.size());
    for (int64_t t = first; t < last; ++t) {
      const int64_t start = t * kTile, n = std::min(kTile, numel - start);
      const int64_t count = pointwise::chunked_count(n);
      // Nodes read and write `count` elements: only a tile of whole chunks stays in place.
      const bool whole = n == count;
      for (size_t i = 0; i < inputs_.size(); ++i) {
        const Tensor& in = inputs_[i];
        input_at[i] = whole && in_place_input_[i]
                          ? in.raw_data() + start * static_cast<int64_t>(dtype_size(in.dtype()))
                          : slot(i);
      }
      for (size_t j = 0; j < p_.nodes.size(); ++j) node_at[j] = slot(n0 + j);
      for (size_t k = 0; k < outputs_.size(); ++k)
        if (whole && in_place_output_[k])
          node_at[p_.outputs[k].node] =
              outputs_[k].raw_data() +
              start * static_cast<int64_t>(dtype_size(outputs_[k].dtype()));
      if (uses_index_) {
        auto* d = reinterpret_cast<int64_t*>(slot(index_slot));
        for (int64_t i = 0; i < count; ++i) d[i] = start + i;
      }
      // Nodes compute on whole chunks (run_node): past a short tile's end an input slot holds
      // whatever the scratch held before, perhaps another dtype's bytes, and reading those as
      // bool is undefined behaviour. Zeros there make every element computed on a valid value.
      if (n < count)
        for (size_t i = 0; i < inputs_.size(); ++i) {
          const size_t size = dtype_size(inputs_[i].dtype());
          std::memset(slot(i) + n * static_cast<int64_t>(size), 0,
                      static_cast<size_t>(count - n) * size);
        }
      for_each_run(sizes_, start, n, [&](int64_t at, const int64_t* idx, int64_t len) {
        for (size_t i = 0; i < inputs_.size(); ++i) {
          if (input_at[i] != slot(i)) continue;  // read in place
          const Tensor& in = inputs_[i];
          const size_t size = dtype_size(in.dtype());
          const int64_t inner = sizes_.empty() ? 1 : in.strides().back();
          gather_run(in.raw_data() + offset_of(idx, in.strides()) * static_cast<int64_t>(size),
                     inner, size, slot(i) + at * static_cast<int64_t>(size), len);
        }
      });
      for (size_t j = 0; j < p_.nodes.size(); ++j)
        run_node(j, count, slot, input_at, node_at, index_slot, temp0);
      for_each_run(sizes_, start, n, [&](int64_t at, const int64_t* idx, int64_t len) {
        for (size_t k = 0; k < outputs_.size(); ++k) {
          if (whole && in_place_output_[k]) continue;  // computed in place
          const Tensor& out = outputs_[k];
          const size_t size = dtype_size(out.dtype());
          const int64_t inner = sizes_.empty() ? 1 : out.strides().back();
          scatter_run(node_at[p_.outputs[k].node] + at * static_cast<int64_t>(size),
                      out.raw_data() + offset_of(idx, out.strides()) * static_cast<int64_t>(size),
                      inner, size, len);
        }
      });
    }
  }

 private:
  // Nodes compute `count` elements, the tile's rounded up to whole chunks of a constant trip
  // count the compiler vectorizes. Elements past the tile's own are computed on (from the
  // zeros run_tiles puts there) but never stored.
  template <typename SlotFn>
  void run_node(size_t j, int64_t count, SlotFn& slot, std::span<const std::byte* const> input_at,
                std::span<std::byte* const> node_at, size_t index_slot, size_t temp0) const {
    const PointwiseNode& node = p_.nodes[j];
    const ir::PointwiseFnInfo& info = ir::pointwise_fn_info(node.fn);
    // Each operand in the dtype the function reads it in (where's condition: bool).
    const std::byte* ops[4] = {nullptr, nullptr, nullptr, nullptr};
    for (size_t k = 0; k < node.operands.size(); ++k) {
      const PointwiseRef& r = node.operands[k];
      const DType from = ir::operand_dtype(p_, r);
      const std::byte* src = r.kind == PointwiseRef::Kind::kInput ? input_at[r.index]
                             : r.kind == PointwiseRef::Kind::kConstant
                                 ? slot(p_.inputs.size() + r.index)
                             : r.kind == PointwiseRef::Kind::kNode ? node_at[r.index]
                                                                   : slot(index_slot);
      const DType to = info.bool_condition && k == 0 ? DType::kBool : node.compute;
      if (from == to) {
        ops[k] = src;
      } else {
        convert_array(from, src, to, slot(temp0 + k), count);
        ops[k] = slot(temp0 + k);
      }
    }
    std::byte* result = node_at[j];
    // The function's own result type: bool for predicates, the compute dtype otherwise.
    const DType fn_type = info.bool_result ? DType::kBool : node.compute;
    std::byte* fn_out = fn_type == node.result ? result : slot(temp0 + 4);
    dispatch_dtype(node.compute, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!is_reduced_float_v<T>) {
        auto* x = reinterpret_cast<const T*>(ops[0]);
        auto* y = reinterpret_cast<const T*>(ops[1]);
        auto* z = reinterpret_cast<const T*>(ops[2]);
        auto* w = reinterpret_cast<const T*>(ops[3]);
        if (info.bool_result) {
          pointwise::apply_predicate<T>(node.fn, count, x, y, reinterpret_cast<bool*>(fn_out));
        } else if (node.fn == PointwiseFn::kWhere) {
          pointwise::apply_where<T>(count, reinterpret_cast<const bool*>(ops[0]), y, z,
                                    reinterpret_cast<T*>(fn_out));
        } else {
          pointwise::apply<T>(node.fn, count, x, y, z, w, reinterpret_cast<T*>(fn_out));
        }
      }
    });
    if (fn_out != result) convert_array(fn_type, fn_out, node.result, result, count);
  }

  const PointwiseProgram& p_;
  std::span<const Tensor> inputs_;
  std::span<const Tensor> outputs_;
  const Shape& sizes_;
  bool uses_index_ = false;
  std::vector<bool> in_place_input_, in_place_output_;
};

uint8_t compute_class(DType d) {
  if (d == DType::kBool) return ir::kComputeBool;
  if (is_integral(d)) return ir::kComputeInt;
  return ir::kComputeFloat;
}

}  // namespace

uint8_t interpreted_classes(PointwiseFn fn) {
  const ir::PointwiseFnInfo& info = ir::pointwise_fn_info(fn);
  return static_cast<uint8_t>(info.classes & ~info.kernel_only & ~info.device_only);
}

Result<void> run_pointwise_program(const PointwiseProgram& p, std::span<const Tensor> inputs,
                                   std::span<const Tensor> outputs, const Shape& sizes) {
  // The program's structure is checked where it is made (ir::validate in the planner and the
  // loader); per call, only that every function is interpreted and the tensors fit.
  auto bad = [](std::string what) {
    return make_error(ErrorKind::kInternal, "pointwise program: {}", what);
  };
  if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size())
    return bad(fmt::format("{} inputs and {} outputs given for {} and {}", inputs.size(),
                           outputs.size(), p.inputs.size(), p.outputs.size()));
  for (const PointwiseNode& node : p.nodes)
    if ((interpreted_classes(node.fn) & compute_class(node.compute)) == 0)
      return bad(fmt::format("{} in {} is not interpreted on the CPU",
                             ir::pointwise_fn_info(node.fn).name, dtype_name(node.compute)));
  auto check = [&](const Tensor& t, DType dtype, const char* what, size_t i) -> Result<void> {
    if (t.dtype() != dtype || t.dim() != static_cast<int64_t>(sizes.size()) || !t.is_host())
      return bad(fmt::format("{} {} is {}{}, not {} of rank {}", what, i, dtype_name(t.dtype()),
                             shape_string(t.sizes()), dtype_name(dtype), sizes.size()));
    for (size_t d = 0; d < sizes.size(); ++d)
      if (t.size(static_cast<int64_t>(d)) != sizes[d] &&
          !(t.size(static_cast<int64_t>(d)) == 1 && std::string_view(what) == "input"))
        return bad(fmt::format("{} {} of sizes {} does not fit the iteration space {}", what, i,
                               shape_string(t.sizes()), shape_string(sizes)));
    return ok_result();
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    SPLICE_TRY(check(inputs[i], p.inputs[i].dtype, "input", i));
  for (size_t k = 0; k < outputs.size(); ++k)
    SPLICE_TRY(check(outputs[k], p.outputs[k].dtype, "output", k));
  const int64_t numel = shape_numel(sizes);
  if (numel == 0) return ok_result();
  // Inputs of size 1 along a dim broadcast: a zero stride there.
  std::vector<Tensor> views;
  views.reserve(inputs.size() + outputs.size());
  for (const Tensor& t : inputs) {
    Shape strides = t.strides();
    for (size_t d = 0; d < sizes.size(); ++d)
      if (t.size(static_cast<int64_t>(d)) != sizes[d]) strides[d] = 0;
    views.push_back(t.view_as(sizes, std::move(strides), t.offset()));
  }
  views.insert(views.end(), outputs.begin(), outputs.end());
  const Shape space = coalesce_dims(sizes, views);
  const std::span<const Tensor> all(views);
  const Interpreter interp(p, all.first(inputs.size()), all.subspan(inputs.size()), space);
  const int64_t tiles = (numel + kTile - 1) / kTile;
  parallel_for(tiles, std::max<int64_t>(1, kParallelGrain / kTile),
               [&](int64_t first, int64_t last) { interp.run_tiles(first, last, numel); });
  return ok_result();
}

}  // namespace splice::cpu
