// Input checking and symbol binding. Symbols are bound first from dims that are a bare
// symbol (s0), then every dim — constant, symbol or expression — is checked against the
// actual size, so `x: f32[s0, 2*s0]` with a mismatched second dim is reported.
#include "runtime/input_binding.h"

namespace splice::runtime {

namespace {

// The label ("input 'x'", "buffer 'kc'") is only formatted when an error names it: formatting
// one per input on every call was a measurable share of a small program's call.
struct Bound {
  const ir::Value* value;
  const char* kind;       // "input", "weight", "buffer"
  std::string_view name;  // the user input's or state's name
  Tensor tensor;

  std::string label() const { return fmt::format("{} '{}'", kind, name); }
};

Result<void> check_dtype_rank(const Bound& b) {
  const ir::TensorType& type = b.value->type();
  if (b.tensor.dtype() != type.dtype)
    return make_error(ErrorKind::kBadInput, "{} has dtype {}, the program expects {}", b.label(),
                      dtype_name(b.tensor.dtype()), dtype_name(type.dtype));
  if (b.tensor.dim() != type.rank())
    return make_error(ErrorKind::kBadInput, "{} has shape {} (rank {}), the program expects {}",
                      b.label(), shape_string(b.tensor.sizes()), b.tensor.dim(), type.to_string());
  return ok_result();
}

// The error for a call that passes a name the program has no user input for.
Error unknown_input_error(const std::vector<ir::InputSpec>& specs, const TensorMap& user_inputs) {
  std::set<std::string, std::less<>> known;
  for (const ir::InputSpec& spec : specs)
    if (spec.kind == ir::InputKind::kUserInput && spec.value != nullptr && spec.value->is_tensor())
      known.insert(spec.value->name());
  std::string expected;
  for (const auto& n : known) expected += (expected.empty() ? "" : ", ") + n;
  for (const auto& [name, tensor] : user_inputs)
    if (!known.count(name))
      return make_error(ErrorKind::kBadInput, "unknown input '{}' (the program's inputs: {})", name,
                        expected);
  return make_error(ErrorKind::kInternal, "input count mismatch without an unknown input");
}

}  // namespace

Result<void> run_shape_checks(const ir::Program& program, const SymBindings& symbols,
                              std::vector<char>& done) {
  const auto& checks = program.shape_checks;
  done.resize(checks.size(), 0);
  for (size_t i = 0; i < checks.size(); ++i) {
    if (done[i]) continue;
    const std::set<std::string> names = checks[i].condition.free_symbols();
    bool bound = true;
    for (const std::string& n : names) bound = bound && symbols.count(n) > 0;
    if (!bound) continue;
    done[i] = 1;
    auto holds = checks[i].condition.evaluate(symbols);
    if (holds.ok() && *holds != 0) continue;
    std::string values;
    for (const std::string& n : names)
      values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", n, symbols.find(n)->second);
    if (!holds.ok())
      return make_error(ErrorKind::kBadArchive, "{} (with {}: {})", checks[i].message, values,
                        holds.error().message());
    return make_error(ErrorKind::kBadArchive, "{} (with {})", checks[i].message, values);
  }
  return ok_result();
}

std::string describe_expected(const ir::Program& program, const ir::Value& value) {
  std::string s = value.type().to_string();
  std::string ranges;
  std::set<std::string> seen;
  for (const auto& dim : value.type().sizes) {
    for (const auto& sym : dim.free_symbols()) {
      if (!seen.insert(sym).second) continue;
      auto it = program.ranges.find(sym);
      if (it == program.ranges.end()) continue;
      ranges += (ranges.empty() ? " with " : ", ") + sym + " in " + it->second.to_string();
    }
  }
  return s + ranges;
}

std::vector<Tensor> check_weights_at_load(const ir::Program& program, const TensorMap& weights) {
  std::vector<Tensor> checked(program.signature.inputs.size());
  for (size_t i = 0; i < checked.size(); ++i) {
    const ir::InputSpec& spec = program.signature.inputs[i];
    const ir::Value* v = spec.value;
    if (v == nullptr || !v->is_tensor() ||
        (spec.kind != ir::InputKind::kParameter && spec.kind != ir::InputKind::kTensorConstant))
      continue;
    auto it = weights.find(spec.target);
    if (it == weights.end()) continue;
    const ir::TensorType& type = v->type();
    const Tensor& w = it->second;
    bool matches = w.dtype() == type.dtype && w.dim() == type.rank();
    for (size_t d = 0; matches && d < type.sizes.size(); ++d) {
      const auto size = type.sizes[d].constant();
      matches = size && *size == w.size(static_cast<int64_t>(d));
    }
    if (matches) checked[i] = w;
  }
  return checked;
}

Result<std::vector<std::pair<const ir::Value*, Tensor>>> bind_inputs(
    const ir::Program& program, const TensorMap& user_inputs, const TensorMap& weights,
    const TensorMap& buffers, SymBindings& symbols, std::span<const Tensor> load_checked) {
  std::vector<Bound> bound;
  std::vector<std::pair<const ir::Value*, Tensor>> result;
  size_t matched_user_inputs = 0;
  const auto& specs = program.signature.inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const ir::InputSpec& spec = specs[i];
    const ir::Value* v = spec.value;
    if (v == nullptr || !v->is_tensor()) continue;
    if (i < load_checked.size() && load_checked[i].storage() != nullptr) {
      result.emplace_back(v, load_checked[i]);
      continue;
    }
    switch (spec.kind) {
      case ir::InputKind::kUserInput: {
        auto it = user_inputs.find(v->name());
        if (it == user_inputs.end())
          return make_error(ErrorKind::kBadInput, "missing input '{}' (expected {})", v->name(),
                            describe_expected(program, *v));
        bound.push_back({v, "input", v->name(), it->second});
        ++matched_user_inputs;
        break;
      }
      case ir::InputKind::kParameter:
      case ir::InputKind::kTensorConstant: {
        auto it = weights.find(spec.target);
        if (it == weights.end())
          return make_error(ErrorKind::kBadArchive, "the archive has no weight '{}'", spec.target);
        bound.push_back({v, "weight", spec.target, it->second});
        break;
      }
      case ir::InputKind::kBuffer: {
        auto it = buffers.find(spec.target);
        if (it == buffers.end())
          return make_error(ErrorKind::kInternal, "no state for buffer '{}'", spec.target);
        bound.push_back({v, "buffer", spec.target, it->second});
        break;
      }
      default:
        break;
    }
  }
  // Every program input was found, so a count mismatch means an extra name; only then is the
  // set of known names built for the message.
  if (matched_user_inputs != user_inputs.size()) return unknown_input_error(specs, user_inputs);

  for (const Bound& b : bound) SPLICE_TRY(check_dtype_rank(b));
  // Bind bare symbols from the first dim that names them.
  for (const Bound& b : bound) {
    const auto& sizes = b.value->type().sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d].op() != SymOp::kSymbol) continue;
      const std::string& name = sizes[d].symbol_name();
      if (symbols.count(name)) continue;
      int64_t actual = b.tensor.size(static_cast<int64_t>(d));
      auto range = program.ranges.find(name);
      if (range != program.ranges.end() && !range->second.contains(actual))
        return make_error(ErrorKind::kBadInput,
                          "{} has shape {}: dim {} is {}, but the program allows {} in {} "
                          "(expected {})",
                          b.label(), shape_string(b.tensor.sizes()), d, actual, name,
                          range->second.to_string(), describe_expected(program, *b.value));
      symbols[name] = actual;
    }
  }
  // Check every dim against its expected size.
  for (const Bound& b : bound) {
    const auto& sizes = b.value->type().sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      // A symbol that appears in input dims only inside expressions (2*s0) has no input dim
      // to take its value from: say so, naming the input, the dim and the symbol.
      for (const std::string& name : sizes[d].free_symbols()) {
        if (symbols.count(name)) continue;
        return make_error(ErrorKind::kBadInput,
                          "{}: dim {} is recorded as the expression {}, which needs symbol '{}', "
                          "but no input dim is '{}' alone, so no call can give it a value (splice "
                          "learns a symbol from an input dim that is exactly that symbol)",
                          b.label(), d, sizes[d].to_string(), name, name);
      }
      auto expected = sizes[d].evaluate(symbols);
      if (!expected.ok())
        return make_error(ErrorKind::kBadInput, "{}: cannot check dim {} ({}): {}", b.label(), d,
                          sizes[d].to_string(), expected.error().message());
      int64_t actual = b.tensor.size(static_cast<int64_t>(d));
      if (*expected != actual)
        return make_error(ErrorKind::kBadInput,
                          "{} has shape {}, the program expects {} (dim {} should be {})",
                          b.label(), shape_string(b.tensor.sizes()),
                          describe_expected(program, *b.value), d, *expected);
    }
  }
  for (Bound& b : bound) result.emplace_back(b.value, std::move(b.tensor));
  return result;
}

}  // namespace splice::runtime
