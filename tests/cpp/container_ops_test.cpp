// The list, dict and string operators through the registry and a Stack:
// aliasing of shared lists and dicts, element types of results, and the
// vararg string formatting that needs a graph node.
#include <gtest/gtest.h>

#include "kiln/core/operator.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/tensor/factory.h"

using namespace kiln;

namespace {

// Runs the operator `qualified` ("aten::append.t") on `stack`.
Stack run(const std::string& qualified, Stack stack) {
  auto dot = qualified.find('.', qualified.find("::"));
  std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
  OperatorPtr op = findOperator(Symbol::fromQualString(qualified.substr(0, dot)), overload);
  if (!op) throw std::runtime_error("no operator " + qualified);
  op->operation()(stack);
  return stack;
}

IValue ints(std::vector<int64_t> values) { return IValue(values); }

std::vector<int64_t> intsOf(const IValue& v) { return v.toIntVector(); }

std::string errorOf(const std::string& qualified, Stack stack) {
  try {
    run(qualified, std::move(stack));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

IValue strDict(std::vector<std::pair<std::string, int64_t>> items) {
  auto dict = makeIntrusive<DictObj>(StringType::get(), IntType::get());
  for (auto& [k, v] : items) dict->insertOrAssign(IValue(k), IValue(v));
  return IValue(std::move(dict));
}

Tensor scalarTensor(double v) { return full({}, Scalar(v), ScalarType::Float); }

}  // namespace

TEST(ContainerOps, InPlaceListOpsMutateTheSharedList) {
  IValue list = ints({3, 1, 2});
  IValue alias = list;  // another holder of the same ListObj, as a graph value used twice
  Stack out = run("aten::append.t", {list, IValue(int64_t{7})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is(list)) << "append returns the list it was given";
  EXPECT_EQ(intsOf(alias), (std::vector<int64_t>{3, 1, 2, 7}));

  run("aten::sort.int", {list, IValue(false)});
  EXPECT_EQ(intsOf(alias), (std::vector<int64_t>{1, 2, 3, 7}));
  run("aten::insert.t", {list, IValue(int64_t{-1}), IValue(int64_t{5})});
  run("aten::_set_item.t", {list, IValue(int64_t{0}), IValue(int64_t{9})});
  EXPECT_EQ(intsOf(alias), (std::vector<int64_t>{9, 2, 3, 5, 7}));
  Stack popped = run("aten::pop.t", {list, IValue(int64_t{1})});
  EXPECT_EQ(popped[0].toInt(), 2);
  run("aten::Delete.t", {list, IValue(int64_t{-1})});
  run("aten::remove.int", {list, IValue(int64_t{3})});
  run("aten::reverse.t", {list});
  EXPECT_EQ(intsOf(alias), (std::vector<int64_t>{5, 9}));
  run("aten::extend.t", {list, list});
  EXPECT_EQ(intsOf(alias), (std::vector<int64_t>{5, 9, 5, 9}));
  Stack added = run("aten::add_.t", {list, ints({1})});
  EXPECT_TRUE(added[0].is(list));
  run("aten::mul_.t", {list, IValue(int64_t{0})});
  run("aten::clear.t", {list});
  EXPECT_TRUE(alias.toListRef().elements.empty());
}

TEST(ContainerOps, NewListsAreNotAliases) {
  IValue list = ints({1, 2});
  for (const char* op : {"aten::copy.t", "aten::list.t"}) {
    Stack out = run(op, {list});
    EXPECT_FALSE(out[0].is(list)) << op;
    run("aten::append.t", {out[0], IValue(int64_t{3})});
    EXPECT_EQ(intsOf(list), (std::vector<int64_t>{1, 2})) << op;
  }
  // min(l, r) returns one of its arguments itself; equal lists give r.
  IValue l = ints({1, 2}), r = ints({1, 2});
  EXPECT_TRUE(run("prim::min.int_list", {l, r})[0].is(r));
  IValue bigger = ints({1, 3});
  EXPECT_TRUE(run("prim::max.int_list", {bigger, r})[0].is(bigger));
}

TEST(ContainerOps, ResultListsCarryTheElementType) {
  IValue floats = IValue::list(FloatType::get(), {});
  EXPECT_EQ(run("aten::add.t", {floats, floats})[0].toListRef().element_type->kind(), TypeKind::Float);
  EXPECT_EQ(run("aten::slice.t", {floats, IValue(), IValue(), IValue(int64_t{1})})[0].toListRef().element_type->kind(),
            TypeKind::Float);
  EXPECT_EQ(run("aten::mul.left_t", {floats, IValue(int64_t{3})})[0].toListRef().element_type->kind(), TypeKind::Float);
  EXPECT_EQ(run("aten::sorted.float", {floats})[0].toListRef().element_type->kind(), TypeKind::Float);
  EXPECT_EQ(run("aten::list", {IValue("ab")})[0].toStringVector(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(run("aten::split.str", {IValue("a b"), IValue(), IValue(int64_t{-1})})[0].toListRef().element_type->kind(),
            TypeKind::String);

  IValue dict = strDict({{"a", 1}, {"b", 2}});
  EXPECT_EQ(run("aten::keys.str", {dict})[0].toListRef().element_type->kind(), TypeKind::String);
  EXPECT_EQ(run("aten::values.str", {dict})[0].toListRef().element_type->kind(), TypeKind::Int);
  IValue items = run("aten::items.str", {dict})[0];
  EXPECT_EQ(items.toListRef().element_type->str(), "(str, int)");
  EXPECT_EQ(items.toListRef().elements[1].toTupleRef().elements[0].toStringRef(), "b");
  IValue rebuilt = run("aten::dict.str", {items})[0];
  EXPECT_EQ(rebuilt.type()->str(), "Dict(str, int)");
  EXPECT_EQ(rebuilt, dict);
  EXPECT_EQ(run("aten::dict", {})[0].type()->str(), "Dict(str, Tensor)");
}

TEST(ContainerOps, ListErrorsNameThePythonException) {
  EXPECT_THROW(run("aten::__getitem__.t", {ints({1}), IValue(int64_t{1})}), IndexError);
  EXPECT_THROW(run("aten::__getitem__.t", {ints({1}), IValue(int64_t{-2})}), IndexError);
  EXPECT_NE(errorOf("aten::pop.t", {ints({}), IValue(int64_t{-1})}).find("pop from empty list"), std::string::npos);
  EXPECT_NE(errorOf("aten::index.list_int", {ints({1}), IValue(int64_t{4})}).find("'4' is not in list"),
            std::string::npos);
  EXPECT_NE(errorOf("aten::remove.int", {ints({1}), IValue(int64_t{4})}).find("x not in list"), std::string::npos);
  EXPECT_NE(errorOf("prim::min.self_int", {ints({})}).find("min() arg is an empty sequence"), std::string::npos);
  EXPECT_NE(errorOf("aten::slice.t", {ints({1}), IValue(), IValue(), IValue(int64_t{0})}).find("non-zero step"),
            std::string::npos);
  EXPECT_NE(errorOf("aten::len.Tensor", {IValue(scalarTensor(1))}).find("0-d tensor"), std::string::npos);
}

TEST(ContainerOps, SortIsStableInBothDirections) {
  // Equal tensors keep their order, reversed or not (Python's list.sort).
  Tensor a = scalarTensor(1), b = scalarTensor(1), c = scalarTensor(0);
  IValue list(std::vector<Tensor>{a, b, c});
  run("aten::sort.Tensor", {list, IValue(false)});
  auto sorted = list.toTensorVector();
  EXPECT_TRUE(sorted[0].implPtr() == c.implPtr() && sorted[1].implPtr() == a.implPtr() &&
              sorted[2].implPtr() == b.implPtr());
  run("aten::sort.Tensor", {list, IValue(true)});
  sorted = list.toTensorVector();
  EXPECT_TRUE(sorted[0].implPtr() == a.implPtr() && sorted[1].implPtr() == b.implPtr() &&
              sorted[2].implPtr() == c.implPtr());
  // Tuples sort lexicographically; lists of lists are not sortable.
  IValue tuples = IValue::list(
      TupleType::create({IntType::get(), StringType::get()}),
      {IValue::tuple({int64_t{2}, "a"}), IValue::tuple({int64_t{1}, "z"}), IValue::tuple({int64_t{1}, "b"})});
  run("aten::sort.any", {tuples, IValue(false)});
  EXPECT_EQ(tuples.toListRef().elements[0].toTupleRef().elements[1].toStringRef(), "b");
  EXPECT_EQ(tuples.toListRef().elements[2].toTupleRef().elements[0].toInt(), 2);
  IValue nested = IValue::list(ListType::ofInts(), {ints({2}), ints({1})});
  EXPECT_THROW(run("aten::sort.any", {nested, IValue(false)}), Error);
}

TEST(ContainerOps, DictsAreOrderedSharedAndKeyedByTensorIdentity) {
  IValue dict = strDict({{"a", 1}, {"b", 2}});
  IValue alias = dict;
  run("aten::_set_item.str", {dict, IValue("c"), IValue(int64_t{3})});
  EXPECT_EQ(run("aten::setdefault.str", {dict, IValue("a"), IValue(int64_t{9})})[0].toInt(), 1);
  EXPECT_EQ(run("aten::setdefault.str", {dict, IValue("d"), IValue(int64_t{4})})[0].toInt(), 4);
  EXPECT_EQ(run("aten::pop.Dict_default_str", {dict, IValue("zz"), IValue(int64_t{-1})})[0].toInt(), -1);
  EXPECT_EQ(run("aten::pop.Dict_str", {dict, IValue("b")})[0].toInt(), 2);
  IValue item = run("aten::popitem.str", {dict})[0];  // the first item, as 1.13 pops
  EXPECT_EQ(item.toTupleRef().elements[0].toStringRef(), "a");
  EXPECT_EQ(run("aten::keys.str", {alias})[0].toStringVector(), (std::vector<std::string>{"c", "d"}));
  run("aten::update.str", {dict, dict});
  EXPECT_EQ(run("aten::len.Dict_str", {alias})[0].toInt(), 2);
  EXPECT_NE(errorOf("aten::__getitem__.Dict_str", {dict, IValue("q")}).find("KeyError: q"), std::string::npos);
  EXPECT_NE(errorOf("aten::Delete.Dict_str", {dict, IValue("q")}).find("KeyError"), std::string::npos);
  EXPECT_TRUE(run("aten::get.str", {dict, IValue("q")})[0].isNone());
  IValue copy = run("aten::copy.Dict_str", {dict})[0];
  run("aten::clear.str", {dict});
  EXPECT_EQ(alias.toDictRef().size(), 0u);
  EXPECT_EQ(copy.toDictRef().size(), 2u);

  Tensor k1 = scalarTensor(1), k2 = scalarTensor(1);
  IValue by_tensor(makeIntrusive<DictObj>(TensorType::get(), IntType::get()));
  run("aten::_set_item.Tensor", {by_tensor, IValue(k1), IValue(int64_t{1})});
  EXPECT_TRUE(run("aten::__contains__.Tensor", {by_tensor, IValue(k1)})[0].toBool());
  EXPECT_FALSE(run("aten::__contains__.Tensor", {by_tensor, IValue(k2)})[0].toBool());
}

namespace {

// Runs the one `kind` node of `ir` with `inputs` on the stack.
Stack runNode(const char* ir, const char* kind, Stack inputs) {
  auto graph = parseIR(ir);
  for (Node* node : graph->nodes()) {
    if (node->kind() == Symbol::fromQualString(kind)) {
      Operation op = node->getOperator().operationFor(*node);
      op(inputs);
      return inputs;
    }
  }
  throw std::runtime_error(std::string("no ") + kind + " node");
}

constexpr const char* kFormat2 = R"IR(graph(%f : str, %a : int, %b : float):
  %r : str = aten::format(%f, %a, %b)
  return (%r)
)IR";

}  // namespace

TEST(ContainerOps, FormatTakesItsArgumentCountFromTheNode) {
  // Expected texts are torch 1.13's for the same calls.
  Stack out = runNode(kFormat2, "aten::format", {IValue("{} and {}"), IValue(int64_t{1}), IValue(2.0)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].toStringRef(), "1 and 2.");
  // Extra arguments are ignored, "{0}" is text; values below the format stay.
  out = runNode(kFormat2, "aten::format", {IValue(int64_t{42}), IValue("{0}{}"), IValue(int64_t{7}), IValue(0.5)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].toInt(), 42);
  EXPECT_EQ(out[1].toStringRef(), "{0}7");
  try {
    runNode(kFormat2, "aten::format", {IValue("{}{}{}"), IValue(int64_t{1}), IValue(2.0)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Too few arguments for format string: {}{}{}"), std::string::npos);
  }
  auto list_graph = R"IR(graph(%f : str, %l : Tensor[]):
  %r : str = aten::format(%f, %l)
  return (%r)
)IR";
  out = runNode(list_graph, "aten::format",
                {IValue("x{}"), IValue(std::vector<Tensor>{full({1}, Scalar(1.5), ScalarType::Float)})});
  EXPECT_EQ(out[0].toStringRef(), "x[ 1.5000\n[ CPUFloatType{1} ]]");
}

TEST(ContainerOps, PercentFormat) {
  auto ir = R"IR(graph(%f : str, %t : (int, float, float, float, float, int)):
  %r : str = aten::percentFormat(%f, %t)
  return (%r)
)IR";
  auto args = IValue::tuple({int64_t{3}, 2.5, 2.5, 2.5, 2.5, int64_t{65}});
  Stack out = runNode(ir, "aten::percentFormat", {IValue("%d %s %f %e %E %c %%"), args});
  EXPECT_EQ(out[0].toStringRef(), "3 2.5 2.500000 2.500000e+00 2.500000E+00 A %");
  auto fails = [&](const char* format, IValue value, const char* message) {
    try {
      runNode(ir, "aten::percentFormat", {IValue(format), std::move(value)});
      ADD_FAILURE() << format << ": expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  fails("%d", args, "Too many arguments");
  fails("%d %d", IValue(int64_t{1}), "Too few arguments");
  fails("50%", IValue(int64_t{1}), "Incomplete format specifier");
  fails("%q", IValue(int64_t{1}), "%q is not supported");
  fails("%d", IValue("x"), "requires a number");
  out = runNode(ir, "aten::percentFormat", {IValue("%d%%"), IValue(7.9)});
  EXPECT_EQ(out[0].toStringRef(), "7%");
}

TEST(ContainerOps, StringDefaultsAreUnescaped) {
  // `str chars=" \n\t\f\v"` in the schema text is whitespace, not letters.
  OperatorPtr strip = findOperator(Symbol::aten("strip"), "");
  ASSERT_TRUE(strip);
  EXPECT_EQ(strip->schema().arguments()[1].default_value->toStringRef(), " \n\t\f\v");
  EXPECT_EQ(run("aten::strip", {IValue("\tnan\n"), IValue(" \n\t\f\v")})[0].toStringRef(), "nan");
}

TEST(ContainerOps, ListKernelsLeaveNoReferencesBehind) {
  IValue list = ints({1, 2, 3});
  EXPECT_EQ(run("aten::sum.int", {list})[0].toInt(), 6);
  EXPECT_EQ(run("aten::len.t", {list})[0].toInt(), 3);
  EXPECT_EQ(run("aten::__getitem__.t", {list, IValue(int64_t{-1})})[0].toInt(), 3);
  EXPECT_EQ(list.toListRef().useCount(), 1u);
}
