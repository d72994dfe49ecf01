#pragma once
// Helpers for the fuser's kernel tests: a private kernel cache folder per
// test, input tensors with awkward values, and a kernel graph run the way the
// fused-group operator runs it (operands, strides and layouts, the range split
// in pieces), to compare with the interpreter.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "kiln/fuser/codegen.h"
#include "kiln/fuser/fuser.h"
#include "kiln/fuser/kernel_compiler.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/shape.h"
#include "tests/cpp/pass_test_util.h"

namespace kiln::fuser::testing {

// Each test gets an empty disk cache (gtest_discover_tests runs each test in
// its own process, so the memory cache starts empty too).
class FreshKernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-kernel-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    setenv("KILN_KERNEL_CACHE", dir_.c_str(), 1);
    detail::clearKernelMemoryCache();
    resetKernelCacheStats();
    // The interpreter's results are the reference: its graphs must not fuse.
    setFusionEnabled(false);
  }
  void TearDown() override {
    setFusionEnabled(true);
    unsetenv("KILN_KERNEL_CACHE");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string dir_;
};

// Values of `dtype` with the awkward ones mixed in: NaN, infinities, signed
// zeros, halves (rounding), integer extremes (wrapping).
inline Tensor makeTensor(IntArrayRef sizes, ScalarType dtype, uint32_t seed) {
  double lowest = -9.2e18, highest = 9.2e18;
  if (dtype == ScalarType::Int) lowest = -2147483648.0, highest = 2147483647.0;
  if (dtype == ScalarType::Short) lowest = -32768, highest = 32767;
  if (dtype == ScalarType::Char) lowest = -128, highest = 127;
  if (dtype == ScalarType::Byte) lowest = 0, highest = 255;
  Tensor t = empty(sizes, ScalarType::Double);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-3, 3);
  const bool floating = isFloatingType(dtype);
  const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -2.5, 1.5, 1.0, -1.0};
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const size_t pick = rng() % 16;
    if (dtype == ScalarType::Bool) {
      p[i] = pick % 2;
    } else if (!floating) {
      const double v = std::round(uniform(rng) * 4);
      p[i] = pick == 0 ? highest : pick == 1 ? lowest : dtype == ScalarType::Byte ? std::abs(v) : v;
    } else {
      p[i] = pick < std::size(specials) && pick % 3 == 0 ? specials[pick] : uniform(rng);
    }
  }
  return to(t, dtype);
}

// The same values as a strided view: transposed storage of the last two dims.
inline Tensor asStrided(const Tensor& t) {
  if (t.dim() < 2) {
    // Every other element of a buffer twice as long.
    Tensor wide = empty({t.numel() * 2}, t.dtype());
    Tensor view = slice(wide, 0, 0, std::nullopt, 2);
    Tensor v = view;
    copy_(v, t);
    return makeView(view, t.sizes(), {t.dim() == 0 ? 0 : 2}, view.storageOffset());
  }
  Tensor transposed = contiguous(transpose(t, -1, -2));
  return transpose(transposed, -1, -2);
}

struct FusedRun {
  std::vector<Tensor> outputs;
  std::string why;  // why no kernel ran
  std::string source;
};

// Runs `graph` as one kernel over the broadcast shape of its tensor inputs,
// without merging dims, calling the kernel on three pieces of the range.
inline FusedRun runFused(const std::shared_ptr<Graph>& graph, const Stack& inputs) {
  FusedRun run;
  std::vector<KernelInput> kinds;
  std::vector<Tensor> tensors;
  std::vector<KernelScalar> scalars;
  DimVector shape;
  bool first = true;
  for (const IValue& v : inputs) {
    if (v.isTensor()) {
      const Tensor& t = v.toTensor();
      kinds.push_back({t.dim() == 0 ? InputKind::ZeroDimTensor : InputKind::Tensor, t.dtype()});
      tensors.push_back(t);
      shape = first ? DimVector(t.sizes()) : broadcastShapes(shape, t.sizes());
      first = false;
    } else {
      KernelScalar s{};
      if (v.isDouble()) {
        s.f = v.toDouble();
        kinds.push_back({InputKind::Scalar, ScalarType::Double});
      } else {
        s.i = v.isBool() ? v.toBool() : v.toInt();
        kinds.push_back({InputKind::Scalar, v.isBool() ? ScalarType::Bool : ScalarType::Long});
      }
      scalars.push_back(s);
    }
  }
  auto dtypes = inferKernelTypes(*graph, kinds, &run.why);
  if (!dtypes) return run;
  for (ScalarType dtype : *dtypes) run.outputs.push_back(empty(shape, dtype));

  DimVector loop = shape.empty() ? DimVector{1} : shape;
  const size_t ndim = loop.size();
  std::vector<const Tensor*> operands;
  for (const Tensor& t : run.outputs) operands.push_back(&t);
  for (const Tensor& t : tensors) operands.push_back(&t);
  std::vector<int64_t> strides(operands.size() * ndim, 0);
  std::vector<OperandLayout> layouts;
  const DimVector dense = contiguousStrides(loop);
  for (size_t k = 0; k < operands.size(); ++k) {
    const Tensor& t = *operands[k];
    const size_t offset = shape.size() - static_cast<size_t>(t.dim());
    for (size_t d = 0; d < static_cast<size_t>(t.dim()); ++d) {
      strides[k * ndim + offset + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
    }
    bool zero = true, contiguous = true;
    for (size_t d = 0; d < ndim; ++d) {
      const int64_t s = strides[k * ndim + d];
      zero = zero && s == 0;
      contiguous = contiguous && (loop[d] == 1 || s == dense[d]);
    }
    layouts.push_back(zero         ? OperandLayout::Broadcast
                      : contiguous ? OperandLayout::Contiguous
                                   : OperandLayout::Strided);
  }
  KernelSpec spec{graph, kinds, *dtypes, static_cast<int>(ndim), layouts};
  run.source = generateKernelSource(spec);
  CompiledKernel kernel = compileKernel(run.source);
  if (!kernel.fn) {
    run.why = kernel.error;
    run.outputs.clear();
    return run;
  }
  std::vector<char*> data;
  for (const Tensor* t : operands) data.push_back(static_cast<char*>(t->rawData()));
  const int64_t total = shapeNumel(loop);
  const int64_t cuts[] = {0, total / 3, total / 3 + 1, total};
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
    kernel.fn(cuts[i], cuts[i + 1], data.data(), loop.data(), strides.data(), scalars.data());
  }
  return run;
}

// Element-wise equality: integers and bools exactly, floats within `tolerance`
// relative to magnitude (NaN equals NaN, infinities equal themselves).
inline ::testing::AssertionResult sameTensor(const Tensor& fused, const Tensor& expected, double tolerance) {
  if (fused.dtype() != expected.dtype() || fused.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure() << "dtype or shape differ: " << fused.dtype() << shapeString(fused.sizes())
                                         << " vs " << expected.dtype() << shapeString(expected.sizes());
  }
  const double tol = isFloatingType(fused.dtype()) ? tolerance : 0;
  Tensor a = contiguous(to(fused, ScalarType::Double)), b = contiguous(to(expected, ScalarType::Double));
  const double* p = a.data<double>();
  const double* q = b.data<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const bool same =
        (std::isnan(p[i]) && std::isnan(q[i])) || p[i] == q[i] || std::abs(p[i] - q[i]) <= tol * (1 + std::abs(q[i]));
    if (!same) return ::testing::AssertionFailure() << "element " << i << ": fused " << p[i] << ", unfused " << q[i];
  }
  return ::testing::AssertionSuccess();
}

// The graph's results through the interpreter, one tensor per output.
inline std::vector<Tensor> runUnfused(const std::shared_ptr<Graph>& graph, const Stack& inputs) {
  kiln::testing::RunResult r = kiln::testing::runGraph(graph, inputs);
  EXPECT_TRUE(r.value.has_value()) << "the interpreter raised: " << r.error;
  std::vector<Tensor> out;
  if (!r.value) return out;
  if (r.value->isTuple()) {
    for (const IValue& v : r.value->toTupleRef().elements) out.push_back(v.toTensor());
  } else {
    out.push_back(r.value->toTensor());
  }
  return out;
}

// Fused and unfused results agree output by output; the tolerance is for
// float32 transcendental functions (float64 gets 1e-12). The kernel computes
// every output over the whole loop, so an output that depends on only some
// inputs is compared with the interpreter's result broadcast to the loop.
inline void expectSameAsInterpreter(const std::shared_ptr<Graph>& graph, const Stack& inputs) {
  FusedRun fused = runFused(graph, inputs);
  ASSERT_FALSE(fused.outputs.empty()) << fused.why;
  std::vector<Tensor> expected = runUnfused(graph, inputs);
  ASSERT_EQ(fused.outputs.size(), expected.size());
  bool all_same = true;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double tol = expected[i].dtype() == ScalarType::Double ? 1e-12 : 1e-5;
    const Tensor& want =
        expected[i].sizes() == fused.outputs[i].sizes() ? expected[i] : expand(expected[i], fused.outputs[i].sizes());
    auto same = sameTensor(fused.outputs[i], want, tol);
    EXPECT_TRUE(same) << "output " << i << " (%" << graph->outputs()[i]->debugName() << " = "
                      << graph->outputs()[i]->node()->kind().toQualString() << ")";
    all_same = all_same && same;
  }
  if (!all_same) ADD_FAILURE() << "the kernel:\n" << fused.source;
}

}  // namespace kiln::fuser::testing
