// Parsers for symbolic expressions: the text IR's infix form (parse_sym_expr) and sympy srepr
// as torch.export writes it into a .pt2 archive (parse_srepr). One recursive-descent parser
// serves both, because PyTorch sometimes writes a plain infix `expr_str` ("s0 + 2", "(s0//2)")
// where srepr is expected; srepr mode only adds the sympy function names (Symbol, Integer, Add,
// ...). The input is untrusted: every error is kBadArchive with a position, integer literals
// are range-checked, and nesting is bounded by kSymMaxDepth so that no input can exhaust the
// stack. Chains such as `a + b + c` are collected and built once, so long inputs stay linear.

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/sym.h"

namespace splice {
namespace {

enum class Tok { kEnd, kInt, kIdent, kString, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  std::string_view text;
  size_t pos = 0;
};

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

class Parser {
 public:
  Parser(std::string_view src, bool srepr) : src_(src), srepr_(srepr) {}

  Result<SymExpr> parse_all() {
    SPLICE_TRY(advance());
    if (cur_.kind == Tok::kEnd) return error(0, "empty expression");
    SPLICE_ASSIGN_OR_RETURN(SymExpr e, parse_expr());
    if (cur_.kind != Tok::kEnd) {
      return error(cur_.pos, "unexpected {} after the expression", describe(cur_));
    }
    return e;
  }

 private:
  // Counts one level of parser recursion for its lifetime.
  struct DepthGuard {
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    int& depth;
  };

  template <typename... Args>
  Error error(size_t pos, fmt::format_string<Args...> format, Args&&... args) const {
    constexpr size_t kShown = 120;
    std::string shown(src_.substr(0, kShown));
    if (src_.size() > kShown) shown += "...";
    return make_error(ErrorKind::kBadArchive, "{} expression '{}': {} at position {}",
                      srepr_ ? "sympy" : "symbolic", shown,
                      fmt::format(format, std::forward<Args>(args)...), pos);
  }

  static std::string describe(const Token& t) {
    if (t.kind == Tok::kEnd) return "end of input";
    return fmt::format("'{}'", t.text);
  }

  bool is_punct(std::string_view p) const { return cur_.kind == Tok::kPunct && cur_.text == p; }

  Result<void> advance() {
    while (pos_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    size_t start = pos_;
    if (pos_ >= src_.size()) {
      cur_ = Token{Tok::kEnd, {}, start};
      return ok_result();
    }
    unsigned char c = static_cast<unsigned char>(src_[pos_]);
    auto take = [&](Tok kind, size_t end) {
      cur_ = Token{kind, src_.substr(start, end - start), start};
      pos_ = end;
      return ok_result();
    };
    size_t end = pos_;
    if (std::isdigit(c)) {
      while (end < src_.size() && std::isdigit(static_cast<unsigned char>(src_[end]))) ++end;
      return take(Tok::kInt, end);
    }
    if (std::isalpha(c) || c == '_') {
      while (end < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[end])) || src_[end] == '_')) {
        ++end;
      }
      return take(Tok::kIdent, end);
    }
    if (c == '\'' || c == '"') {
      end = src_.find(static_cast<char>(c), pos_ + 1);
      if (end == std::string_view::npos) return error(start, "unterminated string");
      return take(Tok::kString, end + 1);
    }
    static constexpr std::string_view kTwoChar[] = {"**", "//", "==", "!=", "<=", ">="};
    for (std::string_view p : kTwoChar) {
      if (src_.substr(pos_, 2) == p) return take(Tok::kPunct, pos_ + 2);
    }
    if (c == '/') return error(start, "true division '/' is not supported (use '//')");
    if (std::string_view("()+-*%<>&|~,=").find(static_cast<char>(c)) != std::string_view::npos) {
      return take(Tok::kPunct, pos_ + 1);
    }
    return error(start, "unexpected character '{}'", static_cast<char>(c));
  }

  // The token after the current one, without consuming anything.
  Result<Token> peek() {
    Token saved = cur_;
    size_t saved_pos = pos_;
    SPLICE_TRY(advance());
    Token next = cur_;
    cur_ = saved;
    pos_ = saved_pos;
    return next;
  }

  Result<void> expect(std::string_view p) {
    if (!is_punct(p)) return error(cur_.pos, "expected '{}', found {}", p, describe(cur_));
    return advance();
  }

  Result<SymExpr> build(size_t pos, SymOp op, std::vector<SymExpr> operands) {
    SymExpr e = SymExpr::make(op, std::move(operands));
    if (e.depth() > kSymMaxDepth) {
      return error(pos, "expression nested deeper than {} levels", kSymMaxDepth);
    }
    return e;
  }

  Result<int64_t> parse_int(const Token& t, bool negative) {
    uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    uint64_t v = 0;
    for (char d : t.text) {
      uint64_t digit = static_cast<uint64_t>(d - '0');
      if (v > (limit - digit) / 10) {
        return error(t.pos, "integer {}{} does not fit in int64", negative ? "-" : "", t.text);
      }
      v = v * 10 + digit;
    }
    // -2^63 has no positive int64 counterpart: negate in unsigned arithmetic.
    return negative ? static_cast<int64_t>(~v + 1) : static_cast<int64_t>(v);
  }

  Result<SymExpr> parse_expr() {
    DepthGuard guard(depth_);
    if (depth_ > kSymMaxDepth) {
      return error(cur_.pos, "expression nested deeper than {} levels", kSymMaxDepth);
    }
    return parse_or();
  }

  Result<SymExpr> parse_or() {
    size_t pos = cur_.pos;
    SPLICE_ASSIGN_OR_RETURN(SymExpr first, parse_and());
    if (!is_punct("|")) return first;
    std::vector<SymExpr> operands{first};
    while (is_punct("|")) {
      SPLICE_TRY(advance());
      SPLICE_ASSIGN_OR_RETURN(SymExpr next, parse_and());
      operands.push_back(std::move(next));
    }
    return build(pos, SymOp::kOr, std::move(operands));
  }

  Result<SymExpr> parse_and() {
    size_t pos = cur_.pos;
    SPLICE_ASSIGN_OR_RETURN(SymExpr first, parse_comparison());
    if (!is_punct("&")) return first;
    std::vector<SymExpr> operands{first};
    while (is_punct("&")) {
      SPLICE_TRY(advance());
      SPLICE_ASSIGN_OR_RETURN(SymExpr next, parse_comparison());
      operands.push_back(std::move(next));
    }
    return build(pos, SymOp::kAnd, std::move(operands));
  }

  std::optional<SymOp> comparison_op() const {
    if (cur_.kind != Tok::kPunct) return std::nullopt;
    static const std::pair<std::string_view, SymOp> kOps[] = {
        {"==", SymOp::kEq}, {"!=", SymOp::kNe}, {"<", SymOp::kLt},
        {"<=", SymOp::kLe}, {">", SymOp::kGt},  {">=", SymOp::kGe}};
    for (const auto& [text, op] : kOps) {
      if (cur_.text == text) return op;
    }
    return std::nullopt;
  }

  Result<SymExpr> parse_comparison() {
    size_t pos = cur_.pos;
    SPLICE_ASSIGN_OR_RETURN(SymExpr lhs, parse_arith());
    std::optional<SymOp> op = comparison_op();
    if (!op) return lhs;
    SPLICE_TRY(advance());
    SPLICE_ASSIGN_OR_RETURN(SymExpr rhs, parse_arith());
    if (comparison_op()) return error(cur_.pos, "chained comparisons are not supported");
    return build(pos, *op, {lhs, rhs});
  }

  Result<SymExpr> parse_arith() {
    size_t pos = cur_.pos;
    SPLICE_ASSIGN_OR_RETURN(SymExpr first, parse_term());
    if (!is_punct("+") && !is_punct("-")) return first;
    std::vector<SymExpr> terms{first};
    while (is_punct("+") || is_punct("-")) {
      bool minus = is_punct("-");
      size_t term_pos = cur_.pos;
      SPLICE_TRY(advance());
      SPLICE_ASSIGN_OR_RETURN(SymExpr t, parse_term());
      if (minus) {
        SPLICE_ASSIGN_OR_RETURN(t, build(term_pos, SymOp::kMul, {SymExpr(int64_t{-1}), t}));
      }
      terms.push_back(std::move(t));
    }
    return build(pos, SymOp::kAdd, std::move(terms));
  }

  Result<SymExpr> product(size_t pos, std::vector<SymExpr> factors) {
    if (factors.size() == 1) return factors[0];
    return build(pos, SymOp::kMul, std::move(factors));
  }

  // Python's left-associative *, // and %: runs of * are collected and built once.
  Result<SymExpr> parse_term() {
    size_t pos = cur_.pos;
    SPLICE_ASSIGN_OR_RETURN(SymExpr first, parse_factor());
    std::vector<SymExpr> factors{first};
    while (true) {
      if (is_punct("*")) {
        SPLICE_TRY(advance());
        SPLICE_ASSIGN_OR_RETURN(SymExpr f, parse_factor());
        factors.push_back(std::move(f));
      } else if (is_punct("//") || is_punct("%")) {
        SymOp op = is_punct("//") ? SymOp::kFloorDiv : SymOp::kMod;
        size_t op_pos = cur_.pos;
        SPLICE_TRY(advance());
        SPLICE_ASSIGN_OR_RETURN(SymExpr lhs, product(pos, std::move(factors)));
        SPLICE_ASSIGN_OR_RETURN(SymExpr rhs, parse_factor());
        SPLICE_ASSIGN_OR_RETURN(SymExpr d, build(op_pos, op, {lhs, rhs}));
        factors = {d};
      } else {
        break;
      }
    }
    return product(pos, std::move(factors));
  }

  // Unary -, + and ~, which bind tighter than * but looser than ** (Python: -x**2 = -(x**2)).
  Result<SymExpr> parse_factor() {
    if (!is_punct("-") && !is_punct("+") && !is_punct("~")) return parse_power();
    DepthGuard guard(depth_);
    size_t pos = cur_.pos;
    if (depth_ > kSymMaxDepth) {
      return error(pos, "expression nested deeper than {} levels", kSymMaxDepth);
    }
    char op = cur_.text[0];
    SPLICE_TRY(advance());
    if (op == '-' && cur_.kind == Tok::kInt) {
      // A negative literal, so that -9223372036854775808 reads back; not when it is the base
      // of a power, where Python negates the power.
      SPLICE_ASSIGN_OR_RETURN(Token next, peek());
      if (!(next.kind == Tok::kPunct && next.text == "**")) {
        SPLICE_ASSIGN_OR_RETURN(int64_t v, parse_int(cur_, /*negative=*/true));
        SPLICE_TRY(advance());
        return SymExpr(v);
      }
    }
    SPLICE_ASSIGN_OR_RETURN(SymExpr operand, parse_factor());
    if (op == '+') return operand;
    if (op == '~') return build(pos, SymOp::kNot, {operand});
    return build(pos, SymOp::kMul, {SymExpr(int64_t{-1}), operand});
  }

  Result<SymExpr> check_exponent(size_t pos, const SymExpr& base, const SymExpr& exponent) {
    if (!exponent.is_constant() || *exponent.constant() < 0) {
      return error(pos, "exponent '{}' is not a non-negative integer constant", exponent.text());
    }
    return build(pos, SymOp::kPow, {base, exponent});
  }

  Result<SymExpr> parse_power() {
    SPLICE_ASSIGN_OR_RETURN(SymExpr base, parse_primary());
    if (!is_punct("**")) return base;
    size_t pos = cur_.pos;
    SPLICE_TRY(advance());
    SPLICE_ASSIGN_OR_RETURN(SymExpr exponent, parse_factor());
    return check_exponent(pos, base, exponent);
  }

  Result<SymExpr> parse_primary() {
    Token t = cur_;
    switch (t.kind) {
      case Tok::kInt: {
        SPLICE_ASSIGN_OR_RETURN(int64_t v, parse_int(t, /*negative=*/false));
        SPLICE_TRY(advance());
        return SymExpr(v);
      }
      case Tok::kIdent: {
        SPLICE_TRY(advance());
        if (is_punct("(")) return parse_call(t);
        if (srepr_ && (t.text == "true" || t.text == "True")) return SymExpr(int64_t{1});
        if (srepr_ && (t.text == "false" || t.text == "False")) return SymExpr(int64_t{0});
        return SymExpr::symbol(std::string(t.text));
      }
      case Tok::kPunct:
        if (t.text == "(") {
          SPLICE_TRY(advance());
          SPLICE_ASSIGN_OR_RETURN(SymExpr e, parse_expr());
          SPLICE_TRY(expect(")"));
          return e;
        }
        break;
      default:
        break;
    }
    return error(t.pos, "expected an expression, found {}", describe(t));
  }

  // Comma-separated expressions up to and including ')'; the '(' is already consumed.
  Result<std::vector<SymExpr>> parse_args() {
    std::vector<SymExpr> args;
    if (is_punct(")")) {
      SPLICE_TRY(advance());
      return args;
    }
    while (true) {
      SPLICE_ASSIGN_OR_RETURN(SymExpr a, parse_expr());
      args.push_back(std::move(a));
      if (is_punct(")")) break;
      SPLICE_TRY(expect(","));
    }
    SPLICE_TRY(advance());
    return args;
  }

  Result<std::vector<SymExpr>> parse_args_n(const Token& fn, size_t min, size_t max) {
    size_t pos = cur_.pos;
    SPLICE_ASSIGN_OR_RETURN(std::vector<SymExpr> args, parse_args());
    if (args.size() < min || args.size() > max) {
      return error(pos, "{} takes {} argument(s), got {}", fn.text,
                   min == max ? fmt::format("{}", min) : fmt::format("at least {}", min),
                   args.size());
    }
    return args;
  }

  // Symbol('s0', positive=True, integer=True): the assumptions are ignored.
  Result<SymExpr> parse_symbol_call() {
    if (cur_.kind != Tok::kString) {
      return error(cur_.pos, "Symbol expects a quoted name, found {}", describe(cur_));
    }
    Token name = cur_;
    std::string_view text = name.text.substr(1, name.text.size() - 2);
    if (!is_identifier(text)) return error(name.pos, "symbol name '{}' is not an identifier", text);
    SPLICE_TRY(advance());
    while (is_punct(",")) {
      SPLICE_TRY(advance());
      if (cur_.kind != Tok::kIdent) {
        return error(cur_.pos, "expected a keyword argument, found {}", describe(cur_));
      }
      SPLICE_TRY(advance());
      SPLICE_TRY(expect("="));
      if (cur_.kind != Tok::kIdent && cur_.kind != Tok::kInt && cur_.kind != Tok::kString) {
        return error(cur_.pos, "unsupported keyword value {}", describe(cur_));
      }
      SPLICE_TRY(advance());
    }
    SPLICE_TRY(expect(")"));
    return SymExpr::symbol(std::string(text));
  }

  // CeilToInt(IntTrueDiv(a, b)) and FloorToInt(IntTrueDiv(a, b)): the only true divisions
  // with an integer result splice accepts.
  Result<SymExpr> parse_rounded_division(const Token& fn, SymOp op) {
    if (!(cur_.kind == Tok::kIdent && cur_.text == "IntTrueDiv")) {
      return error(cur_.pos, "{} is only supported around IntTrueDiv(a, b)", fn.text);
    }
    Token inner = cur_;
    SPLICE_TRY(advance());
    SPLICE_TRY(expect("("));
    SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(inner, 2, 2));
    SPLICE_TRY(expect(")"));
    return build(fn.pos, op, std::move(args));
  }

  // Arguments go through parse_expr, which counts the nesting.
  Result<SymExpr> parse_call(const Token& fn) {
    SPLICE_TRY(expect("("));
    std::string_view name = fn.text;
    constexpr size_t kMany = SIZE_MAX;
    if (name == "Max" || name == "Min") {
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 1, kMany));
      return build(fn.pos, name == "Max" ? SymOp::kMax : SymOp::kMin, std::move(args));
    }
    if (name == "CeilDiv") {
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 2, 2));
      return build(fn.pos, SymOp::kCeilDiv, std::move(args));
    }
    if (!srepr_) return error(fn.pos, "unknown function '{}'", name);

    if (name == "Symbol") return parse_symbol_call();
    if (name == "Integer") {
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 1, 1));
      if (!args[0].is_constant()) {
        return error(fn.pos, "Integer of non-constant '{}'", args[0].text());
      }
      return args[0];
    }
    if (name == "CeilToInt") return parse_rounded_division(fn, SymOp::kCeilDiv);
    if (name == "FloorToInt") return parse_rounded_division(fn, SymOp::kFloorDiv);
    if (name == "BooleanTrue" || name == "BooleanFalse") {
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 0, 0));
      return SymExpr(int64_t{name == "BooleanTrue"});
    }
    if (name == "Identity") {
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 1, 1));
      return args[0];
    }
    if (name == "ModularIndexing") {  // (x // a) % b, PyTorch's indexing helper
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 3, 3));
      SPLICE_ASSIGN_OR_RETURN(SymExpr q, build(fn.pos, SymOp::kFloorDiv, {args[0], args[1]}));
      return build(fn.pos, SymOp::kMod, {q, args[2]});
    }
    if (name == "Pow") {
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, 2, 2));
      return check_exponent(fn.pos, args[0], args[1]);
    }
    struct Entry {
      std::string_view name;
      SymOp op;
      size_t min_args, max_args;
    };
    static constexpr Entry kFunctions[] = {
        {"Add", SymOp::kAdd, 1, kMany},
        {"Mul", SymOp::kMul, 1, kMany},
        {"FloorDiv", SymOp::kFloorDiv, 2, 2},
        {"CleanDiv", SymOp::kFloorDiv, 2, 2},  // an exact division: floor is the same
        {"Mod", SymOp::kMod, 2, 2},
        {"PythonMod", SymOp::kMod, 2, 2},
        {"Eq", SymOp::kEq, 2, 2},
        {"Equality", SymOp::kEq, 2, 2},
        {"Ne", SymOp::kNe, 2, 2},
        {"Unequality", SymOp::kNe, 2, 2},
        {"StrictLessThan", SymOp::kLt, 2, 2},
        {"Lt", SymOp::kLt, 2, 2},
        {"LessThan", SymOp::kLe, 2, 2},
        {"Le", SymOp::kLe, 2, 2},
        {"StrictGreaterThan", SymOp::kGt, 2, 2},
        {"Gt", SymOp::kGt, 2, 2},
        {"GreaterThan", SymOp::kGe, 2, 2},
        {"Ge", SymOp::kGe, 2, 2},
        {"And", SymOp::kAnd, 1, kMany},
        {"Or", SymOp::kOr, 1, kMany},
        {"Not", SymOp::kNot, 1, 1},
    };
    for (const Entry& e : kFunctions) {
      if (e.name != name) continue;
      SPLICE_ASSIGN_OR_RETURN(auto args, parse_args_n(fn, e.min_args, e.max_args));
      return build(fn.pos, e.op, std::move(args));
    }
    if (name == "IntTrueDiv") {
      return error(fn.pos, "IntTrueDiv is only supported inside CeilToInt or FloorToInt");
    }
    return error(fn.pos, "unsupported function '{}'", name);
  }

  std::string_view src_;
  bool srepr_;
  size_t pos_ = 0;
  Token cur_;
  int depth_ = 0;
};

}  // namespace

Result<SymExpr> parse_sym_expr(std::string_view text) { return Parser(text, false).parse_all(); }

Result<SymExpr> parse_srepr(std::string_view text) { return Parser(text, true).parse_all(); }

}  // namespace splice
