// The text IR parser (format in printer.h): a recursive-descent reader over lexer.h's tokens
// that builds a Program through Graph's API. Literals are read untyped first and then take the
// variant their schema argument asks for, so that printing what was parsed gives back the same
// text and the same Arg variants. Values must be defined before use: the parser resolves names
// as it goes and reports an unknown name where it is used.
#include "ir/parser.h"

#include <map>

#include "ir/lexer.h"
#include "ir/ops.h"
#include "ir/printer.h"

namespace splice::ir {

namespace {

// A literal as written, before its schema gives it a variant.
struct Lit {
  enum Kind { kNone, kBool, kInt, kFloat, kString, kDType, kValue, kList } kind = kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  DType dtype = DType::kFloat32;
  Value* value = nullptr;
  std::vector<Lit> items;
  size_t offset = 0;
};

class Parser {
 public:
  Parser(std::string_view text, Graph& graph, Program* program)
      : lex_(text), graph_(graph), program_(program) {}

  Result<void> parse_program() {
    while (true) {
      SPLICE_ASSIGN_OR_RETURN(Token t, lex_.peek());
      if (t.is_ident("symbols") && !seen_symbols_ && !seen_signature_) {
        seen_symbols_ = true;
        SPLICE_TRY(parse_symbols());
      } else if (t.is_ident("signature") && !seen_signature_ && !seen_checks_) {
        seen_signature_ = true;
        SPLICE_TRY(parse_signature());
      } else if (t.is_ident("checks") && !seen_checks_) {
        seen_checks_ = true;
        SPLICE_TRY(parse_checks());
      } else {
        break;
      }
    }
    SPLICE_TRY(parse_graph());
    return expect_end();
  }

  Result<void> parse_graph_only() {
    SPLICE_TRY(parse_graph());
    return expect_end();
  }

 private:
  template <typename... Args>
  Error error(size_t offset, fmt::format_string<Args...> format, Args&&... args) const {
    return lex_.error_at(offset, fmt::format(format, std::forward<Args>(args)...));
  }

  Result<Token> expect_punct(char c) {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
    if (!t.is_punct(c)) return error(t.offset, "expected '{}' but found {}", c, Lexer::describe(t));
    return t;
  }

  Result<Token> expect_kind(TokenKind kind, std::string_view what) {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
    if (t.kind != kind)
      return error(t.offset, "expected {} but found {}", what, Lexer::describe(t));
    return t;
  }

  Result<Token> expect_ident(std::string_view word) {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
    if (!t.is_ident(word))
      return error(t.offset, "expected '{}' but found {}", word, Lexer::describe(t));
    return t;
  }

  // Consumes `c` if it comes next.
  Result<bool> accept_punct(char c) {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.peek());
    if (!t.is_punct(c)) return false;
    SPLICE_TRY(lex_.next());
    return true;
  }

  Result<void> expect_end() {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
    if (t.kind != TokenKind::kEnd)
      return error(t.offset, "expected end of input but found {}", Lexer::describe(t));
    return ok_result();
  }

  // ---- symbols { s0: [2, 64] hint 4 } ----

  Result<void> parse_symbols() {
    SPLICE_TRY(lex_.next());  // "symbols"
    SPLICE_TRY(expect_punct('{'));
    while (true) {
      SPLICE_ASSIGN_OR_RETURN(bool done, accept_punct('}'));
      if (done) return ok_result();
      SPLICE_ASSIGN_OR_RETURN(Token name, expect_kind(TokenKind::kIdent, "a symbol name"));
      SPLICE_TRY(expect_punct(':'));
      if (program_->ranges.count(name.text) || program_->hints.count(name.text))
        return error(name.offset, "symbol '{}' is listed twice", name.text);
      SPLICE_ASSIGN_OR_RETURN(bool has_range, accept_punct('['));
      if (has_range) {
        SymRange range;
        SPLICE_ASSIGN_OR_RETURN(Token lo, expect_kind(TokenKind::kInt, "an integer"));
        range.min = lo.int_value;
        SPLICE_TRY(expect_punct(','));
        SPLICE_ASSIGN_OR_RETURN(Token hi, lex_.next());
        if (hi.kind == TokenKind::kInt) {
          range.max = hi.int_value;
          if (*range.max < range.min)
            return error(hi.offset, "range of '{}' is empty: [{}, {}]", name.text, range.min,
                         *range.max);
        } else if (!hi.is_ident("inf")) {
          return error(hi.offset, "expected an integer or 'inf' but found {}", Lexer::describe(hi));
        }
        SPLICE_TRY(expect_punct(']'));
        program_->ranges.emplace(name.text, range);
      }
      SPLICE_ASSIGN_OR_RETURN(Token t, lex_.peek());
      if (t.is_ident("hint")) {
        SPLICE_TRY(lex_.next());
        SPLICE_ASSIGN_OR_RETURN(Token h, expect_kind(TokenKind::kInt, "an integer"));
        program_->hints.emplace(name.text, h.int_value);
      } else if (!has_range) {
        return error(t.offset, "expected '[' or 'hint' but found {}", Lexer::describe(t));
      }
    }
  }

  // ---- checks { "s1 == 8": "message" } ----

  Result<void> parse_checks() {
    SPLICE_TRY(lex_.next());  // "checks"
    SPLICE_TRY(expect_punct('{'));
    while (true) {
      SPLICE_ASSIGN_OR_RETURN(bool done, accept_punct('}'));
      if (done) return ok_result();
      SPLICE_ASSIGN_OR_RETURN(Token cond, expect_kind(TokenKind::kString, "a quoted condition"));
      auto condition = parse_sym_expr(cond.text);
      if (!condition.ok()) return error(cond.offset, "check: {}", condition.error().message());
      SPLICE_TRY(expect_punct(':'));
      SPLICE_ASSIGN_OR_RETURN(Token message, expect_kind(TokenKind::kString, "a quoted message"));
      program_->shape_checks.push_back({*condition, message.text});
    }
  }

  // ---- signature { input ... output ... } ----

  Result<void> parse_signature() {
    SPLICE_TRY(lex_.next());  // "signature"
    SPLICE_TRY(expect_punct('{'));
    Signature& sig = program_->signature;
    while (true) {
      SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
      if (t.is_punct('}')) return ok_result();
      if (t.is_ident("input")) {
        SPLICE_TRY(parse_input_spec());
      } else if (t.is_ident("output")) {
        SPLICE_ASSIGN_OR_RETURN(Token index, expect_kind(TokenKind::kInt, "an output index"));
        if (index.int_value != static_cast<int64_t>(sig.outputs.size()))
          return error(index.offset, "expected output index {} but found {}", sig.outputs.size(),
                       index.int_value);
        SPLICE_TRY(expect_punct(':'));
        SPLICE_ASSIGN_OR_RETURN(Token kind, expect_kind(TokenKind::kIdent, "an output kind"));
        OutputSpec spec;
        bool found = false;
        for (OutputKind k :
             {OutputKind::kUserOutput, OutputKind::kBufferMutation, OutputKind::kUserInputMutation,
              OutputKind::kParameterMutation, OutputKind::kLossOutput, OutputKind::kToken}) {
          if (kind.text == output_kind_name(k)) {
            spec.kind = k;
            found = true;
          }
        }
        if (!found) return error(kind.offset, "unknown output kind '{}'", kind.text);
        SPLICE_ASSIGN_OR_RETURN(Token target, lex_.peek());
        if (target.kind == TokenKind::kString) {
          SPLICE_TRY(lex_.next());
          spec.target = target.text;
        }
        sig.outputs.push_back(std::move(spec));
      } else {
        return error(t.offset, "expected 'input', 'output' or '}}' but found {}",
                     Lexer::describe(t));
      }
    }
  }

  Result<void> parse_input_spec() {
    InputSpec spec;
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
    if (t.is_ident("constant")) {
      SPLICE_ASSIGN_OR_RETURN(Token name, expect_kind(TokenKind::kString, "a string"));
      SPLICE_TRY(expect_punct('='));
      spec.kind = InputKind::kConstantInput;
      spec.target = name.text;
      SPLICE_ASSIGN_OR_RETURN(Lit lit, parse_literal());
      SPLICE_ASSIGN_OR_RETURN(spec.constant, to_arg(lit, nullptr));
      program_->signature.inputs.push_back(std::move(spec));
      input_names_.push_back(std::nullopt);
      return ok_result();
    }
    std::optional<std::string> value_name;
    if (t.kind == TokenKind::kValue) {
      value_name = t.text;
    } else if (!t.is_ident("_")) {
      return error(t.offset, "expected a value, '_' or 'constant' but found {}",
                   Lexer::describe(t));
    }
    SPLICE_TRY(expect_punct(':'));
    SPLICE_ASSIGN_OR_RETURN(Token kind, expect_kind(TokenKind::kIdent, "an input kind"));
    bool found = false;
    for (InputKind k : {InputKind::kUserInput, InputKind::kParameter, InputKind::kBuffer,
                        InputKind::kTensorConstant, InputKind::kConstantInput,
                        InputKind::kCustomObj, InputKind::kToken}) {
      if (kind.text == input_kind_name(k)) {
        spec.kind = k;
        found = true;
      }
    }
    if (!found) return error(kind.offset, "unknown input kind '{}'", kind.text);
    SPLICE_ASSIGN_OR_RETURN(Token next, lex_.peek());
    if (next.kind == TokenKind::kString) {
      SPLICE_TRY(lex_.next());
      spec.target = next.text;
    }
    SPLICE_ASSIGN_OR_RETURN(next, lex_.peek());
    if (next.is_ident("persistent") || next.is_ident("non_persistent")) {
      SPLICE_TRY(lex_.next());
      spec.persistent = next.is_ident("persistent");
    }
    SPLICE_ASSIGN_OR_RETURN(bool has_constant, accept_punct('='));
    if (has_constant) {
      SPLICE_ASSIGN_OR_RETURN(Lit lit, parse_literal());
      SPLICE_ASSIGN_OR_RETURN(spec.constant, to_arg(lit, nullptr));
    }
    if (value_name) {
      for (const auto& n : input_names_)
        if (n && *n == *value_name)
          return error(t.offset, "input '%{}' is listed twice in the signature", *value_name);
    }
    input_names_.push_back(value_name);
    program_->signature.inputs.push_back(std::move(spec));
    return ok_result();
  }

  // ---- graph(...) { ... return (...) } ----

  Result<void> parse_graph() {
    SPLICE_ASSIGN_OR_RETURN(Token g, lex_.next());
    if (!g.is_ident("graph")) {
      return error(g.offset, "expected {} but found {}",
                   program_ != nullptr ? "'symbols', 'signature' or 'graph'" : "'graph'",
                   Lexer::describe(g));
    }
    SPLICE_TRY(expect_punct('('));
    std::vector<Value*> header;
    SPLICE_ASSIGN_OR_RETURN(bool empty, accept_punct(')'));
    if (!empty) {
      while (true) {
        SPLICE_ASSIGN_OR_RETURN(Value * v, parse_value_decl(/*define=*/true));
        header.push_back(v);
        SPLICE_ASSIGN_OR_RETURN(Token sep, lex_.next());
        if (sep.is_punct(')')) break;
        if (!sep.is_punct(','))
          return error(sep.offset, "expected ',' or ')' but found {}", Lexer::describe(sep));
      }
    }
    SPLICE_TRY(bind_graph_inputs(header, g.offset));
    SPLICE_TRY(expect_punct('{'));
    while (true) {
      SPLICE_ASSIGN_OR_RETURN(Token t, lex_.peek());
      if (t.is_ident("return")) break;
      SPLICE_TRY(parse_node());
    }
    SPLICE_TRY(lex_.next());  // "return"
    SPLICE_TRY(expect_punct('('));
    SPLICE_ASSIGN_OR_RETURN(bool none, accept_punct(')'));
    if (!none) {
      while (true) {
        SPLICE_ASSIGN_OR_RETURN(Lit lit, parse_literal());
        SPLICE_ASSIGN_OR_RETURN(Arg a, to_arg(lit, nullptr));
        graph_.outputs().push_back(std::move(a));
        SPLICE_ASSIGN_OR_RETURN(Token sep, lex_.next());
        if (sep.is_punct(')')) break;
        if (!sep.is_punct(','))
          return error(sep.offset, "expected ',' or ')' but found {}", Lexer::describe(sep));
      }
    }
    SPLICE_TRY(expect_punct('}'));
    return ok_result();
  }

  // The header lists the non-constant inputs; the signature, when present, says where the
  // constant (null) ones go, and must name the same values in the same order.
  Result<void> bind_graph_inputs(const std::vector<Value*>& header, size_t offset) {
    if (program_ == nullptr || program_->signature.inputs.empty()) {
      graph_.inputs() = header;
      return ok_result();
    }
    size_t next = 0;
    for (size_t i = 0; i < input_names_.size(); ++i) {
      if (!input_names_[i]) {
        graph_.inputs().push_back(nullptr);
        continue;
      }
      if (next >= header.size() || header[next]->name() != *input_names_[i]) {
        return error(offset, "signature input {} is '%{}' but the graph's input {} is {}", i,
                     *input_names_[i], next,
                     next < header.size() ? "'%" + header[next]->name() + "'" : "missing");
      }
      program_->signature.inputs[i].value = header[next];
      graph_.inputs().push_back(header[next++]);
    }
    if (next != header.size()) {
      return error(offset, "graph input '%{}' is not in the signature", header[next]->name());
    }
    return ok_result();
  }

  // %name: type — a graph input or node output; `define` makes the name visible at once.
  Result<Value*> parse_value_decl(bool define) {
    SPLICE_ASSIGN_OR_RETURN(Token name, expect_kind(TokenKind::kValue, "a value"));
    SPLICE_TRY(expect_punct(':'));
    SPLICE_ASSIGN_OR_RETURN(Token type, expect_kind(TokenKind::kIdent, "a type"));
    if (values_.count(name.text))
      return error(name.offset, "value '%{}' is defined twice", name.text);
    Value* v = nullptr;
    if (type.text == "SymInt" || type.text == "SymBool" || type.text == "SymFloat") {
      ValueKind kind = type.text == "SymInt"    ? ValueKind::kSymInt
                       : type.text == "SymBool" ? ValueKind::kSymBool
                                                : ValueKind::kSymFloat;
      v = graph_.add_value(name.text, kind);
      SPLICE_ASSIGN_OR_RETURN(bool has_expr, accept_punct('('));
      if (has_expr) {
        SPLICE_ASSIGN_OR_RETURN(SymExpr e, parse_raw_expr(')'));
        v->set_expr(std::move(e));
      }
    } else {
      std::optional<DType> dtype = dtype_from_name(type.text);
      if (!dtype) return error(type.offset, "unknown type '{}'", type.text);
      SPLICE_TRY(expect_punct('['));
      // Not peek(): a size such as `-((s0 + 1) // 2)` is no token of the text IR.
      const size_t start = lex_.offset();
      SPLICE_ASSIGN_OR_RETURN(std::string_view raw, lex_.raw_until(']'));
      TensorType tt;
      tt.dtype = *dtype;
      SPLICE_TRY(parse_sizes(raw, start, tt.sizes));
      v = graph_.add_value(name.text, ValueKind::kTensor);
      v->set_type(std::move(tt));
    }
    if (define) values_.emplace(name.text, v);
    return v;
  }

  Result<SymExpr> parse_raw_expr(char close) {
    const size_t start = lex_.offset();
    SPLICE_ASSIGN_OR_RETURN(std::string_view raw, lex_.raw_until(close));
    auto e = parse_sym_expr(raw);
    if (!e.ok()) return error(start, "bad expression '{}': {}", raw, e.error().message());
    return std::move(*e);
  }

  // Splits "s0, Max(1, u0), 8" at top-level commas and parses each size.
  Result<void> parse_sizes(std::string_view raw, size_t offset, std::vector<SymExpr>& sizes) {
    auto is_blank = [](std::string_view s) {
      return s.find_first_not_of(" \t\r") == std::string_view::npos;
    };
    if (is_blank(raw)) return ok_result();
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= raw.size(); ++i) {
      char c = i < raw.size() ? raw[i] : ',';
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (c == ',' && depth == 0) {
        std::string_view piece = raw.substr(start, i - start);
        if (is_blank(piece)) return error(offset + start, "empty size in a tensor type");
        auto e = parse_sym_expr(piece);
        if (!e.ok()) return error(offset + start, "bad size '{}': {}", piece, e.error().message());
        sizes.push_back(std::move(*e));
        start = i + 1;
      }
    }
    return ok_result();
  }

  Result<void> parse_node() {
    std::vector<Value*> outputs;
    SPLICE_ASSIGN_OR_RETURN(Token first, lex_.peek());
    if (first.kind == TokenKind::kValue || first.is_ident("_")) {
      while (true) {
        SPLICE_ASSIGN_OR_RETURN(Token t, lex_.peek());
        if (t.is_ident("_")) {
          SPLICE_TRY(lex_.next());
          outputs.push_back(nullptr);
        } else {
          SPLICE_ASSIGN_OR_RETURN(Value * v, parse_value_decl(/*define=*/false));
          for (Value* o : outputs)
            if (o != nullptr && o->name() == v->name())
              return error(t.offset, "value '%{}' is defined twice", v->name());
          outputs.push_back(v);
        }
        SPLICE_ASSIGN_OR_RETURN(Token sep, lex_.next());
        if (sep.is_punct('=')) break;
        if (!sep.is_punct(','))
          return error(sep.offset, "expected ',' or '=' but found {}", Lexer::describe(sep));
      }
    }
    SPLICE_ASSIGN_OR_RETURN(Token target, expect_kind(TokenKind::kIdent, "an op"));
    const OpSchema* op = find_op(target.text);
    if (op == nullptr) {
      Error e = error(target.offset, "unknown op '{}'", target.text);
      return Error(ErrorKind::kUnsupportedOp, e.message());
    }
    SPLICE_TRY(expect_punct('('));
    std::vector<std::optional<Arg>> args(op->args.size());
    size_t position = 0;
    SPLICE_ASSIGN_OR_RETURN(bool no_args, accept_punct(')'));
    while (!no_args) {
      SPLICE_ASSIGN_OR_RETURN(Token t, lex_.peek());
      size_t index = 0;
      if (t.kind == TokenKind::kIdent && lex_.next_char_after_peek_is('=')) {
        SPLICE_TRY(lex_.next());
        SPLICE_TRY(expect_punct('='));
        std::optional<size_t> found = op->find_arg(t.text);
        if (!found) return error(t.offset, "{} has no argument '{}'", op->target, t.text);
        index = *found;
      } else {
        if (position >= op->args.size() || op->args[position].kwarg_only) {
          return error(t.offset, "too many positional arguments for {}: it takes {}", op->target,
                       position);
        }
        index = position++;
      }
      if (args[index])
        return error(t.offset, "argument '{}' of {} is given twice", op->args[index].name,
                     op->target);
      SPLICE_ASSIGN_OR_RETURN(Lit lit, parse_literal());
      SPLICE_ASSIGN_OR_RETURN(Arg a, to_arg(lit, &op->args[index]));
      args[index] = std::move(a);
      SPLICE_ASSIGN_OR_RETURN(Token sep, lex_.next());
      if (sep.is_punct(')')) break;
      if (!sep.is_punct(','))
        return error(sep.offset, "expected ',' or ')' but found {}", Lexer::describe(sep));
    }
    std::string name;
    SPLICE_ASSIGN_OR_RETURN(bool has_name, accept_punct('@'));
    if (has_name) {
      SPLICE_ASSIGN_OR_RETURN(Token n, lex_.next());
      if (n.kind != TokenKind::kIdent && n.kind != TokenKind::kString)
        return error(n.offset, "expected a node name but found {}", Lexer::describe(n));
      name = n.text;
    }
    std::vector<Arg> filled;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i]) {
        filled.push_back(std::move(*args[i]));
      } else if (op->args[i].default_value) {
        filled.push_back(*op->args[i].default_value);
      } else if (op->args[i].optional) {
        filled.push_back(Arg{Arg::None{}});
      } else {
        return error(target.offset, "missing argument '{}' of {}", op->args[i].name, op->target);
      }
    }
    if (!has_name) {
      name = op->target;  // printer.h's default_node_name
      for (Value* v : outputs) {
        if (v != nullptr) {
          name = v->name();
          break;
        }
      }
    }
    Node* node = graph_.add_node(op, name);
    node->args() = std::move(filled);
    node->outputs() = outputs;
    for (Value* v : outputs) {
      if (v == nullptr) continue;
      v->set_producer(node);
      values_.emplace(v->name(), v);  // defined only now: a node cannot read its own outputs
    }
    return ok_result();
  }

  // ---- literals ----

  Result<Lit> parse_literal() {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex_.next());
    Lit lit;
    lit.offset = t.offset;
    switch (t.kind) {
      case TokenKind::kInt:
        lit.kind = Lit::kInt;
        lit.i = t.int_value;
        return lit;
      case TokenKind::kFloat:
        lit.kind = Lit::kFloat;
        lit.f = t.float_value;
        return lit;
      case TokenKind::kString:
        lit.kind = Lit::kString;
        lit.s = t.text;
        return lit;
      case TokenKind::kValue: {
        auto it = values_.find(t.text);
        if (it == values_.end()) return error(t.offset, "undefined value '%{}'", t.text);
        lit.kind = Lit::kValue;
        lit.value = it->second;
        return lit;
      }
      case TokenKind::kIdent:
        if (t.text == "None") return lit;
        if (t.text == "True" || t.text == "False") {
          lit.kind = Lit::kBool;
          lit.b = t.text == "True";
          return lit;
        }
        if (t.text == "inf" || t.text == "nan") {
          lit.kind = Lit::kFloat;
          lit.f = t.text == "inf" ? INFINITY : NAN;
          return lit;
        }
        if (auto d = dtype_from_name(t.text)) {
          lit.kind = Lit::kDType;
          lit.dtype = *d;
          return lit;
        }
        break;
      case TokenKind::kPunct:
        if (t.is_punct('[')) {
          lit.kind = Lit::kList;
          SPLICE_ASSIGN_OR_RETURN(bool empty, accept_punct(']'));
          while (!empty) {
            SPLICE_ASSIGN_OR_RETURN(Token peek, lex_.peek());
            if (peek.is_punct('[')) return error(peek.offset, "nested lists are not allowed");
            SPLICE_ASSIGN_OR_RETURN(Lit item, parse_literal());
            lit.items.push_back(std::move(item));
            SPLICE_ASSIGN_OR_RETURN(Token sep, lex_.next());
            if (sep.is_punct(']')) break;
            if (!sep.is_punct(','))
              return error(sep.offset, "expected ',' or ']' but found {}", Lexer::describe(sep));
          }
          return lit;
        }
        break;
      default:
        break;
    }
    return error(t.offset, "expected a value or literal but found {}", Lexer::describe(t));
  }

  // Gives a literal the Arg variant that `schema` (null: none known) calls for.
  Result<Arg> to_arg(const Lit& lit, const ArgSchema* schema) {
    switch (lit.kind) {
      case Lit::kNone:
        return Arg{Arg::None{}};
      case Lit::kBool:
        return Arg{lit.b};
      case Lit::kInt:
        if (schema != nullptr && !schema->list && schema->type == ArgType::kFloat)
          return Arg{static_cast<double>(lit.i)};
        return Arg{lit.i};
      case Lit::kFloat:
        return Arg{lit.f};
      case Lit::kString:
        return Arg{lit.s};
      case Lit::kDType:
        return Arg{lit.dtype};
      case Lit::kValue:
        return Arg{lit.value};
      case Lit::kList:
        break;
    }
    std::optional<ArgType> type;
    if (schema != nullptr && schema->list) type = schema->type;
    if (!type) type = guess_list_type(lit.items);
    auto bad = [&](const Lit& item) {
      return error(item.offset, "this element does not fit a list of {}", arg_type_name(*type));
    };
    switch (*type) {
      case ArgType::kTensor: {
        std::vector<Value*> v;
        for (const Lit& item : lit.items) {
          if (item.kind != Lit::kValue && item.kind != Lit::kNone) return bad(item);
          v.push_back(item.value);
        }
        return Arg{std::move(v)};
      }
      case ArgType::kFloat: {
        std::vector<double> v;
        for (const Lit& item : lit.items) {
          if (item.kind == Lit::kInt) {
            v.push_back(static_cast<double>(item.i));
          } else if (item.kind == Lit::kFloat) {
            v.push_back(item.f);
          } else {
            return bad(item);
          }
        }
        return Arg{std::move(v)};
      }
      case ArgType::kBool: {
        std::vector<bool> v;
        for (const Lit& item : lit.items) {
          if (item.kind != Lit::kBool) return bad(item);
          v.push_back(item.b);
        }
        return Arg{std::move(v)};
      }
      default: {
        std::vector<SymIntArg> v;
        for (const Lit& item : lit.items) {
          if (item.kind == Lit::kInt) {
            v.emplace_back(item.i);
          } else if (item.kind == Lit::kValue) {
            v.emplace_back(item.value);
          } else {
            return bad(item);
          }
        }
        return Arg{std::move(v)};
      }
    }
  }

  // A list without a schema (graph outputs, constant inputs): its elements decide.
  static ArgType guess_list_type(const std::vector<Lit>& items) {
    bool any_float = false, all_bool = !items.empty(), any_none = false, any_int = false;
    bool all_tensor_values = !items.empty();
    for (const Lit& item : items) {
      any_float |= item.kind == Lit::kFloat;
      any_none |= item.kind == Lit::kNone;
      any_int |= item.kind == Lit::kInt;
      all_bool &= item.kind == Lit::kBool;
      all_tensor_values &=
          (item.kind == Lit::kValue && item.value->is_tensor()) || item.kind == Lit::kNone;
    }
    if (any_float) return ArgType::kFloat;
    if (all_bool) return ArgType::kBool;
    if (!any_int && (any_none || all_tensor_values)) return ArgType::kTensor;
    return ArgType::kSymInt;
  }

  Lexer lex_;
  Graph& graph_;
  Program* program_;
  std::map<std::string, Value*, std::less<>> values_;
  std::vector<std::optional<std::string>> input_names_;  // signature inputs; null: constant
  bool seen_symbols_ = false;
  bool seen_signature_ = false;
  bool seen_checks_ = false;
};

}  // namespace

Result<Program> parse_program(std::string_view text) {
  Program program;
  Parser parser(text, program.graph, &program);
  SPLICE_TRY(parser.parse_program());
  return program;
}

Result<void> parse_graph_into(std::string_view text, Graph& graph) {
  Parser parser(text, graph, nullptr);
  return parser.parse_graph_only();
}

}  // namespace splice::ir
