#pragma once
// Libraries splice opens at run time instead of linking them (OpenBLAS, NVRTC, cuBLASLt: each
// one's header says why): opened by soname, or from a fallback folder, and kept open for the
// life of the process, since the function tables resolved from them point into them.

#include <string>

namespace splice {

// dlopen of `name`, else of `folder` + `name` when `folder` is not empty (a folder ending in
// '/'). Null when neither loads; `reason` then holds the loader's message for `name`.
void* open_shared_library(const std::string& name, const std::string& folder, std::string& reason);

// The address of `symbol` in an opened library, or null.
void* library_symbol(void* library, const char* symbol);

// fn = `symbol` of `library`, cast to fn's type; the first symbol not found is kept in
// `missing` (so a table of them reports one name).
template <typename Fn>
void resolve_symbol(void* library, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(library_symbol(library, symbol));
  if (fn == nullptr && missing.empty()) missing = symbol;
}

}  // namespace splice
