#pragma once
// The TorchScript lexer: Python tokens, with NEWLINE, INDENT and DEDENT
// injected the way Python's tokenizer does, so the parser can treat them like
// C's `;`, `{` and `}`. Inside brackets lines join and no layout tokens
// appear. Comments vanish except `# type:` comments (function signatures in
// comment form), which become TK_TYPE_COMMENT tokens outside brackets.
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/source_range.h"

namespace kiln {

// Token kinds and tree kinds share one number space. A single-character
// token's kind is the character itself ('+', '(', ...); the rest start at
// 256. Columns: enum name, printed name (s-expressions, messages), keyword
// spelling ("" when the kind is not a keyword).
#define KILN_FORALL_TOKEN_KINDS(_)          \
  _(TK_EOF, "eof", "")                      \
  _(TK_NEWLINE, "newline", "")              \
  _(TK_INDENT, "indent", "")                \
  _(TK_DEDENT, "dedent", "")                \
  _(TK_NUMBER, "number", "")                \
  _(TK_STRING, "string", "")                \
  _(TK_IDENT, "ident", "")                  \
  _(TK_TYPE_COMMENT, "type comment", "")    \
  _(TK_POW, "**", "")                       \
  _(TK_FLOOR_DIV, "//", "")                 \
  _(TK_LSHIFT, "<<", "")                    \
  _(TK_RSHIFT, ">>", "")                    \
  _(TK_EQ, "==", "")                        \
  _(TK_NE, "!=", "")                        \
  _(TK_LE, "<=", "")                        \
  _(TK_GE, ">=", "")                        \
  _(TK_ARROW, "->", "")                     \
  _(TK_WALRUS, ":=", "")                    \
  _(TK_DOTS, "...", "")                     \
  _(TK_AUG_ASSIGN, "aug_assign", "")        \
  _(TK_DEF, "def", "def")                   \
  _(TK_CLASS, "class", "class")             \
  _(TK_IF, "if", "if")                      \
  _(TK_ELIF, "elif", "elif")                \
  _(TK_ELSE, "else", "else")                \
  _(TK_FOR, "for", "for")                   \
  _(TK_WHILE, "while", "while")             \
  _(TK_IN, "in", "in")                      \
  _(TK_NOTIN, "not in", "")                 \
  _(TK_IS, "is", "is")                      \
  _(TK_ISNOT, "is not", "")                 \
  _(TK_AND, "and", "and")                   \
  _(TK_OR, "or", "or")                      \
  _(TK_NOT, "not", "not")                   \
  _(TK_RETURN, "return", "return")          \
  _(TK_BREAK, "break", "break")             \
  _(TK_CONTINUE, "continue", "continue")    \
  _(TK_PASS, "pass", "pass")                \
  _(TK_ASSERT, "assert", "assert")          \
  _(TK_RAISE, "raise", "raise")             \
  _(TK_WITH, "with", "with")                \
  _(TK_AS, "as", "as")                      \
  _(TK_DELETE, "del", "del")                \
  _(TK_GLOBAL, "global", "global")          \
  _(TK_NONLOCAL, "nonlocal", "nonlocal")    \
  _(TK_IMPORT, "import", "import")          \
  _(TK_FROM, "from", "from")                \
  _(TK_LAMBDA, "lambda", "lambda")          \
  _(TK_YIELD, "yield", "yield")             \
  _(TK_TRY, "try", "try")                   \
  _(TK_EXCEPT, "except", "except")          \
  _(TK_FINALLY, "finally", "finally")       \
  _(TK_ASYNC, "async", "async")             \
  _(TK_AWAIT, "await", "await")             \
  _(TK_NONE, "None", "None")                \
  _(TK_TRUE, "True", "True")                \
  _(TK_FALSE, "False", "False")             \
  /* tree kinds */                          \
  _(TK_UNARY_MINUS, "unary minus", "")      \
  _(TK_UNARY_PLUS, "unary plus", "")        \
  _(TK_CHAIN_COMPARE, "chain", "")          \
  _(TK_LIST, "list", "")                    \
  _(TK_OPTION, "option", "")                \
  _(TK_ATOM, "atom", "")                    \
  _(TK_VAR, "variable", "")                 \
  _(TK_CONST, "const", "")                  \
  _(TK_STRINGLITERAL, "string_literal", "") \
  _(TK_APPLY, "apply", "")                  \
  _(TK_KWARG, "kwarg", "")                  \
  _(TK_SUBSCRIPT, "subscript", "")          \
  _(TK_SLICE_EXPR, "slice", "")             \
  _(TK_LIST_LITERAL, "list_literal", "")    \
  _(TK_TUPLE_LITERAL, "tuple_literal", "")  \
  _(TK_DICT_LITERAL, "dict_literal", "")    \
  _(TK_LIST_COMP, "list_comp", "")          \
  _(TK_DICT_COMP, "dict_comp", "")          \
  _(TK_IF_EXPR, "if_expr", "")              \
  _(TK_STARRED, "starred", "")              \
  _(TK_PARAM, "param", "")                  \
  _(TK_DECL, "decl", "")                    \
  _(TK_ASSIGN, "assign", "")                \
  _(TK_EXPR_STMT, "expr_stmt", "")          \
  _(TK_WITH_ITEM, "with_item", "")          \
  _(TK_ALIAS, "alias", "")                  \
  _(TK_IMPORT_FROM, "import_from", "")

enum TokenKind : int {
  TK_FIRST_MULTI = 256,
  TK_DUMMY_START = TK_FIRST_MULTI - 1,
#define KILN_DEFINE_TOKEN(name, str, keyword) name,
  KILN_FORALL_TOKEN_KINDS(KILN_DEFINE_TOKEN)
#undef KILN_DEFINE_TOKEN
      TK_KIND_END
};

// "+" for '+', "def" for TK_DEF, "list" for TK_LIST.
std::string kindToString(int kind);

struct Token {
  int kind;
  SourceRange range;
  // Identifiers, numbers, operators: the source text. Strings: the decoded
  // value. Type comments: the text after `# type:`. Augmented assignments:
  // the operator, e.g. "+=".
  std::string text;
};

class Lexer {
 public:
  // Tokenizes all of `source` (or its [start, end) part) at once; malformed
  // input raises kiln::Error pointing at the offending text.
  explicit Lexer(std::shared_ptr<const Source> source);
  Lexer(std::shared_ptr<const Source> source, size_t start, size_t end);

  const Token& cur() const { return tokens_[pos_]; }
  const Token& lookahead() const { return tokens_[std::min(pos_ + 1, tokens_.size() - 1)]; }
  // Returns the current token and advances (never past TK_EOF).
  // Tokens are never moved after lexing, so the references stay valid.
  const Token& next();
  bool nextIf(int kind);
  // Consumes a token of `kind` or raises "expected X but found Y".
  const Token& expect(int kind);
  [[noreturn]] void reportUnexpected(const std::string& expected) const;

  const std::vector<Token>& tokens() const { return tokens_; }
  const std::shared_ptr<const Source>& source() const { return source_; }

 private:
  std::shared_ptr<const Source> source_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace kiln
