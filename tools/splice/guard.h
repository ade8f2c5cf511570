#pragma once
// The command boundary: a command's Result, or an Error for an exception that escaped from
// below (a container running out of memory in the loader, which the CLI calls outside the
// API's own boundary; a library's exception), so the CLI never ends in std::terminate and
// SIGABRT. Running out of memory is exit 2 (the user can give the process more memory or a
// smaller input), anything else exit 1 (a splice bug).

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "support/error.h"

namespace splice::tools {

template <typename F>
Result<void> run_guarded(F&& command) noexcept {
  try {
    try {
      return command();
    } catch (const std::bad_alloc& e) {
      return make_error(ErrorKind::kBackend, "out of memory ({})", e.what());
    } catch (const std::length_error& e) {
      // std::vector and std::string throw this for a size past max_size().
      return make_error(ErrorKind::kBackend, "out of memory: a size too large to allocate ({})",
                        e.what());
    } catch (const std::exception& e) {
      return make_error(ErrorKind::kInternal, "unexpected exception: {}", e.what());
    } catch (...) {
      return make_error(ErrorKind::kInternal, "unexpected exception of an unknown type");
    }
  } catch (...) {
    // Formatting the message above ran out of memory too; this one fits the string itself.
    return Error(ErrorKind::kBackend, std::string("out of memory"));
  }
}

}  // namespace splice::tools
