// The tensor layer's shared edge-case mechanisms: TensorIter's memory-overlap
// checks, the one checked Scalar conversion, and BLAS-ready matmul operands.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/scalar_convert.h"
#include "kiln/tensor/shape.h"

using namespace kiln;

namespace {

// The message of the Error `f` raises ("" when it does not raise).
template <typename F>
std::string errorOf(const F& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* const kInternalOverlap =
    "unsupported operation: more than one element of the written-to tensor refers to "
    "a single memory location. Please clone() the tensor before performing the "
    "operation.";
const char* const kPartialOverlap =
    "unsupported operation: some elements of the input tensor and the written-to "
    "tensor refer to a single memory location. Please clone() the tensor before "
    "performing the operation.";

}  // namespace

TEST(TensorIterOverlap, ExpandedOutputRaises) {
  Tensor expanded = expand(zeros({1}), DimVector{3});
  EXPECT_NE(errorOf([&] { add_(expanded, ones({3})); }).find(kInternalOverlap), std::string::npos);
  Tensor out = expand(zeros({1}), DimVector{3});
  EXPECT_NE(errorOf([&] { addOut(ones({3}), ones({3}), Scalar(int64_t{1}), out); }).find(kInternalOverlap),
            std::string::npos);
  // Nothing was written.
  EXPECT_EQ(expanded.data<float>()[0], 0.0f);
}

TEST(TensorIterOverlap, SizeOneAndEmptyStrideZeroDimsAreFine) {
  Tensor one = expand(zeros({1}), DimVector{1});
  add_(one, ones({1}));
  EXPECT_EQ(one.data<float>()[0], 1.0f);
  Tensor none = expand(zeros({1}), DimVector{0});
  EXPECT_NO_THROW(add_(none, scalarToTensor(Scalar(1.0))));
}

TEST(TensorIterOverlap, PartialOverlapWithAnInputRaises) {
  Tensor base = arange(Scalar(int64_t{0}), Scalar(int64_t{4}), Scalar(int64_t{1}), ScalarType::Float);
  Tensor tail = slice(base, 0, 1, std::nullopt), head = slice(base, 0, std::nullopt, -1);
  EXPECT_NE(errorOf([&] { add_(tail, head); }).find(kPartialOverlap), std::string::npos);
  // The same memory as input and output is fine.
  add_(base, base);
  EXPECT_EQ(base.data<float>()[3], 6.0f);
}

TEST(TensorIterOverlap, OptOutForOpsThatWriteRepeatedElements) {
  // fill_ writes an expanded tensor, as PyTorch's does.
  Tensor expanded = expand(zeros({1}), DimVector{3});
  fill_(expanded, Scalar(2.0));
  EXPECT_EQ(expanded.data<float>()[0], 2.0f);
  // An iterator built without the check runs.
  TensorIter iter("test");
  iter.addOutput(expanded).addInput(ones({3})).checkMemOverlap(false).build();
  EXPECT_EQ(iter.numel(), 3);
}

TEST(CheckedScalar, FollowsC10Rules) {
  EXPECT_EQ(checkedScalarTo<uint8_t>(Scalar(int64_t{-1})), 255);  // negative ints wrap into unsigned types
  EXPECT_EQ(errorOf([] { checkedScalarTo<uint8_t>(Scalar(int64_t{300})); }),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(errorOf([] { checkedScalarTo<uint8_t>(Scalar(int64_t{-300})); }),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(errorOf([] { checkedScalarTo<int32_t>(Scalar(1e20)); }),
            "value cannot be converted to type int without overflow");
  EXPECT_EQ(errorOf([] { checkedScalarTo<int64_t>(Scalar(std::nan(""))); }),
            "value cannot be converted to type int64_t without overflow");
  EXPECT_EQ(errorOf([] { checkedScalarTo<float>(Scalar(1e39)); }),
            "value cannot be converted to type float without overflow");
  EXPECT_TRUE(std::isinf(checkedScalarTo<float>(Scalar(std::numeric_limits<double>::infinity()))));
  EXPECT_TRUE(std::isnan(checkedScalarTo<float>(Scalar(std::nan("")))));
  EXPECT_TRUE(checkedScalarTo<bool>(Scalar(2.5)));  // bool takes any number
  EXPECT_EQ(checkedScalarTo<int8_t>(Scalar(true)), 1);
  EXPECT_EQ(errorOf([] { checkScalarFits(Scalar(int64_t{70000}), ScalarType::Half); }),
            "value cannot be converted to type at::Half without overflow");
  EXPECT_EQ(errorOf([] { checkScalarFits(Scalar(1e300), ScalarType::BFloat16); }),
            "value cannot be converted to type at::BFloat16 without overflow");
  EXPECT_TRUE(scalarFits(Scalar(65504.0), ScalarType::Half));
  EXPECT_FALSE(scalarFits(Scalar(65519.0), ScalarType::Half));
  EXPECT_FALSE(scalarFits(Scalar(0x1p63), ScalarType::Long));
}

TEST(CheckedScalar, BoolNegationStaysBool) {
  // sub negates alpha; a bool alpha must still be seen as one.
  EXPECT_TRUE((-Scalar(true)).isBoolean());
  EXPECT_EQ(errorOf([] { sub(ones({2}), ones({2}), Scalar(true)); }),
            "Boolean alpha only supported for Boolean results.");
}

TEST(MatmulOperands, StrideZeroVectorWithABatch) {
  Tensor vec = expand(full({1}, Scalar(1.5), ScalarType::Float), DimVector{3});
  Tensor batch = ones({2, 3, 4});
  Tensor result = matmul(vec, batch);
  ASSERT_EQ(result.dim(), 2);
  EXPECT_EQ(result.size(0), 2);
  EXPECT_EQ(result.size(1), 4);
  EXPECT_EQ(contiguous(result).data<float>()[7], 4.5f);
  Tensor result_t = matmul(ones({2, 4, 3}), vec);
  EXPECT_EQ(contiguous(result_t).data<float>()[7], 4.5f);
}
