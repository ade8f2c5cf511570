// validate_writes: the checks eager PyTorch makes on writes (write-semantics.md §2, §3.4,
// §3.5) done at load time where the recorded shapes allow it. slice_scatter / select_scatter:
// src must have exactly the slice's shape; index_put / index_copy: the written values must
// have self's dtype. It also makes every write's recorded output type self's type exactly: a
// full-dim write whose src has symbolic sizes (a reshape with -1) may be recorded with those
// symbolic sizes although self's are static, and later writes need the static ones.
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Node;
using ir::Value;

// Static sizes differ (symbolic ones are checked by the kernel when the symbols are bound).
bool sizes_conflict(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> x = a.constant(), y = b.constant();
  return x && y && *x != *y;
}

// The sizes of the region a slice_scatter writes: self's sizes with the sliced dim replaced by
// the slice's length when the size, bounds and step are constants (else left as self's size,
// which is then not compared). Example: self [4, 8], dim 1, [5, INT64_MAX) step 1 → [4, 3].
struct SliceShape {
  std::vector<SymExpr> sizes;
  std::optional<int64_t> dim;  // nullopt: the sliced dim's length is unknown
};

SliceShape slice_shape(const Node& node, const Value& self) {
  SliceShape shape{self.type().sizes, std::nullopt};
  std::optional<int64_t> dim = wrap_dim(node.arg("dim").as<int64_t>(), self.type().rank());
  if (!dim) return shape;
  std::optional<int64_t> size = static_size(self.type(), *dim);
  std::optional<int64_t> start = constant_int(node.arg("start"));
  std::optional<int64_t> end = constant_int(node.arg("end"));
  std::optional<int64_t> step = constant_int(node.arg("step"));
  bool bounds_known = (start || node.arg("start").is_none()) && (end || node.arg("end").is_none());
  if (!size || !bounds_known || !step || *step < 1) return shape;
  shape.sizes[*dim] = slice_length(python_slice_bounds(start, end, *size), *step);
  shape.dim = dim;
  return shape;
}

Result<void> check_slice_scatter(const Node& node, const Value& self, const Value& src) {
  SliceShape slice = slice_shape(node, self);
  const auto& got = src.type().sizes;
  bool mismatch = got.size() != slice.sizes.size();
  std::optional<int64_t> dim = wrap_dim(node.arg("dim").as<int64_t>(), self.type().rank());
  for (size_t d = 0; !mismatch && d < got.size(); ++d) {
    // The sliced dim of unknown length cannot be compared.
    if (dim && static_cast<int64_t>(d) == *dim && !slice.dim) continue;
    mismatch = sizes_conflict(got[d], slice.sizes[d]);
  }
  if (!mismatch) return ok_result();
  std::vector<std::string> shown;
  for (size_t d = 0; d < slice.sizes.size(); ++d) {
    bool unknown = dim && static_cast<int64_t>(d) == *dim && !slice.dim;
    shown.push_back(unknown ? "?" : slice.sizes[d].to_string());
  }
  return make_error(ErrorKind::kShapeMismatch, "{}: src has shape {} but the slice of self is [{}]",
                    node_label(node), shape_string(got), fmt::join(shown, ", "));
}

Result<void> check_select_scatter(const Node& node, const Value& self, const Value& src) {
  std::optional<int64_t> dim = wrap_dim(node.arg("dim").as<int64_t>(), self.type().rank());
  // An invalid dim is reported by select_scatter_to_slice_scatter or the kernel.
  if (!dim) return ok_result();
  std::vector<SymExpr> expected = self.type().sizes;
  expected.erase(expected.begin() + *dim);
  const auto& got = src.type().sizes;
  bool mismatch = got.size() != expected.size();
  for (size_t d = 0; !mismatch && d < got.size(); ++d)
    mismatch = sizes_conflict(got[d], expected[d]);
  if (!mismatch) return ok_result();
  return make_error(ErrorKind::kShapeMismatch,
                    "{}: src has shape {} but the selected slice of self (dim {} of {}) is {}",
                    node_label(node), shape_string(got), *dim, shape_string(self.type().sizes),
                    shape_string(expected));
}

// A tensor of exactly one element (rank 0 or every size the constant 1).
bool is_one_element(const ir::TensorType& type) {
  for (const SymExpr& s : type.sizes)
    if (s.constant() != 1) return false;
  return true;
}

Result<void> check_index_write_dtype(const Node& node, const Value& self, const Value* values,
                                     std::string_view values_name, bool one_element_casts) {
  if (values == nullptr || values->type().dtype == self.type().dtype) return ok_result();
  // index_put casts a one-element value (eager does too); index_copy never casts.
  if (one_element_casts && is_one_element(values->type())) return ok_result();
  return make_error(ErrorKind::kShapeMismatch,
                    "{}: {} {} has dtype {} but self {} has dtype {}; an index write needs equal "
                    "dtypes{} (cast the values to {} first)",
                    node_label(node), values_name, values->name(), dtype_name(values->type().dtype),
                    self.name(), dtype_name(self.type().dtype),
                    one_element_casts ? " unless the value has one element" : "",
                    dtype_name(self.type().dtype));
}

// Makes the write's recorded output type self's type; returns whether it changed.
Result<bool> pin_output_type(Node& node, const Value& self) {
  Value* out = node.output();
  if (out == nullptr || out->type() == self.type()) return false;
  const auto& want = self.type().sizes;
  const auto& have = out->type().sizes;
  bool conflict = want.size() != have.size();
  for (size_t d = 0; !conflict && d < want.size(); ++d) conflict = sizes_conflict(want[d], have[d]);
  SPLICE_CHECK_OR_RETURN(!conflict, ErrorKind::kShapeMismatch,
                         "{}: output {} is recorded as {} but a write's result has self's type {}",
                         node_label(node), out->name(), out->type().to_string(),
                         self.type().to_string());
  out->set_type(self.type());
  return true;
}

Result<bool> validate(Node& node) {
  const std::string& t = node.target();
  const Value* self = tensor_arg(node, "self");
  // A wrapped number as self: the kernel reports it.
  if (self == nullptr) return false;
  if (t == "aten.slice_scatter.default" || t == "aten.select_scatter.default") {
    const Value* src = tensor_arg(node, "src");
    if (src != nullptr && self->type().rank() > 0) {
      if (t == "aten.slice_scatter.default")
        SPLICE_TRY(check_slice_scatter(node, *self, *src));
      else
        SPLICE_TRY(check_select_scatter(node, *self, *src));
    }
  } else if (t == "aten.index_put.default") {
    SPLICE_TRY(check_index_write_dtype(node, *self, tensor_arg(node, "values"), "values", true));
  } else if (t == "aten.index_copy.default") {
    SPLICE_TRY(check_index_write_dtype(node, *self, tensor_arg(node, "source"), "source", false));
  } else {
    return false;
  }
  return pin_output_type(node, *self);
}

class ValidateWrites final : public Pass {
 public:
  std::string_view name() const override { return "validate_writes"; }
  std::string_view description() const override {
    return "Checks writes as eager PyTorch does, at load time where the recorded shapes allow: "
           "a slice_scatter's src must have exactly the slice's shape (the sliced length from "
           "normalised constant bounds) and a select_scatter's src self's shape without the "
           "dim, else a shape-mismatch error names the node and both shapes; index_put values "
           "(unless one element) and index_copy sources must have self's dtype. It then sets "
           "each write's recorded output type to self's type exactly, so a full-dim write whose "
           "src has symbolic sizes keeps self's static sizes for the writes after it.";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    for (Node* node : node_snapshot(program.graph)) {
      SPLICE_ASSIGN_OR_RETURN(bool c, validate(*node));
      changed |= c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_validate_writes() { return std::make_unique<ValidateWrites>(); }

}  // namespace splice::passes
