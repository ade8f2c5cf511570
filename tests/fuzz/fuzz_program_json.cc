// libFuzzer target for the program JSON on its own, without the zip container around it:
// parse_exported_program (the shape-checked streaming parse of shaped_json.h, with its string,
// depth and integer limits, then the typed readers), the grad-mode inlining and the import into
// the IR; and the same bytes as a weights config (parse_payload_config). Any input must end in
// a result or an Error -- never a crash, a hang, a sanitizer report or an allocation sized from
// unchecked input. The seeds (tests/fuzz/corpus/program_json) are small programs and issue
// 34's shapes: an array where metadata holds strings, unknown kinds and fields, integers past
// 64 bits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frontend/pt2/importer.h"
#include "frontend/pt2/inline_subgraphs.h"
#include "frontend/pt2/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ep = splice::pt2::parse_exported_program(text);
  if (ep.ok() && splice::pt2::inline_grad_mode_regions(ep->graph_module.graph).ok()) {
    auto program = splice::pt2::import_program(*ep);
    (void)program.ok();
  }
  auto config = splice::pt2::parse_payload_config(text);
  (void)config.ok();
  return 0;
}
