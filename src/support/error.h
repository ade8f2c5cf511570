#pragma once
// Internal error helpers on top of the public Error/Result (include/splice/error.h):
// fmt-formatted construction and the early-return macros used throughout splice.

#include <fmt/format.h>

#include "splice/error.h"

namespace splice {

template <typename... Args>
Error make_error(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  return Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace splice

#define SPLICE_CONCAT_INNER(a, b) a##b
#define SPLICE_CONCAT(a, b) SPLICE_CONCAT_INNER(a, b)

// Returns the error of a Result<void> expression from the enclosing function.
#define SPLICE_TRY(expr)                                             \
  do {                                                               \
    auto&& splice_try_result_ = (expr);                              \
    if (!splice_try_result_.ok()) return splice_try_result_.error(); \
  } while (0)

// `SPLICE_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its error.
#define SPLICE_ASSIGN_OR_RETURN(lhs, expr) \
  SPLICE_ASSIGN_OR_RETURN_IMPL(SPLICE_CONCAT(splice_result_, __LINE__), lhs, expr)
#define SPLICE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.error();                 \
  lhs = std::move(tmp).value()

// Returns an Error of the given kind when cond is false.
#define SPLICE_CHECK_OR_RETURN(cond, kind, ...)                  \
  do {                                                           \
    if (!(cond)) return ::splice::make_error(kind, __VA_ARGS__); \
  } while (0)

// Internal invariant: aborts with file and line; never used for untrusted input.
#define SPLICE_ASSERT(cond)                                                \
  do {                                                                     \
    if (!(cond)) ::splice::detail::assert_fail(#cond, __FILE__, __LINE__); \
  } while (0)

namespace splice::detail {
[[noreturn]] void assert_fail(const char* cond, const char* file, int line);
}
