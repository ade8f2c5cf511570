// The text IR printer: programs, graphs, value types and argument literals in the format that
// parser.cc reads back. Everything that decides how a piece prints lives here (double
// formatting, string quoting, name quoting), so that print → parse → print is a fixed point.
#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ir/ops.h"

namespace splice::ir {

namespace {

bool is_plain_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string format_sym_int(const SymIntArg& a) {
  if (const auto* v = std::get_if<int64_t>(&a)) return std::to_string(*v);
  Value* value = std::get<Value*>(a);
  return value == nullptr ? "None" : format_value_name(value->name());
}

template <typename T, typename F>
std::string format_list(const std::vector<T>& items, F&& format_item) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += format_item(items[i]);
  }
  return s + "]";
}

void print_symbols(const Program& p, std::string& out) {
  if (p.ranges.empty() && p.hints.empty()) return;
  std::set<std::string, std::less<>> names;
  for (const auto& [name, range] : p.ranges) names.insert(name);
  for (const auto& [name, hint] : p.hints) names.insert(name);
  out += "symbols {\n";
  for (const std::string& name : names) {
    out += fmt::format("  {}:", name);
    if (auto it = p.ranges.find(name); it != p.ranges.end())
      out += fmt::format(" {}", it->second.to_string());
    if (auto it = p.hints.find(name); it != p.hints.end())
      out += fmt::format(" hint {}", it->second);
    out += "\n";
  }
  out += "}\n";
}

void print_signature(const Program& p, std::string& out) {
  const Signature& sig = p.signature;
  if (sig.inputs.empty() && sig.outputs.empty()) return;
  out += "signature {\n";
  for (const InputSpec& in : sig.inputs) {
    if (in.kind == InputKind::kConstantInput && in.value == nullptr) {
      out += fmt::format("  input constant {} = {}\n", quote_string(in.target),
                         format_arg(in.constant));
      continue;
    }
    out += "  input ";
    out += in.value == nullptr ? "_" : format_value_name(in.value->name());
    out += ": ";
    out += input_kind_name(in.kind);
    if (!in.target.empty()) out += fmt::format(" {}", quote_string(in.target));
    if (in.kind == InputKind::kBuffer) out += in.persistent ? " persistent" : " non_persistent";
    if (in.kind == InputKind::kConstantInput) out += fmt::format(" = {}", format_arg(in.constant));
    out += "\n";
  }
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const OutputSpec& o = sig.outputs[i];
    out += fmt::format("  output {}: {}", i, output_kind_name(o.kind));
    if (!o.target.empty()) out += fmt::format(" {}", quote_string(o.target));
    out += "\n";
  }
  out += "}\n";
}

void print_node(const Node& node, std::string& out) {
  out += "  ";
  const auto& outputs = node.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i) out += ", ";
    if (outputs[i] == nullptr) {
      out += "_";
    } else {
      out += format_value_name(outputs[i]->name()) + ": " + format_value_type(*outputs[i]);
    }
  }
  if (!outputs.empty()) out += " = ";
  out += node.target();
  out += "(";
  const OpSchema& op = node.op();
  for (size_t i = 0; i < node.args().size(); ++i) {
    if (i) out += ", ";
    // Arguments beyond the schema (an invalid node) print positionally: the verifier, not
    // the printer, reports them.
    if (i < op.args.size() && op.args[i].kwarg_only) out += op.args[i].name + "=";
    out += format_arg(node.args()[i]);
  }
  out += ")";
  if (node.name() != default_node_name(node)) {
    out += " @";
    out += is_plain_name(node.name()) ? node.name() : quote_string(node.name());
  }
  out += "\n";
}

}  // namespace

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;  // UTF-8 bytes pass through, as JSON allows
        }
    }
  }
  return out + "\"";
}

std::string format_value_name(std::string_view name) {
  // fmt::format rather than "%" + string: GCC 12 at -O3 warns (falsely, -Wrestrict) about the
  // insert-at-front that operator+(const char*, std::string&&) inlines to.
  return fmt::format("%{}", is_plain_name(name) ? std::string(name) : quote_string(name));
}

std::string format_value_type(const Value& value) {
  if (value.is_tensor()) return value.type().to_string();
  std::string s = value_kind_name(value.kind());
  if (value.expr()) s += fmt::format("({})", value.expr()->to_string());
  return s;
}

std::string format_arg(const Arg& arg) {
  return std::visit(
      [](const auto& d) -> std::string {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, Arg::None>) {
          return "None";
        } else if constexpr (std::is_same_v<T, bool>) {
          return d ? "True" : "False";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(d);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_double(d);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote_string(d);
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(d));
        } else if constexpr (std::is_same_v<T, Value*>) {
          return d == nullptr ? "None" : format_value_name(d->name());
        } else if constexpr (std::is_same_v<T, std::vector<SymIntArg>>) {
          return format_list(d, format_sym_int);
        } else if constexpr (std::is_same_v<T, std::vector<Value*>>) {
          return format_list(d, [](Value* v) {
            return v == nullptr ? std::string("None") : format_value_name(v->name());
          });
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return format_list(d, format_double);
        } else {
          static_assert(std::is_same_v<T, std::vector<bool>>);
          return format_list(d, [](bool b) { return std::string(b ? "True" : "False"); });
        }
      },
      arg.data);
}

std::string default_node_name(const Node& node) {
  for (const Value* v : node.outputs())
    if (v != nullptr) return v->name();
  return node.target();
}

std::string print_graph(const Graph& graph) {
  std::string out = "graph(";
  bool first = true;
  for (const Value* v : graph.inputs()) {
    if (v == nullptr) continue;  // a constant input: only the signature lists it
    if (!first) out += ", ";
    first = false;
    out += format_value_name(v->name()) + ": " + format_value_type(*v);
  }
  out += ") {\n";
  for (const auto& node : graph.nodes()) print_node(*node, out);
  out += "  return (";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (i) out += ", ";
    out += format_arg(graph.outputs()[i]);
  }
  out += ")\n}\n";
  return out;
}

namespace {

void print_checks(const Program& p, std::string& out) {
  if (p.shape_checks.empty()) return;
  out += "checks {\n";
  for (const ShapeCheck& c : p.shape_checks)
    out +=
        fmt::format("  {}: {}\n", quote_string(c.condition.to_string()), quote_string(c.message));
  out += "}\n";
}

}  // namespace

std::string print_program(const Program& program) {
  std::string out;
  print_symbols(program, out);
  print_signature(program, out);
  print_checks(program, out);
  out += print_graph(program.graph);
  return out;
}

}  // namespace splice::ir
