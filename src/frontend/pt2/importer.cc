// Import of a parsed ExportedProgram into the IR. Checks here are the ones only the importer
// can make (names that resolve, kinds that fit the op schema, dtypes splice knows); structural
// rules are the verifier's job and run after import.
#include "frontend/pt2/importer.h"

#include <algorithm>
#include <limits>
#include <set>

#include "ir/ops.h"

namespace splice::pt2 {

namespace {

using ir::Arg;
using ir::ArgSchema;
using ir::ArgType;
using ir::Value;
using ir::ValueKind;
// The IR's symbolic expression (pt2::SymExpr is the archive's srepr string).
using IrSym = ::splice::SymExpr;

constexpr int64_t kMaxRank = 64;

std::string_view strip_prefix(std::string_view target) {
  constexpr std::string_view kPrefix = "torch.ops.";
  if (target.starts_with(kPrefix)) target.remove_prefix(kPrefix.size());
  return target;
}

// `aten.add_.Tensor` or `aten.copy_.default`: an in-place op of the training IR.
bool is_inplace_aten(std::string_view target) {
  if (!target.starts_with("aten.")) return false;
  std::string_view rest = target.substr(5);
  std::string_view name = rest.substr(0, rest.find('.'));
  // detach_ only changes autograd metadata; the training IR applies it to fresh constants
  // (torch.tensor(...) in forward), so it runs as an alias.
  return name.ends_with("_") && !name.ends_with("__") && name != "detach_";
}

Result<DType> dtype_of(ScalarTypeCode code, std::string_view where) {
  auto d = dtype_from_schema(code);
  if (!d) {
    static const std::map<int, std::string_view> kNames = {
        {0, "UNKNOWN"},        {9, "COMPLEXHALF"},      {10, "COMPLEXFLOAT"},
        {11, "COMPLEXDOUBLE"}, {28, "UINT16"},          {29, "FLOAT8_E4M3FN"},
        {30, "FLOAT8_E5M2"},   {31, "FLOAT8_E4M3FNUZ"}, {32, "FLOAT8_E5M2FNUZ"}};
    auto it = kNames.find(code);
    return make_error(ErrorKind::kBadArchive, "{} has dtype {} ({}), which splice does not support",
                      where, it == kNames.end() ? "unknown" : it->second, code);
  }
  return *d;
}

Result<IrSym> sym_of(const SymInt& s, std::string_view where) {
  if (auto* c = std::get_if<int64_t>(&s.value)) return IrSym(*c);
  const auto& e = std::get<pt2::SymExpr>(s.value);
  auto parsed = parse_srepr(e.expr_str);
  if (!parsed.ok()) return parsed.error().with_context(std::string(where));
  return *parsed;
}

class Importer {
 public:
  explicit Importer(const ExportedProgram& ep) : ep_(ep), graph_(ep.graph_module.graph) {}

  Result<ir::Program> run() {
    SPLICE_TRY(import_ranges());
    SPLICE_TRY(create_values());
    SPLICE_TRY(import_inputs());
    SPLICE_TRY(check_ops());
    for (const Node& node : graph_.nodes) SPLICE_TRY(import_node(node));
    SPLICE_TRY(import_outputs());
    SPLICE_TRY(import_signature());
    return std::move(program_);
  }

 private:
  Result<void> import_ranges() {
    for (const auto& [name, rc] : ep_.range_constraints) {
      SymRange r;
      r.min = rc.min_val.value_or(std::numeric_limits<int64_t>::min());
      r.max = rc.max_val;
      program_.ranges[name] = r;
    }
    return ok_result();
  }

  Result<void> create_values() {
    ir::Graph& g = program_.graph;
    for (const auto& [name, meta] : graph_.tensor_values) {
      std::string where = fmt::format("value '{}'", name);
      auto dtype_or = dtype_of(meta.dtype, where);
      if (!dtype_or.ok()) {
        // Kernels may return outputs nobody reads in dtypes splice lacks (CUDA attention's
        // uint64 rng state): only a use of such a value is an error.
        unreadable_.emplace(name, dtype_or.error());
        continue;
      }
      DType dtype = *dtype_or;
      SPLICE_CHECK_OR_RETURN(static_cast<int64_t>(meta.sizes.size()) <= kMaxRank,
                             ErrorKind::kBadArchive, "{} has rank {}, more than splice's limit {}",
                             where, meta.sizes.size(), kMaxRank);
      ir::TensorType type;
      type.dtype = dtype;
      for (size_t d = 0; d < meta.sizes.size(); ++d) {
        SPLICE_ASSIGN_OR_RETURN(IrSym e, sym_of(meta.sizes[d], where));
        if (auto c = e.constant(); c && *c < 0)
          return make_error(ErrorKind::kBadArchive, "{} has a negative size {} in dim {}", where,
                            *c, d);
        record_hint(e, meta.sizes[d]);
        type.sizes.push_back(std::move(e));
      }
      Value* v = g.add_value(name, ValueKind::kTensor);
      v->set_type(std::move(type));
      values_[name] = v;
    }
    for (const auto& [name, s] : graph_.sym_int_values) {
      Value* v = g.add_value(name, ValueKind::kSymInt);
      auto e = sym_of(s, fmt::format("symint '{}'", name));
      if (e.ok()) {
        v->set_expr(*e);
        record_hint(*e, s);
      }
      SPLICE_TRY(add_value(name, v));
    }
    for (const auto& [name, s] : graph_.sym_bool_values) {
      Value* v = g.add_value(name, ValueKind::kSymBool);
      if (auto* e = std::get_if<pt2::SymExpr>(&s.value)) {
        auto parsed = parse_srepr(e->expr_str);
        if (parsed.ok()) v->set_expr(*parsed);
      } else {
        v->set_expr(IrSym(std::get<bool>(s.value) ? 1 : 0));
      }
      SPLICE_TRY(add_value(name, v));
    }
    for (const auto& [name, s] : graph_.sym_float_values) {
      SPLICE_TRY(add_value(name, g.add_value(name, ValueKind::kSymFloat)));
    }
    return ok_result();
  }

  Result<void> add_value(const std::string& name, Value* v) {
    if (!values_.emplace(name, v).second)
      return make_error(ErrorKind::kBadArchive, "value '{}' is declared twice", name);
    return ok_result();
  }

  void record_hint(const IrSym& e, const SymInt& s) {
    if (e.op() != SymOp::kSymbol) return;
    auto* expr = std::get_if<pt2::SymExpr>(&s.value);
    if (expr == nullptr || !expr->hint) return;
    if (auto* h = std::get_if<int64_t>(&expr->hint->value))
      program_.hints.emplace(e.symbol_name(), *h);
  }

  Result<Value*> value(const std::string& name, std::string_view where) {
    if (auto bad = unreadable_.find(name); bad != unreadable_.end())
      return bad->second.with_context(std::string(where));
    auto it = values_.find(name);
    if (it == values_.end())
      return make_error(ErrorKind::kBadArchive, "{} names value '{}', which does not exist", where,
                        name);
    return it->second;
  }

  Result<Value*> tensor_value(const std::string& name, std::string_view where) {
    SPLICE_ASSIGN_OR_RETURN(Value * v, value(name, where));
    if (!v->is_tensor())
      return make_error(ErrorKind::kBadArchive, "{} expects a tensor, but '{}' is a {}", where,
                        name, ir::value_kind_name(v->kind()));
    return v;
  }

  Result<void> import_inputs() {
    for (const Argument& a : graph_.inputs) {
      Value* v = nullptr;
      if (auto* t = a.get_if<TensorArgument>()) {
        SPLICE_ASSIGN_OR_RETURN(v, tensor_value(t->name, "graph input"));
      } else if (auto* s = a.get_if<SymIntArgument>(); s && s->is_name()) {
        SPLICE_ASSIGN_OR_RETURN(v, value(std::get<std::string>(s->value), "graph input"));
      } else if (auto* s = a.get_if<SymFloatArgument>(); s && s->is_name()) {
        SPLICE_ASSIGN_OR_RETURN(v, value(std::get<std::string>(s->value), "graph input"));
      } else if (auto* s = a.get_if<SymBoolArgument>(); s && s->is_name()) {
        SPLICE_ASSIGN_OR_RETURN(v, value(std::get<std::string>(s->value), "graph input"));
      }
      program_.graph.inputs().push_back(v);
    }
    return ok_result();
  }

  // Reports every op splice cannot take, all at once.
  Result<void> check_ops() {
    std::set<std::string> unsupported, inplace, higher_order;
    for (const Node& node : graph_.nodes) {
      std::string_view t = strip_prefix(node.target);
      if (t.starts_with("higher_order.")) {
        higher_order.insert(node.target);
      } else if (ir::find_op(t) != nullptr) {
        continue;
      } else if (is_inplace_aten(t)) {
        // An in-place op splice has no functional form for (inplace_list.inc).
        std::string name = node.name.value_or("");
        if (const TensorArgument* out =
                node.outputs.empty() ? nullptr : node.outputs[0].get_if<TensorArgument>();
            name.empty() && out != nullptr)
          name = out->name;
        inplace.insert(fmt::format("node '{}' ({})", name, node.target));
      } else if (t.starts_with("aten.as_strided")) {
        // as_strided_ and as_strided_scatter write the storage under their input (an offset and
        // strides into it, whatever views led there), which splice's values do not carry; an
        // as_strided read is in the table (a gather, decompose_composites).
        unsupported.insert(fmt::format(
            "{} (as_strided_ and as_strided_scatter write the storage under a tensor by offset "
            "and strides, which splice does not model; use slice, select, view, permute or "
            "diagonal)",
            node.target));
      } else {
        unsupported.insert(node.target);
      }
    }
    auto join = [](const std::set<std::string>& s) {
      std::string out;
      for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
      return out;
    };
    if (!inplace.empty())
      return make_error(ErrorKind::kUnsupportedOp,
                        "in-place op(s) without a functional form splice supports: {}",
                        join(inplace));
    if (!higher_order.empty() || !unsupported.empty()) {
      std::string msg;
      if (!unsupported.empty())
        msg = fmt::format("{} unsupported op(s): {}", unsupported.size(), join(unsupported));
      if (!higher_order.empty())
        msg += fmt::format(
            "{}higher-order ops are not supported (control flow and other "
            "subgraph ops): {}",
            msg.empty() ? "" : "; ", join(higher_order));
      return Error(ErrorKind::kUnsupportedOp, msg);
    }
    return ok_result();
  }

  // Converts one archive argument to the IR form the schema argument expects.
  Result<Arg> convert(const Argument& a, const ArgSchema& s, const std::string& where) {
    auto mismatch = [&]() {
      return make_error(ErrorKind::kBadArchive, "{}: argument '{}' expects {}, got {}", where,
                        s.name, s.type_string, argument_kind_name(a));
    };
    if (a.is<NoneArgument>()) return Arg{Arg::None{}};
    if (auto* t = a.get_if<TensorArgument>()) {
      if (s.type != ArgType::kTensor || s.list) return mismatch();
      SPLICE_ASSIGN_OR_RETURN(Value * v, tensor_value(t->name, where));
      return Arg{v};
    }
    if (auto* t = a.get_if<OptionalTensorArgument>()) {
      if (s.type != ArgType::kTensor || s.list) return mismatch();
      if (!t->tensor) return Arg{Arg::None{}};
      SPLICE_ASSIGN_OR_RETURN(Value * v, tensor_value(t->tensor->name, where));
      return Arg{v};
    }
    if (auto* l = a.get_if<TensorListArgument>()) {
      if (s.type != ArgType::kTensor || !s.list) return mismatch();
      std::vector<Value*> vs;
      for (const auto& t : l->values) {
        SPLICE_ASSIGN_OR_RETURN(Value * v, tensor_value(t.name, where));
        vs.push_back(v);
      }
      return Arg{vs};
    }
    if (auto* l = a.get_if<OptionalTensorListArgument>()) {
      if (s.type != ArgType::kTensor || !s.list) return mismatch();
      std::vector<Value*> vs;
      for (const auto& t : l->values) {
        if (!t.tensor) {
          vs.push_back(nullptr);
          continue;
        }
        SPLICE_ASSIGN_OR_RETURN(Value * v, tensor_value(t.tensor->name, where));
        vs.push_back(v);
      }
      return Arg{vs};
    }
    // A Python number given for a Tensor argument is a wrapped number (`x * 2`).
    const bool wrapped_number = s.type == ArgType::kTensor && !s.list;
    if (auto* i = a.get_if<IntArgument>()) {
      if (wrapped_number) return Arg{i->value};
      if (s.list && (s.type == ArgType::kInt || s.type == ArgType::kSymInt))
        return Arg{std::vector<ir::SymIntArg>{i->value}};
      if (s.type == ArgType::kFloat) return Arg{static_cast<double>(i->value)};
      if (s.type == ArgType::kInt || s.type == ArgType::kSymInt || s.type == ArgType::kScalar)
        return Arg{i->value};
      if (s.type == ArgType::kBool) return Arg{i->value != 0};
      return mismatch();
    }
    if (auto* f = a.get_if<FloatArgument>()) {
      if (wrapped_number) return Arg{f->value};
      if (s.type == ArgType::kFloat || s.type == ArgType::kScalar) return Arg{f->value};
      return mismatch();
    }
    if (auto* b = a.get_if<BoolArgument>()) {
      if (wrapped_number) return Arg{b->value};
      if (s.type == ArgType::kBool || s.type == ArgType::kScalar) return Arg{b->value};
      return mismatch();
    }
    if (auto* str = a.get_if<StringArgument>()) {
      if (s.type != ArgType::kString) return mismatch();
      return Arg{str->value};
    }
    if (auto* l = a.get_if<IntListArgument>()) {
      if (!s.list) return mismatch();
      if (s.type == ArgType::kFloat)
        return Arg{std::vector<double>(l->values.begin(), l->values.end())};
      if (s.type != ArgType::kInt && s.type != ArgType::kSymInt) return mismatch();
      return Arg{std::vector<ir::SymIntArg>(l->values.begin(), l->values.end())};
    }
    if (auto* l = a.get_if<FloatListArgument>()) {
      if (!s.list || s.type != ArgType::kFloat) return mismatch();
      return Arg{l->values};
    }
    if (auto* l = a.get_if<BoolListArgument>()) {
      if (!s.list || s.type != ArgType::kBool) return mismatch();
      return Arg{l->values};
    }
    if (auto* si = a.get_if<SymIntArgument>()) {
      if (s.list && (s.type == ArgType::kInt || s.type == ArgType::kSymInt)) {
        SPLICE_ASSIGN_OR_RETURN(ir::SymIntArg e, sym_int_element(*si, where));
        return Arg{std::vector<ir::SymIntArg>{e}};
      }
      if (s.type != ArgType::kSymInt && s.type != ArgType::kInt && s.type != ArgType::kScalar &&
          !wrapped_number)
        return mismatch();
      SPLICE_ASSIGN_OR_RETURN(ir::SymIntArg e, sym_int_element(*si, where));
      if (auto* c = std::get_if<int64_t>(&e)) return Arg{*c};
      return Arg{std::get<Value*>(e)};
    }
    if (auto* l = a.get_if<SymIntListArgument>()) {
      if (!s.list || (s.type != ArgType::kSymInt && s.type != ArgType::kInt)) return mismatch();
      std::vector<ir::SymIntArg> out;
      for (const auto& si : l->values) {
        SPLICE_ASSIGN_OR_RETURN(ir::SymIntArg e, sym_int_element(si, where));
        out.push_back(e);
      }
      return Arg{out};
    }
    if (auto* sb = a.get_if<SymBoolArgument>()) {
      if (s.type != ArgType::kBool && s.type != ArgType::kScalar && !wrapped_number)
        return mismatch();
      if (auto* b = std::get_if<bool>(&sb->value)) return Arg{*b};
      SPLICE_ASSIGN_OR_RETURN(Value * v, value(std::get<std::string>(sb->value), where));
      return Arg{v};
    }
    if (auto* sf = a.get_if<SymFloatArgument>()) {
      if (s.type != ArgType::kFloat && s.type != ArgType::kScalar && !wrapped_number)
        return mismatch();
      if (auto* d = std::get_if<double>(&sf->value)) return Arg{*d};
      SPLICE_ASSIGN_OR_RETURN(Value * v, value(std::get<std::string>(sf->value), where));
      return Arg{v};
    }
    if (auto* st = a.get_if<ScalarTypeArgument>()) {
      if (s.type != ArgType::kScalarType) return mismatch();
      SPLICE_ASSIGN_OR_RETURN(DType d, dtype_of(st->value, where));
      return Arg{d};
    }
    if (auto* mf = a.get_if<MemoryFormatArgument>()) {
      if (s.type != ArgType::kMemoryFormat) return mismatch();
      static const char* kNames[] = {"unknown", "contiguous_format", "channels_last",
                                     "channels_last_3d", "preserve_format"};
      int code = mf->value;
      return Arg{std::string(code >= 0 && code <= 4 ? kNames[code] : "unknown")};
    }
    if (auto* lay = a.get_if<LayoutArgument>()) {
      if (s.type != ArgType::kLayout) return mismatch();
      return Arg{std::string(lay->value == 7 ? "strided" : "layout_" + std::to_string(lay->value))};
    }
    if (auto* dev = a.get_if<Device>()) {
      if (s.type != ArgType::kDevice) return mismatch();
      // Devices are recorded but never used: splice runs on the backend it is given.
      return Arg{dev->index ? fmt::format("{}:{}", dev->type, *dev->index) : dev->type};
    }
    return mismatch();
  }

  Result<ir::SymIntArg> sym_int_element(const SymIntArgument& si, std::string_view where) {
    if (auto* c = std::get_if<int64_t>(&si.value)) return ir::SymIntArg{*c};
    SPLICE_ASSIGN_OR_RETURN(Value * v, value(std::get<std::string>(si.value), where));
    if (v->kind() != ValueKind::kSymInt)
      return make_error(ErrorKind::kBadArchive, "{}: '{}' is a {}, not a SymInt", where, v->name(),
                        ir::value_kind_name(v->kind()));
    return ir::SymIntArg{v};
  }

  std::string node_name(const Node& node) {
    if (node.name && !node.name->empty()) return *node.name;
    for (const Argument& o : node.outputs) {
      if (auto* t = o.get_if<TensorArgument>()) return t->name;
      if (auto* l = o.get_if<TensorListArgument>(); l && !l->values.empty())
        return l->values[0].name;
      if (auto* s = o.get_if<SymIntArgument>(); s && s->is_name())
        return std::get<std::string>(s->value);
    }
    return std::string(strip_prefix(node.target));
  }

  Result<void> import_node(const Node& node) {
    std::string_view target = strip_prefix(node.target);
    const ir::OpSchema* op = ir::find_op(target);
    SPLICE_ASSERT(op != nullptr);  // check_ops() ran
    std::string name = node_name(node);
    std::string where = fmt::format("node '{}' ({})", name, target);
    ir::Node* n = program_.graph.add_node(op, name);

    std::vector<std::optional<Arg>> args(op->args.size());
    size_t position = 0;
    for (const NamedArgument& na : node.inputs) {
      std::optional<size_t> index = op->find_arg(na.name);
      if (!index) {
        // Python operators' parameter names vary by version; take them by position.
        if (na.kind == ArgumentKind::kKeyword || position >= op->args.size())
          return make_error(ErrorKind::kBadArchive, "{}: unknown argument '{}'", where, na.name);
        index = position;
      }
      position = *index + 1;
      if (args[*index])
        return make_error(ErrorKind::kBadArchive, "{}: argument '{}' is given twice", where,
                          op->args[*index].name);
      SPLICE_ASSIGN_OR_RETURN(Arg a, convert(na.arg, op->args[*index], where));
      args[*index] = std::move(a);
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i]) {
        n->args().push_back(std::move(*args[i]));
      } else if (op->args[i].default_value) {
        n->args().push_back(*op->args[i].default_value);
      } else if (op->args[i].optional) {
        n->args().push_back(Arg{Arg::None{}});
      } else {
        return make_error(ErrorKind::kBadArchive, "{}: missing required argument '{}'", where,
                          op->args[i].name);
      }
    }
    for (const Argument& o : node.outputs) SPLICE_TRY(import_output(o, n, where));
    return ok_result();
  }

  Result<void> bind_output(Value* v, ir::Node* n, std::string_view where) {
    if (v->producer() != nullptr || is_graph_input(v))
      return make_error(ErrorKind::kBadArchive, "{}: value '{}' is produced twice", where,
                        v->name());
    v->set_producer(n);
    n->outputs().push_back(v);
    return ok_result();
  }

  bool is_graph_input(const Value* v) const {
    const auto& in = program_.graph.inputs();
    return std::find(in.begin(), in.end(), v) != in.end();
  }

  Result<void> import_output(const Argument& o, ir::Node* n, std::string_view where) {
    auto named = [&](const std::string& name) -> Result<void> {
      if (unreadable_.count(name)) {
        n->outputs().push_back(nullptr);  // an output nobody may read (checked at each use)
        return ok_result();
      }
      SPLICE_ASSIGN_OR_RETURN(Value * v, value(name, where));
      return bind_output(v, n, where);
    };
    if (auto* t = o.get_if<TensorArgument>()) return named(t->name);
    if (auto* l = o.get_if<TensorListArgument>()) {
      for (const auto& t : l->values) SPLICE_TRY(named(t.name));
      return ok_result();
    }
    if (auto* t = o.get_if<OptionalTensorArgument>()) {
      if (t->tensor) return named(t->tensor->name);
      n->outputs().push_back(nullptr);
      return ok_result();
    }
    if (auto* l = o.get_if<OptionalTensorListArgument>()) {
      for (const auto& t : l->values) {
        if (t.tensor) {
          SPLICE_TRY(named(t.tensor->name));
        } else {
          n->outputs().push_back(nullptr);
        }
      }
      return ok_result();
    }
    if (auto* s = o.get_if<SymIntArgument>(); s && s->is_name())
      return named(std::get<std::string>(s->value));
    if (auto* s = o.get_if<SymBoolArgument>(); s && s->is_name())
      return named(std::get<std::string>(s->value));
    if (auto* s = o.get_if<SymFloatArgument>(); s && s->is_name())
      return named(std::get<std::string>(s->value));
    // A constant or None result the program does not use.
    n->outputs().push_back(nullptr);
    return ok_result();
  }

  Result<Arg> graph_output(const Argument& a) {
    const std::string where = "graph output";
    if (a.is<NoneArgument>()) return Arg{Arg::None{}};
    if (auto* t = a.get_if<TensorArgument>()) {
      SPLICE_ASSIGN_OR_RETURN(Value * v, tensor_value(t->name, where));
      return Arg{v};
    }
    if (auto* t = a.get_if<OptionalTensorArgument>()) {
      if (!t->tensor) return Arg{Arg::None{}};
      SPLICE_ASSIGN_OR_RETURN(Value * v, tensor_value(t->tensor->name, where));
      return Arg{v};
    }
    if (auto* s = a.get_if<SymIntArgument>()) {
      if (auto* c = std::get_if<int64_t>(&s->value)) return Arg{*c};
      SPLICE_ASSIGN_OR_RETURN(Value * v, value(std::get<std::string>(s->value), where));
      return Arg{v};
    }
    if (auto* s = a.get_if<SymBoolArgument>()) {
      if (auto* c = std::get_if<bool>(&s->value)) return Arg{*c};
      SPLICE_ASSIGN_OR_RETURN(Value * v, value(std::get<std::string>(s->value), where));
      return Arg{v};
    }
    if (auto* s = a.get_if<SymFloatArgument>()) {
      if (auto* c = std::get_if<double>(&s->value)) return Arg{*c};
      SPLICE_ASSIGN_OR_RETURN(Value * v, value(std::get<std::string>(s->value), where));
      return Arg{v};
    }
    if (auto* i = a.get_if<IntArgument>()) return Arg{i->value};
    if (auto* f = a.get_if<FloatArgument>()) return Arg{f->value};
    if (auto* b = a.get_if<BoolArgument>()) return Arg{b->value};
    return make_error(ErrorKind::kUnsupportedOp, "a graph output of kind {} is not supported",
                      argument_kind_name(a));
  }

  Result<void> import_outputs() {
    for (const Argument& a : graph_.outputs) {
      SPLICE_ASSIGN_OR_RETURN(Arg arg, graph_output(a));
      program_.graph.outputs().push_back(std::move(arg));
    }
    return ok_result();
  }

  Result<void> import_signature() {
    const auto& sig = ep_.graph_module.signature;
    const auto& inputs = program_.graph.inputs();
    if (sig.input_specs.size() != inputs.size())
      return make_error(ErrorKind::kBadArchive,
                        "the signature describes {} inputs but the graph has {}",
                        sig.input_specs.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      ir::InputSpec spec;
      spec.value = inputs[i];
      std::visit(
          [&](const auto& s) {
            using T = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<T, UserInputSpec>) {
              spec.kind = ir::InputKind::kUserInput;
            } else if constexpr (std::is_same_v<T, InputToParameterSpec>) {
              spec.kind = ir::InputKind::kParameter;
              spec.target = s.parameter_name;
            } else if constexpr (std::is_same_v<T, InputToBufferSpec>) {
              spec.kind = ir::InputKind::kBuffer;
              spec.target = s.buffer_name;
              spec.persistent = s.persistent;
            } else if constexpr (std::is_same_v<T, InputToTensorConstantSpec>) {
              spec.kind = ir::InputKind::kTensorConstant;
              spec.target = s.tensor_constant_name;
            } else if constexpr (std::is_same_v<T, InputToCustomObjSpec>) {
              spec.kind = ir::InputKind::kCustomObj;
              spec.target = s.custom_obj_name;
            } else if constexpr (std::is_same_v<T, InputTokenSpec>) {
              spec.kind = ir::InputKind::kToken;
            } else {
              spec.kind = ir::InputKind::kConstantInput;
              spec.target = s.name;
              spec.value = nullptr;
              std::visit(
                  [&](const auto& c) {
                    using C = std::decay_t<decltype(c)>;
                    if constexpr (std::is_same_v<C, NoneArgument>) {
                      spec.constant = Arg{Arg::None{}};
                    } else {
                      spec.constant = Arg{c};
                    }
                  },
                  s.value.value);
            }
          },
          sig.input_specs[i]);
      bool needs_tensor = spec.kind == ir::InputKind::kParameter ||
                          spec.kind == ir::InputKind::kBuffer ||
                          spec.kind == ir::InputKind::kTensorConstant;
      if (needs_tensor && (spec.value == nullptr || !spec.value->is_tensor()))
        return make_error(ErrorKind::kBadArchive, "input {} ({} '{}') is not a tensor", i,
                          ir::input_kind_name(spec.kind), spec.target);
      program_.signature.inputs.push_back(std::move(spec));
    }
    const auto& outputs = program_.graph.outputs();
    if (sig.output_specs.size() != outputs.size())
      return make_error(ErrorKind::kBadArchive,
                        "the signature describes {} outputs but the graph has {}",
                        sig.output_specs.size(), outputs.size());
    for (const auto& os : sig.output_specs) {
      ir::OutputSpec spec;
      std::visit(
          [&](const auto& s) {
            using T = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<T, UserOutputSpec>) {
              spec.kind = ir::OutputKind::kUserOutput;
            } else if constexpr (std::is_same_v<T, LossOutputSpec>) {
              spec.kind = ir::OutputKind::kLossOutput;
            } else if constexpr (std::is_same_v<T, BufferMutationSpec>) {
              spec.kind = ir::OutputKind::kBufferMutation;
              spec.target = s.buffer_name;
            } else if constexpr (std::is_same_v<T, UserInputMutationSpec>) {
              spec.kind = ir::OutputKind::kUserInputMutation;
              spec.target = s.user_input_name;
            } else if constexpr (std::is_same_v<T, ParameterMutationSpec>) {
              spec.kind = ir::OutputKind::kParameterMutation;
              spec.target = s.parameter_name;
            } else {
              spec.kind = ir::OutputKind::kToken;
            }
          },
          os);
      program_.signature.outputs.push_back(std::move(spec));
    }
    return ok_result();
  }

  const ExportedProgram& ep_;
  const Graph& graph_;
  ir::Program program_;
  std::map<std::string, Value*, std::less<>> values_;
  // Tensor values whose dtype splice does not support, with the error a use of them gives.
  std::map<std::string, Error, std::less<>> unreadable_;
};

}  // namespace

Result<ir::Program> import_program(const ExportedProgram& ep) { return Importer(ep).run(); }

}  // namespace splice::pt2
