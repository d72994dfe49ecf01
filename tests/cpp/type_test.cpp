#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "kiln/core/ivalue.h"
#include "kiln/core/symbol.h"
#include "kiln/core/type.h"

using namespace kiln;

namespace {

std::string repr(const IValue& v) {
  std::ostringstream out;
  v.repr(out);
  return out.str();
}

std::string printed(const IValue& v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

TypePtr refined(std::vector<std::optional<int64_t>> sizes, std::optional<std::vector<std::optional<int64_t>>> strides,
                std::optional<ScalarType> dtype = ScalarType::Float) {
  VaryingShape stride_shape = strides ? VaryingShape(*strides) : VaryingShape(sizes.size());
  return TensorType::create(dtype, Device(DeviceType::CPU), VaryingShape(sizes), stride_shape, false);
}

}  // namespace

TEST(Symbol, BuiltinsAreConstantsUsableInSwitch) {
  static_assert(prim::If != prim::Loop);
  EXPECT_EQ(Symbol::fromQualString("prim::If"), prim::If);
  EXPECT_EQ(Symbol::attr("value"), attr::value);
  EXPECT_EQ(prim::Constant.toQualString(), "prim::Constant");
  EXPECT_EQ(aten::add.nsSymbol(), namespaces::aten);
  EXPECT_TRUE(Symbol::fromQualString("user::thing").isUser());
  EXPECT_TRUE(Symbol::onnx("Add").isOnnx());
  EXPECT_TRUE(Symbol::fromQualString("myns::op").isValid());
  EXPECT_FALSE(Symbol::fromQualString("myns::op").isAten());
  auto classify = [](Symbol s) {
    switch (s) {
      case prim::If: return 1;
      case prim::Loop: return 2;
      case aten::add: return 3;
      default: return 0;
    }
  };
  EXPECT_EQ(classify(Symbol::fromQualString("prim::Loop")), 2);
  EXPECT_EQ(classify(Symbol::aten("add")), 3);
  EXPECT_EQ(classify(Symbol::aten("mul_")), 0);
  EXPECT_THROW(Symbol::fromQualString("a b::c"), Error);
}

TEST(Types, PrintLikePyTorch) {
  EXPECT_EQ(irStr(*refined({2, 3}, std::vector<std::optional<int64_t>>{3, 1})),
            "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(irStr(*refined({std::nullopt, std::nullopt}, std::nullopt)), "Float(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(irStr(*refined({std::nullopt, 3}, std::vector<std::optional<int64_t>>{3, 1})),
            "Float(*, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(irStr(*refined({}, std::nullopt, ScalarType::Long)), "Long(requires_grad=0, device=cpu)");
  EXPECT_EQ(irStr(*TensorType::create(ScalarType::Float, std::nullopt, {}, {}, std::nullopt)), "FloatTensor");
  EXPECT_EQ(irStr(*TensorType::create(std::nullopt, Device(DeviceType::CPU), {}, {}, std::nullopt)),
            "Tensor(device=cpu)");
  EXPECT_EQ(irStr(*TensorType::get()->cast<TensorType>()->withSizes(VaryingShape::complete({2, 3}))), "Tensor(2, 3)");
  EXPECT_EQ(irStr(*TensorType::fromTensor(empty({2, 3}))), "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(irStr(*TensorType::create(ScalarType::Float, Device(DeviceType::CUDA, 1), VaryingShape(1), VaryingShape(1),
                                      true)),
            "Float(*, requires_grad=1, device=cuda:1)");
  EXPECT_EQ(irStr(*ListType::create(refined({2}, std::nullopt))), "Float(2, requires_grad=0, device=cpu)[]");
  EXPECT_EQ(irStr(*OptionalType::ofTensor()), "Tensor?");
  EXPECT_EQ(irStr(*TupleType::create({TensorType::get(), IntType::get()})), "(Tensor, int)");
  EXPECT_EQ(irStr(*DictType::create(StringType::get(), refined({2}, std::nullopt))), "Dict(str, Tensor)");
  EXPECT_EQ(irStr(*FutureType::create(IntType::get())), "Future[int]");
  EXPECT_EQ(FutureType::create(IntType::get())->str(), "Future(int)");
  EXPECT_EQ(irStr(*TupleType::createNamed("__torch__.P", {"x", "y"}, {IntType::get(), TensorType::get()})),
            "NamedTuple(x : int, y : Tensor)");
  EXPECT_EQ(irStr(*ClassType::create("__torch__.M")), "__torch__.M");
  EXPECT_EQ(irStr(*NumberType::get()), "Scalar");
  EXPECT_EQ(ListType::ofInts()->annotationStr(), "List[int]");
  EXPECT_EQ(OptionalType::ofTensor()->annotationStr(), "Optional[Tensor]");
  EXPECT_EQ(TupleType::create({})->annotationStr(), "Tuple[()]");
  EXPECT_EQ(DictType::create(StringType::get(), TensorType::get())->annotationStr(), "Dict[str, Tensor]");
  EXPECT_EQ(NumberType::get()->annotationStr(), "number");
}

TEST(Types, UnionsStandardizeAndPrintLikePyTorch) {
  EXPECT_EQ(irStr(*UnionType::create({IntType::get(), StringType::get(), FloatType::get()})), "Union(float, int, str)");
  EXPECT_EQ(irStr(*UnionType::create({IntType::get(), NoneType::get()})), "int?");
  EXPECT_EQ(irStr(*UnionType::create({IntType::get(), NoneType::get(), StringType::get()})),
            "Union(int, NoneType, str)");
  EXPECT_EQ(irStr(*UnionType::create({IntType::get(), FloatType::get(), ComplexType::get()})), "Union(Scalar)");
  // PyTorch 1.13's separators, quirks included.
  EXPECT_EQ(irStr(*UnionType::create({IntType::get(), FloatType::get(), ComplexType::get(), StringType::get()})),
            "Union(, str, Scalar)");
  EXPECT_EQ(irStr(*UnionType::create({ListType::ofInts(), NoneType::get(), StringType::get()})),
            "Union(int[], NoneType, str)");
  EXPECT_EQ(irStr(*OptionalType::create(UnionType::create({IntType::get(), StringType::get()}))), "Union(int, str)?");
  EXPECT_EQ(irStr(*OptionalType::create(OptionalType::create(IntType::get()))), "int?");
  // Subtypes fold into supertypes; a single survivor is the type itself.
  EXPECT_EQ(irStr(*UnionType::create({TensorType::get(), refined({2}, std::nullopt)})), "Tensor");
  EXPECT_EQ(UnionType::create({IntType::get(), StringType::get()})->annotationStr(), "Union[int, str]");
  EXPECT_TRUE(*UnionType::create({IntType::get(), NoneType::get()}) == *OptionalType::create(IntType::get()));
  EXPECT_TRUE(*UnionType::create({IntType::get(), StringType::get()}) ==
              *UnionType::create({StringType::get(), IntType::get()}));
}

TEST(Types, Subtyping) {
  auto sub = [](const TypePtr& a, const TypePtr& b) { return a->isSubtypeOf(*b); };
  EXPECT_TRUE(sub(IntType::get(), NumberType::get()));
  EXPECT_TRUE(sub(FloatType::get(), NumberType::get()));
  EXPECT_FALSE(sub(BoolType::get(), NumberType::get()));
  EXPECT_TRUE(sub(NoneType::get(), OptionalType::ofTensor()));
  EXPECT_TRUE(sub(TensorType::get(), OptionalType::ofTensor()));
  EXPECT_FALSE(sub(OptionalType::ofTensor(), TensorType::get()));
  EXPECT_TRUE(sub(refined({2}, std::nullopt), TensorType::get()));
  EXPECT_FALSE(sub(TensorType::get(), refined({2}, std::nullopt)));
  EXPECT_TRUE(
      sub(refined({2, 3}, std::vector<std::optional<int64_t>>{3, 1}), refined({std::nullopt, 3}, std::nullopt)));
  EXPECT_FALSE(sub(refined({2, 4}, std::nullopt), refined({std::nullopt, 3}, std::nullopt)));
  EXPECT_FALSE(sub(ListType::create(refined({2}, std::nullopt)), ListType::ofTensors()));  // lists are invariant
  EXPECT_TRUE(sub(TupleType::create({refined({2}, std::nullopt), IntType::get()}),
                  TupleType::create({TensorType::get(), NumberType::get()})));  // tuples are covariant
  auto named = TupleType::createNamed("__torch__.P", {"a"}, {IntType::get()});
  EXPECT_TRUE(sub(named, TupleType::create({IntType::get()})));
  EXPECT_FALSE(sub(TupleType::create({IntType::get()}), named));
  auto u = UnionType::create({IntType::get(), StringType::get()});
  EXPECT_TRUE(sub(IntType::get(), u));
  EXPECT_FALSE(sub(FloatType::get(), u));
  EXPECT_TRUE(sub(u, UnionType::create({IntType::get(), StringType::get(), FloatType::get()})));
  EXPECT_FALSE(sub(u, IntType::get()));
  EXPECT_TRUE(sub(OptionalType::create(IntType::get()),
                  UnionType::create({IntType::get(), NoneType::get(), StringType::get()})));
  EXPECT_TRUE(sub(ListType::ofInts(), AnyType::get()));
  EXPECT_TRUE(sub(FutureType::create(IntType::get()), FutureType::create(NumberType::get())));
  EXPECT_TRUE(sub(ClassType::create("__torch__.A"), ClassType::create("__torch__.A")));
  EXPECT_FALSE(sub(ClassType::create("__torch__.A"), ClassType::create("__torch__.B")));
}

TEST(Types, Unification) {
  auto unify = [](const TypePtr& a, const TypePtr& b, bool to_union = false) -> std::string {
    auto t = unifyTypes(a, b, to_union);
    return t ? irStr(**t) : "none";
  };
  EXPECT_EQ(unify(IntType::get(), NoneType::get()), "int?");
  EXPECT_EQ(unify(NoneType::get(), TensorType::get()), "Tensor?");
  EXPECT_EQ(unify(refined({2}, std::nullopt), refined({3}, std::nullopt)), "Float(*, requires_grad=0, device=cpu)");
  EXPECT_EQ(unify(refined({2}, std::nullopt), refined({2, 2}, std::nullopt)),
            "FloatTensor(requires_grad=0, device=cpu)");
  EXPECT_EQ(unify(ListType::create(refined({2}, std::nullopt)), ListType::create(refined({3}, std::nullopt))),
            "Tensor[]");
  EXPECT_EQ(unify(TupleType::create({IntType::get(), NoneType::get()}),
                  TupleType::create({NoneType::get(), StringType::get()})),
            "(int?, str?)");
  EXPECT_EQ(unify(IntType::get(), FloatType::get()), "none");
  EXPECT_EQ(unify(IntType::get(), FloatType::get(), true), "Union(float, int)");
  EXPECT_EQ(unify(OptionalType::create(IntType::get()), IntType::get()), "int?");
  EXPECT_EQ(irStr(*unshapedType(DictType::create(StringType::get(), ListType::create(refined({2}, std::nullopt))))),
            "Dict(str, Tensor[])");
}

TEST(Types, ParseAnnotations) {
  EXPECT_EQ(irStr(*parseTypeAnnotation("List[int]")), "int[]");
  EXPECT_EQ(irStr(*parseTypeAnnotation("Optional[Tensor]")), "Tensor?");
  EXPECT_EQ(irStr(*parseTypeAnnotation("Tuple[int, List[float], str]")), "(int, float[], str)");
  EXPECT_EQ(irStr(*parseTypeAnnotation("Tuple[()]")), "()");
  EXPECT_EQ(irStr(*parseTypeAnnotation("Dict[str, torch.Tensor]")), "Dict(str, Tensor)");
  EXPECT_EQ(irStr(*parseTypeAnnotation("typing.Union[int, None]")), "int?");
  EXPECT_EQ(irStr(*parseTypeAnnotation(" Optional[ Dict[int, Tuple[Tensor, Tensor]] ] ")),
            "Dict(int, (Tensor, Tensor))?");
  EXPECT_EQ(irStr(*parseTypeAnnotation("Future[int]")), "Future[int]");
  try {
    parseTypeAnnotation("List[Tensr]");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown type annotation 'Tensr'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("column 6"), std::string::npos) << msg;
    EXPECT_NE(msg.find("     ^~~~~"), std::string::npos) << msg;
  }
  EXPECT_THROW(parseTypeAnnotation("Dict[int]"), Error);
  EXPECT_THROW(parseTypeAnnotation("List[int"), Error);
  EXPECT_THROW(parseTypeAnnotation("int extra"), Error);
  EXPECT_THROW(parseTypeAnnotation(""), Error);
}

TEST(IValue, DictKeepsInsertionOrder) {
  auto d = makeIntrusive<DictObj>(StringType::get(), IntType::get());
  EXPECT_TRUE(d->insertOrAssign("b", 1));
  EXPECT_TRUE(d->insertOrAssign("a", 2));
  EXPECT_TRUE(d->insertOrAssign("c", 3));
  EXPECT_FALSE(d->insertOrAssign("b", 10));  // overwriting keeps the position
  EXPECT_FALSE(d->insert("a", 99));
  EXPECT_EQ(repr(IValue(d)), "{\"b\": 10, \"a\": 2, \"c\": 3}");
  EXPECT_TRUE(d->erase("a"));
  EXPECT_FALSE(d->erase("a"));
  EXPECT_EQ(d->at("c").toInt(), 3);
  EXPECT_EQ(d->find("zz"), nullptr);
  EXPECT_THROW(d->at("zz"), Error);
  EXPECT_EQ(printed(IValue(d)), "{b: 10, c: 3}");
  EXPECT_TRUE(d->insertOrAssign("d", 4));
  EXPECT_EQ(d->items().back().first.toStringRef(), "d");
  EXPECT_EQ(d->at("d").toInt(), 4);
  d->clear();
  EXPECT_EQ(repr(IValue(d)), "annotate(Dict[str, int],{})");
  // Tensor keys are looked up by identity.
  auto td = makeIntrusive<DictObj>(TensorType::get(), IntType::get());
  Tensor t1 = empty({2}), t2 = empty({2});
  td->insertOrAssign(t1, 1);
  td->insertOrAssign(t2, 2);
  EXPECT_EQ(td->size(), 2u);
  EXPECT_EQ(td->at(t1).toInt(), 1);
  // Lists cannot be keys.
  EXPECT_THROW(td->insertOrAssign(IValue(std::vector<int64_t>{1}), 3), Error);
}

TEST(IValue, EqualityFollowsTorchScript) {
  EXPECT_TRUE(IValue(int64_t{1}) == IValue(int64_t{1}));
  EXPECT_FALSE(IValue(int64_t{1}) == IValue(1.0));  // as in 1.13's IValue::equals
  EXPECT_TRUE(IValue("a") == IValue("a"));
  EXPECT_TRUE(IValue() == IValue());
  EXPECT_TRUE(IValue(std::vector<int64_t>{1, 2}) == IValue(std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(IValue(std::vector<int64_t>{1, 2}) == IValue(std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(IValue::tuple({IValue(1), IValue("x")}) == IValue::tuple({IValue(1), IValue("x")}));
  EXPECT_TRUE(IValue(Device(DeviceType::CPU)) == IValue(Device::parse("cpu")));
  EXPECT_FALSE(IValue(Device(DeviceType::CPU)) == IValue(Device::parse("cuda:0")));
  auto d1 = makeIntrusive<DictObj>(StringType::get(), IntType::get());
  auto d2 = makeIntrusive<DictObj>(StringType::get(), IntType::get());
  d1->insertOrAssign("a", 1);
  d1->insertOrAssign("b", 2);
  d2->insertOrAssign("b", 2);
  d2->insertOrAssign("a", 1);
  EXPECT_TRUE(IValue(d1) == IValue(d2));  // order does not matter for ==
  // Tensors: bool(a == b), defined only for one element; a list holding the
  // same tensor object is equal without comparing it.
  Tensor a = scalarToTensor(Scalar(2.0), ScalarType::Float);
  Tensor b = scalarToTensor(Scalar(int64_t{2}), ScalarType::Long);
  EXPECT_TRUE(IValue(a) == IValue(b));
  Tensor big = empty({3});
  EXPECT_THROW((void)(IValue(big) == IValue(big)), Error);
  EXPECT_TRUE(IValue(std::vector<Tensor>{big}) == IValue(std::vector<Tensor>{big}));
  // Objects compare by identity.
  auto cls = ClassType::create("__torch__.Foo");
  cls->addAttribute("x", IntType::get());
  auto o1 = makeIntrusive<ObjectObj>(cls);
  auto o2 = makeIntrusive<ObjectObj>(cls);
  EXPECT_TRUE(IValue(o1) == IValue(o1));
  EXPECT_FALSE(IValue(o1) == IValue(o2));
}

TEST(IValue, HashLikePython) {
  EXPECT_EQ(IValue::hash(IValue("abc")), IValue::hash(IValue(std::string("abc"))));
  EXPECT_EQ(IValue::hash(IValue::tuple({IValue(1), IValue("x")})),
            IValue::hash(IValue::tuple({IValue(1), IValue("x")})));
  EXPECT_NE(IValue::hash(IValue::tuple({IValue(1), IValue(2)})), IValue::hash(IValue::tuple({IValue(2), IValue(1)})));
  Tensor t = empty({2});
  EXPECT_EQ(IValue::hash(IValue(t)), IValue::hash(IValue(t)));
  try {
    IValue::hash(IValue(std::vector<int64_t>{1}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unhashable type: 'List[int]'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(IValue::hash(IValue(makeIntrusive<DictObj>(StringType::get(), IntType::get()))), Error);
}

TEST(IValue, PrintingMatchesPyTorch) {
  EXPECT_EQ(repr(IValue(1.0)), "1.");
  EXPECT_EQ(repr(IValue(-0.0)), "-0.");
  EXPECT_EQ(repr(IValue(0.1)), "0.10000000000000001");
  EXPECT_EQ(repr(IValue(1e10)), "10000000000");
  EXPECT_EQ(repr(IValue(1e20)), "1e+20");
  EXPECT_EQ(printed(IValue(1e12)), "1000000000000.");
  EXPECT_EQ(printed(IValue(-0.0)), "0.");
  EXPECT_EQ(repr(IValue("a'b\"\n\x01\xc3\xa9")), "\"a\\'b\\\"\\n\\001\\0)+\\/.)\"");
  EXPECT_EQ(printed(IValue("plain")), "plain");
  EXPECT_EQ(repr(IValue::tuple({IValue(1)})), "(1,)");
  EXPECT_EQ(repr(IValue(Device::parse("cuda:1"))), "torch.device(\"cuda:1\")");
  EXPECT_EQ(printed(IValue(Device::parse("cuda:1"))), "cuda:1");
  EXPECT_EQ(repr(IValue(std::vector<bool>{true, false})), "[True, False]");
  EXPECT_EQ(repr(IValue::list(OptionalType::create(IntType::get()), {IValue(1), IValue()})),
            "annotate(List[Optional[int]], [1, None])");
  auto aten = [](const Tensor& t) {
    std::ostringstream out;
    printTensorATenStyle(out, t);
    return out.str();
  };
  EXPECT_EQ(aten(empty({0})), "[ CPUFloatType{0} ]");
  Tensor v = empty({3});
  v.data<float>()[0] = 1.5f;
  v.data<float>()[1] = 2.25f;
  v.data<float>()[2] = -3.0f;
  EXPECT_EQ(aten(v), " 1.5000\n 2.2500\n-3.0000\n[ CPUFloatType{3} ]");
  Tensor m = empty({2, 2, 2}, ScalarType::Long);
  for (int i = 0; i < 8; ++i) m.data<int64_t>()[i] = i;
  EXPECT_EQ(aten(m), "(1,.,.) = \n  0  1\n  2  3\n\n(2,.,.) = \n  4  5\n  6  7\n[ CPULongType{2,2,2} ]");
}

TEST(IValue, TypedListsAndDynamicTypes) {
  IValue ints(std::vector<int64_t>{1, 2});
  EXPECT_TRUE(ints.isIntList());
  EXPECT_FALSE(ints.isDoubleList());
  EXPECT_EQ(ints.toIntVector(), (std::vector<int64_t>{1, 2}));
  IValue bools(std::vector<bool>{true});
  EXPECT_TRUE(bools.isBoolList());
  EXPECT_EQ(bools.toBoolVector(), std::vector<bool>{true});
  IValue strs(std::vector<std::string>{"a"});
  EXPECT_EQ(strs.toStringVector()[0], "a");
  EXPECT_EQ(irStr(*strs.type()), "str[]");
  EXPECT_EQ(irStr(*IValue::tuple({IValue(1), IValue(2.0)}).type()), "(int, float)");
  EXPECT_EQ(irStr(*IValue(Device(DeviceType::CPU)).type()), "Device");
  EXPECT_EQ(IValue(Device::parse("cuda:3")).toDevice().index, 3);
  EXPECT_THROW(Device::parse("tpu"), Error);
  EXPECT_THROW(Device::parse("cuda:x"), Error);
}

TEST(IValue, ObjectsAndFutures) {
  auto cls = ClassType::create("__torch__.Point");
  auto obj = makeIntrusive<ObjectObj>(cls);
  obj->setAttr("x", IValue(int64_t{3}));
  EXPECT_EQ(obj->getAttr("x").toInt(), 3);
  EXPECT_EQ(cls->numAttributes(), 1u);
  EXPECT_THROW(obj->getAttr("y"), Error);
  EXPECT_EQ(irStr(*IValue(obj).type()), "__torch__.Point");

  auto fut = makeIntrusive<FutureObj>(IntType::get());
  int seen = 0;
  fut->addCallback([&](FutureObj& f) { seen = static_cast<int>(f.value().toInt()); });
  std::thread producer([fut] { fut->markCompleted(IValue(int64_t{42})); });
  EXPECT_EQ(fut->wait().toInt(), 42);
  producer.join();
  EXPECT_EQ(seen, 42);
  EXPECT_THROW(fut->markCompleted(IValue(int64_t{1})), Error);
  auto failed = makeIntrusive<FutureObj>(IntType::get());
  failed->setError("boom");
  EXPECT_THROW(failed->wait(), Error);
  EXPECT_EQ(printed(IValue(failed)), "Future");
  EXPECT_EQ(irStr(*IValue(failed).type()), "Future[int]");
}
