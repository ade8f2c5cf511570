#pragma once
// Tokens of the text IR (see printer.h for the format). Whitespace and newlines separate
// tokens; `#` starts a comment to the end of the line. Symbolic expressions inside tensor
// sizes and `SymInt(...)` are not tokenised: the parser takes them as raw text
// (Lexer::raw_until) and hands them to parse_sym_expr.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/error.h"

namespace splice::ir {

enum class TokenKind {
  kEnd,
  kIdent,   // aten.add.Tensor, f32, None, inf, _ (letters, digits, '_' and '.')
  kValue,   // %name or %"quoted name"; text is the name
  kInt,     // -12 (int_value)
  kFloat,   // 1.5, -0.0, 1e+20, -inf (float_value)
  kString,  // "..." with JSON escapes; text is the decoded string
  kPunct,   // one of ( ) [ ] { } , : = @
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // identifier, value name, decoded string, punctuation or number spelling
  int64_t int_value = 0;
  double float_value = 0;
  size_t offset = 0;  // where it starts in the input
  size_t end = 0;     // one past where it ends

  bool is_punct(char c) const {
    return kind == TokenKind::kPunct && text.size() == 1 && text[0] == c;
  }
  bool is_ident(std::string_view s) const { return kind == TokenKind::kIdent && text == s; }
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // The next token without consuming it.
  Result<Token> peek();
  Result<Token> next();
  // Raw text from the current position up to (not including) the `close` character that
  // balances at bracket/parenthesis depth 0; consumes the text and the closing character.
  Result<std::string_view> raw_until(char close);
  // Where raw_until would start: right after the last consumed token.
  size_t offset() const { return pos_; }
  // Whether the first non-blank character after the current token position is `c` (used to
  // tell `name=value` from a positional identifier).
  bool next_char_after_peek_is(char c);

  // A kBadInput error at `offset`: "line L, col C: message".
  Error error_at(size_t offset, const std::string& message) const;
  // "'x'", "end of input", ...: how a token shows in messages.
  static std::string describe(const Token& token);

 private:
  Result<Token> lex();
  void skip_blanks();
  Result<std::string> lex_string(size_t& pos);

  std::string_view text_;
  size_t pos_ = 0;  // after the last consumed token
  std::optional<Token> peeked_;
};

}  // namespace splice::ir
