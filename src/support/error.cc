// Names of error kinds and the failure path of SPLICE_ASSERT.
#include "support/error.h"

#include <cstdio>
#include <cstdlib>

namespace splice {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadUsage:
      return "bad usage";
    case ErrorKind::kIo:
      return "i/o error";
    case ErrorKind::kBadArchive:
      return "bad archive";
    case ErrorKind::kUnsupportedOp:
      return "unsupported op";
    case ErrorKind::kShapeMismatch:
      return "shape mismatch";
    case ErrorKind::kOutOfRange:
      return "out of range";
    case ErrorKind::kBadInput:
      return "bad input";
    case ErrorKind::kAssertFailed:
      return "assertion failed";
    case ErrorKind::kBackend:
      return "backend failure";
    case ErrorKind::kInternal:
      return "internal error";
  }
  return "unknown error";
}

namespace detail {
void assert_fail(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "splice: internal invariant failed: %s (%s:%d)\n", cond, file, line);
  std::abort();
}
}  // namespace detail

}  // namespace splice
