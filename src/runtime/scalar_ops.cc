// Python semantics for the scalar operators that appear as graph nodes. Integer arithmetic is
// overflow-checked: a size computation that overflows is reported, never wrapped.
#include "runtime/scalar_ops.h"

#include <cmath>

#include "support/checked_math.h"

namespace splice::runtime {

namespace {

bool is_int(const Scalar& s) {
  return std::holds_alternative<int64_t>(s) || std::holds_alternative<bool>(s);
}
int64_t as_int(const Scalar& s) {
  if (auto* b = std::get_if<bool>(&s)) return *b ? 1 : 0;
  return std::get<int64_t>(s);
}
double as_double(const Scalar& s) {
  if (auto* d = std::get_if<double>(&s)) return *d;
  return static_cast<double>(as_int(s));
}

Result<int64_t> int_or_overflow(std::optional<int64_t> v, std::string_view target) {
  if (!v) return make_error(ErrorKind::kOutOfRange, "{}: integer overflow", target);
  return *v;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

bool scalar_truthy(const Scalar& s) {
  if (auto* d = std::get_if<double>(&s)) return *d != 0.0;
  return as_int(s) != 0;
}

std::string scalar_to_string(const Scalar& s) {
  if (auto* b = std::get_if<bool>(&s)) return *b ? "True" : "False";
  if (auto* i = std::get_if<int64_t>(&s)) return std::to_string(*i);
  return fmt::format("{}", std::get<double>(s));
}

Result<Scalar> eval_scalar_op(ir::OpId op, const std::vector<Scalar>& args) {
  using ir::OpId;
  const std::string_view target = ir::op_target(op);  // for messages
  auto need = [&](size_t n) -> Result<void> {
    if (args.size() != n)
      return make_error(ErrorKind::kBadArchive, "{} takes {} arguments, got {}", target, n,
                        args.size());
    return ok_result();
  };
  // Unary operators.
  if (op == OpId::py_neg || op == OpId::py_not || op == OpId::sym_not || op == OpId::sym_float ||
      op == OpId::sym_int || op == OpId::py_math_ceil || op == OpId::py_math_floor) {
    SPLICE_TRY(need(1));
    const Scalar& a = args[0];
    if (op == OpId::py_not || op == OpId::sym_not) return Scalar{!scalar_truthy(a)};
    if (op == OpId::sym_float) return Scalar{as_double(a)};
    if (op == OpId::py_neg) {
      if (is_int(a)) {
        SPLICE_ASSIGN_OR_RETURN(int64_t v, int_or_overflow(checked_mul(as_int(a), -1), target));
        return Scalar{v};
      }
      return Scalar{-as_double(a)};
    }
    if (is_int(a)) return Scalar{as_int(a)};
    double d = as_double(a);
    double r = op == OpId::py_math_ceil    ? std::ceil(d)
               : op == OpId::py_math_floor ? std::floor(d)
                                           : std::trunc(d);
    if (!(r >= -9.2e18 && r <= 9.2e18))
      return make_error(ErrorKind::kOutOfRange, "{}: {} does not fit in an int", target, d);
    return Scalar{static_cast<int64_t>(r)};
  }

  SPLICE_TRY(need(2));
  const Scalar& a = args[0];
  const Scalar& b = args[1];
  const bool ints = is_int(a) && is_int(b);

  if (op == OpId::py_and) return Scalar{scalar_truthy(a) && scalar_truthy(b)};
  if (op == OpId::py_or) return Scalar{scalar_truthy(a) || scalar_truthy(b)};

  if (op == OpId::py_eq || op == OpId::py_ne || op == OpId::py_lt || op == OpId::py_le ||
      op == OpId::py_gt || op == OpId::py_ge) {
    int cmp;
    if (ints) {
      int64_t x = as_int(a), y = as_int(b);
      cmp = x < y ? -1 : x > y ? 1 : 0;
    } else {
      double x = as_double(a), y = as_double(b);
      cmp = x < y ? -1 : x > y ? 1 : 0;
    }
    if (op == OpId::py_eq) return Scalar{cmp == 0};
    if (op == OpId::py_ne) return Scalar{cmp != 0};
    if (op == OpId::py_lt) return Scalar{cmp < 0};
    if (op == OpId::py_le) return Scalar{cmp <= 0};
    if (op == OpId::py_gt) return Scalar{cmp > 0};
    return Scalar{cmp >= 0};
  }

  if (op == OpId::sym_max || op == OpId::sym_min) {
    bool take_a = (op == OpId::sym_max) == (as_double(a) >= as_double(b));
    if (ints) return Scalar{take_a ? as_int(a) : as_int(b)};
    return Scalar{take_a ? as_double(a) : as_double(b)};
  }

  if (op == OpId::py_truediv) {
    if (as_double(b) == 0.0)
      return make_error(ErrorKind::kOutOfRange, "{}: division by zero", target);
    return Scalar{as_double(a) / as_double(b)};
  }

  if (ints) {
    int64_t x = as_int(a), y = as_int(b);
    if (op == OpId::py_add) {
      SPLICE_ASSIGN_OR_RETURN(int64_t v, int_or_overflow(checked_add(x, y), target));
      return Scalar{v};
    }
    if (op == OpId::py_sub) {
      SPLICE_ASSIGN_OR_RETURN(int64_t v, int_or_overflow(checked_add(x, -y), target));
      return Scalar{v};
    }
    if (op == OpId::py_mul) {
      SPLICE_ASSIGN_OR_RETURN(int64_t v, int_or_overflow(checked_mul(x, y), target));
      return Scalar{v};
    }
    if (op == OpId::py_floordiv || op == OpId::py_mod) {
      if (y == 0) return make_error(ErrorKind::kOutOfRange, "{}: division by zero", target);
      return Scalar{op == OpId::py_floordiv ? floor_div(x, y) : floor_mod(x, y)};
    }
    if (op == OpId::py_pow) {
      if (y < 0) return Scalar{std::pow(static_cast<double>(x), static_cast<double>(y))};
      int64_t r = 1;
      for (int64_t i = 0; i < y; ++i) {
        SPLICE_ASSIGN_OR_RETURN(r, int_or_overflow(checked_mul(r, x), target));
      }
      return Scalar{r};
    }
  } else {
    double x = as_double(a), y = as_double(b);
    if (op == OpId::py_add) return Scalar{x + y};
    if (op == OpId::py_sub) return Scalar{x - y};
    if (op == OpId::py_mul) return Scalar{x * y};
    if (op == OpId::py_pow) return Scalar{std::pow(x, y)};
    if (op == OpId::py_floordiv || op == OpId::py_mod) {
      if (y == 0.0) return make_error(ErrorKind::kOutOfRange, "{}: division by zero", target);
      double q = std::floor(x / y);
      return Scalar{op == OpId::py_floordiv ? q : x - q * y};
    }
  }
  return make_error(ErrorKind::kUnsupportedOp, "scalar operator {} is not supported", target);
}

}  // namespace splice::runtime
