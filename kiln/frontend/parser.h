#pragma once
// The TorchScript parser: recursive descent for statements, precedence
// climbing for expressions, Python's precedence and associativity. Produces
// Tree ASTs (layouts in tree_views.h). Malformed input raises kiln::Error in
// TorchScript's layout (message, File "<name>", line N, `~~~ <--- HERE`);
// nesting deeper than kMaxParseNesting is an error, not a stack overflow.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/frontend/lexer.h"
#include "kiln/frontend/tree.h"

namespace kiln {

constexpr size_t kMaxParseNesting = 256;

class Parser {
 public:
  explicit Parser(std::shared_ptr<const Source> source);
  // Every top-level statement: defs, classes, imports and any others.
  std::vector<TreeRef> parseFile();
  // One (possibly decorated) def at the current position.
  TreeRef parseFunction();
  // The whole source as one expression (a bare tuple allowed).
  TreeRef parseExpressionOnly();

  Lexer& lexer() { return lexer_; }

 private:
  explicit Parser(Lexer lexer) : lexer_(std::move(lexer)) {}
  class NestingGuard;

  // Expressions.
  TreeRef parseExp(int precedence = 0);
  TreeRef parsePrimary();
  TreeRef parseAtom();
  TreeRef parseExpOrStarred();
  TreeRef parseExpList();
  TreeRef parseParens();
  TreeRef parseListDisplay();
  TreeRef parseDictDisplay();
  TreeRef parseCall(TreeRef callee);
  TreeRef parseSubscript(TreeRef value);
  TreeRef parseSubscriptItem();
  TreeRef parseNumber(const Token& t);
  TreeRef parseTargets();
  struct Comprehension {
    TreeRef target, iter, cond;
  };
  Comprehension parseComprehension();

  // Statements.
  void parseStatement(TreeList& out);
  void parseSimpleStatements(TreeList& out);
  TreeRef parseSimpleStatement();
  TreeRef parseAssignOrExpr();
  TreeRef parseDecorated();
  TreeRef parseDef(TreeList decorators, const SourceRange& start);
  TreeRef parseParams();
  TreeRef applyTypeComment(const Token& comment, TreeRef params, TreeRef return_type);
  TreeRef parseClass();
  TreeRef parseIf();
  TreeRef parseWhile();
  TreeRef parseFor();
  TreeRef parseWith();
  TreeRef parseImport();
  TreeRef parseImportFrom();
  TreeRef parseDottedName();
  TreeRef parseAlias(TreeRef name);
  TreeRef parseBlock(std::optional<Token>* type_comment = nullptr);
  void takeTypeComment(std::optional<Token>* type_comment);
  void expectStatementEnd();
  bool atSimpleStatementEnd() const;
  void checkTarget(const TreeRef& target, bool allow_starred) const;

  Lexer lexer_;
  size_t nesting_ = 0;
};

// Conveniences for tests and tools; `filename` shows in error messages.
std::vector<TreeRef> parseSource(const std::string& text, std::optional<std::string> filename = std::nullopt);
TreeRef parseExpression(const std::string& text);

}  // namespace kiln
