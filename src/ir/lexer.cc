// Tokeniser of the text IR: identifiers, %values, numbers (an integer unless it has '.', an
// exponent or is `inf`), JSON strings and punctuation, with line/column positions for error
// messages. Integer literals that do not fit int64 are errors, never wrapped.
#include "ir/lexer.h"

#include <charconv>
#include <cmath>

namespace splice::ir {

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c) || c == '.'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

Error Lexer::error_at(size_t offset, const std::string& message) const {
  int line = 1;
  int col = 1;
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return make_error(ErrorKind::kBadInput, "line {}, col {}: {}", line, col, message);
}

std::string Lexer::describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kValue:
      return "'%" + token.text + "'";
    case TokenKind::kString:
      return "a string";
    default:
      return "'" + token.text + "'";
  }
}

void Lexer::skip_blanks() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

Result<std::string> Lexer::lex_string(size_t& pos) {
  size_t start = pos;
  ++pos;  // opening quote
  std::string out;
  while (true) {
    if (pos >= text_.size()) return error_at(start, "unterminated string");
    char c = text_[pos];
    if (c == '"') {
      ++pos;
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20)
      return error_at(pos, "control character in a string (write it as an escape)");
    if (c != '\\') {
      out += c;
      ++pos;
      continue;
    }
    if (pos + 1 >= text_.size()) return error_at(start, "unterminated string");
    char e = text_[pos + 1];
    pos += 2;
    switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto read_hex4 = [&](size_t at) -> int64_t {
          if (at + 4 > text_.size()) return -1;
          int64_t v = 0;
          for (size_t i = 0; i < 4; ++i) {
            int d = hex_digit(text_[at + i]);
            if (d < 0) return -1;
            v = v * 16 + d;
          }
          return v;
        };
        int64_t cp = read_hex4(pos);
        if (cp < 0) return error_at(pos - 2, "bad \\u escape");
        pos += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          int64_t low = (pos + 1 < text_.size() && text_[pos] == '\\' && text_[pos + 1] == 'u')
                            ? read_hex4(pos + 2)
                            : -1;
          if (low < 0xDC00 || low > 0xDFFF) return error_at(pos - 6, "unpaired surrogate");
          pos += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return error_at(pos - 6, "unpaired surrogate");
        }
        append_utf8(out, static_cast<uint32_t>(cp));
        break;
      }
      default:
        return error_at(pos - 2, std::string("unknown escape '\\") + e + "'");
    }
  }
}

Result<Token> Lexer::lex() {
  skip_blanks();
  Token t;
  t.offset = pos_;
  size_t p = pos_;
  if (p >= text_.size()) {
    t.end = p;
    return t;
  }
  char c = text_[p];
  if (is_ident_start(c)) {
    while (p < text_.size() && is_ident_char(text_[p])) ++p;
    t.kind = TokenKind::kIdent;
    t.text = std::string(text_.substr(pos_, p - pos_));
  } else if (c == '%') {
    ++p;
    t.kind = TokenKind::kValue;
    if (p < text_.size() && text_[p] == '"') {
      SPLICE_ASSIGN_OR_RETURN(t.text, lex_string(p));
    } else {
      size_t start = p;
      while (p < text_.size() && is_ident_char(text_[p])) ++p;
      if (p == start) return error_at(pos_, "expected a value name after '%'");
      t.text = std::string(text_.substr(start, p - start));
    }
  } else if (c == '"') {
    t.kind = TokenKind::kString;
    SPLICE_ASSIGN_OR_RETURN(t.text, lex_string(p));
  } else if (is_digit(c) || c == '-') {
    bool negative = c == '-';
    if (negative) ++p;
    if (text_.substr(p, 3) == "inf" && (p + 3 >= text_.size() || !is_ident_char(text_[p + 3]))) {
      p += 3;
      t.kind = TokenKind::kFloat;
      t.float_value = negative ? -INFINITY : INFINITY;
    } else {
      if (p >= text_.size() || !is_digit(text_[p])) return error_at(pos_, "expected a number");
      bool is_float = false;
      while (p < text_.size() && is_digit(text_[p])) ++p;
      if (p < text_.size() && text_[p] == '.') {
        is_float = true;
        ++p;
        while (p < text_.size() && is_digit(text_[p])) ++p;
      }
      if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
        is_float = true;
        ++p;
        if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
        if (p >= text_.size() || !is_digit(text_[p])) return error_at(pos_, "bad exponent");
        while (p < text_.size() && is_digit(text_[p])) ++p;
      }
      if (p < text_.size() && is_ident_start(text_[p]))
        return error_at(pos_, "bad number '" + std::string(text_.substr(pos_, p + 1 - pos_)) + "'");
      const char* first = text_.data() + pos_;
      const char* last = text_.data() + p;
      if (is_float) {
        t.kind = TokenKind::kFloat;
        auto r = std::from_chars(first, last, t.float_value);
        // Out-of-range magnitudes are refused rather than silently becoming inf or 0.
        if (r.ec != std::errc() || r.ptr != last)
          return error_at(pos_, "float literal '" + std::string(first, last) + "' is out of range");
      } else {
        t.kind = TokenKind::kInt;
        auto r = std::from_chars(first, last, t.int_value);
        if (r.ec != std::errc() || r.ptr != last)
          return error_at(
              pos_, "integer literal '" + std::string(first, last) + "' does not fit in int64");
      }
    }
    t.text = std::string(text_.substr(pos_, p - pos_));
  } else if (std::string_view("()[]{},:=@").find(c) != std::string_view::npos) {
    t.kind = TokenKind::kPunct;
    t.text = std::string(1, c);
    ++p;
  } else {
    return error_at(pos_, std::string("unexpected character '") + c + "'");
  }
  t.end = p;
  return t;
}

Result<Token> Lexer::peek() {
  if (!peeked_) {
    SPLICE_ASSIGN_OR_RETURN(Token t, lex());
    peeked_ = std::move(t);
  }
  return *peeked_;
}

Result<Token> Lexer::next() {
  SPLICE_ASSIGN_OR_RETURN(Token t, peek());
  peeked_.reset();
  pos_ = t.end;
  return t;
}

bool Lexer::next_char_after_peek_is(char c) {
  if (!peeked_) return false;
  size_t p = peeked_->end;
  while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
  return p < text_.size() && text_[p] == c;
}

Result<std::string_view> Lexer::raw_until(char close) {
  if (peeked_) {
    // Raw text starts right after the last consumed token; forget the lookahead.
    peeked_.reset();
  }
  size_t start = pos_;
  int depth = 0;
  for (size_t p = pos_; p < text_.size(); ++p) {
    char c = text_[p];
    if (c == '\n' || c == '#') break;
    if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      if (depth == 0) {
        if (c != close) break;
        pos_ = p + 1;
        return text_.substr(start, p - start);
      }
      --depth;
    }
  }
  return error_at(start, std::string("expected '") + close + "' to close this");
}

}  // namespace splice::ir
