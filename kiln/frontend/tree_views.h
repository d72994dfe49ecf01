#pragma once
// Typed views of trees: thin wrappers that check a tree's kind once and give
// its subtrees names instead of indices. Layouts (as printed by toString):
//   (def (ident f) (decl (list (param ...)) (option ret)) (list body) (list decorators))
//   (param (ident x) (option type) (option default) (True|False kwarg_only))
//   (class (ident C) (list bases) (list body))
//   (if cond (list then) (list else))    elif is an `if` alone in an else list
//   (while cond (list body))             (for (list targets) (list iters) (list body))
//   (assign (list targets) (option rhs) (option type))    a = b = 1 has two targets
//   (aug_assign lhs (+) rhs)             the middle tree's kind is the operator
//   (return (option v)) (raise (option exc) (option cause)) (assert test (option msg))
//   (with (list (with_item e (option target))) (list body)) (del (list targets))
//   (expr_stmt e) (pass) (break) (continue)
//   (import (list (alias name (option asname)))) (import_from module (list (alias ...)))
//   (variable (ident x)) (const 1.5) (string_literal "s") (None) (True) (False) (...)
//   (apply callee (list args) (list (kwarg (ident k) v)))  (. value (ident name))
//   (subscript value (list items)) (slice (option start) (option end) (option step))
//   (list_literal (list ...)) (tuple_literal (list ...)) (dict_literal (list keys) (list values))
//   (list_comp elt target iter (option cond)) (dict_comp key value target iter (option cond))
//   (if_expr cond true false) (starred e) (op lhs rhs) (unary minus e) (not e)
//   (chain (list (< a b) (< b c)))  a < b < c: consecutive comparisons share the
//        middle operand's tree (the same TreeRef), which must be evaluated once.
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/frontend/tree.h"
#include "kiln/util/error.h"

namespace kiln {

// Value of a Python integer literal (any base, underscores); nullopt when it
// does not fit in int64.
std::optional<int64_t> parseIntLiteral(const std::string& text);
bool isFloatLiteral(const std::string& text);

bool isBinaryOpKind(int kind);
bool isComparisonKind(int kind);
bool isUnaryOpKind(int kind);
bool isExprKind(int kind);
bool isStmtKind(int kind);

class TreeView {
 public:
  explicit TreeView(TreeRef tree) : tree_(std::move(tree)) {}
  const TreeRef& tree() const { return tree_; }
  const SourceRange& range() const { return tree_->range(); }
  int kind() const { return tree_->kind(); }
  std::string toString() const { return tree_->toString(); }

 protected:
  const TreeRef& subtree(size_t i) const { return tree_->tree(i); }
  void requireKind(int kind) const {
    KILN_INTERNAL_ASSERT(tree_->kind() == kind, "expected a ", kindToString(kind), " tree, got ",
                         kindToString(tree_->kind()));
  }
  void require(bool ok, const char* what) const {
    KILN_INTERNAL_ASSERT(ok, "expected ", what, " tree, got ", kindToString(tree_->kind()));
  }

  TreeRef tree_;
};

template <typename T>
class List : public TreeView {
 public:
  explicit List(TreeRef tree) : TreeView(std::move(tree)) { requireKind(TK_LIST); }
  size_t size() const { return tree_->trees().size(); }
  bool empty() const { return size() == 0; }
  T operator[](size_t i) const { return T(subtree(i)); }

  class Iterator {
   public:
    Iterator(TreeList::const_iterator it) : it_(it) {}
    T operator*() const { return T(*it_); }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return it_ != other.it_; }

   private:
    TreeList::const_iterator it_;
  };
  Iterator begin() const { return Iterator(tree_->trees().begin()); }
  Iterator end() const { return Iterator(tree_->trees().end()); }
};

template <typename T>
class Maybe : public TreeView {
 public:
  explicit Maybe(TreeRef tree) : TreeView(std::move(tree)) { requireKind(TK_OPTION); }
  bool present() const { return !tree_->trees().empty(); }
  T get() const { return T(subtree(0)); }
};

class Ident : public TreeView {
 public:
  explicit Ident(TreeRef tree) : TreeView(std::move(tree)) { requireKind(TK_IDENT); }
  const std::string& name() const { return subtree(0)->stringValue(); }
};

class Expr : public TreeView {
 public:
  explicit Expr(TreeRef tree) : TreeView(std::move(tree)) { require(isExprKind(kind()), "an expression"); }
};

class Stmt : public TreeView {
 public:
  explicit Stmt(TreeRef tree) : TreeView(std::move(tree)) { require(isStmtKind(kind()), "a statement"); }
};

// Each class body opens inside KILN_VIEW, which clang-format cannot see.
// clang-format off
#define KILN_VIEW(Name, Base, KIND) \
  class Name : public Base {        \
   public:                          \
    explicit Name(TreeRef tree) : Base(std::move(tree)) { requireKind(KIND); }

KILN_VIEW(Var, Expr, TK_VAR)
  Ident name() const { return Ident(subtree(0)); }
};
KILN_VIEW(Const, Expr, TK_CONST)
  const std::string& text() const { return subtree(0)->stringValue(); }
  bool isFloatingPoint() const { return isFloatLiteral(text()); }
  bool isIntegral() const { return !isFloatingPoint(); }
  // The parser rejects integer literals beyond int64.
  int64_t asInt() const { return parseIntLiteral(text()).value_or(0); }
  double asDouble() const;
};
KILN_VIEW(StringLiteral, Expr, TK_STRINGLITERAL)
  const std::string& text() const { return subtree(0)->stringValue(); }
};
// A keyword argument `name=value` (PyTorch calls it Attribute).
KILN_VIEW(Attribute, TreeView, TK_KWARG)
  Ident name() const { return Ident(subtree(0)); }
  Expr value() const { return Expr(subtree(1)); }
};
KILN_VIEW(Apply, Expr, TK_APPLY)
  Expr callee() const { return Expr(subtree(0)); }
  List<Expr> inputs() const { return List<Expr>(subtree(1)); }
  List<Attribute> attributes() const { return List<Attribute>(subtree(2)); }
};
// Attribute access `value.selector`.
KILN_VIEW(Select, Expr, '.')
  Expr value() const { return Expr(subtree(0)); }
  Ident selector() const { return Ident(subtree(1)); }
};
KILN_VIEW(Subscript, Expr, TK_SUBSCRIPT)
  Expr value() const { return Expr(subtree(0)); }
  List<Expr> subscriptExprs() const { return List<Expr>(subtree(1)); }
};
KILN_VIEW(SliceExpr, Expr, TK_SLICE_EXPR)
  Maybe<Expr> start() const { return Maybe<Expr>(subtree(0)); }
  Maybe<Expr> end() const { return Maybe<Expr>(subtree(1)); }
  Maybe<Expr> step() const { return Maybe<Expr>(subtree(2)); }
};
KILN_VIEW(ListLiteral, Expr, TK_LIST_LITERAL)
  List<Expr> inputs() const { return List<Expr>(subtree(0)); }
};
KILN_VIEW(TupleLiteral, Expr, TK_TUPLE_LITERAL)
  List<Expr> inputs() const { return List<Expr>(subtree(0)); }
};
KILN_VIEW(DictLiteral, Expr, TK_DICT_LITERAL)
  List<Expr> keyInputs() const { return List<Expr>(subtree(0)); }
  List<Expr> valueInputs() const { return List<Expr>(subtree(1)); }
};
KILN_VIEW(ListComp, Expr, TK_LIST_COMP)
  Expr elt() const { return Expr(subtree(0)); }
  Expr target() const { return Expr(subtree(1)); }
  Expr iter() const { return Expr(subtree(2)); }
  Maybe<Expr> cond() const { return Maybe<Expr>(subtree(3)); }
};
KILN_VIEW(DictComp, Expr, TK_DICT_COMP)
  Expr key() const { return Expr(subtree(0)); }
  Expr value() const { return Expr(subtree(1)); }
  Expr target() const { return Expr(subtree(2)); }
  Expr iter() const { return Expr(subtree(3)); }
  Maybe<Expr> cond() const { return Maybe<Expr>(subtree(4)); }
};
KILN_VIEW(TernaryIf, Expr, TK_IF_EXPR)
  Expr cond() const { return Expr(subtree(0)); }
  Expr trueExpr() const { return Expr(subtree(1)); }
  Expr falseExpr() const { return Expr(subtree(2)); }
};
KILN_VIEW(Starred, Expr, TK_STARRED)
  Expr expr() const { return Expr(subtree(0)); }
};
#undef KILN_VIEW
// clang-format on

class BinOp : public Expr {
 public:
  explicit BinOp(TreeRef tree) : Expr(std::move(tree)) { require(isBinaryOpKind(kind()), "a binary operator"); }
  Expr lhs() const { return Expr(subtree(0)); }
  Expr rhs() const { return Expr(subtree(1)); }
};

class UnaryOp : public Expr {
 public:
  explicit UnaryOp(TreeRef tree) : Expr(std::move(tree)) { require(isUnaryOpKind(kind()), "a unary operator"); }
  Expr operand() const { return Expr(subtree(0)); }
};

class ChainCompare : public Expr {
 public:
  explicit ChainCompare(TreeRef tree) : Expr(std::move(tree)) { requireKind(TK_CHAIN_COMPARE); }
  List<BinOp> comparisons() const { return List<BinOp>(subtree(0)); }
};

// Each class body opens inside KILN_VIEW, which clang-format cannot see.
// clang-format off
#define KILN_VIEW(Name, Base, KIND) \
  class Name : public Base {        \
   public:                          \
    explicit Name(TreeRef tree) : Base(std::move(tree)) { requireKind(KIND); }

KILN_VIEW(Param, TreeView, TK_PARAM)
  Ident ident() const { return Ident(subtree(0)); }
  Maybe<Expr> type() const { return Maybe<Expr>(subtree(1)); }
  Maybe<Expr> defaultValue() const { return Maybe<Expr>(subtree(2)); }
  bool kwargOnly() const { return subtree(3)->kind() == TK_TRUE; }
};
KILN_VIEW(Decl, TreeView, TK_DECL)
  List<Param> params() const { return List<Param>(subtree(0)); }
  Maybe<Expr> returnType() const { return Maybe<Expr>(subtree(1)); }
};
KILN_VIEW(Def, Stmt, TK_DEF)
  Ident name() const { return Ident(subtree(0)); }
  Decl decl() const { return Decl(subtree(1)); }
  List<Stmt> statements() const { return List<Stmt>(subtree(2)); }
  List<Expr> decorators() const { return List<Expr>(subtree(3)); }
};
KILN_VIEW(ClassDef, Stmt, TK_CLASS)
  Ident name() const { return Ident(subtree(0)); }
  List<Expr> bases() const { return List<Expr>(subtree(1)); }
  List<Stmt> body() const { return List<Stmt>(subtree(2)); }
};
KILN_VIEW(If, Stmt, TK_IF)
  Expr cond() const { return Expr(subtree(0)); }
  List<Stmt> trueBranch() const { return List<Stmt>(subtree(1)); }
  List<Stmt> falseBranch() const { return List<Stmt>(subtree(2)); }
};
KILN_VIEW(While, Stmt, TK_WHILE)
  Expr cond() const { return Expr(subtree(0)); }
  List<Stmt> body() const { return List<Stmt>(subtree(1)); }
};
KILN_VIEW(For, Stmt, TK_FOR)
  List<Expr> targets() const { return List<Expr>(subtree(0)); }
  List<Expr> itrs() const { return List<Expr>(subtree(1)); }
  List<Stmt> body() const { return List<Stmt>(subtree(2)); }
};
KILN_VIEW(Assign, Stmt, TK_ASSIGN)
  List<Expr> lhsList() const { return List<Expr>(subtree(0)); }
  Maybe<Expr> rhs() const { return Maybe<Expr>(subtree(1)); }
  Maybe<Expr> type() const { return Maybe<Expr>(subtree(2)); }
};
KILN_VIEW(AugAssign, Stmt, TK_AUG_ASSIGN)
  Expr lhs() const { return Expr(subtree(0)); }
  // The binary operator kind: '+' for +=, TK_POW for **=.
  int augOp() const { return subtree(1)->kind(); }
  Expr rhs() const { return Expr(subtree(2)); }
};
KILN_VIEW(Return, Stmt, TK_RETURN)
  Maybe<Expr> expr() const { return Maybe<Expr>(subtree(0)); }
};
KILN_VIEW(Raise, Stmt, TK_RAISE)
  Maybe<Expr> expr() const { return Maybe<Expr>(subtree(0)); }
  Maybe<Expr> cause() const { return Maybe<Expr>(subtree(1)); }
};
KILN_VIEW(Assert, Stmt, TK_ASSERT)
  Expr test() const { return Expr(subtree(0)); }
  Maybe<Expr> msg() const { return Maybe<Expr>(subtree(1)); }
};
KILN_VIEW(WithItem, TreeView, TK_WITH_ITEM)
  Expr target() const { return Expr(subtree(0)); }
  Maybe<Expr> var() const { return Maybe<Expr>(subtree(1)); }
};
KILN_VIEW(With, Stmt, TK_WITH)
  List<WithItem> targets() const { return List<WithItem>(subtree(0)); }
  List<Stmt> body() const { return List<Stmt>(subtree(1)); }
};
KILN_VIEW(Delete, Stmt, TK_DELETE)
  List<Expr> targets() const { return List<Expr>(subtree(0)); }
};
KILN_VIEW(ExprStmt, Stmt, TK_EXPR_STMT)
  Expr expr() const { return Expr(subtree(0)); }
};
KILN_VIEW(Pass, Stmt, TK_PASS)
};
KILN_VIEW(Break, Stmt, TK_BREAK)
};
KILN_VIEW(Continue, Stmt, TK_CONTINUE)
};
// `name as asname` in imports; name is dotted ("torch.nn").
KILN_VIEW(Alias, TreeView, TK_ALIAS)
  Ident name() const { return Ident(subtree(0)); }
  Maybe<Ident> asName() const { return Maybe<Ident>(subtree(1)); }
};
KILN_VIEW(Import, Stmt, TK_IMPORT)
  List<Alias> names() const { return List<Alias>(subtree(0)); }
};
KILN_VIEW(ImportFrom, Stmt, TK_IMPORT_FROM)
  Ident module() const { return Ident(subtree(0)); }
  List<Alias> names() const { return List<Alias>(subtree(1)); }
};
#undef KILN_VIEW
// clang-format on

}  // namespace kiln
