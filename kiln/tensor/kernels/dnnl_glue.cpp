#include "kiln/tensor/kernels/dnnl_glue.h"

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

#include "kiln/tensor/parallel.h"
#include "kiln/tensor/tensor.h"
#include "kiln/util/error.h"

namespace kiln::detail {

dnnl::engine& dnnlEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Streams are cheap and not meant to be shared between threads.
dnnl::stream& dnnlThreadStream() {
  thread_local dnnl::stream stream(dnnlEngine());
  return stream;
}

void useKilnThreadsForDnnl(int threads) {
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

int dnnlThreadsFor(double work) {
  int n = getNumThreads();
  return work < kDnnlSerialMacs ? 1 : n;
}

namespace {

using dnnl::memory;
using Dims = memory::dims;

dnnl::engine& cpuEngine() { return dnnlEngine(); }
dnnl::stream& threadStream() { return dnnlThreadStream(); }

std::atomic<int64_t> g_built{0};

void append(std::vector<int64_t>& key, const std::vector<int64_t>& values) {
  key.push_back(static_cast<int64_t>(values.size()));
  key.insert(key.end(), values.begin(), values.end());
}

Dims contiguousStridesOf(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

memory::desc plainDesc(const Dims& dims) {
  return memory::desc(dims, memory::data_type::f32, contiguousStridesOf(dims));
}

// The weight as oneDNN's logical dims ((g,) OC/g, C/g, k...) with the
// strides of torch's contiguous layout.
memory::desc weightDesc(const DnnlConvParams& p) {
  const auto& w = p.weight;
  int64_t k = 1;
  for (size_t i = 2; i < w.size(); ++i) k *= w[i];
  Dims kdims(w.begin() + 2, w.end());
  Dims kstrides = contiguousStridesOf(kdims);
  int64_t g = p.groups;
  // Torch: forward (OC, Cg, k...), transposed (C, OCg, k...) with C = g*Cg.
  int64_t ocg = p.transposed ? w[1] : w[0] / g;
  int64_t cg = p.transposed ? w[0] / g : w[1];
  Dims dims, strides;
  if (g > 1) {
    dims = {g, ocg, cg};
    strides = p.transposed ? Dims{cg * ocg * k, k, ocg * k} : Dims{ocg * cg * k, cg * k, k};
  } else {
    dims = {ocg, cg};
    strides = p.transposed ? Dims{k, ocg * k} : Dims{cg * k, k};
  }
  dims.insert(dims.end(), kdims.begin(), kdims.end());
  strides.insert(strides.end(), kstrides.begin(), kstrides.end());
  return memory::desc(dims, memory::data_type::f32, strides);
}

struct ConvEntry {
  bool ok = false;
  dnnl::primitive conv;
  memory::desc src_user, src, weight_user, weight, bias, dst_user, dst;
  // Between the plain layouts and the primitive's, where they differ.
  std::optional<dnnl::reorder> src_in, weight_in, dst_out;
};

std::optional<dnnl::reorder> reorderBetween(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), from, cpuEngine(), to));
}

ConvEntry makeConv(const DnnlConvParams& p) {
  ConvEntry e;
  try {
    auto& engine = cpuEngine();
    e.src_user = plainDesc(p.src);
    e.dst_user = plainDesc(p.dst);
    e.weight_user = weightDesc(p);
    auto any = memory::format_tag::any;
    memory::desc src_any(p.src, memory::data_type::f32, any);
    memory::desc dst_any(p.dst, memory::data_type::f32, any);
    memory::desc weight_any(e.weight_user.dims(), memory::data_type::f32, any);
    memory::desc bias_md =
        p.has_bias ? memory::desc({p.dst[1]}, memory::data_type::f32, memory::format_tag::a) : memory::desc();
    Dims dilation;
    for (int64_t d : p.dilation) dilation.push_back(d - 1);  // oneDNN counts the gaps
    auto prop = dnnl::prop_kind::forward_inference;
    if (p.transposed) {
      dnnl::deconvolution_forward::desc d(prop, dnnl::algorithm::deconvolution_direct, src_any, weight_any, bias_md,
                                          dst_any, p.stride, dilation, p.pad_l, p.pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(d, engine);
      e.src = pd.src_desc();
      e.weight = pd.weights_desc();
      e.dst = pd.dst_desc();
      e.conv = dnnl::deconvolution_forward(pd);
    } else {
      dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_direct, src_any, weight_any, bias_md,
                                        dst_any, p.stride, dilation, p.pad_l, p.pad_r);
      dnnl::convolution_forward::primitive_desc pd(d, engine);
      e.src = pd.src_desc();
      e.weight = pd.weights_desc();
      e.dst = pd.dst_desc();
      e.conv = dnnl::convolution_forward(pd);
    }
    e.bias = bias_md;
    e.src_in = reorderBetween(e.src_user, e.src);
    e.weight_in = reorderBetween(e.weight_user, e.weight);
    e.dst_out = reorderBetween(e.dst, e.dst_user);
    e.ok = true;
  } catch (const dnnl::error&) {
    e.ok = false;
  }
  return e;
}

// The reordered copies of one call, kiln tensors made per call, so that a
// memory plan's arena serves them with the call's other temporaries (and,
// unplanned, the allocator's large-block cache keeps their pages). They
// were per-thread buffers kept between calls, each as large as the largest
// any call had wanted, held for good: 20 MiB for the small UNet at batch 8.
enum Slot { kSrc, kWeight, kDst, kSlots };

struct CallBuffers {
  Tensor held[kSlots];

  memory in(const memory::desc& desc, Slot slot) {
    held[slot] =
        empty({static_cast<int64_t>((desc.get_size() + sizeof(float) - 1) / sizeof(float))}, ScalarType::Float);
    return memory(desc, cpuEngine(), held[slot].rawData());
  }

  // `user` in the primitive's layout: itself, or reordered into a buffer.
  memory asLayout(const memory& user, const memory::desc& wanted, const std::optional<dnnl::reorder>& reorder,
                  Slot slot, dnnl::stream& stream) {
    if (!reorder) return user;
    memory out = in(wanted, slot);
    reorder->execute(stream, const_cast<memory&>(user), out);
    return out;
  }
};

struct PoolEntry {
  bool ok = false;
  dnnl::primitive pool;
  memory::desc src, dst;
};

}  // namespace

bool dnnlConvolution(const DnnlConvParams& p, const float* src, const float* weight, const float* bias, float* dst) {
  static PrimitiveCache<ConvEntry> cache;
  // Multiply-adds: every output element sums over a (C/g, k...) window.
  double work = 1;
  for (int64_t d : p.dst) work *= static_cast<double>(d);
  for (size_t i = 1; i < p.weight.size(); ++i) work *= static_cast<double>(p.weight[i]);
  const int threads = dnnlThreadsFor(work);
  useKilnThreadsForDnnl(threads);
  std::vector<int64_t> key{p.transposed, p.groups, p.has_bias, threads};
  for (const auto* v : {&p.src, &p.weight, &p.dst, &p.stride, &p.dilation, &p.pad_l, &p.pad_r}) append(key, *v);
  auto entry = cache.get(key, [&] {
    ++g_built;
    return makeConv(p);
  });
  if (!entry->ok) return false;
  try {
    auto& engine = cpuEngine();
    auto& stream = threadStream();
    memory src_user(entry->src_user, engine, const_cast<float*>(src));
    memory weight_user(entry->weight_user, engine, const_cast<float*>(weight));
    memory dst_user(entry->dst_user, engine, dst);
    CallBuffers buffers;
    memory src_mem = buffers.asLayout(src_user, entry->src, entry->src_in, kSrc, stream);
    memory weight_mem = buffers.asLayout(weight_user, entry->weight, entry->weight_in, kWeight, stream);
    memory dst_mem = entry->dst_out ? buffers.in(entry->dst, kDst) : dst_user;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, weight_mem}, {DNNL_ARG_DST, dst_mem}};
    if (p.has_bias) args.emplace(DNNL_ARG_BIAS, memory(entry->bias, engine, const_cast<float*>(bias)));
    entry->conv.execute(stream, args);
    if (entry->dst_out) entry->dst_out->execute(stream, dst_mem, dst_user);
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool dnnlPooling(const DnnlPoolParams& p, const float* src, float* dst) {
  static PrimitiveCache<PoolEntry> cache;
  double work = 1;
  for (int64_t d : p.dst) work *= static_cast<double>(d);
  for (int64_t k : p.kernel) work *= static_cast<double>(k);
  const int threads = work < kDnnlSerialElements ? 1 : getNumThreads();
  useKilnThreadsForDnnl(threads);
  std::vector<int64_t> key{static_cast<int64_t>(p.kind), threads};
  for (const auto* v : {&p.src, &p.dst, &p.kernel, &p.stride, &p.dilation, &p.pad_l, &p.pad_r}) append(key, *v);
  auto entry = cache.get(key, [&] {
    ++g_built;
    PoolEntry e;
    try {
      e.src = plainDesc(p.src);
      e.dst = plainDesc(p.dst);
      Dims dilation;
      for (int64_t d : p.dilation) dilation.push_back(d - 1);
      auto alg = p.kind == DnnlPool::Max             ? dnnl::algorithm::pooling_max
                 : p.kind == DnnlPool::AvgIncludePad ? dnnl::algorithm::pooling_avg_include_padding
                                                     : dnnl::algorithm::pooling_avg_exclude_padding;
      dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, e.src, e.dst, p.stride, p.kernel,
                                       dilation, p.pad_l, p.pad_r);
      dnnl::pooling_v2_forward::primitive_desc pd(d, cpuEngine());
      e.pool = dnnl::pooling_v2_forward(pd);
      e.ok = true;
    } catch (const dnnl::error&) {
      e.ok = false;
    }
    return e;
  });
  if (!entry->ok) return false;
  try {
    auto& engine = cpuEngine();
    auto& stream = threadStream();
    memory src_mem(entry->src, engine, const_cast<float*>(src));
    memory dst_mem(entry->dst, engine, dst);
    entry->pool.execute(stream, {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_DST, dst_mem}});
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

int64_t dnnlPrimitivesBuilt() { return g_built.load(); }

}  // namespace kiln::detail
