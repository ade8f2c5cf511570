// DTypeSet's names (dtype_set.h).
#include "support/dtype_set.h"

namespace splice {

std::string dtype_set_string(DTypeSet set) {
  std::string out;
  for (DType d : kAllDTypes) {
    if (!set.contains(d)) continue;
    if (!out.empty()) out += ", ";
    out += dtype_name(d);
  }
  return out.empty() ? "none" : out;
}

}  // namespace splice
