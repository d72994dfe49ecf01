#include "kiln/frontend/parser.h"

#include <set>
#include <string_view>

#include "kiln/frontend/error_report.h"
#include "kiln/frontend/tree_views.h"

namespace kiln {

namespace {

// Python's precedence levels, loosest first.
constexpr int kTernaryPrec = 2;
constexpr int kNotPrec = 5;
constexpr int kComparePrec = 6;
constexpr int kUnaryPrec = 13;
constexpr int kPowPrec = 14;

int binaryPrecedence(int kind) {
  switch (kind) {
    case TK_OR: return 3;
    case TK_AND: return 4;
    case '|': return 7;
    case '^': return 8;
    case '&': return 9;
    case TK_LSHIFT:
    case TK_RSHIFT: return 10;
    case '+':
    case '-': return 11;
    case '*':
    case '@':
    case '/':
    case TK_FLOOR_DIV:
    case '%': return 12;
    case TK_POW: return kPowPrec;
    default: return isComparisonKind(kind) ? kComparePrec : 0;
  }
}

SourceRange span(const SourceRange& a, const SourceRange& b) {
  return SourceRange(a.source(), a.start(), std::max(a.end(), b.end()));
}

TreeRef list(const SourceRange& range, TreeList trees) { return Tree::create(TK_LIST, range, std::move(trees)); }

TreeRef option(const SourceRange& range, TreeRef tree) {
  return Tree::create(TK_OPTION, tree ? tree->range() : range, tree ? TreeList{std::move(tree)} : TreeList{});
}

TreeRef leaf(int kind, const SourceRange& range) { return Tree::create(kind, range, {}); }

TreeRef ident(const Token& t) { return Tree::create(TK_IDENT, t.range, {Tree::atom(t.text, t.range)}); }

// The range of a list of trees, or `fallback` when it is empty.
SourceRange rangeOf(const TreeList& trees, const SourceRange& fallback) {
  return trees.empty() ? fallback : span(trees.front()->range(), trees.back()->range());
}

int augAssignKind(const Token& t) {
  std::string_view op(t.text);
  op.remove_suffix(1);
  if (op.size() == 1) return op[0];
  if (op == "**") return TK_POW;
  if (op == "//") return TK_FLOOR_DIV;
  if (op == "<<") return TK_LSHIFT;
  return TK_RSHIFT;
}

}  // namespace

class Parser::NestingGuard {
 public:
  NestingGuard(Parser& parser) : parser_(parser) {
    if (++parser_.nesting_ > kMaxParseNesting) {
      throwSourceError(parser_.lexer_.cur().range,
                       "too many nested expressions or blocks (the limit is " + std::to_string(kMaxParseNesting) + ")");
    }
  }
  ~NestingGuard() { --parser_.nesting_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  Parser& parser_;
};

Parser::Parser(std::shared_ptr<const Source> source) : lexer_(std::move(source)) {}

// ---------------------------------------------------------------- expressions

TreeRef Parser::parseExp(int precedence) {
  NestingGuard guard(*this);
  const Token& t = lexer_.cur();
  TreeRef left;
  if (t.kind == TK_NOT) {
    if (precedence > kNotPrec) throwSourceError(t.range, "'not' must be parenthesized here");
    const Token& op = lexer_.next();
    TreeRef operand = parseExp(kNotPrec);
    left = Tree::create(TK_NOT, span(op.range, operand->range()), {operand});
  } else if (t.kind == '-' || t.kind == '+' || t.kind == '~') {
    const Token& op = lexer_.next();
    TreeRef operand = parseExp(kUnaryPrec);
    int kind = op.kind == '-' ? int{TK_UNARY_MINUS} : op.kind == '+' ? int{TK_UNARY_PLUS} : int{'~'};
    left = Tree::create(kind, span(op.range, operand->range()), {operand});
  } else if (t.kind == TK_LAMBDA) {
    throwSourceError(t.range, "lambda expressions are not supported");
  } else if (t.kind == TK_YIELD || t.kind == TK_AWAIT) {
    throwSourceError(t.range, "'" + t.text + "' is not supported");
  } else {
    left = parsePrimary();
  }
  // The last comparison built at this level: a following comparison chains.
  TreeRef last_compare;
  TreeList chain;
  while (true) {
    const Token& cur = lexer_.cur();
    int kind = cur.kind;
    if (kind == TK_WALRUS) throwSourceError(cur.range, "assignment expressions (:=) are not supported");
    if (kind == TK_NOT && lexer_.lookahead().kind == TK_IN) kind = TK_NOTIN;
    if (kind == TK_IS && lexer_.lookahead().kind == TK_NOT) kind = TK_ISNOT;
    if (kind == TK_IF) {
      if (precedence >= kTernaryPrec) break;
      lexer_.next();
      TreeRef cond = parseExp(kTernaryPrec);
      lexer_.expect(TK_ELSE);
      TreeRef false_expr = parseExp(kTernaryPrec - 1);
      left = Tree::create(TK_IF_EXPR, span(left->range(), false_expr->range()), {cond, left, false_expr});
      continue;
    }
    int prec = binaryPrecedence(kind);
    if (prec == 0 || prec <= precedence) break;
    lexer_.next();
    if (kind == TK_NOTIN || kind == TK_ISNOT) lexer_.next();
    TreeRef right = parseExp(kind == TK_POW ? prec - 1 : prec);
    if (isComparisonKind(kind) && last_compare && left == last_compare) {
      TreeRef middle = chain.back()->tree(1);
      chain.push_back(Tree::create(kind, span(middle->range(), right->range()), {middle, right}));
      SourceRange range = span(chain.front()->range(), right->range());
      left = Tree::create(TK_CHAIN_COMPARE, range, {list(range, chain)});
      last_compare = left;
      continue;
    }
    left = Tree::create(kind, span(left->range(), right->range()), {left, right});
    if (isComparisonKind(kind)) {
      chain = {left};
      last_compare = left;
    }
  }
  return left;
}

TreeRef Parser::parsePrimary() {
  TreeRef value = parseAtom();
  while (true) {
    switch (lexer_.cur().kind) {
      case '.': {
        lexer_.next();
        const Token& name = lexer_.expect(TK_IDENT);
        value = Tree::create('.', span(value->range(), name.range), {value, ident(name)});
        break;
      }
      case '(': value = parseCall(value); break;
      case '[': value = parseSubscript(value); break;
      default: return value;
    }
  }
}

TreeRef Parser::parseAtom() {
  const Token& t = lexer_.cur();
  switch (t.kind) {
    case TK_IDENT: {
      const Token& name = lexer_.next();
      return Tree::create(TK_VAR, name.range, {ident(name)});
    }
    case TK_NUMBER: return parseNumber(lexer_.next());
    case TK_STRING: {
      // Adjacent literals concatenate, as in Python.
      const Token& first = lexer_.next();
      std::string value = first.text;
      SourceRange range = first.range;
      while (lexer_.cur().kind == TK_STRING) {
        const Token& more = lexer_.next();
        value += more.text;
        range = span(range, more.range);
      }
      return Tree::create(TK_STRINGLITERAL, range, {Tree::atom(std::move(value), range)});
    }
    case TK_NONE:
    case TK_TRUE:
    case TK_FALSE:
    case TK_DOTS: return leaf(lexer_.next().kind, t.range);
    case '(': return parseParens();
    case '[': return parseListDisplay();
    case '{': return parseDictDisplay();
    case '*': throwSourceError(t.range, "a starred expression is not allowed here");
    default: lexer_.reportUnexpected("an expression");
  }
}

TreeRef Parser::parseNumber(const Token& t) {
  const bool imaginary = !t.text.empty() && (t.text.back() | 0x20) == 'j';
  if (!imaginary && !isFloatLiteral(t.text) && !parseIntLiteral(t.text)) {
    throwSourceError(t.range, "integer literal is too large for a 64-bit integer");
  }
  return Tree::create(TK_CONST, t.range, {Tree::atom(t.text, t.range)});
}

TreeRef Parser::parseExpOrStarred() {
  if (lexer_.cur().kind != '*') return parseExp();
  NestingGuard guard(*this);
  const Token& star = lexer_.next();
  TreeRef value = parseExp(kComparePrec);
  return Tree::create(TK_STARRED, span(star.range, value->range()), {value});
}

// A bare expression list: `a` alone, or a tuple for `a, b` / `a,`.
TreeRef Parser::parseExpList() {
  TreeRef first = parseExpOrStarred();
  if (lexer_.cur().kind != ',') return first;
  TreeList items{first};
  while (lexer_.nextIf(',')) {
    int k = lexer_.cur().kind;
    if (atSimpleStatementEnd() || k == '=' || k == ':' || k == TK_AUG_ASSIGN || k == ')') break;
    items.push_back(parseExpOrStarred());
  }
  SourceRange range = rangeOf(items, first->range());
  return Tree::create(TK_TUPLE_LITERAL, range, {list(range, items)});
}

TreeRef Parser::parseParens() {
  NestingGuard guard(*this);
  const Token& open = lexer_.expect('(');
  if (lexer_.cur().kind == ')') {
    const Token& close = lexer_.next();
    SourceRange range = span(open.range, close.range);
    return Tree::create(TK_TUPLE_LITERAL, range, {list(range, {})});
  }
  TreeRef first = parseExpOrStarred();
  if (lexer_.cur().kind == TK_FOR) throwSourceError(lexer_.cur().range, "generator expressions are not supported");
  if (lexer_.cur().kind != ',') {
    if (first->kind() == TK_STARRED) throwSourceError(first->range(), "cannot use a starred expression here");
    lexer_.expect(')');
    return first;
  }
  TreeList items{first};
  while (lexer_.nextIf(',') && lexer_.cur().kind != ')') items.push_back(parseExpOrStarred());
  const Token& close = lexer_.expect(')');
  SourceRange range = span(open.range, close.range);
  return Tree::create(TK_TUPLE_LITERAL, range, {list(rangeOf(items, range), items)});
}

Parser::Comprehension Parser::parseComprehension() {
  lexer_.expect(TK_FOR);
  Comprehension c;
  c.target = parseTargets();
  lexer_.expect(TK_IN);
  c.iter = parseExp(kTernaryPrec);
  if (lexer_.nextIf(TK_IF)) c.cond = parseExp(kTernaryPrec);
  if (lexer_.cur().kind == TK_FOR || lexer_.cur().kind == TK_IF) {
    throwSourceError(lexer_.cur().range, "comprehensions support one 'for' clause and one 'if' filter");
  }
  return c;
}

TreeRef Parser::parseListDisplay() {
  NestingGuard guard(*this);
  const Token& open = lexer_.expect('[');
  TreeList items;
  if (lexer_.cur().kind != ']') {
    items.push_back(parseExpOrStarred());
    if (lexer_.cur().kind == TK_FOR) {
      Comprehension c = parseComprehension();
      const Token& close = lexer_.expect(']');
      return Tree::create(TK_LIST_COMP, span(open.range, close.range),
                          {items[0], c.target, c.iter, option(close.range, c.cond)});
    }
    while (lexer_.nextIf(',') && lexer_.cur().kind != ']') items.push_back(parseExpOrStarred());
  }
  const Token& close = lexer_.expect(']');
  SourceRange range = span(open.range, close.range);
  return Tree::create(TK_LIST_LITERAL, range, {list(rangeOf(items, range), items)});
}

TreeRef Parser::parseDictDisplay() {
  NestingGuard guard(*this);
  const Token& open = lexer_.expect('{');
  TreeList keys, values;
  while (lexer_.cur().kind != '}') {
    if (lexer_.cur().kind == TK_POW) throwSourceError(lexer_.cur().range, "dict unpacking (**) is not supported");
    keys.push_back(parseExp());
    if (lexer_.cur().kind != ':')
      throwSourceError(span(open.range, keys.back()->range()), "set literals are not supported");
    lexer_.next();
    values.push_back(parseExp());
    if (keys.size() == 1 && lexer_.cur().kind == TK_FOR) {
      Comprehension c = parseComprehension();
      const Token& close = lexer_.expect('}');
      return Tree::create(TK_DICT_COMP, span(open.range, close.range),
                          {keys[0], values[0], c.target, c.iter, option(close.range, c.cond)});
    }
    if (!lexer_.nextIf(',')) break;
  }
  const Token& close = lexer_.expect('}');
  SourceRange range = span(open.range, close.range);
  return Tree::create(TK_DICT_LITERAL, range, {list(rangeOf(keys, range), keys), list(rangeOf(values, range), values)});
}

TreeRef Parser::parseCall(TreeRef callee) {
  NestingGuard guard(*this);
  const Token& open = lexer_.expect('(');
  TreeList args, kwargs;
  while (lexer_.cur().kind != ')') {
    const Token& t = lexer_.cur();
    if (t.kind == '*') throwSourceError(t.range, "*args in calls are not supported");
    if (t.kind == TK_POW) throwSourceError(t.range, "**kwargs in calls are not supported");
    if (t.kind == TK_IDENT && lexer_.lookahead().kind == '=') {
      const Token& name = lexer_.next();
      lexer_.next();
      TreeRef value = parseExp();
      kwargs.push_back(Tree::create(TK_KWARG, span(name.range, value->range()), {ident(name), value}));
    } else {
      TreeRef value = parseExp();
      if (!kwargs.empty()) throwSourceError(value->range(), "positional argument follows keyword argument");
      if (lexer_.cur().kind == TK_FOR) throwSourceError(lexer_.cur().range, "generator expressions are not supported");
      args.push_back(value);
    }
    if (!lexer_.nextIf(',')) break;
  }
  const Token& close = lexer_.expect(')');
  SourceRange range = span(callee->range(), close.range);
  return Tree::create(TK_APPLY, range,
                      {callee, list(rangeOf(args, open.range), args), list(rangeOf(kwargs, open.range), kwargs)});
}

TreeRef Parser::parseSubscript(TreeRef value) {
  NestingGuard guard(*this);
  const Token& open = lexer_.expect('[');
  TreeList items;
  do {
    if (lexer_.cur().kind == ']' && !items.empty()) break;
    items.push_back(parseSubscriptItem());
  } while (lexer_.nextIf(','));
  const Token& close = lexer_.expect(']');
  return Tree::create(TK_SUBSCRIPT, span(value->range(), close.range),
                      {value, list(rangeOf(items, open.range), items)});
}

TreeRef Parser::parseSubscriptItem() {
  auto atItemEnd = [&] {
    int k = lexer_.cur().kind;
    return k == ':' || k == ',' || k == ']';
  };
  const SourceRange start_range = lexer_.cur().range;
  TreeRef start = lexer_.cur().kind == ':' ? nullptr : parseExpOrStarred();
  if (lexer_.cur().kind != ':') return start;
  const Token& colon = lexer_.next();
  TreeRef end = atItemEnd() ? nullptr : parseExp();
  TreeRef step;
  SourceRange last = end ? end->range() : colon.range;
  if (lexer_.cur().kind == ':') {
    last = lexer_.next().range;
    step = atItemEnd() ? nullptr : parseExp();
    if (step) last = step->range();
  }
  SourceRange range = span(start ? start->range() : start_range, last);
  return Tree::create(TK_SLICE_EXPR, range, {option(range, start), option(range, end), option(range, step)});
}

// `for` targets: expressions above comparisons (so `in` ends them), a tuple
// when separated by commas.
TreeRef Parser::parseTargets() {
  auto one = [&]() -> TreeRef {
    if (lexer_.cur().kind != '*') return parseExp(kComparePrec);
    const Token& star = lexer_.next();
    TreeRef value = parseExp(kComparePrec);
    return Tree::create(TK_STARRED, span(star.range, value->range()), {value});
  };
  TreeRef first = one();
  TreeList items{first};
  bool tuple = false;
  while (lexer_.cur().kind == ',') {
    lexer_.next();
    tuple = true;
    if (lexer_.cur().kind == TK_IN) break;
    items.push_back(one());
  }
  if (!tuple) {
    checkTarget(first, false);
    return first;
  }
  SourceRange range = rangeOf(items, first->range());
  TreeRef target = Tree::create(TK_TUPLE_LITERAL, range, {list(range, items)});
  checkTarget(target, false);
  return target;
}

// ----------------------------------------------------------------- statements

std::vector<TreeRef> Parser::parseFile() {
  TreeList out;
  while (true) {
    while (lexer_.nextIf(TK_TYPE_COMMENT)) {
    }
    if (lexer_.cur().kind == TK_EOF) break;
    parseStatement(out);
  }
  return std::vector<TreeRef>(out.begin(), out.end());
}

TreeRef Parser::parseFunction() {
  while (lexer_.nextIf(TK_TYPE_COMMENT)) {
  }
  if (lexer_.cur().kind != '@' && lexer_.cur().kind != TK_DEF) lexer_.reportUnexpected("'def'");
  return parseDecorated();
}

TreeRef Parser::parseExpressionOnly() {
  TreeRef e = parseExpList();
  lexer_.nextIf(TK_NEWLINE);
  if (lexer_.cur().kind != TK_EOF) lexer_.reportUnexpected("end of expression");
  return e;
}

void Parser::parseStatement(TreeList& out) {
  NestingGuard guard(*this);
  const Token& t = lexer_.cur();
  switch (t.kind) {
    case '@':
    case TK_DEF: out.push_back(parseDecorated()); return;
    case TK_CLASS: out.push_back(parseClass()); return;
    case TK_IF: out.push_back(parseIf()); return;
    case TK_WHILE: out.push_back(parseWhile()); return;
    case TK_FOR: out.push_back(parseFor()); return;
    case TK_WITH: out.push_back(parseWith()); return;
    case TK_TRY:
    case TK_EXCEPT:
    case TK_FINALLY:
    case TK_ASYNC: throwSourceError(t.range, "'" + t.text + "' statements are not supported");
    case TK_INDENT: throwSourceError(t.range, "unexpected indent");
    case TK_ELSE:
    case TK_ELIF: throwSourceError(t.range, "'" + t.text + "' without a matching 'if'");
    default: parseSimpleStatements(out);
  }
}

bool Parser::atSimpleStatementEnd() const {
  int k = lexer_.cur().kind;
  return k == TK_NEWLINE || k == ';' || k == TK_TYPE_COMMENT || k == TK_EOF;
}

void Parser::expectStatementEnd() {
  lexer_.nextIf(TK_TYPE_COMMENT);
  if (lexer_.cur().kind == TK_EOF) return;
  if (lexer_.cur().kind != TK_NEWLINE) lexer_.reportUnexpected("a newline");
  lexer_.next();
}

void Parser::parseSimpleStatements(TreeList& out) {
  do {
    out.push_back(parseSimpleStatement());
  } while (lexer_.nextIf(';') && !atSimpleStatementEnd());
  expectStatementEnd();
}

TreeRef Parser::parseSimpleStatement() {
  const Token& t = lexer_.cur();
  switch (t.kind) {
    case TK_PASS:
    case TK_BREAK:
    case TK_CONTINUE: return leaf(lexer_.next().kind, t.range);
    case TK_RETURN: {
      const Token& r = lexer_.next();
      TreeRef value = atSimpleStatementEnd() ? nullptr : parseExpList();
      return Tree::create(TK_RETURN, value ? span(r.range, value->range()) : r.range, {option(r.range, value)});
    }
    case TK_RAISE: {
      const Token& r = lexer_.next();
      TreeRef exc = atSimpleStatementEnd() ? nullptr : parseExp();
      TreeRef cause = exc && lexer_.nextIf(TK_FROM) ? parseExp() : nullptr;
      SourceRange range = span(r.range, cause ? cause->range() : exc ? exc->range() : r.range);
      return Tree::create(TK_RAISE, range, {option(r.range, exc), option(r.range, cause)});
    }
    case TK_ASSERT: {
      const Token& a = lexer_.next();
      TreeRef test = parseExp();
      TreeRef msg = lexer_.nextIf(',') ? parseExp() : nullptr;
      return Tree::create(TK_ASSERT, span(a.range, msg ? msg->range() : test->range()), {test, option(a.range, msg)});
    }
    case TK_DELETE: {
      const Token& d = lexer_.next();
      TreeList targets;
      do {
        targets.push_back(parseExp());
        checkTarget(targets.back(), false);
      } while (lexer_.nextIf(',') && !atSimpleStatementEnd());
      SourceRange range = span(d.range, targets.back()->range());
      return Tree::create(TK_DELETE, range, {list(range, targets)});
    }
    case TK_GLOBAL:
    case TK_NONLOCAL: throwSourceError(t.range, "'" + t.text + "' declarations are not supported");
    case TK_IMPORT: return parseImport();
    case TK_FROM: return parseImportFrom();
    default: return parseAssignOrExpr();
  }
}

void Parser::checkTarget(const TreeRef& target, bool allow_starred) const {
  switch (target->kind()) {
    case TK_VAR:
    case '.':
    case TK_SUBSCRIPT: return;
    case TK_STARRED:
      if (!allow_starred) throwSourceError(target->range(), "a starred assignment target must be in a list or tuple");
      checkTarget(target->tree(0), false);
      return;
    case TK_TUPLE_LITERAL:
    case TK_LIST_LITERAL: {
      bool seen_star = false;
      for (const TreeRef& item : target->tree(0)->trees()) {
        if (item->kind() == TK_STARRED) {
          if (seen_star) throwSourceError(item->range(), "multiple starred expressions in assignment");
          seen_star = true;
        }
        checkTarget(item, true);
      }
      return;
    }
    default: throwSourceError(target->range(), "unexpected expression on left-hand side of assignment");
  }
}

TreeRef Parser::parseAssignOrExpr() {
  TreeRef lhs = parseExpList();
  const Token& t = lexer_.cur();
  if (t.kind == ':') {
    if (lhs->kind() != TK_VAR && lhs->kind() != '.' && lhs->kind() != TK_SUBSCRIPT) {
      throwSourceError(lhs->range(), "only a single target can be annotated");
    }
    lexer_.next();
    TreeRef type = parseExp();
    TreeRef rhs = lexer_.nextIf('=') ? parseExpList() : nullptr;
    SourceRange range = span(lhs->range(), rhs ? rhs->range() : type->range());
    return Tree::create(TK_ASSIGN, range, {list(lhs->range(), {lhs}), option(range, rhs), option(range, type)});
  }
  if (t.kind == TK_AUG_ASSIGN) {
    const Token& op = lexer_.next();
    if (lhs->kind() != TK_VAR && lhs->kind() != '.' && lhs->kind() != TK_SUBSCRIPT) {
      throwSourceError(lhs->range(), "illegal target for augmented assignment");
    }
    TreeRef rhs = parseExpList();
    return Tree::create(TK_AUG_ASSIGN, span(lhs->range(), rhs->range()), {lhs, leaf(augAssignKind(op), op.range), rhs});
  }
  if (t.kind == '=') {
    TreeList targets{lhs};
    while (lexer_.nextIf('=')) targets.push_back(parseExpList());
    TreeRef rhs = targets.back();
    targets.pop_back();
    for (const TreeRef& target : targets) checkTarget(target, false);
    SourceRange range = span(lhs->range(), rhs->range());
    // `x = []  # type: List[int]` annotates like `x: List[int] = []`.
    TreeRef type;
    if (lexer_.cur().kind == TK_TYPE_COMMENT && targets.size() == 1 && lhs->kind() == TK_VAR &&
        lexer_.cur().text.find_first_not_of(" \t") != std::string::npos && lexer_.cur().text.rfind("ignore", 0) != 0) {
      const Token& comment = lexer_.cur();
      Parser sub(Lexer(lexer_.source(), comment.range.start(), comment.range.end()));
      type = sub.parseExp();
      sub.lexer_.nextIf(TK_NEWLINE);
      if (sub.lexer_.cur().kind != TK_EOF) sub.lexer_.reportUnexpected("the end of the type comment");
    }
    return Tree::create(TK_ASSIGN, range,
                        {list(rangeOf(targets, range), targets), option(range, rhs), option(range, type)});
  }
  if (lhs->kind() == TK_STARRED) throwSourceError(lhs->range(), "a starred expression is not allowed here");
  return Tree::create(TK_EXPR_STMT, lhs->range(), {lhs});
}

void Parser::takeTypeComment(std::optional<Token>* type_comment) {
  while (lexer_.cur().kind == TK_TYPE_COMMENT) {
    const Token& t = lexer_.next();
    if (type_comment && !*type_comment) *type_comment = std::move(t);
  }
}

TreeRef Parser::parseBlock(std::optional<Token>* type_comment) {
  const Token& colon = lexer_.expect(':');
  takeTypeComment(type_comment);
  TreeList body;
  if (lexer_.cur().kind != TK_NEWLINE) {
    if (lexer_.cur().kind == TK_EOF) lexer_.reportUnexpected("a statement");
    parseSimpleStatements(body);
    return list(rangeOf(body, colon.range), body);
  }
  lexer_.next();
  takeTypeComment(type_comment);
  if (lexer_.cur().kind != TK_INDENT) throwSourceError(lexer_.cur().range, "expected an indented block");
  lexer_.next();
  while (true) {
    takeTypeComment(nullptr);
    if (lexer_.nextIf(TK_DEDENT) || lexer_.cur().kind == TK_EOF) break;
    parseStatement(body);
  }
  return list(rangeOf(body, colon.range), body);
}

TreeRef Parser::parseDecorated() {
  TreeList decorators;
  while (lexer_.cur().kind == '@') {
    lexer_.next();
    decorators.push_back(parseExp());
    lexer_.expect(TK_NEWLINE);
    while (lexer_.nextIf(TK_TYPE_COMMENT)) {
    }
  }
  const Token& t = lexer_.cur();
  if (t.kind == TK_CLASS && !decorators.empty()) throwSourceError(t.range, "class decorators are not supported");
  if (t.kind != TK_DEF) lexer_.reportUnexpected("'def'");
  SourceRange start = decorators.empty() ? t.range : decorators.front()->range();
  return parseDef(std::move(decorators), start);
}

TreeRef Parser::parseDef(TreeList decorators, const SourceRange& start) {
  const Token& def = lexer_.expect(TK_DEF);
  const Token& name = lexer_.expect(TK_IDENT);
  TreeRef params = parseParams();
  TreeRef return_type = lexer_.nextIf(TK_ARROW) ? parseExp() : nullptr;
  std::optional<Token> type_comment;
  TreeRef body = parseBlock(&type_comment);
  if (type_comment && !type_comment->text.empty() && type_comment->text[0] == '(') {
    return_type = applyTypeComment(*type_comment, params, return_type);
    params = return_type->tree(0);
    return_type = return_type->tree(1)->trees().empty() ? nullptr : return_type->tree(1)->tree(0);
  }
  SourceRange decl_range = span(name.range, return_type ? return_type->range() : params->range());
  TreeRef decl = Tree::create(TK_DECL, decl_range, {params, option(decl_range, return_type)});
  SourceRange range = span(start, body->range());
  return Tree::create(TK_DEF, range,
                      {ident(name), decl, body, list(rangeOf(decorators, def.range), std::move(decorators))});
}

TreeRef Parser::parseParams() {
  const Token& open = lexer_.expect('(');
  TreeList params;
  std::set<std::string> names;
  bool kwarg_only = false;
  bool seen_default = false;
  while (lexer_.cur().kind != ')') {
    const Token& t = lexer_.cur();
    if (t.kind == '*') {
      const Token& star = lexer_.next();
      if (lexer_.cur().kind != ',' && lexer_.cur().kind != ')')
        throwSourceError(star.range, "*args parameters are not supported");
      if (kwarg_only) throwSourceError(star.range, "'*' may appear only once in a parameter list");
      kwarg_only = true;
      if (!lexer_.nextIf(',')) break;
      continue;
    }
    if (t.kind == TK_POW) throwSourceError(t.range, "**kwargs parameters are not supported");
    if (t.kind == '/') throwSourceError(t.range, "positional-only parameters are not supported");
    const Token& name = lexer_.expect(TK_IDENT);
    if (!names.insert(name.text).second)
      throwSourceError(name.range, "duplicate argument '" + name.text + "' in function definition");
    TreeRef type = lexer_.nextIf(':') ? parseExp() : nullptr;
    TreeRef def = lexer_.nextIf('=') ? parseExp() : nullptr;
    if (def) {
      seen_default = true;
    } else if (seen_default && !kwarg_only) {
      throwSourceError(name.range, "non-default argument follows default argument");
    }
    SourceRange range = span(name.range, def ? def->range() : type ? type->range() : name.range);
    params.push_back(Tree::create(
        TK_PARAM, range,
        {ident(name), option(range, type), option(range, def), leaf(kwarg_only ? TK_TRUE : TK_FALSE, range)}));
    if (!lexer_.nextIf(',')) break;
  }
  const Token& close = lexer_.expect(')');
  return list(span(open.range, close.range), params);
}

// `# type: (int, Tensor) -> Tensor` gives the parameter and return types.
// Returns (list (params with types) (option return_type)) as a TK_LIST.
TreeRef Parser::applyTypeComment(const Token& comment, TreeRef params, TreeRef /*return_type*/) {
  Parser sub(Lexer(lexer_.source(), comment.range.start(), comment.range.end()));
  Lexer& l = sub.lexer_;
  l.expect('(');
  TreeList types;
  while (l.cur().kind != ')') {
    types.push_back(sub.parseExp());
    if (!l.nextIf(',')) break;
  }
  l.expect(')');
  // As in 1.13, `-> T` may be left out (the return type is then inferred),
  // and the comment's types replace any annotations of the `def`.
  TreeRef comment_return;
  if (l.cur().kind != TK_NEWLINE && l.cur().kind != TK_EOF) {
    l.expect(TK_ARROW);
    comment_return = sub.parseExp();
  }
  l.nextIf(TK_NEWLINE);
  if (l.cur().kind != TK_EOF) l.reportUnexpected("the end of the type comment");

  const TreeList& ps = params->trees();
  // Methods leave `self` out of the comment.
  size_t skip = ps.size() == types.size() + 1 && Param(ps[0]).ident().name() == "self" ? 1 : 0;
  if (ps.size() != types.size() + skip) {
    throwSourceError(params->range(), "Number of type annotations (" + std::to_string(types.size()) +
                                          ") did not match the number of function parameters (" +
                                          std::to_string(ps.size()) + ")");
  }
  TreeList typed;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (i < skip) {
      typed.push_back(ps[i]);
      continue;
    }
    const TreeRef& p = ps[i];
    typed.push_back(
        Tree::create(TK_PARAM, p->range(), {p->tree(0), option(p->range(), types[i - skip]), p->tree(2), p->tree(3)}));
  }
  return list(comment.range, {list(params->range(), typed), option(comment.range, comment_return)});
}

TreeRef Parser::parseClass() {
  const Token& c = lexer_.expect(TK_CLASS);
  const Token& name = lexer_.expect(TK_IDENT);
  TreeList bases;
  if (lexer_.nextIf('(')) {
    while (lexer_.cur().kind != ')') {
      bases.push_back(parseExp());
      if (!lexer_.nextIf(',')) break;
    }
    lexer_.expect(')');
  }
  TreeRef body = parseBlock();
  return Tree::create(TK_CLASS, span(c.range, body->range()),
                      {ident(name), list(rangeOf(bases, name.range), bases), body});
}

TreeRef Parser::parseIf() {
  // elif chains are folded from the back, so long chains need no recursion.
  struct Branch {
    SourceRange start;
    TreeRef cond, body;
  };
  std::vector<Branch> branches;
  do {
    const Token& t = lexer_.next();
    TreeRef cond = parseExp();
    TreeRef body = parseBlock();
    branches.push_back({t.range, cond, body});
  } while (lexer_.cur().kind == TK_ELIF);
  TreeRef else_body;
  if (lexer_.cur().kind == TK_ELSE) {
    lexer_.next();
    else_body = parseBlock();
  } else {
    else_body = list(branches.back().body->range(), {});
  }
  TreeRef result;
  for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
    SourceRange range = span(it->start, else_body->trees().empty() ? it->body->range() : else_body->range());
    result = Tree::create(TK_IF, range, {it->cond, it->body, else_body});
    else_body = list(range, {result});
  }
  return result;
}

TreeRef Parser::parseWhile() {
  const Token& w = lexer_.expect(TK_WHILE);
  TreeRef cond = parseExp();
  TreeRef body = parseBlock();
  if (lexer_.cur().kind == TK_ELSE)
    throwSourceError(lexer_.cur().range, "else branches of while loops are not supported");
  return Tree::create(TK_WHILE, span(w.range, body->range()), {cond, body});
}

TreeRef Parser::parseFor() {
  const Token& f = lexer_.expect(TK_FOR);
  TreeRef target = parseTargets();
  lexer_.expect(TK_IN);
  TreeRef iter = parseExpList();
  TreeRef body = parseBlock();
  if (lexer_.cur().kind == TK_ELSE)
    throwSourceError(lexer_.cur().range, "else branches of for loops are not supported");
  return Tree::create(TK_FOR, span(f.range, body->range()),
                      {list(target->range(), {target}), list(iter->range(), {iter}), body});
}

TreeRef Parser::parseWith() {
  const Token& w = lexer_.expect(TK_WITH);
  TreeList items;
  do {
    TreeRef e = parseExp();
    TreeRef target;
    if (lexer_.nextIf(TK_AS)) {
      target = parseExp(kComparePrec);
      checkTarget(target, false);
    }
    items.push_back(Tree::create(TK_WITH_ITEM, span(e->range(), target ? target->range() : e->range()),
                                 {e, option(e->range(), target)}));
  } while (lexer_.nextIf(','));
  TreeRef body = parseBlock();
  return Tree::create(TK_WITH, span(w.range, body->range()), {list(rangeOf(items, w.range), items), body});
}

TreeRef Parser::parseDottedName() {
  const Token& first = lexer_.expect(TK_IDENT);
  std::string name = first.text;
  SourceRange range = first.range;
  while (lexer_.nextIf('.')) {
    const Token& part = lexer_.expect(TK_IDENT);
    name += "." + part.text;
    range = span(range, part.range);
  }
  return Tree::create(TK_IDENT, range, {Tree::atom(name, range)});
}

TreeRef Parser::parseAlias(TreeRef name) {
  TreeRef as_name = lexer_.nextIf(TK_AS) ? ident(lexer_.expect(TK_IDENT)) : nullptr;
  SourceRange range = span(name->range(), as_name ? as_name->range() : name->range());
  return Tree::create(TK_ALIAS, range, {name, option(range, as_name)});
}

TreeRef Parser::parseImport() {
  const Token& i = lexer_.expect(TK_IMPORT);
  TreeList names;
  do {
    names.push_back(parseAlias(parseDottedName()));
  } while (lexer_.nextIf(','));
  SourceRange range = span(i.range, names.back()->range());
  return Tree::create(TK_IMPORT, range, {list(range, names)});
}

TreeRef Parser::parseImportFrom() {
  const Token& f = lexer_.expect(TK_FROM);
  // Relative imports keep their leading dots in the module name.
  std::string dots;
  SourceRange range = f.range;
  while (lexer_.cur().kind == '.' || lexer_.cur().kind == TK_DOTS) {
    const Token& d = lexer_.next();
    dots += d.text;
    range = d.range;
  }
  TreeRef module;
  if (lexer_.cur().kind == TK_IDENT) {
    TreeRef dotted = parseDottedName();
    module =
        Tree::create(TK_IDENT, dotted->range(), {Tree::atom(dots + dotted->tree(0)->stringValue(), dotted->range())});
  } else {
    if (dots.empty()) lexer_.reportUnexpected("a module name");
    module = Tree::create(TK_IDENT, range, {Tree::atom(dots, range)});
  }
  lexer_.expect(TK_IMPORT);
  if (lexer_.cur().kind == '*') throwSourceError(lexer_.cur().range, "wildcard imports are not supported");
  bool parens = lexer_.nextIf('(');
  TreeList names;
  do {
    if (parens && lexer_.cur().kind == ')') break;
    names.push_back(parseAlias(ident(lexer_.expect(TK_IDENT))));
  } while (lexer_.nextIf(','));
  if (parens) lexer_.expect(')');
  SourceRange all = span(f.range, names.empty() ? module->range() : names.back()->range());
  if (names.empty()) throwSourceError(all, "expected names to import");
  return Tree::create(TK_IMPORT_FROM, all, {module, list(all, names)});
}

std::vector<TreeRef> parseSource(const std::string& text, std::optional<std::string> filename) {
  Parser parser(std::make_shared<const Source>(text, std::move(filename)));
  return parser.parseFile();
}

TreeRef parseExpression(const std::string& text) {
  Parser parser(std::make_shared<const Source>(text));
  return parser.parseExpressionOnly();
}

}  // namespace kiln
