#pragma once
// Error and Result<T>: splice reports every failure as a value, never as an exception.
//
// An Error has a category (ErrorKind) that decides the process exit code (2 for anything the
// user can fix: bad usage, a bad archive, bad inputs; 1 for splice's own bugs) and a message
// that names the entry, node, op or value involved and carries the numbers.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace splice {

enum class ErrorKind {
  kBadUsage,          // wrong command line or API misuse
  kIo,                // a file that cannot be read or written
  kBadArchive,        // a malformed, corrupted or unsupported .pt2 / engine / safetensors file
  kUnsupportedOp,     // an op splice does not implement
  kShapeMismatch,     // shapes or dtypes that do not fit
  kOutOfRange,        // an index, position or symbol outside its allowed range
  kBadInput,          // a missing, unknown or malformed user input
  kAssertFailed,      // a program's own _assert_scalar failed at run time
  kBackend,           // a backend library failure
  kInternal,          // a splice bug
};

const char* error_kind_name(ErrorKind kind);

class Error {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // 2 for errors the user can fix, 1 for internal errors.
  int exit_code() const { return kind_ == ErrorKind::kInternal ? 1 : 2; }

  // Prepends context ("loading weight_3: ") to the message, keeping the kind.
  Error with_context(const std::string& context) const {
    return Error(kind_, context + ": " + message_);
  }

 private:
  ErrorKind kind_;
  std::string message_;
};

template <typename... Args>
Error make_error(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  return Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

// Result<T> holds a T or an Error. Result<void> holds nothing or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : data_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(data_); }

 private:
  std::variant<T, Error> data_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_{ErrorKind::kInternal, ""};
  bool ok_ = true;
};

inline Result<void> ok_result() { return Result<void>(); }

}  // namespace splice

#define SPLICE_CONCAT_INNER(a, b) a##b
#define SPLICE_CONCAT(a, b) SPLICE_CONCAT_INNER(a, b)

// Returns the error of a Result<void> expression from the enclosing function.
#define SPLICE_TRY(expr)                                      \
  do {                                                        \
    auto&& splice_try_result_ = (expr);                       \
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
#define SPLICE_CHECK_OR_RETURN(cond, kind, ...) \
  do {                                          \
    if (!(cond)) return ::splice::make_error(kind, __VA_ARGS__); \
  } while (0)

// Internal invariant: aborts with file and line; never used for untrusted input.
#define SPLICE_ASSERT(cond)                                                        \
  do {                                                                             \
    if (!(cond)) ::splice::detail::assert_fail(#cond, __FILE__, __LINE__);         \
  } while (0)

namespace splice::detail {
[[noreturn]] void assert_fail(const char* cond, const char* file, int line);
}
