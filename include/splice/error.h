#pragma once
// Errors in splice's public API: every failure is a value (Error, Result<T>), never an
// exception. An Error has a category (ErrorKind) that decides the process exit code (2 for
// anything the user can fix: bad usage, a bad archive, bad inputs; 1 for splice's own bugs)
// and a message that names the entry, node, op or value involved and carries the numbers.

#include <string>
#include <utility>
#include <variant>

namespace splice {

enum class ErrorKind {
  kBadUsage,       // wrong command line or API misuse
  kIo,             // a file that cannot be read or written
  kBadArchive,     // a malformed, corrupted or unsupported .pt2 / engine / safetensors file
  kUnsupportedOp,  // an op splice does not implement
  kShapeMismatch,  // shapes or dtypes that do not fit
  kOutOfRange,     // an index, position or symbol outside its allowed range
  kBadInput,       // a missing, unknown or malformed user input
  kAssertFailed,   // a program's own _assert_scalar failed at run time
  kBackend,        // a backend library failure
  kInternal,       // a splice bug
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

// Result<T> holds a T or an Error. Result<void> holds nothing or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT: implicit by design
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
