// Lexer, Tree and parser of the script frontend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/frontend/lexer.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/tree_views.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

std::vector<int> kinds(const std::string& text) {
  Lexer lexer(std::make_shared<const Source>(text));
  std::vector<int> out;
  for (const Token& t : lexer.tokens()) out.push_back(t.kind);
  return out;
}

std::vector<Token> tokens(const std::string& text) { return Lexer(std::make_shared<const Source>(text)).tokens(); }

std::string expr(const std::string& text) { return parseExpression(text)->toString(); }

std::string stmts(const std::string& text) {
  std::string out;
  for (const TreeRef& t : parseSource(text)) {
    if (!out.empty()) out += '\n';
    out += t->toString();
  }
  return out;
}

// The body of `def f():` holding `body` (one line), printed.
std::string stmt(const std::string& line) {
  auto trees = parseSource("def f():\n    " + line + "\n");
  return Def(trees.at(0)).statements()[0].toString();
}

std::string errorOf(const std::string& text, std::optional<std::string> file = std::nullopt) {
  try {
    parseSource(text, std::move(file));
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

const std::vector<int> kNL{TK_NEWLINE};

TEST(FrontendLexer, IndentationStack) {
  EXPECT_EQ(kinds("if x:\n  a\n  b\nc\n"),
            (std::vector<int>{TK_IF, TK_IDENT, ':', TK_NEWLINE, TK_INDENT, TK_IDENT, TK_NEWLINE, TK_IDENT, TK_NEWLINE,
                              TK_DEDENT, TK_IDENT, TK_NEWLINE, TK_EOF}));
  // Two levels closed at once, blank and comment lines ignored, no final newline.
  EXPECT_EQ(kinds("a:\n b:\n\n   # c\n   c\nd"),
            (std::vector<int>{TK_IDENT, ':', TK_NEWLINE, TK_INDENT, TK_IDENT, ':', TK_NEWLINE, TK_INDENT, TK_IDENT,
                              TK_NEWLINE, TK_DEDENT, TK_DEDENT, TK_IDENT, TK_NEWLINE, TK_EOF}));
  // Open levels are closed at the end.
  EXPECT_EQ(kinds("a:\n  b"),
            (std::vector<int>{TK_IDENT, ':', TK_NEWLINE, TK_INDENT, TK_IDENT, TK_NEWLINE, TK_DEDENT, TK_EOF}));
  // A tab counts to the next multiple of 8.
  EXPECT_EQ(kinds("a:\n\tb\n        c\n"), (std::vector<int>{TK_IDENT, ':', TK_NEWLINE, TK_INDENT, TK_IDENT, TK_NEWLINE,
                                                             TK_IDENT, TK_NEWLINE, TK_DEDENT, TK_EOF}));
  EXPECT_EQ(kinds(""), std::vector<int>{TK_EOF});
}

TEST(FrontendLexer, BracketsAndContinuationsJoinLines) {
  EXPECT_EQ(kinds("f(a,\n      b)\nc"),
            (std::vector<int>{TK_IDENT, '(', TK_IDENT, ',', TK_IDENT, ')', TK_NEWLINE, TK_IDENT, TK_NEWLINE, TK_EOF}));
  EXPECT_EQ(kinds("[{(\n)}]\n"), (std::vector<int>{'[', '{', '(', ')', '}', ']', TK_NEWLINE, TK_EOF}));
  EXPECT_EQ(kinds("a = 1 + \\\n      2\n"),
            (std::vector<int>{TK_IDENT, '=', TK_NUMBER, '+', TK_NUMBER, TK_NEWLINE, TK_EOF}));
}

TEST(FrontendLexer, Operators) {
  EXPECT_EQ(kinds("** // << >> == != <= >= -> ... @ ~ ^ | & %"),
            (std::vector<int>{TK_POW, TK_FLOOR_DIV, TK_LSHIFT, TK_RSHIFT, TK_EQ, TK_NE, TK_LE, TK_GE, TK_ARROW, TK_DOTS,
                              '@', '~', '^', '|', '&', '%', TK_NEWLINE, TK_EOF}));
  auto ts = tokens("a **= b //= c @= d >>= e += f");
  std::vector<std::string> ops;
  for (const Token& t : ts) {
    if (t.kind == TK_AUG_ASSIGN) ops.push_back(t.text);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"**=", "//=", "@=", ">>=", "+="}));
}

TEST(FrontendLexer, KeywordsAndIdentifiers) {
  EXPECT_EQ(kinds("def if elif else for in while return not is and or None True False pass x_1"),
            (std::vector<int>{TK_DEF, TK_IF, TK_ELIF, TK_ELSE, TK_FOR, TK_IN, TK_WHILE, TK_RETURN, TK_NOT, TK_IS,
                              TK_AND, TK_OR, TK_NONE, TK_TRUE, TK_FALSE, TK_PASS, TK_IDENT, TK_NEWLINE, TK_EOF}));
  EXPECT_EQ(tokens("inf")[0].kind, TK_IDENT);
}

TEST(FrontendLexer, Numbers) {
  for (const char* n : {"0", "00", "123", "1_000", "0x1F", "0o17", "0b101", "0X_ff", "1.", ".5", "1e-3", "1.5e+10",
                        "1_0.2_5", "1j", "2.5e3j", "012j"}) {
    auto ts = tokens(n);
    EXPECT_EQ(ts[0].kind, TK_NUMBER) << n;
    EXPECT_EQ(ts[0].text, n);
  }
  for (const char* bad : {"012", "1__0", "1_", "0x", "1e", "0x1j", "1jj", "0b2", "12abc"}) {
    EXPECT_THROW(tokens(bad), Error) << bad;
  }
}

TEST(FrontendLexer, Strings) {
  EXPECT_EQ(tokens("'a\\'b'")[0].text, "a'b");
  EXPECT_EQ(tokens("\"t\\tn\\n\\\\\"")[0].text, "t\tn\n\\");
  EXPECT_EQ(tokens("'\\x41\\101\\u00e9'")[0].text, "AA\xc3\xa9");
  EXPECT_EQ(tokens("'\\d'")[0].text, "\\d");  // unknown escapes stay
  EXPECT_EQ(tokens("r'a\\n'")[0].text, "a\\n");
  EXPECT_EQ(tokens("'''a\nb'''")[0].text, "a\nb");
  EXPECT_EQ(tokens("\"\"\"x\"y\"\"\"")[0].text, "x\"y");
  EXPECT_EQ(tokens("u'x'")[0].text, "x");
  EXPECT_THROW(tokens("'abc"), Error);
  EXPECT_THROW(tokens("'a\nb'"), Error);
  EXPECT_THROW(tokens("'''abc"), Error);
  EXPECT_THROW(tokens("b'x'"), Error);
  EXPECT_THROW(tokens("'\\x4'"), Error);
}

// f"a{x}b{y}" is read as ("a{}b{}".format(x, y)), as 1.13's Python frontend does.
TEST(FrontendLexer, FormattedStringsAreFormatCalls) {
  auto ts = tokens("f'a{x}{{b}}{y[0]}'");
  std::vector<int> expected = {'(',      TK_STRING, '.',       TK_IDENT, '(', TK_IDENT, ',',
                               TK_IDENT, '[',       TK_NUMBER, ']',      ')', ')'};
  std::vector<int> got;
  for (size_t i = 0; i < expected.size() && i < ts.size(); ++i) got.push_back(ts[i].kind);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(ts[1].text, "a{}{b}{}");
  EXPECT_EQ(ts[3].text, "format");
  EXPECT_EQ(tokens("f'plain'")[1].text, "plain");
  for (const char* bad : {"f'{x!r}'", "f'{x:3}'", "f'{x'", "f'x}'", "f'{}'", "f'{a\\b}'", "ff'x'", "f'{(x}'"}) {
    EXPECT_THROW(tokens(bad), Error) << bad;
  }
}

TEST(FrontendLexer, TypeCommentsAreTokensOtherCommentsVanish) {
  auto ts = tokens("def f(x):\n    # type: (int) -> int\n    # plain\n    return x\n");
  size_t found = 0;
  for (const Token& t : ts) {
    if (t.kind == TK_TYPE_COMMENT) {
      EXPECT_EQ(t.text, "(int) -> int");
      ++found;
    }
  }
  EXPECT_EQ(found, 1u);
  // Inside brackets, even type comments are dropped.
  EXPECT_EQ(kinds("f(a,  # type: int\n b)"),
            (std::vector<int>{TK_IDENT, '(', TK_IDENT, ',', TK_IDENT, ')', TK_NEWLINE, TK_EOF}));
}

TEST(FrontendLexer, ErrorsPointAtTheOffendingText) {
  EXPECT_EQ(errorOf("x = 1\ny = $\n"), "invalid character '$':\n  File \"<string>\", line 2\ny = $\n    ~ <--- HERE");
  EXPECT_EQ(errorOf("a = (1,\n", "m.py"), "'(' was never closed:\n  File \"m.py\", line 1\na = (1,\n    ~ <--- HERE");
  EXPECT_EQ(errorOf("a = (1]\n"),
            "closing parenthesis ']' does not match opening parenthesis '(':\n  File \"<string>\", line 1\na = (1]\n   "
            "   ~ <--- HERE");
  EXPECT_EQ(errorOf("if x:\n    a\n  b\n"),
            "unindent does not match any outer indentation level:\n  File \"<string>\", line 3\n  b\n~~ <--- HERE");
  EXPECT_NE(errorOf("a = 1 \\ b\n").find("line continuation"), std::string::npos);
  EXPECT_NE(errorOf(")\n").find("unmatched ')'"), std::string::npos);
}

TEST(FrontendTree, PrintsAsSExpression) {
  EXPECT_EQ(expr("z.sigmoid() - (x + y)"),
            "(- (apply (. (variable (ident z)) (ident sigmoid)) (list) (list)) (+ (variable (ident x)) (variable "
            "(ident y))))");
  EXPECT_EQ(stmts("def f(a):\n    return a + 1\n"),
            "(def (ident f) (decl (list (param (ident a) (option) (option) (False))) (option)) "
            "(list (return (option (+ (variable (ident a)) (const 1))))) (list))");
  EXPECT_EQ(expr("'a b\"'"), "(string_literal \"a b\\\"\")");
  EXPECT_EQ(expr("''"), "(string_literal \"\")");
}

TEST(FrontendTree, DepthIsLimited) {
  std::string chain = "a";
  for (int i = 0; i < 2000; ++i) chain += " + a";
  EXPECT_NE(errorOf("x = " + chain + "\n").find("nested too deeply"), std::string::npos);
  std::string parens = std::string(100000, '(') + "x" + std::string(100000, ')');
  EXPECT_NE(errorOf("x = " + parens + "\n").find("too many nested"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 300; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(300, ' ') + "pass\n";
  EXPECT_NE(errorOf(blocks).find("too many nested"), std::string::npos);
}

TEST(FrontendParser, Precedence) {
  EXPECT_EQ(expr("-2**2"), "(unary minus (** (const 2) (const 2)))");
  EXPECT_EQ(expr("2**-1"), "(** (const 2) (unary minus (const 1)))");
  EXPECT_EQ(expr("a**b**c"), "(** (variable (ident a)) (** (variable (ident b)) (variable (ident c))))");
  EXPECT_EQ(expr("1 - 2 - 3"), "(- (- (const 1) (const 2)) (const 3))");
  EXPECT_EQ(expr("1 + 2 * 3"), "(+ (const 1) (* (const 2) (const 3)))");
  EXPECT_EQ(expr("a // b % c @ d"),
            "(@ (% (// (variable (ident a)) (variable (ident b))) (variable (ident c))) (variable (ident d)))");
  EXPECT_EQ(expr("a | b ^ c & d << 1 + 2"),
            "(| (variable (ident a)) (^ (variable (ident b)) (& (variable (ident c)) (<< (variable (ident d)) (+ "
            "(const 1) (const 2))))))");
  EXPECT_EQ(expr("not a == b"), "(not (== (variable (ident a)) (variable (ident b))))");
  EXPECT_EQ(expr("a or b and not c"),
            "(or (variable (ident a)) (and (variable (ident b)) (not (variable (ident c)))))");
  EXPECT_EQ(expr("-a.b[0]"), "(unary minus (subscript (. (variable (ident a)) (ident b)) (list (const 0))))");
  EXPECT_EQ(expr("~x + +y"), "(+ (~ (variable (ident x))) (unary plus (variable (ident y))))");
  EXPECT_EQ(expr("a if b or c else d if e else f"),
            "(if_expr (or (variable (ident b)) (variable (ident c))) (variable (ident a)) "
            "(if_expr (variable (ident e)) (variable (ident d)) (variable (ident f))))");
  EXPECT_EQ(expr("x not in y"), "(not in (variable (ident x)) (variable (ident y)))");
  EXPECT_EQ(expr("x is not None"), "(is not (variable (ident x)) (None))");
  EXPECT_EQ(
      expr("a < b == c"),
      "(chain (list (< (variable (ident a)) (variable (ident b))) (== (variable (ident b)) (variable (ident c)))))");
  EXPECT_EQ(expr("(a < b) < c"), "(< (< (variable (ident a)) (variable (ident b))) (variable (ident c)))");
  EXPECT_THROW(expr("a == not b"), Error);
}

TEST(FrontendParser, ChainedComparisonsShareOperands) {
  ChainCompare chain(parseExpression("a < f(b) <= c"));
  auto cmps = chain.comparisons();
  ASSERT_EQ(cmps.size(), 2u);
  EXPECT_EQ(cmps[0].kind(), '<');
  EXPECT_EQ(cmps[1].kind(), TK_LE);
  EXPECT_EQ(cmps[0].rhs().tree(), cmps[1].lhs().tree());
}

TEST(FrontendParser, Literals) {
  EXPECT_EQ(expr("[1, 2.5, 'a', None, True, False, ...]"),
            "(list_literal (list (const 1) (const 2.5) (string_literal a) (None) (True) (False) (...)))");
  EXPECT_EQ(expr("(1,)"), "(tuple_literal (list (const 1)))");
  EXPECT_EQ(expr("()"), "(tuple_literal (list))");
  EXPECT_EQ(expr("(1)"), "(const 1)");
  EXPECT_EQ(expr("1, 2,"), "(tuple_literal (list (const 1) (const 2)))");
  EXPECT_EQ(expr("{'a': 1, 'b': 2,}"),
            "(dict_literal (list (string_literal a) (string_literal b)) (list (const 1) (const 2)))");
  EXPECT_EQ(expr("{}"), "(dict_literal (list) (list))");
  EXPECT_EQ(expr("'a' \"b\" '''c'''"), "(string_literal abc)");
  EXPECT_EQ(expr("[x * 2 for x in xs if x > 0]"),
            "(list_comp (* (variable (ident x)) (const 2)) (variable (ident x)) (variable (ident xs)) "
            "(option (> (variable (ident x)) (const 0))))");
  EXPECT_EQ(expr("[a for a, b in ps]"),
            "(list_comp (variable (ident a)) (tuple_literal (list (variable (ident a)) (variable (ident b)))) "
            "(variable (ident ps)) (option))");
  EXPECT_EQ(expr("{k: v for k, v in d.items()}"),
            "(dict_comp (variable (ident k)) (variable (ident v)) (tuple_literal (list (variable (ident k)) (variable "
            "(ident v)))) "
            "(apply (. (variable (ident d)) (ident items)) (list) (list)) (option))");
}

TEST(FrontendParser, ConstView) {
  Const c(parseExpression("0x_7fff_ffff_ffff_ffff"));
  EXPECT_FALSE(c.isFloatingPoint());
  EXPECT_EQ(c.asInt(), INT64_MAX);
  EXPECT_EQ(Const(parseExpression("0b1010")).asInt(), 10);
  EXPECT_EQ(Const(parseExpression("0o17")).asInt(), 15);
  EXPECT_TRUE(Const(parseExpression("1e3")).isFloatingPoint());
  EXPECT_DOUBLE_EQ(Const(parseExpression("1_0.5e1")).asDouble(), 105.0);
  EXPECT_DOUBLE_EQ(Const(parseExpression(".5")).asDouble(), 0.5);
  EXPECT_FALSE(Const(parseExpression("0xE")).isFloatingPoint());
  EXPECT_THROW(parseExpression("9223372036854775808"), Error);
}

TEST(FrontendParser, CallsSubscriptsAttributes) {
  EXPECT_EQ(expr("f(a, b=1, c=2,)"),
            "(apply (variable (ident f)) (list (variable (ident a))) (list (kwarg (ident b) (const 1)) (kwarg (ident "
            "c) (const 2))))");
  EXPECT_EQ(expr("a[1:2, ::3, None, ...]"),
            "(subscript (variable (ident a)) (list (slice (option (const 1)) (option (const 2)) (option)) "
            "(slice (option) (option) (option (const 3))) (None) (...)))");
  EXPECT_EQ(expr("a[:]"), "(subscript (variable (ident a)) (list (slice (option) (option) (option))))");
  EXPECT_EQ(expr("a[-1:]"),
            "(subscript (variable (ident a)) (list (slice (option (unary minus (const 1))) (option) (option))))");
  EXPECT_EQ(expr("torch.jit.annotate(List[int], [])"),
            "(apply (. (. (variable (ident torch)) (ident jit)) (ident annotate)) "
            "(list (subscript (variable (ident List)) (list (variable (ident int)))) (list_literal (list))) (list))");
  Apply apply(parseExpression("g(1, x=2)"));
  EXPECT_EQ(Var(apply.callee().tree()).name().name(), "g");
  EXPECT_EQ(apply.inputs().size(), 1u);
  EXPECT_EQ(apply.attributes()[0].name().name(), "x");
}

TEST(FrontendParser, Statements) {
  EXPECT_EQ(stmt("a = b = 1"), "(assign (list (variable (ident a)) (variable (ident b))) (option (const 1)) (option))");
  EXPECT_EQ(stmt("a, *b = c"),
            "(assign (list (tuple_literal (list (variable (ident a)) (starred (variable (ident b)))))) (option "
            "(variable (ident c))) (option))");
  EXPECT_EQ(stmt("x: List[int] = []"),
            "(assign (list (variable (ident x))) (option (list_literal (list))) (option (subscript (variable (ident "
            "List)) (list (variable (ident int))))))");
  EXPECT_EQ(stmt("x: int"), "(assign (list (variable (ident x))) (option) (option (variable (ident int))))");
  EXPECT_EQ(stmt("a[0] //= 2"), "(aug_assign (subscript (variable (ident a)) (list (const 0))) (//) (const 2))");
  EXPECT_EQ(stmt("self.x **= 2"), "(aug_assign (. (variable (ident self)) (ident x)) (**) (const 2))");
  EXPECT_EQ(stmt("return"), "(return (option))");
  EXPECT_EQ(stmt("return a, b"), "(return (option (tuple_literal (list (variable (ident a)) (variable (ident b))))))");
  EXPECT_EQ(stmt("raise"), "(raise (option) (option))");
  EXPECT_EQ(
      stmt("raise E('x') from e"),
      "(raise (option (apply (variable (ident E)) (list (string_literal x)) (list))) (option (variable (ident e))))");
  EXPECT_EQ(stmt("assert x, 'msg'"), "(assert (variable (ident x)) (option (string_literal msg)))");
  EXPECT_EQ(stmt("pass"), "(pass)");
  EXPECT_EQ(stmt("del d['k'], x"),
            "(del (list (subscript (variable (ident d)) (list (string_literal k))) (variable (ident x))))");
  EXPECT_EQ(stmt("'''doc'''"), "(expr_stmt (string_literal doc))");
  EXPECT_EQ(stmt("import torch.nn as nn, math"),
            "(import (list (alias (ident torch.nn) (option (ident nn))) (alias (ident math) (option))))");
  EXPECT_EQ(
      stmt("from typing import (List, Dict as D,)"),
      "(import_from (ident typing) (list (alias (ident List) (option)) (alias (ident Dict) (option (ident D)))))");
  EXPECT_EQ(stmt("from . import x"), "(import_from (ident .) (list (alias (ident x) (option))))");
  EXPECT_EQ(stmts("a = 1; b = 2;\n"),
            "(assign (list (variable (ident a))) (option (const 1)) (option))\n(assign (list (variable (ident b))) "
            "(option (const 2)) (option))");
}

TEST(FrontendParser, CompoundStatements) {
  EXPECT_EQ(stmts("if a:\n    x\nelif b:\n    y\nelse:\n    z\n"),
            "(if (variable (ident a)) (list (expr_stmt (variable (ident x)))) "
            "(list (if (variable (ident b)) (list (expr_stmt (variable (ident y)))) (list (expr_stmt (variable (ident "
            "z)))))))");
  EXPECT_EQ(stmts("while i < 3: i += 1\n"),
            "(while (< (variable (ident i)) (const 3)) (list (aug_assign (variable (ident i)) (+) (const 1))))");
  EXPECT_EQ(
      stmts("for i, (a, b) in enumerate(x):\n    break\n    continue\n"),
      "(for (list (tuple_literal (list (variable (ident i)) (tuple_literal (list (variable (ident a)) (variable (ident "
      "b))))))) "
      "(list (apply (variable (ident enumerate)) (list (variable (ident x))) (list))) (list (break) (continue)))");
  EXPECT_EQ(stmts("with torch.no_grad() as g, x:\n    pass\n"),
            "(with (list (with_item (apply (. (variable (ident torch)) (ident no_grad)) (list) (list)) (option "
            "(variable (ident g)))) "
            "(with_item (variable (ident x)) (option))) (list (pass)))");
  EXPECT_EQ(
      stmts("class A(B):\n    x: int\n    def f(self):\n        pass\n"),
      "(class (ident A) (list (variable (ident B))) (list (assign (list (variable (ident x))) (option) (option "
      "(variable (ident int)))) "
      "(def (ident f) (decl (list (param (ident self) (option) (option) (False))) (option)) (list (pass)) (list))))");
}

TEST(FrontendParser, Defs) {
  auto trees = parseSource(
      "@torch.jit.script\n@torch.jit.ignore\ndef f(x: Tensor, y: int = 2, *, z: float = 1.0) -> Tuple[int, int]:\n"
      "    '''doc'''\n    return x\n\ndef g():\n    pass\n");
  ASSERT_EQ(trees.size(), 2u);
  Def f(trees[0]);
  EXPECT_EQ(f.name().name(), "f");
  EXPECT_EQ(f.decorators().size(), 2u);
  auto params = f.decl().params();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[1].ident().name(), "y");
  EXPECT_TRUE(params[1].defaultValue().present());
  EXPECT_FALSE(params[1].kwargOnly());
  EXPECT_TRUE(params[2].kwargOnly());
  EXPECT_EQ(f.decl().returnType().get().toString(),
            "(subscript (variable (ident Tuple)) (list (variable (ident int)) (variable (ident int))))");
  EXPECT_EQ(f.statements().size(), 2u);
  EXPECT_EQ(Def(trees[1]).name().name(), "g");
}

TEST(FrontendParser, TypeCommentSignatures) {
  Def f(parseSource("def f(x, y):\n    # type: (int, Tensor) -> Tensor\n    return y\n").at(0));
  EXPECT_EQ(f.decl().params()[0].type().get().toString(), "(variable (ident int))");
  EXPECT_EQ(f.decl().params()[1].type().get().toString(), "(variable (ident Tensor))");
  EXPECT_EQ(f.decl().returnType().get().toString(), "(variable (ident Tensor))");
  Def m(parseSource("def forward(self, x):  # type: (List[int]) -> int\n    return 1\n").at(0));
  EXPECT_FALSE(m.decl().params()[0].type().present());
  EXPECT_EQ(m.decl().params()[1].type().get().toString(),
            "(subscript (variable (ident List)) (list (variable (ident int))))");
  EXPECT_NE(errorOf("def f(x, y):\n    # type: (int) -> int\n    pass\n").find("Number of type annotations (1)"),
            std::string::npos);
  // As in 1.13, the comment's types win over annotations, and `-> T` is optional.
  Def both(parseSource("def f(x: float) -> float:\n    # type: (int) -> int\n    pass\n").at(0));
  EXPECT_EQ(both.decl().params()[0].type().get().toString(), "(variable (ident int))");
  EXPECT_EQ(both.decl().returnType().get().toString(), "(variable (ident int))");
  Def no_return(parseSource("def f(x) -> int:\n    # type: (bool)\n    pass\n").at(0));
  EXPECT_EQ(no_return.decl().params()[0].type().get().toString(), "(variable (ident bool))");
  EXPECT_FALSE(no_return.decl().returnType().present());
  // Errors inside the comment point into the comment.
  EXPECT_EQ(errorOf("def f(x):\n    # type: (int) int\n    pass\n"),
            "expected '->' but found 'int' here:\n  File \"<string>\", line 2\n    # type: (int) int\n                 "
            " ~~~ <--- HERE");
  // An assignment's type comment is its annotation; `# type: ignore` is not.
  EXPECT_EQ(
      stmt("x = []  # type: List[int]"),
      "(assign (list (variable (ident x))) (option (list_literal (list))) (option (subscript (variable (ident List)) "
      "(list (variable (ident int))))))");
  EXPECT_EQ(stmt("x = []  # type: ignore"),
            "(assign (list (variable (ident x))) (option (list_literal (list))) (option))");
  EXPECT_EQ(stmt("x = not not y"),
            "(assign (list (variable (ident x))) (option (not (not (variable (ident y))))) (option))");
}

TEST(FrontendParser, RejectsWithPositions) {
  EXPECT_EQ(errorOf("def f(x):\n    return x +\n"),
            "expected an expression but found 'newline' here:\n  File \"<string>\", line 2\n    return x +\n           "
            "   ~ <--- HERE");
  EXPECT_EQ(errorOf("def f():\n    return lambda x: x\n"),
            "lambda expressions are not supported:\n  File \"<string>\", line 2\n    return lambda x: x\n           "
            "~~~~~~ <--- HERE");
  EXPECT_EQ(errorOf("x = {1, 2}\n"),
            "set literals are not supported:\n  File \"<string>\", line 1\nx = {1, 2}\n    ~~ <--- HERE");
  EXPECT_EQ(
      errorOf("f(x) = 1\n"),
      "unexpected expression on left-hand side of assignment:\n  File \"<string>\", line 1\nf(x) = 1\n~~~~ <--- HERE");
  struct Case {
    const char* source;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"while x:\n    pass\nelse:\n    pass\n", "else branches of while loops"},
           {"for x in y:\n    pass\nelse:\n    pass\n", "else branches of for loops"},
           {"global x\n", "'global' declarations"},
           {"try:\n    pass\n", "'try' statements"},
           {"x = (y := 1)\n", "assignment expressions"},
           {"f(*a)\n", "*args in calls"},
           {"f(**a)\n", "**kwargs in calls"},
           {"f(a=1, b)\n", "positional argument follows keyword argument"},
           {"def f(*args):\n    pass\n", "*args parameters"},
           {"def f(**kw):\n    pass\n", "**kwargs parameters"},
           {"def f(a=1, b):\n    pass\n", "non-default argument follows default"},
           {"def f(a, a):\n    pass\n", "duplicate argument 'a'"},
           {"x = (i for i in y)\n", "generator expressions"},
           {"x = [i for i in a for j in b]\n", "one 'for' clause"},
           {"a, b += 1\n", "illegal target for augmented assignment"},
           {"a, b: int = 1\n", "only a single target can be annotated"},
           {"*a = b\n", "starred assignment target must be in a list or tuple"},
           {"a, *b, *c = d\n", "multiple starred expressions"},
           {"  x = 1\n", "unexpected indent"},
           {"if x:\npass\n", "expected an indented block"},
           {"else:\n    pass\n", "'else' without a matching 'if'"},
           {"from m import *\n", "wildcard imports"},
           {"def f():\n    yield 1\n", "'yield' is not supported"},
           {"@dec\nclass A:\n    pass\n", "class decorators"},
           {"x = a[]\n", "expected an expression but found ']'"},
           {"1 +\n", "expected an expression"},
       }) {
    EXPECT_NE(errorOf(c.source).find(c.message), std::string::npos) << c.source << "\n" << errorOf(c.source);
  }
}

TEST(FrontendParser, LexerApi) {
  Lexer lexer(std::make_shared<const Source>("a + b"));
  EXPECT_EQ(lexer.cur().kind, TK_IDENT);
  EXPECT_EQ(lexer.lookahead().kind, '+');
  EXPECT_FALSE(lexer.nextIf('+'));
  EXPECT_EQ(lexer.next().text, "a");
  EXPECT_TRUE(lexer.nextIf('+'));
  EXPECT_EQ(lexer.expect(TK_IDENT).text, "b");
  EXPECT_THROW(lexer.expect(TK_IDENT), Error);
  EXPECT_EQ(kindToString(TK_DEF), "def");
  EXPECT_EQ(kindToString('+'), "+");
}

}  // namespace
}  // namespace kiln
