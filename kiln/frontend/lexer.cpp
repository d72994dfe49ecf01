#include "kiln/frontend/lexer.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

#include "kiln/frontend/error_report.h"

namespace kiln {

std::string kindToString(int kind) {
  if (kind > 0 && kind < TK_FIRST_MULTI) return std::string(1, static_cast<char>(kind));
  switch (kind) {
#define KILN_TOKEN_NAME(name, str, keyword) \
  case name: return str;
    KILN_FORALL_TOKEN_KINDS(KILN_TOKEN_NAME)
#undef KILN_TOKEN_NAME
    default: return "kind " + std::to_string(kind);
  }
}

namespace {

const std::unordered_map<std::string_view, int>& keywords() {
  static const std::unordered_map<std::string_view, int> table = [] {
    std::unordered_map<std::string_view, int> t;
#define KILN_KEYWORD(name, str, keyword) \
  if (std::string_view(keyword).size() > 0) t.emplace(keyword, name);
    KILN_FORALL_TOKEN_KINDS(KILN_KEYWORD)
#undef KILN_KEYWORD
    return t;
  }();
  return table;
}

struct Operator {
  std::string_view text;
  int kind;
};

// Longest first, so the first match is the longest.
constexpr std::array<Operator, 42> kOperators = {{
    {"**=", TK_AUG_ASSIGN},
    {"//=", TK_AUG_ASSIGN},
    {"<<=", TK_AUG_ASSIGN},
    {">>=", TK_AUG_ASSIGN},
    {"...", TK_DOTS},
    {"+=", TK_AUG_ASSIGN},
    {"-=", TK_AUG_ASSIGN},
    {"*=", TK_AUG_ASSIGN},
    {"/=", TK_AUG_ASSIGN},
    {"%=", TK_AUG_ASSIGN},
    {"@=", TK_AUG_ASSIGN},
    {"&=", TK_AUG_ASSIGN},
    {"|=", TK_AUG_ASSIGN},
    {"^=", TK_AUG_ASSIGN},
    {"**", TK_POW},
    {"//", TK_FLOOR_DIV},
    {"<<", TK_LSHIFT},
    {">>", TK_RSHIFT},
    {"==", TK_EQ},
    {"!=", TK_NE},
    {"<=", TK_LE},
    {">=", TK_GE},
    {"->", TK_ARROW},
    {":=", TK_WALRUS},
    {"+", '+'},
    {"-", '-'},
    {"*", '*'},
    {"/", '/'},
    {"%", '%'},
    {"@", '@'},
    {"&", '&'},
    {"|", '|'},
    {"^", '^'},
    {"~", '~'},
    {"<", '<'},
    {">", '>'},
    {"=", '='},
    {".", '.'},
    {",", ','},
    {":", ':'},
    {";", ';'},
    {"(", '('},
}};

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

void appendUtf8(std::string& out, uint32_t cp) {
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

class Tokenizer {
 public:
  Tokenizer(std::shared_ptr<const Source> source, size_t start, size_t end)
      : source_(std::move(source)), text_(source_->text()), pos_(start), end_(end) {}

  std::vector<Token> run() {
    // About one token per four characters of code: growing the vector as
    // it fills would move every token several times.
    tokens_.reserve((end_ - pos_) / 4 + 8);
    at_line_start_ = true;
    while (true) {
      if (at_line_start_ && brackets_.empty()) {
        if (!layoutLine()) break;
      }
      skipSpaces();
      if (pos_ >= end_) break;
      char c = text_[pos_];
      if (c == '\n') {
        newline();
        continue;
      }
      if (c == '#') {
        comment();
        continue;
      }
      if (c == '\\') {
        continuation();
        continue;
      }
      token();
    }
    if (!brackets_.empty()) {
      error(brackets_.back(), brackets_.back() + 1,
            "'" + std::string(1, text_[brackets_.back()]) + "' was never closed");
    }
    // A last line without '\n' still ends its statement.
    auto last =
        std::find_if(tokens_.rbegin(), tokens_.rend(), [](const Token& t) { return t.kind != TK_TYPE_COMMENT; });
    if (last != tokens_.rend() && last->kind != TK_NEWLINE && last->kind != TK_DEDENT) push(TK_NEWLINE, end_, end_, "");
    for (size_t i = 1; i < indents_.size(); ++i) push(TK_DEDENT, end_, end_, "");
    push(TK_EOF, end_, end_, "");
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void error(size_t start, size_t end, const std::string& message) const {
    throwSourceError(SourceRange(source_, start, std::max(end, start + 1)), message);
  }

  void push(int kind, size_t start, size_t end, std::string text) {
    tokens_.push_back(Token{kind, SourceRange(source_, start, end), std::move(text)});
  }

  void skipSpaces() {
    while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // At the start of a line outside brackets: skips blank and comment-only
  // lines (keeping type comments), then emits INDENT/DEDENT for the first
  // real line. False at the end of the input.
  bool layoutLine() {
    while (true) {
      size_t width = 0;
      size_t line_start = pos_;
      while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f')) {
        width = text_[pos_] == '\t' ? (width / 8 + 1) * 8 : text_[pos_] == ' ' ? width + 1 : 0;
        ++pos_;
      }
      while (pos_ < end_ && text_[pos_] == '\r') ++pos_;
      if (pos_ >= end_) return false;
      char c = text_[pos_];
      if (c == '\n') {
        ++pos_;
        continue;
      }
      if (c == '#') {
        comment();
        if (pos_ < end_) ++pos_;  // the newline
        continue;
      }
      at_line_start_ = false;
      if (width > indents_.back()) {
        indents_.push_back(width);
        push(TK_INDENT, line_start, pos_, "");
      } else {
        while (width < indents_.back()) {
          indents_.pop_back();
          push(TK_DEDENT, pos_, pos_, "");
        }
        if (width != indents_.back()) error(line_start, pos_, "unindent does not match any outer indentation level");
      }
      return true;
    }
  }

  void newline() {
    size_t at = pos_++;
    if (!brackets_.empty()) return;
    push(TK_NEWLINE, at, at + 1, "");
    at_line_start_ = true;
  }

  void comment() {
    size_t start = pos_;
    size_t stop = text_.find('\n', pos_);
    if (stop == std::string::npos || stop > end_) stop = end_;
    pos_ = stop;
    std::string_view body(text_.data() + start + 1, stop - start - 1);
    size_t first = body.find_first_not_of(" \t");
    if (first == std::string_view::npos || body.substr(first, 5) != "type:" || !brackets_.empty()) return;
    size_t type_start = start + 1 + first + 5;
    while (type_start < stop && (text_[type_start] == ' ' || text_[type_start] == '\t')) ++type_start;
    size_t type_end = stop;
    while (type_end > type_start && std::isspace(static_cast<unsigned char>(text_[type_end - 1]))) --type_end;
    push(TK_TYPE_COMMENT, type_start, type_end, std::string(text_.substr(type_start, type_end - type_start)));
  }

  void continuation() {
    size_t at = pos_++;
    while (pos_ < end_ && text_[pos_] == '\r') ++pos_;
    if (pos_ >= end_ || text_[pos_] != '\n')
      error(at, at + 1, "unexpected character after line continuation character");
    ++pos_;
    if (pos_ >= end_) error(at, at + 1, "unexpected end of input after line continuation character");
  }

  void token() {
    char c = text_[pos_];
    if (isDigit(c) || (c == '.' && pos_ + 1 < end_ && isDigit(text_[pos_ + 1]))) return number();
    if (isIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < end_ && isIdentChar(text_[pos_])) ++pos_;
      std::string_view word(text_.data() + start, pos_ - start);
      if (pos_ < end_ && (text_[pos_] == '"' || text_[pos_] == '\'') && word.size() <= 2) {
        return string(start, word);
      }
      auto kw = keywords().find(word);
      push(kw == keywords().end() ? TK_IDENT : kw->second, start, pos_, std::string(word));
      return;
    }
    if (c == '"' || c == '\'') return string(pos_, "");
    if (c == ')' || c == ']' || c == '}') {
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (brackets_.empty()) error(pos_, pos_ + 1, std::string("unmatched '") + c + "'");
      if (text_[brackets_.back()] != open) {
        error(pos_, pos_ + 1,
              std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" +
                  text_[brackets_.back()] + "'");
      }
      brackets_.pop_back();
      push(c, pos_, pos_ + 1, std::string(1, c));
      ++pos_;
      return;
    }
    if (c == '[' || c == '{') {
      brackets_.push_back(pos_);
      push(c, pos_, pos_ + 1, std::string(1, c));
      ++pos_;
      return;
    }
    std::string_view rest(text_.data() + pos_, end_ - pos_);
    for (const Operator& op : kOperators) {
      if (op.text[0] == c && rest.substr(0, op.text.size()) == op.text) {
        if (op.kind == '(') brackets_.push_back(pos_);
        push(op.kind, pos_, pos_ + op.text.size(), std::string(op.text));
        pos_ += op.text.size();
        return;
      }
    }
    if (static_cast<unsigned char>(c) >= 0x80)
      error(pos_, pos_ + 1, "non-ASCII characters are only allowed in strings and comments");
    error(pos_, pos_ + 1, std::string("invalid character '") + c + "'");
  }

  // Digits of `base` with single underscores between them; returns false if
  // none were read.
  bool digits(int base) {
    size_t start = pos_;
    auto ok = [&](char ch) { return base == 16 ? isHexDigit(ch) : ch >= '0' && ch < static_cast<char>('0' + base); };
    while (pos_ < end_ && (ok(text_[pos_]) || text_[pos_] == '_')) {
      if (text_[pos_] == '_' && (pos_ == start || !(pos_ + 1 < end_ && ok(text_[pos_ + 1])))) {
        error(pos_, pos_ + 1, "invalid underscore in numeric literal");
      }
      ++pos_;
    }
    return pos_ > start;
  }

  void number() {
    size_t start = pos_;
    bool is_float = false;
    const bool is_hex_octal_or_binary = text_[pos_] == '0' && pos_ + 1 < end_ &&
                                        std::string_view("xXoObB").find(text_[pos_ + 1]) != std::string_view::npos;
    if (is_hex_octal_or_binary) {
      char p = static_cast<char>(std::tolower(text_[pos_ + 1]));
      pos_ += 2;
      if (pos_ < end_ && text_[pos_] == '_') ++pos_;  // 0x_ff is valid Python
      if (!digits(p == 'x' ? 16 : p == 'o' ? 8 : 2)) error(start, pos_, "invalid numeric literal");
    } else {
      bool leading = digits(10);
      if (pos_ < end_ && text_[pos_] == '.') {
        is_float = true;
        ++pos_;
        if (pos_ < end_ && text_[pos_] == '_') error(pos_, pos_ + 1, "invalid underscore in numeric literal");
        digits(10);
      } else if (!leading) {
        error(start, pos_ + 1, "invalid numeric literal");
      }
      if (pos_ < end_ && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        is_float = true;
        size_t e = pos_++;
        if (pos_ < end_ && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
        if (!digits(10)) error(e, pos_, "invalid exponent in numeric literal");
      }
      const bool imaginary = pos_ < end_ && (text_[pos_] == 'j' || text_[pos_] == 'J');
      if (!is_float && !imaginary) {  // Python allows 012j
        std::string_view t(text_.data() + start, pos_ - start);
        if (t.size() > 1 && t[0] == '0' && t.find_first_not_of("0_") != std::string_view::npos) {
          error(start, pos_,
                "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
        }
      }
    }
    // An imaginary literal (`2j`, `1.5e3J`) keeps its suffix in the token text.
    if (pos_ < end_ && (text_[pos_] == 'j' || text_[pos_] == 'J')) {
      if (is_hex_octal_or_binary) error(start, pos_ + 1, "invalid numeric literal");
      ++pos_;
    }
    if (pos_ < end_ && (isIdentChar(text_[pos_]) || text_[pos_] == '.'))
      error(start, pos_ + 1, "invalid numeric literal");
    push(TK_NUMBER, start, pos_, std::string(text_.substr(start, pos_ - start)));
  }

  void string(size_t start, std::string_view prefix) {
    bool raw = false;
    bool formatted = false;
    for (char p : prefix) {
      char l = static_cast<char>(std::tolower(p));
      if (l == 'r' && !raw) {
        raw = true;
      } else if (l == 'u' && prefix.size() == 1) {
      } else if (l == 'f' && !formatted) {
        formatted = true;
      } else if (l == 'b') {
        error(start, pos_, "bytes literals are not supported");
      } else {
        error(start, pos_, "invalid string prefix '" + std::string(prefix) + "'");
      }
    }
    char quote = text_[pos_];
    bool triple = pos_ + 2 < end_ && text_[pos_ + 1] == quote && text_[pos_ + 2] == quote;
    pos_ += triple ? 3 : 1;
    if (formatted) return formattedString(start, quote, triple, raw);
    std::string value;
    while (true) {
      if (pos_ >= end_)
        error(start, pos_, triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
      char c = text_[pos_];
      if (c == quote) {
        if (!triple) {
          ++pos_;
          break;
        }
        if (pos_ + 2 < end_ && text_[pos_ + 1] == quote && text_[pos_ + 2] == quote) {
          pos_ += 3;
          break;
        }
      }
      if (c == '\n' && !triple) error(start, pos_, "unterminated string literal");
      if (c == '\\' && pos_ + 1 < end_) {
        if (raw) {
          value += c;
          value += text_[pos_ + 1];
          pos_ += 2;
        } else {
          escape(value);
        }
        continue;
      }
      if (c != '\r') value += c;
      ++pos_;
    }
    push(TK_STRING, start, pos_, std::move(value));
  }

  // f"a{x}b{y}": as 1.13's frontend reads it, the tokens of
  // ("a{}b{}".format(x, y)), each expression lexed where it is written.
  // Conversions (`{x!r}`) and format specs (`{x:3}`) are errors, as in 1.13.
  void formattedString(size_t start, char quote, bool triple, bool raw) {
    std::string literal;
    std::vector<std::pair<size_t, size_t>> fields;
    while (true) {
      if (pos_ >= end_)
        error(start, pos_, triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
      char c = text_[pos_];
      if (c == quote && (!triple || (pos_ + 2 < end_ && text_[pos_ + 1] == quote && text_[pos_ + 2] == quote))) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if (c == '\n' && !triple) error(start, pos_, "unterminated string literal");
      if ((c == '{' || c == '}') && pos_ + 1 < end_ && text_[pos_ + 1] == c) {
        literal += c;
        pos_ += 2;
        continue;
      }
      if (c == '}') error(pos_, pos_ + 1, "f-string: single '}' is not allowed");
      if (c == '{') {
        size_t field_start = ++pos_;
        int depth = 0;
        char in_string = 0;
        for (; pos_ < end_; ++pos_) {
          char f = text_[pos_];
          if (in_string) {
            if (f == in_string) in_string = 0;
            continue;
          }
          if (f == quote || f == '\n' || f == '\\') error(field_start, pos_, "f-string: expecting '}'");
          if (f == '\'' || f == '"') {
            in_string = f;
          } else if (f == '(' || f == '[' || f == '{') {
            ++depth;
          } else if (f == ')' || f == ']' || (f == '}' && depth > 0)) {
            --depth;
          } else if (depth == 0 &&
                     (f == '}' || f == ':' || (f == '!' && (pos_ + 1 >= end_ || text_[pos_ + 1] != '=')))) {
            break;
          }
        }
        if (pos_ >= end_ || text_[pos_] != '}') {
          if (pos_ < end_ && text_[pos_] == '!') error(start, pos_, "Don't support conversion in JoinedStr");
          if (pos_ < end_ && text_[pos_] == ':') error(start, pos_, "Don't support formatting in JoinedStr");
          error(field_start, pos_, "f-string: expecting '}'");
        }
        if (std::string_view(text_.data() + field_start, pos_ - field_start).find_first_not_of(" \t") ==
            std::string_view::npos) {
          error(field_start, pos_, "f-string: empty expression not allowed");
        }
        fields.emplace_back(field_start, pos_);
        literal += "{}";
        ++pos_;
        continue;
      }
      if (c == '\\' && pos_ + 1 < end_) {
        if (raw) {
          literal += c;
          literal += text_[pos_ + 1];
          pos_ += 2;
        } else {
          escape(literal);
        }
        continue;
      }
      if (c != '\r') literal += c;
      ++pos_;
    }
    size_t stop = pos_;
    push('(', start, start + 1, "(");
    push(TK_STRING, start, stop, std::move(literal));
    push('.', start, start + 1, ".");
    push(TK_IDENT, start, start + 1, "format");
    push('(', start, start + 1, "(");
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) push(',', fields[i].first, fields[i].first, ",");
      Tokenizer inner(source_, fields[i].first, fields[i].second);
      for (Token& t : inner.runExpression()) tokens_.push_back(std::move(t));
    }
    push(')', stop - 1, stop, ")");
    push(')', stop - 1, stop, ")");
  }

  // The tokens of one expression (an f-string's field): as inside brackets,
  // line breaks are spaces and there is no layout.
  std::vector<Token> runExpression() {
    brackets_.push_back(pos_);
    while (true) {
      skipSpaces();
      if (pos_ >= end_) break;
      if (text_[pos_] == '\n') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '#') error(pos_, pos_ + 1, "f-string expression part cannot include '#'");
      token();
    }
    if (brackets_.size() != 1) {
      error(brackets_.back(), brackets_.back() + 1,
            "'" + std::string(1, text_[brackets_.back()]) + "' was never closed");
    }
    return std::move(tokens_);
  }

  // At a backslash inside a non-raw string.
  void escape(std::string& value) {
    size_t at = pos_;
    char e = text_[pos_ + 1];
    pos_ += 2;
    auto hex = [&](int count) {
      uint32_t cp = 0;
      for (int i = 0; i < count; ++i) {
        if (pos_ >= end_ || !isHexDigit(text_[pos_])) error(at, pos_, "truncated \\" + std::string(1, e) + " escape");
        char h = text_[pos_++];
        cp = cp * 16 + static_cast<uint32_t>(isDigit(h) ? h - '0' : std::tolower(h) - 'a' + 10);
      }
      return cp;
    };
    switch (e) {
      case '\n': return;
      case '\r':
        if (pos_ < end_ && text_[pos_] == '\n') ++pos_;
        return;
      case '\\': value += '\\'; return;
      case '\'': value += '\''; return;
      case '"': value += '"'; return;
      case 'a': value += '\a'; return;
      case 'b': value += '\b'; return;
      case 'f': value += '\f'; return;
      case 'n': value += '\n'; return;
      case 'r': value += '\r'; return;
      case 't': value += '\t'; return;
      case 'v': value += '\v'; return;
      case 'x': appendUtf8(value, hex(2)); return;
      case 'u':
      case 'U': {
        uint32_t cp = hex(e == 'u' ? 4 : 8);
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) error(at, pos_, "invalid unicode escape");
        appendUtf8(value, cp);
        return;
      }
      case 'N': error(at, pos_, "\\N{...} escapes are not supported");
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = static_cast<uint32_t>(e - '0');
          for (int i = 0; i < 2 && pos_ < end_ && text_[pos_] >= '0' && text_[pos_] <= '7'; ++i) {
            cp = cp * 8 + static_cast<uint32_t>(text_[pos_++] - '0');
          }
          appendUtf8(value, cp);
          return;
        }
        // Python keeps unknown escapes verbatim.
        value += '\\';
        --pos_;
        return;
    }
  }

  std::shared_ptr<const Source> source_;
  std::string_view text_;
  size_t pos_;
  size_t end_;
  bool at_line_start_ = true;
  std::vector<size_t> indents_{0};
  std::vector<size_t> brackets_;  // offsets of open brackets
  std::vector<Token> tokens_;
};

}  // namespace

Lexer::Lexer(std::shared_ptr<const Source> source) : Lexer(source, 0, source->text().size()) {}

Lexer::Lexer(std::shared_ptr<const Source> source, size_t start, size_t end)
    : source_(std::move(source)), tokens_(Tokenizer(source_, start, end).run()) {}

const Token& Lexer::next() {
  const Token& t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool Lexer::nextIf(int kind) {
  if (cur().kind != kind) return false;
  next();
  return true;
}

const Token& Lexer::expect(int kind) {
  if (cur().kind != kind) reportUnexpected("'" + kindToString(kind) + "'");
  return next();
}

void Lexer::reportUnexpected(const std::string& expected) const {
  const Token& t = cur();
  std::string found = t.kind == TK_IDENT || t.kind == TK_NUMBER ? t.text : kindToString(t.kind);
  if (t.kind == TK_STRING) found = "a string";
  throwSourceError(t.range, "expected " + expected + " but found '" + found + "' here");
}

}  // namespace kiln
