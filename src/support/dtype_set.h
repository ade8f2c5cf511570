#pragma once
// DTypeSet: a set of dtypes as one bit per DType, constexpr so that kernel tables
// (backend::KernelEntry::dtypes) stay constant data. Its own header, not dtype.h: only the
// backends and what reads their tables need it.

#include <cstdint>
#include <initializer_list>
#include <string>

#include "support/dtype.h"

namespace splice {

// A set of dtypes, one bit per DType: what a backend's kernel for an op accepts.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= bit(d);
  }
  static constexpr DTypeSet all() {
    DTypeSet s;
    for (DType d : kAllDTypes) s.bits_ |= bit(d);
    return s;
  }
  // f16, bf16, f32, f64 (is_floating).
  static constexpr DTypeSet floating() {
    return {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  }
  constexpr bool contains(DType d) const { return (bits_ & bit(d)) != 0; }
  constexpr DTypeSet without(DType d) const {
    DTypeSet s = *this;
    s.bits_ &= ~bit(d);
    return s;
  }
  constexpr bool operator==(const DTypeSet&) const = default;

 private:
  static constexpr uint32_t bit(DType d) { return uint32_t{1} << static_cast<unsigned>(d); }
  uint32_t bits_ = 0;
};

// The set's names in DType order, comma-separated: "f16, f32, f64, bf16"; "none" when empty.
std::string dtype_set_string(DTypeSet set);

}  // namespace splice
