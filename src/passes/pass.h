#pragma once
// The pass contract. A pass rewrites a Program in place into a more canonical but equivalent
// one (or rejects it with an error naming the node). `run` returns whether it changed anything;
// a pass keeps no state between runs, so running it twice in a row changes nothing the second
// time. The pipeline (pipeline.h) runs the verifier after every pass that changed the program.
//
// Rewrites are written as guard clauses: each guard that fails leaves the node as it is, and a
// comment says why the rewrite would not be equivalent (or not worth it) in that case.

#include <memory>
#include <string_view>
#include <vector>

#include "ir/program.h"
#include "support/error.h"

namespace splice::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  // lower_snake_case; golden tests live in tests/passes/<name>.txt.
  virtual std::string_view name() const = 0;
  // One paragraph for `splice inspect --passes`.
  virtual std::string_view description() const = 0;
  // Returns whether the program changed.
  virtual Result<bool> run(ir::Program& program) = 0;
};

// The passes of the default pipeline, one file each.
std::unique_ptr<Pass> make_refine_recorded_types();
std::unique_ptr<Pass> make_decompose_composites();
std::unique_ptr<Pass> make_normalize_slice_bounds();
std::unique_ptr<Pass> make_select_scatter_to_slice_scatter();
std::unique_ptr<Pass> make_masked_write_to_where();
std::unique_ptr<Pass> make_where_mask_to_select_write();
std::unique_ptr<Pass> make_fold_copy_of_slice();
std::unique_ptr<Pass> make_canonicalize_views();
std::unique_ptr<Pass> make_share_identical_computations();
std::unique_ptr<Pass> make_fuse_written_attention();
std::unique_ptr<Pass> make_read_grouped_kv_heads();
std::unique_ptr<Pass> make_concat_sibling_matmuls();
std::unique_ptr<Pass> make_insert_write_casts();

// The ops decompose_composites rewrites (none of them reaches a backend), sorted.
std::vector<std::string_view> decomposed_targets();

}  // namespace splice::passes
