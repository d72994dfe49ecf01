// The kernel generator: which nodes are fusible, the dtypes it infers and the
// cases it must refuse (where kiln's kernels raise), and generated kernels
// compared with the interpreter on contiguous, broadcast and strided operands.
// Each test compiles at most two kernels, so the suite stays fast.
#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>

#include "kiln/core/op_description.h"
#include "kiln/core/operator.h"
#include "kiln/ops/pointwise_spec.h"
#include "tests/cpp/fuser_test_util.h"

namespace kiln::fuser {
namespace {

using testing::asStrided;
using testing::expectSameAsInterpreter;
using testing::FreshKernelCache;
using testing::FusedRun;
using testing::makeTensor;
using testing::runFused;
using testing::runUnfused;

// Every float op of the table on two tensors and a float number.
constexpr const char* kFloatGraph = R"IR(
graph(%x : Tensor, %y : Tensor, %s : float):
  %i1 : int = prim::Constant[value=1]()
  %i2 : int = prim::Constant[value=2]()
  %long : int = prim::Constant[value=4]()
  %bool : int = prim::Constant[value=11]()
  %f2 : float = prim::Constant[value=2.]()
  %half : float = prim::Constant[value=0.5]()
  %quarter : float = prim::Constant[value=0.25]()
  %minus_quarter : float = prim::Constant[value=-0.25]()
  %f03 : float = prim::Constant[value=0.3]()
  %f07 : float = prim::Constant[value=0.7]()
  %f25 : float = prim::Constant[value=2.5]()
  %f89 : float = prim::Constant[value=88.5]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %floor_mode : str = prim::Constant[value="floor"]()
  %trunc_mode : str = prim::Constant[value="trunc"]()
  %tanh_mode : str = prim::Constant[value="tanh"]()
  %erf_mode : str = prim::Constant[value="none"]()
  %x2 : Tensor = aten::mul(%x, %f2)
  %x21 : Tensor = aten::add(%x2, %i1, %i1)
  %t : Tensor = aten::tanh(%x21)
  %sg : Tensor = aten::sigmoid(%x)
  %ts : Tensor = aten::mul(%t, %sg)
  %composite : Tensor = aten::add(%ts, %x, %i1)
  %exp : Tensor = aten::exp(%x)
  %expm1 : Tensor = aten::expm1(%x)
  %log : Tensor = aten::log(%x)
  %log1p : Tensor = aten::log1p(%x)
  %log10 : Tensor = aten::log10(%x)
  %sqrt : Tensor = aten::sqrt(%x)
  %rsqrt : Tensor = aten::rsqrt(%x)
  %reciprocal : Tensor = aten::reciprocal(%x)
  %sin : Tensor = aten::sin(%x)
  %cos : Tensor = aten::cos(%x)
  %tan : Tensor = aten::tan(%x)
  %asin : Tensor = aten::asin(%x)
  %acos : Tensor = aten::acos(%x)
  %atan : Tensor = aten::atan(%x)
  %big : Tensor = aten::add(%x, %f89, %i1)
  %minus_big : Tensor = aten::neg(%big)
  %sinh : Tensor = aten::sinh(%big)
  %cosh : Tensor = aten::cosh(%minus_big)
  %atanh : Tensor = aten::atanh(%x)
  %erf : Tensor = aten::erf(%x)
  %erfc : Tensor = aten::erfc(%x)
  %abs : Tensor = aten::abs(%x)
  %neg : Tensor = aten::neg(%x)
  %relu : Tensor = aten::relu(%x)
  %floor : Tensor = aten::floor(%x)
  %ceil : Tensor = aten::ceil(%x)
  %round : Tensor = aten::round(%x)
  %trunc : Tensor = aten::trunc(%x)
  %sign : Tensor = aten::sign(%x)
  %gelu : Tensor = aten::gelu(%x, %erf_mode)
  %gelu_tanh : Tensor = aten::gelu(%x, %tanh_mode)
  %round2 : Tensor = aten::round(%x, %i2)
  %add : Tensor = aten::add(%x, %y, %i2)
  %sub : Tensor = aten::sub(%x, %y, %half)
  %sub_s : Tensor = aten::sub(%x, %s, %i1)
  %rsub : Tensor = aten::rsub(%x, %y, %i1)
  %mul_s : Tensor = aten::mul(%x, %s)
  %div : Tensor = aten::div(%x, %y)
  %div_floor : Tensor = aten::div(%x, %y, %floor_mode)
  %div_trunc : Tensor = aten::div(%x, %y, %trunc_mode)
  %floor_divide : Tensor = aten::floor_divide(%x, %y)
  %remainder : Tensor = aten::remainder(%x, %y)
  %remainder_s : Tensor = aten::remainder(%x, %f25)
  %fmod : Tensor = aten::fmod(%x, %y)
  %pow : Tensor = aten::pow(%x, %y)
  %pow25 : Tensor = aten::pow(%x, %f25)
  %pow2 : Tensor = aten::pow(%x, %i2)
  %pow_half : Tensor = aten::pow(%x, %half)
  %pow_s : Tensor = aten::pow(%x, %s)
  %two_pow : Tensor = aten::pow(%f2, %y)
  %atan2 : Tensor = aten::atan2(%x, %y)
  %maximum : Tensor = aten::maximum(%x, %y)
  %minimum : Tensor = aten::minimum(%x, %y)
  %clamp : Tensor = aten::clamp(%x, %minus_quarter, %quarter)
  %clamp_max_only : Tensor = aten::clamp(%x, %none, %quarter)
  %clamp_min : Tensor = aten::clamp_min(%x, %quarter)
  %clamp_max : Tensor = aten::clamp_max(%x, %minus_quarter)
  %clamp_tensor_min : Tensor = aten::clamp(%x, %y, %none)
  %neg_y : Tensor = aten::neg(%y)
  %clamp_tensors : Tensor = aten::clamp(%x, %neg_y, %y)
  %lerp03 : Tensor = aten::lerp(%x, %y, %f03)
  %lerp07 : Tensor = aten::lerp(%x, %y, %f07)
  %lerp_tensor : Tensor = aten::lerp(%x, %y, %sg)
  %addcmul : Tensor = aten::addcmul(%x, %y, %x, %half)
  %addcdiv : Tensor = aten::addcdiv(%x, %y, %x2, %f2)
  %gt : Tensor = aten::gt(%x, %y)
  %where : Tensor = aten::where(%gt, %x, %y)
  %where_s : Tensor = aten::where(%gt, %x, %s)
  %le_s : Tensor = aten::le(%x, %half)
  %ne : Tensor = aten::ne(%x, %y)
  %eq : Tensor = aten::eq(%x, %y)
  %logical_and : Tensor = aten::logical_and(%x, %y)
  %logical_not : Tensor = aten::logical_not(%x)
  %to_long : Tensor = aten::to(%x, %long, %false, %false, %none)
  %to_bool : Tensor = aten::to(%x, %bool, %false, %false, %none)
  return (%composite, %exp, %expm1, %log, %log1p, %log10, %sqrt, %rsqrt, %reciprocal, %sin, %cos, %tan, %asin, %acos, %atan, %sinh, %cosh, %atanh, %erf, %erfc, %abs, %neg, %relu, %floor, %ceil, %round, %trunc, %sign, %gelu, %gelu_tanh, %round2, %add, %sub, %sub_s, %rsub, %mul_s, %div, %div_floor, %div_trunc, %floor_divide, %remainder, %remainder_s, %fmod, %pow, %pow25, %pow2, %pow_half, %pow_s, %two_pow, %atan2, %maximum, %minimum, %clamp, %clamp_max_only, %clamp_min, %clamp_max, %clamp_tensor_min, %clamp_tensors, %lerp03, %lerp07, %lerp_tensor, %addcmul, %addcdiv, %where, %where_s, %le_s, %ne, %eq, %logical_and, %logical_not, %to_long, %to_bool)
)IR";

// Mixed dtypes, bools, integers (wrapping), casts and numbers.
constexpr const char* kMixedGraph = R"IR(
graph(%i : Tensor, %f : Tensor, %d : Tensor, %b : Tensor, %k : int, %g : float):
  %i0 : int = prim::Constant[value=0]()
  %i1 : int = prim::Constant[value=1]()
  %i2 : int = prim::Constant[value=2]()
  %i3 : int = prim::Constant[value=3]()
  %int8 : int = prim::Constant[value=1]()
  %int32 : int = prim::Constant[value=3]()
  %float32 : int = prim::Constant[value=6]()
  %float64 : int = prim::Constant[value=7]()
  %bool : int = prim::Constant[value=11]()
  %half : float = prim::Constant[value=0.5]()
  %f15 : float = prim::Constant[value=1.5]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %floor_mode : str = prim::Constant[value="floor"]()
  %f_plus_d : Tensor = aten::add(%f, %d, %i1)
  %i_plus_g : Tensor = aten::add(%i, %g, %i1)
  %i_mul_k : Tensor = aten::mul(%i, %k)
  %i_add_i : Tensor = aten::add(%i, %i, %i2)
  %i_sub_k : Tensor = aten::sub(%i, %k, %i2)
  %i_div_k : Tensor = aten::div(%i, %k)
  %b_add_b : Tensor = aten::add(%b, %b, %i1)
  %b_mul_b : Tensor = aten::mul(%b, %b)
  %positive : Tensor = aten::gt(%i, %i0)
  %and : Tensor = aten::__and__(%b, %positive)
  %or : Tensor = aten::__or__(%b, %positive)
  %xor : Tensor = aten::__xor__(%b, %positive)
  %not_b : Tensor = aten::bitwise_not(%b)
  %not_i : Tensor = aten::bitwise_not(%i)
  %logical_not : Tensor = aten::logical_not(%i)
  %where_if : Tensor = aten::where(%b, %i, %f)
  %where_numbers : Tensor = aten::where(%b, %i1, %i0)
  %where_float_self : Tensor = aten::where(%b, %half, %i)
  %clamp_i : Tensor = aten::clamp(%i, %none, %i3)
  %clamp_float_bound : Tensor = aten::clamp(%i, %half, %none)
  %to_int32 : Tensor = aten::to(%f, %int32, %false, %false, %none)
  %to_float64 : Tensor = aten::to(%i, %float64, %false, %false, %none)
  %to_bool : Tensor = aten::to(%f, %bool, %false, %false, %none)
  %b_to_float : Tensor = aten::to(%b, %float32, %false, %false, %none)
  %type_as : Tensor = aten::type_as(%i, %f)
  %i_gt_f : Tensor = aten::gt(%i, %f)
  %i_eq_k : Tensor = aten::eq(%i, %k)
  %f_lt_d : Tensor = aten::lt(%f, %d)
  %neg_i : Tensor = aten::neg(%i)
  %abs_i : Tensor = aten::abs(%i)
  %sign_i : Tensor = aten::sign(%i)
  %relu_i : Tensor = aten::relu(%i)
  %floor_i : Tensor = aten::floor(%i)
  %pow_i2 : Tensor = aten::pow(%i, %i2)
  %pow_ii : Tensor = aten::pow(%i, %i)
  %i8 : Tensor = aten::to(%i, %int8, %false, %false, %none)
  %i8_add : Tensor = aten::add(%i8, %i8, %i1)
  %i8_neg : Tensor = aten::neg(%i8)
  %max_if : Tensor = aten::maximum(%i, %f)
  %min_bb : Tensor = aten::minimum(%b, %positive)
  %fmod_f : Tensor = aten::fmod(%f, %f15)
  %div_floor_fi : Tensor = aten::div(%f, %i, %floor_mode)
  %dk : Tensor = aten::mul(%d, %k)
  %f_dk : Tensor = aten::add(%f, %dk, %i1)
  %sigmoid_i : Tensor = aten::sigmoid(%i)
  %to_prim_dtype : Tensor = aten::to(%f, %int32, %false, %false)
  %to_other : Tensor = aten::to(%i, %f, %false, %false, %none)
  %to_dtype_layout : Tensor = aten::to(%f, %float64, %none, %none, %none, %false, %false, %none)
  %remainder_number_first : Tensor = aten::remainder(%f15, %f)
  %and_number_first : Tensor = aten::bitwise_and(%k, %i)
  %prim_abs : Tensor = prim::abs(%f)
  %floor_divide_number : Tensor = aten::floor_divide(%f, %f15)
  %minus1 : int = prim::Constant[value=-1]()
  %round_tens : Tensor = aten::round(%f_dk, %minus1)
  return (%f_plus_d, %i_plus_g, %i_mul_k, %i_add_i, %i_sub_k, %i_div_k, %b_add_b, %b_mul_b, %and, %or, %xor, %not_b, %not_i, %logical_not, %where_if, %where_numbers, %where_float_self, %clamp_i, %clamp_float_bound, %to_int32, %to_float64, %to_bool, %b_to_float, %type_as, %i_gt_f, %i_eq_k, %f_lt_d, %neg_i, %abs_i, %sign_i, %relu_i, %floor_i, %pow_i2, %pow_ii, %i8_add, %i8_neg, %max_if, %min_bb, %fmod_f, %div_floor_fi, %f_dk, %sigmoid_i, %to_prim_dtype, %to_other, %to_dtype_layout, %remainder_number_first, %and_number_first, %prim_abs, %floor_divide_number, %round_tens)
)IR";

Stack mixedInputs(bool strided) {
  Tensor i = makeTensor({4, 5}, ScalarType::Long, 1);
  Tensor f = makeTensor({4, 5}, ScalarType::Float, 2);
  Tensor b = makeTensor({4, 5}, ScalarType::Bool, 3);
  if (strided) {
    i = asStrided(i);
    b = asStrided(b);
    f = makeTensor({5}, ScalarType::Float, 2);  // broadcast along rows
  }
  return {i, f, scalarToTensor(Scalar(2.75), ScalarType::Double), b, IValue(int64_t{3}), IValue(1.25)};
}

std::vector<ScalarType> inferTypes(const std::string& ir, const std::vector<KernelInput>& inputs,
                                   std::string* why = nullptr) {
  return inferKernelTypes(*parseIR(ir), inputs, why).value_or(std::vector<ScalarType>{});
}

constexpr KernelInput tensorOf(ScalarType t) { return {InputKind::Tensor, t}; }
constexpr KernelInput zeroDimOf(ScalarType t) { return {InputKind::ZeroDimTensor, t}; }
constexpr KernelInput numberOf(ScalarType t) { return {InputKind::Scalar, t}; }

// Kernels compiled into a cache folder of their own.
class FusedKernel : public FreshKernelCache {};

// Every pointwise description's expression names only its own schema's
// arguments (`$T` is the compute type), and gives an expression or an emitter.
TEST(FuserCodegen, PointwiseExpressionsNameTheirArguments) {
  int described = 0;
  for (const OperatorPtr& op : getAllOperators()) {
    const PointwiseSpec* spec = op->description().pointwise.get();
    if (!spec) continue;
    ++described;
    EXPECT_TRUE(!spec->expr.empty() || spec->emit) << op->schema();
    if (spec->expr.empty()) continue;
    const std::string expr = spec->expr;
    for (size_t at = expr.find('$'); at != std::string::npos; at = expr.find('$', at + 1)) {
      size_t end = at + 1;
      while (end < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[end])) || expr[end] == '_')) ++end;
      const std::string name = expr.substr(at + 1, end - at - 1);
      if (name == "T") continue;
      EXPECT_TRUE(op->schema().argumentIndex(name).has_value()) << op->schema() << " names $" << name;
    }
  }
  EXPECT_GT(described, 100);
}

TEST(FuserCodegen, FusibleNodes) {
  auto g = parseIR(R"IR(
graph(%x : Tensor, %y : Tensor, %dtype : int):
  %one : int = prim::Constant[value=1]()
  %six : int = prim::Constant[value=6]()
  %half : int = prim::Constant[value=5]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %add : Tensor = aten::add(%x, %y, %one)
  %tanh : Tensor = aten::tanh(%add)
  %to : Tensor = aten::to(%x, %six, %false, %false, %none)
  %to_runtime : Tensor = aten::to(%x, %dtype, %false, %false, %none)
  %to_half : Tensor = aten::to(%x, %half, %false, %false, %none)
  %add_ : Tensor = aten::add_(%x, %y, %one)
  %mm : Tensor = aten::mm(%x, %y)
  %sum : Tensor = aten::sum(%x, %none)
  %lgamma : Tensor = aten::lgamma(%x)
  return (%tanh, %to, %to_runtime, %to_half, %add_, %mm, %sum, %lgamma)
)IR");
  // (The parser numbers node outputs, so nodes are told apart by position.)
  std::vector<bool> fusible;
  for (const Node* n : g->nodes()) fusible.push_back(isFusibleNode(n));
  const std::vector<bool> expected = {
      true,  true, true, true, true,  // constants: int, int, int, bool, None
      true,                           // add
      true,                           // tanh
      true,                           // to float32
      false,                          // to a runtime dtype
      false,                          // to float16: not a kernel dtype
      false,                          // add_: in-place
      false,                          // mm
      false,                          // sum
      false,                          // lgamma: not in the op table
  };
  EXPECT_EQ(fusible, expected);
}

TEST(FuserCodegen, PromotionFollowsResultType) {
  const char* add = R"IR(
graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%a, %b, %one)
  return (%r)
)IR";
  using ST = ScalarType;
  // A 0-dim float64 loses to a dimensioned float32; an int tensor loses to a float one.
  EXPECT_EQ(inferTypes(add, {tensorOf(ST::Float), zeroDimOf(ST::Double)}), std::vector{ST::Float});
  EXPECT_EQ(inferTypes(add, {zeroDimOf(ST::Float), zeroDimOf(ST::Double)}), std::vector{ST::Double});
  EXPECT_EQ(inferTypes(add, {tensorOf(ST::Long), zeroDimOf(ST::Double)}), std::vector{ST::Double});
  EXPECT_EQ(inferTypes(add, {tensorOf(ST::Int), zeroDimOf(ST::Long)}), std::vector{ST::Int});
  EXPECT_EQ(inferTypes(add, {tensorOf(ST::Bool), tensorOf(ST::Bool)}), std::vector{ST::Bool});
  EXPECT_EQ(inferTypes(add, {tensorOf(ST::Bool), zeroDimOf(ST::Char)}), std::vector{ST::Char});
  // Numbers: a float number with an int tensor gives the default float dtype.
  const char* add_number = R"IR(
graph(%a : Tensor, %s : Scalar):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%a, %s, %one)
  %c : Tensor = aten::div(%r, %s)
  return (%r, %c)
)IR";
  EXPECT_EQ(inferTypes(add_number, {tensorOf(ST::Long), numberOf(ST::Double)}), (std::vector{ST::Float, ST::Float}));
  EXPECT_EQ(inferTypes(add_number, {tensorOf(ST::Int), numberOf(ST::Long)}), (std::vector{ST::Int, ST::Float}));
  EXPECT_EQ(inferTypes(add_number, {tensorOf(ST::Double), numberOf(ST::Long)}), (std::vector{ST::Double, ST::Double}));
  // An intermediate stays 0-dim only when all its tensor inputs are.
  const char* chain = R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor):
  %one : int = prim::Constant[value=1]()
  %ab : Tensor = aten::mul(%a, %b)
  %r : Tensor = aten::add(%c, %ab, %one)
  return (%r)
)IR";
  EXPECT_EQ(inferTypes(chain, {zeroDimOf(ST::Double), zeroDimOf(ST::Double), tensorOf(ST::Float)}),
            std::vector{ST::Float});
  EXPECT_EQ(inferTypes(chain, {tensorOf(ST::Double), zeroDimOf(ST::Double), tensorOf(ST::Float)}),
            std::vector{ST::Double});
  // Comparisons give bool; where promotes its branches only.
  const char* where = R"IR(
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::lt(%a, %b)
  %w : Tensor = aten::where(%c, %a, %b)
  return (%c, %w)
)IR";
  EXPECT_EQ(inferTypes(where, {tensorOf(ST::Long), tensorOf(ST::Float)}), (std::vector{ST::Bool, ST::Float}));
}

// Each graph below raises in kiln's kernels (or may, for some values), so
// the generator must refuse it and leave it to the interpreter.
TEST(FuserCodegen, RefusesWhatKilnRaisesOn) {
  struct Case {
    const char* op;  // one node on %a, %b (tensors) and %n (number)
    std::vector<KernelInput> inputs;
    bool interpreter_raises;  // false: refused because it might raise for other values
  };
  using ST = ScalarType;
  const KernelInput long_t = tensorOf(ST::Long), float_t = tensorOf(ST::Float), bool_t = tensorOf(ST::Bool);
  const std::vector<Case> cases = {
      {"aten::fmod(%a, %b)", {long_t, long_t, numberOf(ST::Long)}, false},
      {"aten::remainder(%a, %b)", {long_t, long_t, numberOf(ST::Long)}, false},
      {"aten::floor_divide(%a, %b)", {long_t, long_t, numberOf(ST::Long)}, false},
      {"aten::neg(%a)", {bool_t, bool_t, numberOf(ST::Long)}, true},
      {"aten::abs(%a)", {bool_t, bool_t, numberOf(ST::Long)}, true},
      {"aten::sub(%a, %b, %n)", {bool_t, long_t, numberOf(ST::Long)}, true},
      {"aten::add(%a, %b, %n)", {long_t, long_t, numberOf(ST::Double)}, true},
      {"aten::pow(%a, %n)", {long_t, long_t, numberOf(ST::Long)}, false},
      {"aten::bitwise_not(%a)", {float_t, float_t, numberOf(ST::Long)}, true},
      {"aten::clamp(%a, %n, %b)", {float_t, float_t, numberOf(ST::Double)}, false},
      {"aten::lerp(%a, %b, %n)", {float_t, tensorOf(ST::Double), numberOf(ST::Double)}, true},
      {"aten::where(%a, %b, %b)", {long_t, float_t, numberOf(ST::Long)}, true},
      {"aten::add(%a, %b, %n)", {tensorOf(ST::Half), float_t, numberOf(ST::Long)}, false},
  };
  for (const Case& c : cases) {
    // %b is a tensor or None by position: clamp's max is None.
    const std::string second = std::string(c.op).find("clamp") != std::string::npos ? "%none" : "%b";
    std::string op = c.op;
    if (second == "%none") op.replace(op.find("%b"), 2, "%none");
    const std::string ir =
        "graph(%a : Tensor, %b : Tensor, %n : Scalar):\n  %none : NoneType = prim::Constant()\n"
        "  %r : Tensor = " +
        op + "\n  return (%r)\n";
    std::string why;
    EXPECT_TRUE(inferTypes(ir, c.inputs, &why).empty()) << c.op;
    EXPECT_FALSE(why.empty()) << c.op;
    if (c.interpreter_raises) {
      auto value = [](const KernelInput& in) -> IValue {
        if (in.kind == InputKind::Scalar) return in.dtype == ScalarType::Double ? IValue(0.5) : IValue(int64_t{2});
        return makeTensor({3}, in.dtype, 7);
      };
      Stack args{value(c.inputs[0]), value(c.inputs[1]), value(c.inputs[2])};
      EXPECT_FALSE(kiln::testing::runGraph(parseIR(ir), args).value) << c.op << " should raise in the interpreter";
    }
  }
}

TEST(FuserCodegen, SourceIsSelfContainedAndReadable) {
  auto g = parseIR(R"IR(
graph(%x.1 : Tensor, %scale : float):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%x.1, %scale)
  %z : Tensor = aten::add(%y, %x.1, %one)
  return (%z)
)IR");
  const std::vector<KernelInput> inputs = {tensorOf(ScalarType::Float), numberOf(ScalarType::Double)};
  const auto outputs = inferKernelTypes(*g, inputs, nullptr);
  ASSERT_TRUE(outputs);
  const std::string flat =
      generateKernelSource({g, inputs, *outputs, 1, {OperandLayout::Contiguous, OperandLayout::Contiguous}});
  EXPECT_EQ(flat.find("#include"), std::string::npos);
  EXPECT_NE(flat.find("extern \"C\" void kiln_fused_kernel("), std::string::npos);
  EXPECT_NE(flat.find("= k_mul(v_x, (float)v_scale);  // aten::mul"), std::string::npos) << flat;
  EXPECT_NE(flat.find("#pragma omp simd"), std::string::npos);
  EXPECT_EQ(flat.find("index["), std::string::npos);  // one flat loop
  const std::string strided =
      generateKernelSource({g, inputs, *outputs, 2, {OperandLayout::Contiguous, OperandLayout::Strided}});
  EXPECT_NE(strided.find("index["), std::string::npos);
  EXPECT_NE(strided.find("stride_x == 1"), std::string::npos) << strided;
}

// Copies of one group (an unrolled loop's steps) differ only in their
// values' name suffixes and numbers, and calls with other sizes only in the
// graph's types: each gives one source, so one kernel.
TEST(FuserCodegen, SourceDoesNotDependOnNameSuffixes) {
  auto source = [](const char* ir) {
    auto g = parseIR(ir);
    const std::vector<KernelInput> inputs = {tensorOf(ScalarType::Float), tensorOf(ScalarType::Float)};
    return generateKernelSource({g,
                                 inputs,
                                 *inferKernelTypes(*g, inputs, nullptr),
                                 1,
                                 {OperandLayout::Contiguous, OperandLayout::Contiguous, OperandLayout::Contiguous}});
  };
  const std::string first = source(R"IR(
graph(%cx.12 : Tensor, %g.3 : Tensor):
  %one : int = prim::Constant[value=1]()
  %7 : Tensor = aten::sigmoid(%g.3)
  %cy.4 : Tensor = aten::add(%cx.12, %7, %one)
  return (%cy.4)
)IR");
  const std::string second = source(R"IR(
graph(%cx.18 : Tensor, %g.9 : Tensor):
  %one.2 : int = prim::Constant[value=1]()
  %31 : Tensor = aten::sigmoid(%g.9)
  %cy.20 : Tensor = aten::add(%cx.18, %31, %one.2)
  return (%cy.20)
)IR");
  EXPECT_EQ(first, second);
  // Nor on sizes: the dtypes, ranks and layouts the source is for are listed below the graph.
  const std::string sized = source(R"IR(
graph(%cx.1 : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu),
      %g.1 : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %7 : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu) = aten::sigmoid(%g.1)
  %cy.4 : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu) = aten::add(%cx.1, %7, %one)
  return (%cy.4)
)IR");
  EXPECT_EQ(first, sized);
  // (The IR parser, as torch's, keeps the names of graph inputs only.)
  EXPECT_NE(first.find("const float v_4 = k_add(v_cx, v_3, (float)v_2);"), std::string::npos) << first;
  EXPECT_NE(first.find("%v_4 : Tensor = aten::add(%v_cx, %v_3, %v_2)"), std::string::npos) << first;
}

TEST_F(FusedKernel, FloatOpsContiguousFloat32) {
  Stack inputs{makeTensor({6, 7}, ScalarType::Float, 11), makeTensor({6, 7}, ScalarType::Float, 12), IValue(1.75)};
  expectSameAsInterpreter(parseIR(kFloatGraph), inputs);
  EXPECT_EQ(kernelCacheStats().compiled, 1);
}

TEST_F(FusedKernel, FloatOpsStridedFloat64) {
  // x transposed, y broadcast along rows, a negative exponent for pow.
  Stack inputs{asStrided(makeTensor({6, 7}, ScalarType::Double, 13)), makeTensor({7}, ScalarType::Double, 14),
               IValue(-0.5)};
  expectSameAsInterpreter(parseIR(kFloatGraph), inputs);
}

TEST_F(FusedKernel, MixedDtypesContiguous) { expectSameAsInterpreter(parseIR(kMixedGraph), mixedInputs(false)); }

TEST_F(FusedKernel, MixedDtypesStrided) { expectSameAsInterpreter(parseIR(kMixedGraph), mixedInputs(true)); }

// What a shell command prints (stdout and stderr).
std::string shellOutput(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  if (!pipe) return out;
  for (char buffer[512]; fgets(buffer, sizeof buffer, pipe);) out += buffer;
  pclose(pipe);
  return out;
}

// An LSTM cell (on chunk-like strided gates) with the ops that once kept GCC
// from vectorizing: sin and cos of one value (merged into sincos), sinh and
// cosh (a select between libm calls), a number exponent (nested selects),
// bool loads and bool-to-float conversions.
constexpr const char* kLstmProbeGraph = R"IR(
graph(%ingate : Tensor, %forgetgate : Tensor, %cellgate : Tensor, %outgate : Tensor, %cx : Tensor, %mask : Tensor, %count : Tensor, %p : float):
  %one : int = prim::Constant[value=1]()
  %float32 : int = prim::Constant[value=6]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %i : Tensor = aten::sigmoid(%ingate)
  %f : Tensor = aten::sigmoid(%forgetgate)
  %g : Tensor = aten::tanh(%cellgate)
  %o : Tensor = aten::sigmoid(%outgate)
  %fc : Tensor = aten::mul(%f, %cx)
  %ig : Tensor = aten::mul(%i, %g)
  %cy : Tensor = aten::add(%fc, %ig, %one)
  %tcy : Tensor = aten::tanh(%cy)
  %hy : Tensor = aten::mul(%o, %tcy)
  %sin : Tensor = aten::sin(%cx)
  %cos : Tensor = aten::cos(%cx)
  %sinh : Tensor = aten::sinh(%cx)
  %cosh : Tensor = aten::cosh(%cx)
  %power : Tensor = aten::pow(%cx, %p)
  %mask_float : Tensor = aten::to(%mask, %float32, %false, %false, %none)
  %masked : Tensor = aten::where(%mask, %hy, %cy)
  %floor : Tensor = aten::floor(%cy)
  %remainder : Tensor = aten::remainder(%cy, %hy)
  %next : Tensor = aten::add(%count, %one, %one)
  %scaled : Tensor = aten::mul(%next, %hy)
  return (%hy, %cy, %sin, %cos, %sinh, %cosh, %power, %mask_float, %masked, %floor, %remainder, %scaled)
)IR";

TEST_F(FusedKernel, LstmCellOnChunksVectorizes) {
  auto graph = parseIR(kLstmProbeGraph);
  // The gates are the four chunks of one [4, 4 * 6] tensor, as prim::ConstantChunk gives them.
  const Tensor gates = makeTensor({4, 24}, ScalarType::Float, 21);
  Stack inputs;
  for (int64_t k = 0; k < 4; ++k) inputs.push_back(slice(gates, 1, 6 * k, 6 * (k + 1)));
  inputs.push_back(makeTensor({4, 6}, ScalarType::Float, 22));
  inputs.push_back(makeTensor({4, 6}, ScalarType::Bool, 23));
  // int32, not int64: AVX2 has no vector int64 -> float conversion, and the
  // report must not depend on whether the machine has AVX-512.
  inputs.push_back(makeTensor({4, 6}, ScalarType::Int, 24));
  inputs.push_back(IValue(2.0));
  expectSameAsInterpreter(graph, inputs);

  // GCC's own report on the same source: the unit-stride row loop vectorizes.
  if (shellOutput(kernelCompileCommand().substr(0, kernelCompileCommand().find(" -")) + " --version")
          .find("Free Software Foundation") == std::string::npos)
    GTEST_SKIP() << "the vectorizer report is GCC's";
  const std::string path = dir_ + "/probe.cpp";
  std::ofstream(path) << runFused(graph, inputs).source;
  const std::string report =
      shellOutput(kernelCompileCommand() + " -fopt-info-vec-optimized -c -x c++ " + path + " -o " + dir_ + "/probe.o");
  EXPECT_NE(report.find("loop vectorized"), std::string::npos) << report;
}

TEST_F(FusedKernel, ZeroDimLoop) {
  auto g = parseIR(R"IR(
graph(%x : Tensor, %k : int):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%x, %k)
  %z : Tensor = aten::sub(%y, %x, %one)
  %b : Tensor = aten::ge(%z, %x)
  return (%z, %b)
)IR");
  expectSameAsInterpreter(g, {scalarToTensor(Scalar(2.5), ScalarType::Float), IValue(int64_t{3})});
}

// The kernels' own float exp, tanh and sigmoid against double-precision
// libm over a sweep of every 263rd float (both signs, from the smallest
// subnormal to past the overflow thresholds) and the edge values: exp within
// 1 ulp, tanh within 2, sigmoid within 2.5 (its formula rounds three times).
// Results below FLT_MIN count in ulps of FLT_MIN, except that sigmoid's may be
// 0 where float e^-x overflows, as the formula says.
TEST_F(FusedKernel, FloatExpTanhSigmoidWithinUlps) {
  std::vector<float> values = {0.0f,        -0.0f,       INFINITY, -INFINITY, NAN,  88.72283f, 88.72284f, -87.33654f,
                               -103.97208f, -103.97209f, 10.0f,    -10.0f,    9.0f, 0.17f,     1e-30f,    -1e-45f};
  for (uint32_t bits = 0; bits < 0x43400000u; bits += 263) {  // up to 192
    const float v = std::bit_cast<float>(bits);
    values.push_back(v);
    values.push_back(-v);
  }
  Tensor x = empty({static_cast<int64_t>(values.size())}, ScalarType::Float);
  std::copy(values.begin(), values.end(), x.data<float>());
  FusedRun run = runFused(parseIR(R"IR(
graph(%x : Tensor):
  %e : Tensor = aten::exp(%x)
  %t : Tensor = aten::tanh(%x)
  %s : Tensor = aten::sigmoid(%x)
  return (%e, %t, %s)
)IR"),
                          {x});
  ASSERT_EQ(run.outputs.size(), 3u) << run.why;
  struct Check {
    const char* name;
    double (*reference)(double);
    double ulps;
  };
  const Check checks[] = {{"exp", [](double v) { return std::exp(v); }, 1.0},
                          {"tanh", [](double v) { return std::tanh(v); }, 2.0},
                          {"sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, 2.5}};
  const double float_min = std::numeric_limits<float>::min();
  for (size_t k = 0; k < std::size(checks); ++k) {
    const float* got = run.outputs[k].data<float>();
    double worst = 0;
    float worst_at = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      const double expected = checks[k].reference(values[i]);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(got[i])) << checks[k].name << "(" << values[i] << ") = " << got[i];
        continue;
      }
      if (expected > std::numeric_limits<float>::max()) {
        EXPECT_EQ(got[i], INFINITY) << checks[k].name << "(" << values[i] << ")";
        continue;
      }
      if (k == 2 && got[i] == 0 && std::exp(-double(values[i])) >= 0.5 * std::numeric_limits<float>::max()) continue;
      const float magnitude = static_cast<float>(std::max(std::abs(expected), float_min));
      const double ulp = std::nextafter(magnitude, INFINITY) - magnitude;
      const double error = std::abs(got[i] - expected) / ulp;
      if (error > worst) worst = error, worst_at = values[i];
    }
    EXPECT_LE(worst, checks[k].ulps) << checks[k].name << " is off by " << worst << " ulp at " << worst_at;
  }
}

// The random graphs' node patterns: {a}, {b} are any value, {bool} a bool one.
struct Pattern {
  const char* text;
  bool second_lends_dtype = false;
};
constexpr Pattern kPatterns[] = {
    {"aten::neg({a})"},
    {"aten::abs({a})"},
    {"aten::exp({a})"},
    {"aten::log({a})"},
    {"aten::sqrt({a})"},
    {"aten::sin({a})"},
    {"aten::tanh({a})"},
    {"aten::sigmoid({a})"},
    {"aten::relu({a})"},
    {"aten::floor({a})"},
    {"aten::round({a})"},
    {"aten::sign({a})"},
    {"aten::reciprocal({a})"},
    {"aten::logical_not({a})"},
    {"aten::bitwise_not({a})"},
    {"aten::erf({a})"},
    {"aten::add({a}, {b}, %c1)"},
    {"aten::sub({a}, {b}, %c2)"},
    {"aten::mul({a}, {b})"},
    {"aten::div({a}, {b})"},
    {"aten::maximum({a}, {b})"},
    {"aten::minimum({a}, {b})"},
    {"aten::atan2({a}, {b})"},
    {"aten::eq({a}, {b})"},
    {"aten::lt({a}, {b})"},
    {"aten::ge({a}, {b})"},
    {"aten::logical_and({a}, {b})"},
    {"aten::__and__({a}, {b})"},
    {"aten::__or__({a}, {b})"},
    {"aten::pow({a}, {b})"},
    {"aten::remainder({a}, {b})"},
    {"aten::fmod({a}, {b})"},
    {"aten::floor_divide({a}, {b})"},
    {"aten::where({bool}, {a}, {b})"},
    {"aten::add({a}, %k, %c1)"},
    {"aten::mul({a}, %g)"},
    {"aten::sub({a}, %g, %c1)"},
    {"aten::clamp({a}, %cm, %none)"},
    {"aten::clamp({a}, %none, %c2)"},
    {"aten::clamp_min({a}, %ch)"},
    {"aten::pow({a}, %c2)"},
    {"aten::where({bool}, {a}, %g)"},
    {"aten::where({bool}, %k, {a})"},
    {"aten::lt({a}, %g)"},
    {"aten::to({a}, %float32, %false, %false, %none)"},
    {"aten::to({a}, %int64, %false, %false, %none)"},
    {"aten::to({a}, %bool, %false, %false, %none)"},
    {"aten::to({a}, %int32, %false, %false, %none)"},
    {"aten::type_as({a}, {b})", true},
    {"aten::div({a}, {b}, %floor_mode)"},
    {"aten::lerp({a}, {b}, %ch)"},
};

// Random pointwise graphs over tensors of random dtypes and numbers; every
// node the generator accepts must compute what the interpreter computes
// (and must not be one on which the interpreter raises).
class RandomGraph {
 public:
  explicit RandomGraph(uint32_t seed) : rng_(seed) {}

  // Inputs %t0..%t2 (dimensioned), %z (0-dim), %k (int), %g (float).
  std::pair<std::shared_ptr<Graph>, Stack> build(int nodes, bool strided) {
    const ScalarType dtypes[] = {ScalarType::Float, ScalarType::Double, ScalarType::Long, ScalarType::Int,
                                 ScalarType::Bool};
    std::vector<KernelInput> kinds;
    Stack inputs;
    for (int i = 0; i < 4; ++i) {
      const ScalarType dtype = dtypes[rng_() % std::size(dtypes)];
      const bool zero_dim = i == 3;
      Tensor t = makeTensor(zero_dim ? IntArrayRef{} : IntArrayRef{5, 6}, dtype, rng_());
      inputs.push_back(strided && !zero_dim ? asStrided(t) : t);
      kinds.push_back({zero_dim ? InputKind::ZeroDimTensor : InputKind::Tensor, dtype});
      values_.push_back({i == 3 ? "%z" : "%t" + std::to_string(i), !zero_dim});
    }
    inputs.push_back(IValue(int64_t{3}));
    inputs.push_back(IValue(-1.25));
    kinds.push_back(numberOf(ScalarType::Long));
    kinds.push_back(numberOf(ScalarType::Double));
    std::vector<ScalarType> types = *inferKernelTypes(*parseIR(text(false)), kinds, nullptr);
    for (int added = 0, attempts = 0; added < nodes && attempts < 50 * nodes; ++attempts) {
      const Pattern& p = kPatterns[rng_() % std::size(kPatterns)];
      std::string line = p.text;
      bool dimensioned = false, ok = true;
      for (size_t at, placeholder = 0; ok && (at = line.find('{')) != std::string::npos; ++placeholder) {
        const bool want_bool = line.compare(at, 6, "{bool}") == 0;
        std::vector<size_t> candidates;
        for (size_t v = 0; v < values_.size(); ++v)
          if (!want_bool || types[v] == ScalarType::Bool) candidates.push_back(v);
        ok = !candidates.empty();
        if (!ok) break;
        const size_t v = candidates[rng_() % candidates.size()];
        // type_as's second operand lends only its dtype, not its shape.
        if (!(p.second_lends_dtype && placeholder == 1)) dimensioned = dimensioned || values_[v].dimensioned;
        line.replace(at, line.find('}', at) - at + 1, values_[v].name);
      }
      if (!ok) continue;
      const std::string name = "%v" + std::to_string(values_.size());
      nodes_.push_back("  " + name + " : Tensor = " + line);
      values_.push_back({name, dimensioned});
      auto inferred = inferKernelTypes(*parseIR(text(false)), kinds, nullptr);
      if (!inferred) {
        nodes_.pop_back();
        values_.pop_back();
        continue;
      }
      types = *inferred;
      ++added;
    }
    return {parseIR(text(true)), inputs};
  }

 private:
  struct Named {
    std::string name;
    bool dimensioned;
  };

  std::string text(bool dimensioned_outputs_only) const {
    std::string s =
        "graph(%t0 : Tensor, %t1 : Tensor, %t2 : Tensor, %z : Tensor, %k : int, %g : float):\n"
        "  %c1 : int = prim::Constant[value=1]()\n  %c2 : int = prim::Constant[value=2]()\n"
        "  %ch : float = prim::Constant[value=0.5]()\n  %cm : float = prim::Constant[value=-1.5]()\n"
        "  %float32 : int = prim::Constant[value=6]()\n  %int64 : int = prim::Constant[value=4]()\n"
        "  %int32 : int = prim::Constant[value=3]()\n  %bool : int = prim::Constant[value=11]()\n"
        "  %false : bool = prim::Constant[value=0]()\n  %none : NoneType = prim::Constant()\n"
        "  %floor_mode : str = prim::Constant[value=\"floor\"]()\n";
    for (const std::string& line : nodes_) s += line + "\n";
    std::string outputs;
    for (size_t v = 0; v < values_.size(); ++v) {
      const bool is_node = v >= 4;
      if (dimensioned_outputs_only && !(is_node && values_[v].dimensioned)) continue;
      outputs += (outputs.empty() ? "" : ", ") + values_[v].name;
    }
    return s + "  return (" + outputs + ")\n";
  }

  std::mt19937 rng_;
  std::vector<Named> values_;
  std::vector<std::string> nodes_;
};

TEST_F(FusedKernel, RandomGraphsContiguous) {
  auto [graph, inputs] = RandomGraph(2024).build(30, false);
  expectSameAsInterpreter(graph, inputs);
}

TEST_F(FusedKernel, RandomGraphsStrided) {
  auto [graph, inputs] = RandomGraph(77).build(30, true);
  expectSameAsInterpreter(graph, inputs);
}

// --- eager and fused results are the same bits --------------------------------------

namespace bits {

// Values that stress the element math: random ones, NaN, infinities, signed
// zeros, subnormals, halves, and magnitudes where exp, sinh and cosh overflow.
Tensor awkwardValues(ScalarType dtype, int64_t n, uint32_t seed) {
  if (!isFloatingType(dtype)) return makeTensor({n}, dtype, seed);
  Tensor t = empty({n}, ScalarType::Double);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-4, 4);
  const double specials[] = {NAN,    INFINITY, -INFINITY, 0.0,    -0.0,   0.5,    -2.5,  1.0,
                             -1.0,   1e-40,    -3e-39,    5e-324, 1e-310, 88.5,   -89.5, 100.0,
                             -710.5, 1e19,     -1e30,     1e-20,  0.3,    0.6931, 20.0,  -20.0};
  double* p = t.data<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = rng() % 4 == 0 ? specials[rng() % std::size(specials)] : uniform(rng);
  return to(t, dtype);
}

// A value for a non-tensor argument: the schema's default where there is
// one, else something the op accepts.
std::optional<IValue> constantFor(const Argument& arg, ScalarType dtype) {
  const std::string& type = arg.type_text;
  const bool floating = isFloatingType(dtype);
  if (arg.name == "alpha" || arg.name == "value") return floating ? IValue(0.75) : IValue(int64_t{3});
  if (arg.name == "weight") return IValue(0.25);
  if (arg.name == "exponent") return floating ? IValue(1.5) : IValue(int64_t{3});
  if (arg.name == "rounding_mode") return IValue(std::string("floor"));
  if (arg.name == "decimals") return IValue(int64_t{2});
  if (arg.name == "min") return floating ? IValue(-0.5) : IValue(int64_t{-2});
  if (arg.name == "max") return floating ? IValue(0.5) : IValue(int64_t{2});
  if (arg.name == "dtype")
    return IValue(static_cast<int64_t>(dtype == ScalarType::Double ? ScalarType::Float : ScalarType::Double));
  if (arg.default_value) return *arg.default_value;
  if (type.rfind("Scalar", 0) == 0) return floating ? IValue(1.5) : IValue(int64_t{3});
  return std::nullopt;
}

struct OpGraph {
  std::shared_ptr<Graph> graph;
  std::vector<std::string> names;  // per output, the schema it calls
};

// One node per described pointwise overload the kernel generator accepts for
// `dtype`, all reading the inputs %x, %y, %z (of `dtype`) and %c (bool).
OpGraph describedOpsGraph(ScalarType dtype) {
  OpGraph out;
  out.graph = std::make_shared<Graph>();
  Graph& g = *out.graph;
  Value* tensors[] = {g.addInput("x"), g.addInput("y"), g.addInput("z")};
  Value* condition = g.addInput("c");
  for (Value* v : {tensors[0], tensors[1], tensors[2], condition}) v->setType(TensorType::get());
  const std::vector<KernelInput> kinds = {tensorOf(dtype), tensorOf(dtype), tensorOf(dtype),
                                          tensorOf(ScalarType::Bool)};
  for (const OperatorPtr& op : getAllOperators()) {
    if (!op->description().pointwise) continue;
    // Try the node alone first: the generator refuses some dtypes and arguments.
    auto single = std::make_shared<Graph>();
    std::vector<Value*> single_inputs;
    for (int i = 0; i < 4; ++i) single_inputs.push_back(single->addInput()->setType(TensorType::get()));
    auto build = [&](Graph& graph, const std::vector<Value*>& inputs) -> Node* {
      std::vector<Value*> args;
      size_t next_tensor = 0;
      for (const Argument& arg : op->schema().arguments()) {
        const bool tensor =
            arg.type->kind() == TypeKind::Tensor ||
            (arg.type->kind() == TypeKind::Optional && arg.type->containedTypes()[0]->kind() == TypeKind::Tensor);
        if (arg.name == "condition") {
          args.push_back(inputs[3]);
        } else if (tensor) {
          args.push_back(inputs[next_tensor++ % 3]);
        } else if (auto c = constantFor(arg, dtype)) {
          args.push_back(graph.insertConstant(*c));
        } else {
          return nullptr;
        }
      }
      Node* n = graph.insertNode(graph.create(op->symbol(), args, 1));
      n->setOperator(op);
      n->output()->setType(TensorType::get());
      return n;
    };
    Node* alone = build(*single, single_inputs);
    if (!alone) continue;
    single->registerOutput(alone->output());
    if (!inferKernelTypes(*single, kinds, nullptr)) continue;
    Node* n = build(g, {tensors[0], tensors[1], tensors[2], condition});
    g.registerOutput(n->output());
    out.names.push_back(op->schema().str());
  }
  return out;
}

// Same bits, counting every NaN as one value.
::testing::AssertionResult sameBits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return ::testing::AssertionFailure() << "dtype or shape differ";
  Tensor x = contiguous(a), y = contiguous(b);
  const size_t size = elementSize(x.dtype());
  const auto* p = static_cast<const unsigned char*>(x.rawData());
  const auto* q = static_cast<const unsigned char*>(y.rawData());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::memcmp(p + i * size, q + i * size, size) == 0) continue;
    if (isFloatingType(x.dtype())) {
      const double u = to(select(x, 0, i), ScalarType::Double).item().toDouble();
      const double v = to(select(y, 0, i), ScalarType::Double).item().toDouble();
      if (std::isnan(u) && std::isnan(v)) continue;
      return ::testing::AssertionFailure() << "element " << i << ": " << std::setprecision(17) << u << " vs " << v;
    }
    return ::testing::AssertionFailure() << "element " << i << " differs";
  }
  return ::testing::AssertionSuccess();
}

// `at_least`: how many described overloads the generator accepts for the
// dtype, so that the comparison cannot quietly shrink.
void expectEagerAndFusedBitIdentical(ScalarType dtype, size_t at_least) {
  OpGraph ops = describedOpsGraph(dtype);
  ASSERT_GE(ops.names.size(), at_least);
  std::cout << ops.names.size() << " described overloads in one kernel\n";
  const int64_t n = 1003;  // not a multiple of any vector width: kernels have tails
  Stack inputs = {IValue(awkwardValues(dtype, n, 1)), IValue(awkwardValues(dtype, n, 2)),
                  IValue(awkwardValues(dtype, n, 3)), IValue(makeTensor({n}, ScalarType::Bool, 4))};
  Stack strided_inputs;
  for (const IValue& v : inputs) strided_inputs.push_back(IValue(asStrided(v.toTensor())));
  FusedRun fused = runFused(ops.graph, inputs);
  ASSERT_EQ(fused.outputs.size(), ops.names.size()) << fused.why;
  const std::vector<Tensor> eager = runUnfused(ops.graph, inputs);
  const std::vector<Tensor> eager_strided = runUnfused(ops.graph, strided_inputs);
  ASSERT_EQ(eager.size(), ops.names.size());
  ASSERT_EQ(eager_strided.size(), ops.names.size());
  for (size_t i = 0; i < ops.names.size(); ++i) {
    EXPECT_TRUE(sameBits(fused.outputs[i], eager[i])) << ops.names[i] << " fused vs eager";
    EXPECT_TRUE(sameBits(eager_strided[i], eager[i])) << ops.names[i] << " eager strided vs contiguous";
  }
}

}  // namespace bits

TEST_F(FusedKernel, EagerAndFusedBitIdenticalFloat32) { bits::expectEagerAndFusedBitIdentical(ScalarType::Float, 90); }
TEST_F(FusedKernel, EagerAndFusedBitIdenticalFloat64) { bits::expectEagerAndFusedBitIdentical(ScalarType::Double, 90); }
TEST_F(FusedKernel, EagerAndFusedBitIdenticalInt64) { bits::expectEagerAndFusedBitIdentical(ScalarType::Long, 90); }
TEST_F(FusedKernel, EagerAndFusedBitIdenticalInt32) { bits::expectEagerAndFusedBitIdentical(ScalarType::Int, 90); }
TEST_F(FusedKernel, EagerAndFusedBitIdenticalBool) { bits::expectEagerAndFusedBitIdentical(ScalarType::Bool, 75); }

}  // namespace
}  // namespace kiln::fuser
