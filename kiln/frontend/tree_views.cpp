#include "kiln/frontend/tree_views.h"

#include <cstdlib>

namespace kiln {

std::optional<int64_t> parseIntLiteral(const std::string& text) {
  size_t i = 0;
  uint64_t base = 10;
  if (text.size() > 1 && text[0] == '0') {
    char p = static_cast<char>(text[1] | 0x20);
    if (p == 'x' || p == 'o' || p == 'b') {
      base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
      i = 2;
    }
  }
  uint64_t value = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '_') continue;
    uint64_t d = c >= '0' && c <= '9' ? static_cast<uint64_t>(c - '0') : static_cast<uint64_t>((c | 0x20) - 'a' + 10);
    if (d >= base) return std::nullopt;
    if (value > (static_cast<uint64_t>(INT64_MAX) - d) / base) return std::nullopt;
    value = value * base + d;
  }
  return static_cast<int64_t>(value);
}

bool isFloatLiteral(const std::string& text) {
  if (text.size() > 1 && text[0] == '0' && (text[1] | 0x20) == 'x') return false;
  return text.find_first_of(".eE") != std::string::npos;
}

double Const::asDouble() const {
  if (isIntegral()) return static_cast<double>(asInt());
  std::string digits;
  for (char c : text()) {
    if (c != '_') digits += c;
  }
  return std::strtod(digits.c_str(), nullptr);
}

bool isComparisonKind(int kind) {
  switch (kind) {
    case '<':
    case '>':
    case TK_EQ:
    case TK_NE:
    case TK_LE:
    case TK_GE:
    case TK_IN:
    case TK_NOTIN:
    case TK_IS:
    case TK_ISNOT: return true;
    default: return false;
  }
}

bool isBinaryOpKind(int kind) {
  switch (kind) {
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case '@':
    case '&':
    case '|':
    case '^':
    case TK_POW:
    case TK_FLOOR_DIV:
    case TK_LSHIFT:
    case TK_RSHIFT:
    case TK_AND:
    case TK_OR: return true;
    default: return isComparisonKind(kind);
  }
}

bool isUnaryOpKind(int kind) {
  return kind == TK_UNARY_MINUS || kind == TK_UNARY_PLUS || kind == '~' || kind == TK_NOT;
}

bool isExprKind(int kind) {
  switch (kind) {
    case TK_VAR:
    case TK_CONST:
    case TK_STRINGLITERAL:
    case TK_APPLY:
    case '.':
    case TK_SUBSCRIPT:
    case TK_SLICE_EXPR:
    case TK_LIST_LITERAL:
    case TK_TUPLE_LITERAL:
    case TK_DICT_LITERAL:
    case TK_LIST_COMP:
    case TK_DICT_COMP:
    case TK_IF_EXPR:
    case TK_STARRED:
    case TK_CHAIN_COMPARE:
    case TK_NONE:
    case TK_TRUE:
    case TK_FALSE:
    case TK_DOTS: return true;
    default: return isBinaryOpKind(kind) || isUnaryOpKind(kind);
  }
}

bool isStmtKind(int kind) {
  switch (kind) {
    case TK_DEF:
    case TK_CLASS:
    case TK_IF:
    case TK_WHILE:
    case TK_FOR:
    case TK_ASSIGN:
    case TK_AUG_ASSIGN:
    case TK_RETURN:
    case TK_RAISE:
    case TK_ASSERT:
    case TK_WITH:
    case TK_DELETE:
    case TK_EXPR_STMT:
    case TK_PASS:
    case TK_BREAK:
    case TK_CONTINUE:
    case TK_IMPORT:
    case TK_IMPORT_FROM: return true;
    default: return false;
  }
}

}  // namespace kiln
