#include "kiln/tensor/shape.h"

#include <gtest/gtest.h>

#include <vector>

#include "kiln/core/operator.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/index.h"

using namespace kiln;

namespace {

// 0, 1, 2, ... in the given shape and dtype.
Tensor arange(IntArrayRef sizes, ScalarType dtype = ScalarType::Float) {
  Tensor t = empty(sizes, ScalarType::Long);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = i;
  return to(t, dtype);
}

Tensor longs(std::vector<int64_t> values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, ScalarType::Long);
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

// The values in row-major order, as doubles.
std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(to(t, ScalarType::Double));
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

std::vector<int64_t> shape(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

}  // namespace

TEST(ShapeGeometry, InferSizeAndErrors) {
  EXPECT_EQ(inferSize(DimVector{2, -1}, 6), (DimVector{2, 3}));
  EXPECT_THROW(inferSize(DimVector{-1, -1}, 6), Error);
  EXPECT_THROW(inferSize(DimVector{4, -1}, 6), Error);
  EXPECT_THROW(inferSize(DimVector{-1, 0}, 0), Error);  // ambiguous
  EXPECT_THROW(inferSize(DimVector{-2, 3}, 6), Error);
}

TEST(ShapeGeometry, ComputeStrideMergesOnlyContiguousChunks) {
  // A transposed [3, 2] view of a [2, 3] tensor cannot be flattened ...
  EXPECT_FALSE(computeStride(DimVector{3, 2}, DimVector{1, 3}, DimVector{6}).has_value());
  // ... but it can split or gain size-1 dims.
  auto split = computeStride(DimVector{3, 2}, DimVector{1, 3}, DimVector{3, 1, 2});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->operator[](0), 1);
  EXPECT_EQ(split->operator[](2), 3);
  // Every other row of a [4, 3] tensor: the rows merge only within themselves.
  EXPECT_FALSE(computeStride(DimVector{2, 3}, DimVector{6, 1}, DimVector{6}).has_value());
  EXPECT_TRUE(computeStride(DimVector{2, 3}, DimVector{6, 1}, DimVector{2, 3, 1}).has_value());
}

TEST(ShapeGeometry, DenseAndOverlapChecks) {
  Tensor a = arange({2, 3});
  EXPECT_TRUE(isNonOverlappingAndDense(a));
  EXPECT_TRUE(isNonOverlappingAndDense(transpose(a, 0, 1)));
  EXPECT_FALSE(isNonOverlappingAndDense(slice(a, 1, 0, 3, 2)));
  EXPECT_THROW(assertNoInternalOverlap(expand(select(a, 0, 0), DimVector{4, 3})), Error);
  Tensor flat = view(a, DimVector{6});
  EXPECT_THROW(assertNoPartialOverlap(slice(flat, 0, 1, 6), slice(flat, 0, 0, 5)), Error);
  EXPECT_NO_THROW(assertNoPartialOverlap(slice(flat, 0, 0, 3), slice(flat, 0, 3, 6)));
  EXPECT_THROW(assertNoOverlap(flat, a), Error);
}

TEST(Views, ShareStorageAndWriteThrough) {
  Tensor a = arange({2, 3});
  Tensor v = view(a, DimVector{6});
  EXPECT_EQ(v.storage().get(), a.storage().get());
  Tensor column = select(t(a), 0, 1);  // a[:, 1]
  EXPECT_EQ(shape(column), (std::vector<int64_t>{2}));
  EXPECT_EQ(column.strides()[0], 3);
  checkedCopy_(column, longs({-1, -2}));
  EXPECT_EQ(values(a), (std::vector<double>{0, -1, 2, 3, -2, 5}));
  Tensor e = expand(select(a, 0, 0), DimVector{4, 3});
  EXPECT_EQ(e.strides()[0], 0);
  EXPECT_EQ(values(e)[9], 0);
}

TEST(Views, SliceClampsLikePython) {
  Tensor a = arange({10});
  EXPECT_EQ(values(slice(a, 0, -3)), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(values(slice(a, 0, 2, 100, 3)), (std::vector<double>{2, 5, 8}));
  EXPECT_EQ(slice(a, 0, 8, 2).numel(), 0);
  EXPECT_EQ(slice(a, 0, std::nullopt, std::nullopt, INT64_MAX).numel(), 1);
  EXPECT_THROW(slice(a, 0, 0, 5, 0), Error);
  EXPECT_THROW(slice(empty({}), 0), IndexError);
}

TEST(Views, SelectAndNarrowErrors) {
  Tensor a = arange({2, 3});
  EXPECT_EQ(values(select(a, 1, -1)), (std::vector<double>{2, 5}));
  EXPECT_THROW(select(a, 1, 3), IndexError);
  EXPECT_THROW(select(empty({}), 0, 0), IndexError);
  EXPECT_EQ(narrow(a, 1, 3, 0).numel(), 0);
  EXPECT_THROW(narrow(a, 1, 2, 2), Error);
}

TEST(Views, InPlaceGeometry) {
  Tensor a = arange({2, 3});
  Tensor alias_of_a = a;  // same TensorImpl
  transpose_(a, 0, 1);
  EXPECT_EQ(shape(alias_of_a), (std::vector<int64_t>{3, 2}));
  unsqueeze_(a, 0);
  squeeze_(a);
  EXPECT_EQ(a.dim(), 2);
}

TEST(Views, AsStridedIsBoundsChecked) {
  Tensor a = arange({2, 3});
  EXPECT_EQ(values(asStrided(a, DimVector{2, 2}, DimVector{1, 2}, 1)), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_THROW(asStrided(a, DimVector{3}, DimVector{3}), Error);
  EXPECT_THROW(asStrided(a, DimVector{2}, DimVector{INT64_MAX}), Error);
  EXPECT_NO_THROW(asStrided(a, DimVector{0}, DimVector{100}, 100));
}

TEST(Views, ViewDtypeRescalesLastDim) {
  Tensor a = arange({2, 4}, ScalarType::Int);
  Tensor wide = viewDtype(a, ScalarType::Long);
  EXPECT_EQ(shape(wide), (std::vector<int64_t>{2, 2}));
  Tensor narrow_view = viewDtype(a, ScalarType::Short);
  EXPECT_EQ(shape(narrow_view), (std::vector<int64_t>{2, 8}));
  EXPECT_THROW(viewDtype(t(a), ScalarType::Long), Error);
}

TEST(Copies, ClonePreservesDenseLayout) {
  Tensor a = transpose(arange({2, 3}), 0, 1);
  Tensor c = clone(a, MemoryFormat::Preserve);
  EXPECT_EQ(c.strides()[0], 1);
  EXPECT_NE(c.storage().get(), a.storage().get());
  EXPECT_TRUE(clone(a, MemoryFormat::Contiguous).isContiguous());
  Tensor nchw = arange({1, 2, 2, 2});
  Tensor nhwc = clone(nchw, MemoryFormat::ChannelsLast);
  EXPECT_EQ(nhwc.strides()[1], 1);
  EXPECT_EQ(values(nhwc), values(nchw));
}

TEST(ShapeOps, CatPromotesAndSkipsLegacyEmpty) {
  std::vector<Tensor> parts = {arange({1, 2}, ScalarType::Int), empty({0}, ScalarType::Double),
                               arange({2, 2}, ScalarType::Float)};
  Tensor c = cat(parts, 0);
  EXPECT_EQ(c.dtype(), ScalarType::Double);
  EXPECT_EQ(shape(c), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(c), (std::vector<double>{0, 1, 0, 1, 2, 3}));
  std::vector<Tensor> bad = {arange({1, 2}), arange({1, 3})};
  EXPECT_THROW(cat(bad, 0), Error);
  EXPECT_THROW(cat(std::vector<Tensor>{}, 0), Error);
  EXPECT_THROW(cat(std::vector<Tensor>{empty({})}, 0), Error);
}

TEST(ShapeOps, StackRepeatFlipRoll) {
  Tensor a = arange({2, 3});
  Tensor s = stack(std::vector<Tensor>{a, a}, 2);
  EXPECT_EQ(shape(s), (std::vector<int64_t>{2, 3, 2}));
  Tensor r = repeat(a, DimVector{2, 1, 2});
  EXPECT_EQ(shape(r), (std::vector<int64_t>{2, 2, 6}));
  EXPECT_EQ(values(r)[3], 0);
  EXPECT_EQ(values(flip(t(a), DimVector{0, 1})), (std::vector<double>{5, 2, 4, 1, 3, 0}));
  EXPECT_EQ(values(roll(a, DimVector{1}, DimVector{1})), (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(values(roll(a, DimVector{-1}, DimVector{})), (std::vector<double>{1, 2, 3, 4, 5, 0}));
}

TEST(ShapeOps, TrilTriu) {
  Tensor a = arange({3, 3});
  EXPECT_EQ(values(tril(a)), (std::vector<double>{0, 0, 0, 3, 4, 0, 6, 7, 8}));
  EXPECT_EQ(values(triu(a, 1)), (std::vector<double>{0, 1, 2, 0, 0, 5, 0, 0, 0}));
  EXPECT_EQ(values(tril(a, INT64_MIN)), std::vector<double>(9, 0.0));
  EXPECT_EQ(values(triu(a, INT64_MIN)), values(a));
  EXPECT_THROW(tril(arange({3})), Error);
}

TEST(Indexing, GatherScatterIndexSelect) {
  Tensor a = arange({2, 3});
  Tensor idx = view(longs({2, 0, 1, 1}), DimVector{2, 2});
  EXPECT_EQ(values(gather(a, 1, idx)), (std::vector<double>{2, 0, 4, 4}));
  EXPECT_THROW(gather(a, 1, view(longs({3, 0, 0, 0}), DimVector{2, 2})), Error);
  Tensor z = to(arange({2, 3}), ScalarType::Float);
  scatterAdd_(z, 1, idx, to(arange({2, 2}), ScalarType::Float));
  EXPECT_EQ(values(z), (std::vector<double>{1, 1, 2, 3, 9, 5}));
  EXPECT_EQ(values(indexSelect(a, 1, longs({2, 2}))), (std::vector<double>{2, 2, 5, 5}));
  EXPECT_THROW(indexSelect(a, 1, longs({-1})), IndexError);
}

TEST(Indexing, AdvancedIndexPlacesDimsLikeNumpy) {
  Tensor a = arange({2, 3, 4});
  Tensor i = longs({0, 1});
  Tensor j = longs({1, 3});
  // Adjacent index tensors keep their place ...
  EXPECT_EQ(shape(index(a, std::vector<Tensor>{Tensor(), i, j})), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(shape(index(a, std::vector<Tensor>{Tensor(), i})), (std::vector<int64_t>{2, 2, 4}));
  // ... separated ones go first.
  Tensor split = index(a, std::vector<Tensor>{i, Tensor(), j});
  EXPECT_EQ(shape(split), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(split), (std::vector<double>{1, 5, 9, 15, 19, 23}));
  EXPECT_THROW(index(a, std::vector<Tensor>{longs({2})}), IndexError);
  EXPECT_THROW(index(a, std::vector<Tensor>{i, longs({0, 1, 2})}), IndexError);
  EXPECT_THROW(index(a, std::vector<Tensor>{to(i, ScalarType::Int)}), IndexError);
}

TEST(Indexing, IndexPutAccumulatesDuplicates) {
  Tensor a = to(arange({4}), ScalarType::Float);
  Tensor idx = longs({1, 1, 3});
  indexPut_(a, std::vector<Tensor>{idx}, scalarToTensor(Scalar(2.0), ScalarType::Float), true);
  EXPECT_EQ(values(a), (std::vector<double>{0, 5, 2, 5}));
  EXPECT_THROW(indexPut_(a, std::vector<Tensor>{idx}, scalarToTensor(Scalar(2.0), ScalarType::Double)), Error);
}

TEST(Indexing, MasksAndNonzero) {
  Tensor a = arange({2, 3});
  Tensor mask = to(view(longs({1, 0, 1, 0, 0, 1}), DimVector{2, 3}), ScalarType::Bool);
  Tensor nz = nonzero(mask);
  EXPECT_EQ(shape(nz), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(nz), (std::vector<double>{0, 0, 0, 2, 1, 2}));
  EXPECT_EQ(values(maskedSelect(a, mask)), (std::vector<double>{0, 2, 5}));
  Tensor filled = maskedFill(a, mask, Scalar(-1.0));
  EXPECT_EQ(values(filled), (std::vector<double>{-1, 1, -1, 3, 4, -1}));
  EXPECT_EQ(values(index(a, std::vector<Tensor>{mask})), (std::vector<double>{0, 2, 5}));
}

TEST(Indexing, LargeInputsMatchSerialResults) {
  // Above the parallel grain size, gathers and scatters still hit every element once.
  const int64_t n = 200000;
  Tensor a = arange({n}, ScalarType::Long);
  Tensor perm = empty({n}, ScalarType::Long);
  for (int64_t i = 0; i < n; ++i) perm.data<int64_t>()[i] = (i * 7919) % n;
  Tensor g = index(a, std::vector<Tensor>{perm});
  for (int64_t i = 0; i < n; i += 997) EXPECT_EQ(g.data<int64_t>()[i], (i * 7919) % n);
  Tensor counts = empty({10}, ScalarType::Long);
  for (int64_t i = 0; i < 10; ++i) counts.data<int64_t>()[i] = 0;
  Tensor buckets = empty({n}, ScalarType::Long);
  for (int64_t i = 0; i < n; ++i) buckets.data<int64_t>()[i] = i % 10;
  indexPut_(counts, std::vector<Tensor>{buckets}, scalarToTensor(Scalar(int64_t{1}), ScalarType::Long), true);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(counts.data<int64_t>()[i], n / 10);
}

TEST(ShapeOps, RegisteredWithTorchSchemas) {
  for (auto [name, overload] : std::vector<std::pair<const char*, const char*>>{{"index", "Tensor"},
                                                                                {"index_put_", ""},
                                                                                {"slice", "Tensor"},
                                                                                {"cat", "out"},
                                                                                {"scatter_", "value_reduce"},
                                                                                {"copy_", "int"},
                                                                                {"size", "int"},
                                                                                {"split", "Tensor"},
                                                                                {"masked_fill_", "Tensor"}}) {
    EXPECT_NE(findOperator(Symbol::aten(name), overload), nullptr) << name << "." << overload;
  }
}
