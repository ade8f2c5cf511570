#pragma once
// Scalar: a Python number argument of an op (bool, int or float), kept with its Python type
// because PyTorch's type promotion treats `x + 1` and `x + 1.0` differently (a wrapped number
// is the lowest priority operand, and only its category counts).

#include <cstdint>
#include <variant>

#include "support/dtype.h"

namespace splice {

class Scalar {
 public:
  enum class Kind { kBool, kInt, kDouble };

  Scalar() : value_(int64_t{0}) {}
  explicit Scalar(bool v) : value_(v) {}
  explicit Scalar(int64_t v) : value_(v) {}
  explicit Scalar(double v) : value_(v) {}

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_double() const { return kind() == Kind::kDouble; }

  double to_double() const {
    switch (kind()) {
      case Kind::kBool:
        return std::get<bool>(value_) ? 1.0 : 0.0;
      case Kind::kInt:
        return static_cast<double>(std::get<int64_t>(value_));
      case Kind::kDouble:
        return std::get<double>(value_);
    }
    return 0.0;
  }
  // For a bool or int scalar only (callers check kind first).
  int64_t to_int() const {
    return kind() == Kind::kBool ? (std::get<bool>(value_) ? 1 : 0) : std::get<int64_t>(value_);
  }
  bool to_bool() const {
    switch (kind()) {
      case Kind::kBool:
        return std::get<bool>(value_);
      case Kind::kInt:
        return std::get<int64_t>(value_) != 0;
      case Kind::kDouble:
        return std::get<double>(value_) != 0.0;
    }
    return false;
  }
  // The dtype PyTorch gives the number when it wraps it in a tensor (float → float64; the
  // promotion rules then demote a wrapped float to the default dtype).
  DType wrapped_dtype() const {
    switch (kind()) {
      case Kind::kBool:
        return DType::kBool;
      case Kind::kInt:
        return DType::kInt64;
      case Kind::kDouble:
        return DType::kFloat64;
    }
    return DType::kFloat64;
  }

 private:
  std::variant<bool, int64_t, double> value_;
};

}  // namespace splice
