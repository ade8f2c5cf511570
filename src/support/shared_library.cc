// Run-time opened libraries (shared_library.h).
#include "support/shared_library.h"

#include <dlfcn.h>

namespace splice {

void* open_shared_library(const std::string& name, const std::string& folder, std::string& reason) {
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) return library;
  const char* why = dlerror();
  reason = why != nullptr ? why : "dlopen failed";
  if (!folder.empty()) library = dlopen((folder + name).c_str(), RTLD_NOW | RTLD_LOCAL);
  return library;
}

void* library_symbol(void* library, const char* symbol) { return dlsym(library, symbol); }

}  // namespace splice
