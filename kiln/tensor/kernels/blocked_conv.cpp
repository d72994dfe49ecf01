#include "kiln/tensor/blocked_conv.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/dnnl_glue.h"
#include "kiln/tensor/kernels/winograd.h"
#include "kiln/tensor/parallel.h"

namespace kiln {
namespace {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;

dnnl::engine& engine() { return detail::dnnlEngine(); }
dnnl::stream& threadStream() { return detail::dnnlThreadStream(); }
void useKilnThreads() { detail::useKilnThreadsForDnnl(getNumThreads()); }

// Threads for a reorder or pooling touching `elements` elements.
int elementThreads(double elements) { return elements < detail::kDnnlSerialElements ? 1 : getNumThreads(); }

Tag blockedTag(int64_t block) {
  if (block == 16) return Tag::nChw16c;
  if (block == 8) return Tag::nChw8c;
  return Tag::nchw;
}

memory::desc activationDesc(int64_t n, int64_t c, int64_t h, int64_t w, int64_t block) {
  return memory::desc({n, c, h, w}, memory::data_type::f32, blockedTag(block));
}

// The sizes of the kiln tensor holding an activation.
DimVector activationSizes(int64_t n, int64_t c, int64_t h, int64_t w, int64_t block) {
  if (block == 0) return {n, c, h, w};
  return {n, (c + block - 1) / block, h, w, block};
}

int64_t param(IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

std::optional<dnnl::algorithm> eltwiseAlgorithm(const std::string& name) {
  using A = dnnl::algorithm;
  if (name == "relu") return A::eltwise_relu;
  if (name == "hardtanh") return A::eltwise_clip_v2;
  if (name == "silu") return A::eltwise_swish;
  if (name == "sigmoid") return A::eltwise_logistic;
  if (name == "tanh") return A::eltwise_tanh;
  if (name == "gelu") return A::eltwise_gelu_erf;
  if (name == "gelu_tanh") return A::eltwise_gelu_tanh;
  if (name == "elu") return A::eltwise_elu;
  return std::nullopt;
}

template <typename Entry>
using Cache = detail::PrimitiveCache<Entry, 1024>;

int64_t bits(double v) {
  int64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

std::vector<int64_t> paramsKey(const FusedConv2dParams& p) {
  std::vector<int64_t> key{p.groups, p.in_block, p.out_block, p.has_bias, p.has_residual, bits(p.alpha), bits(p.beta)};
  for (char c : p.activation) key.push_back(c);
  for (IntArrayRef v :
       {IntArrayRef(p.weight_size), IntArrayRef(p.stride), IntArrayRef(p.padding), IntArrayRef(p.dilation)}) {
    key.push_back(static_cast<int64_t>(v.size()));
    key.insert(key.end(), v.begin(), v.end());
  }
  return key;
}

// oneDNN's logical weight dims ((g,) OC/g, C/g, kh, kw), with torch's
// contiguous strides.
memory::desc torchWeightDesc(const FusedConv2dParams& p) {
  const auto& w = p.weight_size;
  int64_t g = p.groups, k = w[2] * w[3];
  if (g > 1) {
    return memory::desc({g, w[0] / g, w[1], w[2], w[3]}, memory::data_type::f32,
                        Dims{(w[0] / g) * w[1] * k, w[1] * k, k, w[3], 1});
  }
  return memory::desc({w[0], w[1], w[2], w[3]}, memory::data_type::f32, Dims{w[1] * k, k, w[3], 1});
}

Dims weightAnyDims(const FusedConv2dParams& p) {
  const auto& w = p.weight_size;
  if (p.groups > 1) return {p.groups, w[0] / p.groups, w[1], w[2], w[3]};
  return {w[0], w[1], w[2], w[3]};
}

// Winograd F(4x4, 3x3) for 3x3 stride-1 convolutions: about half the
// multiplications of the direct algorithm (torch 1.13 does not use it);
// its rounding stays far inside 1e-4 relative. Its weights are 36/9 = 4
// times the size of the plain ones, laid out per image size, and the plain
// weight stays to convert from: so it runs only where the weight is small
// (at most 128x128x3x3 floats, 576 KiB; its transformed copy at most
// 2.3 MiB). In CNNs those are the early layers, on the largest images,
// where Winograd saves the most per byte; the wide late layers (ResNet-18's
// 3x3 stride-1 ones of 256 and 512 channels: 35 MB of its 45 MB of
// weights, 140 MB more as Winograd's) run on 14x14 and 7x7 images, where
// it saves little. KILN_DNNL_WINOGRAD=0 turns it off, =all puts it on
// every layer oneDNN takes it for.
constexpr int64_t kWinogradMaxWeightElements = 128 * 128 * 9;

enum class WinogradUse { Off, Small, All };

WinogradUse winogradUse() {
  static const WinogradUse use = [] {
    const char* env = std::getenv("KILN_DNNL_WINOGRAD");
    if (env && std::string(env) == "0") return WinogradUse::Off;
    if (env && std::string(env) == "all") return WinogradUse::All;
    return WinogradUse::Small;
  }();
  return use;
}

bool useWinograd(const FusedConv2dParams& p) {
  const WinogradUse use = winogradUse();
  const auto& ws = p.weight_size;
  if (use == WinogradUse::Off ||
      (use == WinogradUse::Small && ws[0] * ws[1] * ws[2] * ws[3] > kWinogradMaxWeightElements))
    return false;
  return p.groups == 1 && ws[2] == 3 && ws[3] == 3 && param(p.stride, 0) == 1 && param(p.stride, 1) == 1 &&
         param(p.dilation, 0) == 1 && param(p.dilation, 1) == 1 && p.in_block != 0;
}

struct ConvEntry {
  bool ok = false;
  int threads = 1;        // built for, and run with (detail::dnnlThreadsFor)
  bool winograd = false;  // its weight layout depends on the image size
  dnnl::convolution_forward conv;
  memory::desc src, weight, bias, dst;
  // The activations' layouts as kiln holds them; with plain activations
  // the primitive picks its own (src, dst) and the call reorders.
  memory::desc src_user, dst_user;
  // The primitive's working memory, a kiln tensor made at each call, so
  // that a memory plan's arena serves it with the call's other temporaries.
  // oneDNN's library-managed scratchpad is a buffer of its own, as large
  // as the largest any primitive wanted and held for good (Winograd's
  // transformed tiles: about 35 MiB for ResNet-18 at batch 8).
  memory::desc scratchpad;
};

// The convolution for an input of (n, C, h, w). Without `build` only its
// layouts: the primitive (its JIT-compiled code) is made only for inputs
// that run.
ConvEntry makeConv(const FusedConv2dParams& p, int64_t n, int64_t h, int64_t w, bool build) {
  ConvEntry e;
  try {
    const auto& ws = p.weight_size;
    int64_t oc = ws[0], c = ws[1] * p.groups;
    int64_t oh = (h + 2 * param(p.padding, 0) - param(p.dilation, 0) * (ws[2] - 1) - 1) / param(p.stride, 0) + 1;
    int64_t ow = (w + 2 * param(p.padding, 1) - param(p.dilation, 1) * (ws[3] - 1) - 1) / param(p.stride, 1) + 1;
    if (oh <= 0 || ow <= 0) return e;
    e.src_user = e.src = activationDesc(n, c, h, w, p.in_block);
    e.dst_user = e.dst = activationDesc(n, oc, oh, ow, p.out_block);
    if (p.in_block == 0 && p.out_block == 0) {
      // Plain NCHW on both sides (the executor's fusion over live weights):
      // oneDNN's direct kernels want blocked activations, so let it choose,
      // as aten::conv2d does, and reorder around the call.
      e.src = memory::desc({n, c, h, w}, memory::data_type::f32, Tag::any);
      e.dst = memory::desc({n, oc, oh, ow}, memory::data_type::f32, Tag::any);
    }
    memory::desc weight_any(weightAnyDims(p), memory::data_type::f32, Tag::any);
    e.bias = p.has_bias ? memory::desc({oc}, memory::data_type::f32, Tag::a) : memory::desc();
    Dims strides{param(p.stride, 0), param(p.stride, 1)};
    Dims dilation{param(p.dilation, 0) - 1, param(p.dilation, 1) - 1};
    Dims pad{param(p.padding, 0), param(p.padding, 1)};
    dnnl::post_ops ops;
    if (p.has_residual) ops.append_sum(1.f);
    if (auto alg = eltwiseAlgorithm(p.activation)) {
      ops.append_eltwise(1.f, *alg, p.activation == "silu" ? 1.f : static_cast<float>(p.alpha),
                         static_cast<float>(p.beta));
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make = [&](dnnl::algorithm alg) {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, e.src, weight_any, e.bias, e.dst,
                                        strides, dilation, pad, pad);
      return dnnl::convolution_forward::primitive_desc(d, attr, engine());
    };
    dnnl::convolution_forward::primitive_desc pd;
    bool have = false;
    if (useWinograd(p)) {
      try {
        pd = make(dnnl::algorithm::convolution_winograd);
        have = true;
      } catch (const dnnl::error&) {
      }
    }
    e.winograd = have;
    if (!have) pd = make(dnnl::algorithm::convolution_direct);
    e.weight = pd.weights_desc();
    e.src = pd.src_desc();
    e.dst = pd.dst_desc();
    e.scratchpad = pd.scratchpad_desc();
    if (build) e.conv = dnnl::convolution_forward(pd);
    e.ok = true;
  } catch (const dnnl::error&) {
    e.ok = false;
  }
  return e;
}

// The input size the prepacked layout is chosen for: one image whose
// output is 8x8 (oneDNN picks the weight layout by ISA and channels, not
// by image size; a mismatch at run time costs a reorder, not a wrong result).
std::pair<int64_t, int64_t> nominalInput(const FusedConv2dParams& p) {
  int64_t in[2];
  for (size_t i = 0; i < 2; ++i) {
    int64_t extent = param(p.dilation, i) * (p.weight_size[2 + i] - 1) + 1;
    int64_t o = 8;
    do {
      in[i] = (o - 1) * param(p.stride, i) + extent - 2 * param(p.padding, i);
      ++o;
    } while (in[i] < 1);
  }
  return {in[0], in[1]};
}

std::shared_ptr<const ConvEntry> convEntry(const FusedConv2dParams& p, int64_t n, int64_t h, int64_t w,
                                           bool build = true) {
  static Cache<ConvEntry> cache, layouts_only;
  const auto& ws = p.weight_size;
  // Multiply-adds, over the output as if unpadded (the grain is rough).
  double work = static_cast<double>(n) * ws[0] * ws[1] * ws[2] * ws[3] *
                static_cast<double>(std::max<int64_t>(1, h / param(p.stride, 0))) *
                static_cast<double>(std::max<int64_t>(1, w / param(p.stride, 1)));
  const int threads = detail::dnnlThreadsFor(work);
  detail::useKilnThreadsForDnnl(threads);
  auto key = paramsKey(p);
  key.insert(key.end(), {n, h, w, threads});
  return (build ? cache : layouts_only).get(key, [&] {
    ConvEntry e = makeConv(p, n, h, w, build);
    e.threads = threads;
    return e;
  });
}

// The layouts a weight is prepacked for. Only its descriptors: the nominal
// input does not run (each ResNet-18 convolution's primitive held about
// 0.1 MiB of generated code).
std::shared_ptr<const ConvEntry> nominalEntry(const FusedConv2dParams& p) {
  auto [h, w] = nominalInput(p);
  return convEntry(p, 1, h, w, /*build=*/false);
}

void checkParams(const FusedConv2dParams& p) {
  KILN_CHECK(p.weight_size.size() == 4 && p.groups > 0 && p.weight_size[0] % p.groups == 0,
             "fused_conv2d: expected a 4-d weight size whose output channels divide by groups");
  for (IntArrayRef v : {IntArrayRef(p.stride), IntArrayRef(p.padding), IntArrayRef(p.dilation)})
    KILN_CHECK(v.size() == 1 || v.size() == 2, "fused_conv2d: expected 1 or 2 values per parameter");
  for (int64_t b : {p.in_block, p.out_block})
    KILN_CHECK(b == 0 || b == 8 || b == 16, "fused_conv2d: channel block must be 0, 8 or 16, got ", b);
}

Tensor floatContiguous(const Tensor& t, const char* what) {
  KILN_CHECK(t.dtype() == ScalarType::Float, what, ": expected a float tensor, got ", scalarTypeName(t.dtype()));
  return t.isContiguous() ? t : contiguous(t);
}

void reorder(const memory::desc& from, const void* src, const memory::desc& to, void* dst) {
  memory a(from, engine(), const_cast<void*>(src));
  memory b(to, engine(), dst);
  auto& stream = threadStream();
  dnnl::reorder(a, b).execute(stream, a, b);
  stream.wait();
}

// The weights fusedConv2d converted from a constant's layout into the one a
// convolution wants (Winograd's, which depends on the image size): one copy
// per constant and wanted layout, shared by every input size and thread
// count whose convolution wants that layout. An entry holds its constant
// (so the address it is found by stays that constant's); entries whose
// constant nothing else holds any more (the module was freed) are dropped
// at the next conversion and by convertedConvWeightStats().
class ConvertedWeights {
 public:
  memory get(const Tensor& weight, const memory::desc& given, const memory::desc& wanted) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = weights_.find(weight.rawData()); it != weights_.end()) {
      for (const Layout& l : it->second.layouts) {
        if (l.given == given && l.converted.get_desc() == wanted) return l.converted;
      }
    }
    sweep();
    Layout l{given, memory(wanted, engine())};
    memory source(given, engine(), weight.rawData());
    auto& stream = threadStream();
    dnnl::reorder(source, l.converted).execute(stream, source, l.converted);
    stream.wait();
    auto it = weights_.try_emplace(weight.rawData(), Weight{weight, {}}).first;
    it->second.layouts.push_back(l);
    return l.converted;
  }

  ConvertedConvWeightStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    sweep();
    ConvertedConvWeightStats out;
    for (const auto& [address, w] : weights_) {
      for (const Layout& l : w.layouts) {
        ++out.count;
        out.bytes += static_cast<int64_t>(l.converted.get_desc().get_size());
      }
    }
    return out;
  }

 private:
  struct Layout {
    memory::desc given;
    memory converted;
  };
  struct Weight {
    Tensor source;
    std::vector<Layout> layouts;
  };

  // Drops the weights only this cache holds.
  void sweep() {
    for (auto it = weights_.begin(); it != weights_.end();) {
      const Tensor& t = it->second.source;
      it = t.useCount() == 1 && t.storage()->useCount() == 1 ? weights_.erase(it) : std::next(it);
    }
  }

  std::mutex mutex_;
  std::unordered_map<const void*, Weight> weights_;
};

ConvertedWeights& convertedWeights() {
  static ConvertedWeights* cache = new ConvertedWeights();  // never destroyed: tensors may outlive statics
  return *cache;
}

}  // namespace

int64_t dnnlChannelBlock() {
  static const int64_t block = [] {
    auto isa = dnnl::get_effective_cpu_isa();
    using I = dnnl::cpu_isa;
    for (I wide : {I::avx512_core, I::avx512_core_vnni, I::avx512_core_bf16, I::avx512_core_amx})
      if (isa == wide) return int64_t{16};
    for (I narrow : {I::avx2, I::avx2_vnni})
      if (isa == narrow) return int64_t{8};
    return int64_t{0};
  }();
  return block;
}

ConvertedConvWeightStats convertedConvWeightStats() { return convertedWeights().stats(); }

bool isFusableActivation(const std::string& activation) {
  return activation == "none" || eltwiseAlgorithm(activation).has_value();
}

Tensor toBlocked(const Tensor& x, int64_t block) {
  KILN_CHECK(x.dim() == 4, "to_blocked: expected a 4-d (N, C, H, W) tensor, got ", x.dim(), " dims");
  KILN_CHECK(block == 8 || block == 16, "to_blocked: block must be 8 or 16, got ", block);
  Tensor src = floatContiguous(x, "to_blocked");
  int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  Tensor out = empty(activationSizes(n, c, h, w, block), ScalarType::Float);
  if (out.numel() == 0) return out;
  detail::useKilnThreadsForDnnl(elementThreads(static_cast<double>(out.numel())));
  reorder(activationDesc(n, c, h, w, 0), src.rawData(), activationDesc(n, c, h, w, block), out.rawData());
  return out;
}

Tensor fromBlocked(const Tensor& x, int64_t channels) {
  KILN_CHECK(x.dim() == 5 && (x.size(4) == 8 || x.size(4) == 16),
             "from_blocked: expected a 5-d (N, C/b, H, W, b) tensor with b 8 or 16");
  int64_t block = x.size(4);
  KILN_CHECK(channels > 0 && (channels + block - 1) / block == x.size(1), "from_blocked: ", channels,
             " channels do not fill ", x.size(1), " blocks of ", block);
  Tensor src = floatContiguous(x, "from_blocked");
  int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  Tensor out = empty(activationSizes(n, channels, h, w, 0), ScalarType::Float);
  if (out.numel() == 0) return out;
  detail::useKilnThreadsForDnnl(elementThreads(static_cast<double>(out.numel())));
  reorder(activationDesc(n, channels, h, w, block), src.rawData(), activationDesc(n, channels, h, w, 0), out.rawData());
  return out;
}

std::optional<Tensor> prepackConv2dWeight(const Tensor& weight, const FusedConv2dParams& p) {
  checkParams(p);
  KILN_CHECK(weight.sizes() == IntArrayRef(p.weight_size), "prepack: weight sizes differ from the parameters'");
  if (!isFusableActivation(p.activation)) return std::nullopt;
  Tensor w = floatContiguous(weight, "prepack");
  auto entry = nominalEntry(p);
  if (!entry->ok) return std::nullopt;
  // A Winograd weight's layout depends on the image size: it is converted
  // from torch's layout once per size, on first use (fusedConv2d); kiln's
  // own Winograd (winograd.h) transforms torch's layout.
  if (entry->winograd || detail::winogradMayRun(p)) return w;
  Tensor packed = empty({static_cast<int64_t>(entry->weight.get_size() / sizeof(float))}, ScalarType::Float);
  useKilnThreads();
  reorder(torchWeightDesc(p), w.rawData(), entry->weight, packed.rawData());
  return packed;
}

Tensor fusedConv2d(const Tensor& input, const Tensor& packed_weight, const std::optional<Tensor>& bias,
                   const std::optional<Tensor>& residual, const FusedConv2dParams& p) {
  checkParams(p);
  const auto& ws = p.weight_size;
  const int64_t oc = ws[0], c = ws[1] * p.groups;
  Tensor x = floatContiguous(input, "fused_conv2d");
  if (p.in_block == 0) {
    KILN_CHECK(x.dim() == 4 && x.size(1) == c, "fused_conv2d: expected input of shape (N, ", c, ", H, W), got ",
               shapeString(x.sizes()));
  } else {
    KILN_CHECK(x.dim() == 5 && x.size(4) == p.in_block && x.size(1) == (c + p.in_block - 1) / p.in_block,
               "fused_conv2d: expected a blocked input of ", c, " channels in blocks of ", p.in_block, ", got ",
               shapeString(x.sizes()));
  }
  int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  KILN_CHECK(n > 0 && h > 0 && w > 0, "fused_conv2d: empty input");
  if (packed_weight.dim() == 4 && packed_weight.sizes() == IntArrayRef(p.weight_size) &&
      detail::winogradChosen(p, n, h, w)) {
    Tensor wt = floatContiguous(packed_weight, "fused_conv2d weight");
    return detail::winogradConv2d(x, wt, bias, residual, p, wt.isSame(packed_weight));
  }
  auto entry = convEntry(p, n, h, w);
  KILN_CHECK(entry->ok, "fused_conv2d: oneDNN has no convolution for input ", shapeString(x.sizes()),
             " (kernel larger than the padded input?)");
  // A 4-d weight is torch's layout (before prepack_dnnl_weights ran); a 1-d
  // one was prepacked for the nominal image size.
  const bool torch_layout = packed_weight.dim() == 4;
  auto nominal = nominalEntry(p);
  if (torch_layout) {
    KILN_CHECK(packed_weight.sizes() == IntArrayRef(p.weight_size), "fused_conv2d: weight of shape ",
               shapeString(packed_weight.sizes()), " for weight_size ", shapeString(p.weight_size));
  } else {
    KILN_CHECK(nominal->ok && packed_weight.dim() == 1 &&
                   static_cast<size_t>(packed_weight.nbytes()) == nominal->weight.get_size(),
               "fused_conv2d: the weight was not prepacked for these parameters");
  }
  const auto& dd = entry->dst_user.dims();
  Tensor out = empty(activationSizes(dd[0], oc, dd[2], dd[3], p.out_block), ScalarType::Float);
  KILN_CHECK(static_cast<size_t>(out.nbytes()) == entry->dst_user.get_size(), "fused_conv2d: unexpected output size");
  detail::useKilnThreadsForDnnl(entry->threads);
  auto& eng = engine();
  auto& stream = threadStream();
  // Where the primitive reads and writes: the tensors themselves, or
  // buffers in its own layouts.
  const bool reorder_src = entry->src != entry->src_user, reorder_dst = entry->dst != entry->dst_user;
  Tensor src_buffer =
      reorder_src ? empty({static_cast<int64_t>(entry->src.get_size() / sizeof(float))}, ScalarType::Float) : x;
  Tensor dst_buffer =
      reorder_dst ? empty({static_cast<int64_t>(entry->dst.get_size() / sizeof(float))}, ScalarType::Float) : out;
  if (reorder_src) {
    memory from(entry->src_user, eng, x.rawData()), to(entry->src, eng, src_buffer.rawData());
    dnnl::reorder(from, to).execute(stream, from, to);
  }
  if (p.has_residual) {
    KILN_CHECK(residual.has_value(), "fused_conv2d: missing residual");
    Tensor r = floatContiguous(*residual, "fused_conv2d residual");
    KILN_CHECK(r.sizes() == out.sizes(), "fused_conv2d: residual of shape ", shapeString(r.sizes()),
               " does not match the output's ", shapeString(out.sizes()));
    if (reorder_dst) {
      memory from(entry->dst_user, eng, r.rawData()), to(entry->dst, eng, dst_buffer.rawData());
      dnnl::reorder(from, to).execute(stream, from, to);
    } else {
      std::memcpy(out.rawData(), r.rawData(), out.nbytes());
    }
  }
  Tensor b;
  if (p.has_bias) {
    KILN_CHECK(bias.has_value(), "fused_conv2d: missing bias");
    b = floatContiguous(*bias, "fused_conv2d bias");
    KILN_CHECK(b.numel() == oc, "fused_conv2d: bias of ", b.numel(), " elements for ", oc, " output channels");
  }
  Tensor wt = floatContiguous(packed_weight, "fused_conv2d weight");
  memory weight_mem(entry->weight, eng);
  const memory::desc& given = torch_layout ? torchWeightDesc(p) : nominal->weight;
  if (given == entry->weight) {
    weight_mem = memory(entry->weight, eng, wt.rawData());
  } else {
    // The layout this convolution wants differs from the constant's
    // (Winograd, or oneDNN chose another layout for this image size):
    // converted once per weight and layout, then kept.
    if (wt.isSame(packed_weight) && p.in_block != 0) {
      weight_mem = convertedWeights().get(wt, given, entry->weight);
    } else {
      // A copy made for this call has no lasting address to key a cache by.
      memory source(given, eng, wt.rawData());
      dnnl::reorder(source, weight_mem).execute(stream, source, weight_mem);
    }
  }
  memory src_mem(entry->src, eng, src_buffer.rawData());
  memory dst_mem(entry->dst, eng, dst_buffer.rawData());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, weight_mem}, {DNNL_ARG_DST, dst_mem}};
  if (p.has_bias) args.emplace(DNNL_ARG_BIAS, memory(entry->bias, eng, b.rawData()));
  Tensor scratchpad;
  if (const size_t bytes = entry->scratchpad.get_size(); bytes > 0) {
    scratchpad = empty({static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float))}, ScalarType::Float);
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(entry->scratchpad, eng, scratchpad.rawData()));
  }
  entry->conv.execute(stream, args);
  if (reorder_dst) {
    memory to(entry->dst_user, eng, out.rawData());
    dnnl::reorder(dst_mem, to).execute(stream, dst_mem, to);
  }
  stream.wait();
  return out;
}

bool canRunFusedConv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       const std::optional<Tensor>& residual, const FusedConv2dParams& p) {
  if (p.in_block != 0 || p.out_block != 0 || !isFusableActivation(p.activation)) return false;
  if (p.weight_size.size() != 4 || p.groups <= 0 || p.weight_size[0] % p.groups != 0) return false;
  for (IntArrayRef v : {IntArrayRef(p.stride), IntArrayRef(p.padding), IntArrayRef(p.dilation)})
    if (v.size() != 1 && v.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i)
    if (param(p.stride, i) <= 0 || param(p.padding, i) < 0 || param(p.dilation, i) <= 0) return false;
  const ScalarType f = ScalarType::Float;
  if (input.dtype() != f || weight.dtype() != f || input.dim() != 4 || weight.sizes() != IntArrayRef(p.weight_size))
    return false;
  const auto& ws = p.weight_size;
  if (input.size(1) != ws[1] * p.groups || input.numel() == 0 || weight.numel() == 0) return false;
  if (bias.has_value() != p.has_bias || residual.has_value() != p.has_residual) return false;
  if (bias && (bias->dtype() != f || bias->dim() != 1 || bias->size(0) != ws[0])) return false;
  int64_t out[2];
  for (size_t i = 0; i < 2; ++i) {
    out[i] = (input.size(2 + i) + 2 * param(p.padding, i) - param(p.dilation, i) * (ws[2 + i] - 1) - 1) /
                 param(p.stride, i) +
             1;
    if (input.size(2 + i) + 2 * param(p.padding, i) < param(p.dilation, i) * (ws[2 + i] - 1) + 1) return false;
  }
  if (residual) {
    const DimVector expected{input.size(0), ws[0], out[0], out[1]};
    if (residual->dtype() != f || residual->sizes() != IntArrayRef(expected)) return false;
  }
  return convEntry(p, input.size(0), input.size(2), input.size(3))->ok;
}

Tensor blockedMaxPool2d(const Tensor& input, int64_t channels, IntArrayRef kernel, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  KILN_CHECK(input.dim() == 5 && (input.size(4) == 8 || input.size(4) == 16) &&
                 input.size(1) == (channels + input.size(4) - 1) / input.size(4),
             "blocked_max_pool2d: expected a blocked input of ", channels, " channels");
  for (IntArrayRef v : {kernel, padding, dilation})
    KILN_CHECK(v.size() == 1 || v.size() == 2, "blocked_max_pool2d: expected 1 or 2 values per parameter");
  KILN_CHECK(stride.size() <= 2, "blocked_max_pool2d: expected 0, 1 or 2 strides");
  IntArrayRef st = stride.empty() ? kernel : stride;
  Tensor x = floatContiguous(input, "blocked_max_pool2d");
  int64_t block = x.size(4), n = x.size(0);
  int64_t in[2] = {x.size(2), x.size(3)}, out[2];
  Dims k(2), s(2), d(2), pl(2), pr(2);
  for (size_t i = 0; i < 2; ++i) {
    k[i] = param(kernel, i);
    s[i] = param(st, i);
    d[i] = param(dilation, i);
    pl[i] = param(padding, i);
    KILN_CHECK(k[i] > 0 && s[i] > 0 && d[i] > 0 && pl[i] >= 0 && pl[i] <= k[i] / 2,
               "blocked_max_pool2d: invalid window");
    int64_t num = in[i] + 2 * pl[i] - d[i] * (k[i] - 1) - 1 + (ceil_mode ? s[i] - 1 : 0);
    KILN_CHECK(num >= 0, "blocked_max_pool2d: output size is too small");
    out[i] = num / s[i] + 1;
    if (ceil_mode && (out[i] - 1) * s[i] >= in[i] + pl[i]) --out[i];
    pr[i] = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - in[i] - pl[i];
    if (pr[i] < 0) pr[i] = 0;
    d[i] -= 1;  // oneDNN counts the gaps
  }
  static Cache<std::pair<bool, dnnl::pooling_v2_forward>> cache;
  const int threads = elementThreads(static_cast<double>(n) * channels * out[0] * out[1] * k[0] * k[1]);
  detail::useKilnThreadsForDnnl(threads);
  std::vector<int64_t> key{n,    channels, block, in[0], in[1], k[0],  k[1],  s[0],
                           s[1], d[0],     d[1],  pl[0], pl[1], pr[0], pr[1], threads};
  auto src_md = activationDesc(n, channels, in[0], in[1], block);
  auto dst_md = activationDesc(n, channels, out[0], out[1], block);
  auto entry = cache.get(key, [&] {
    try {
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src_md,
                                          dst_md, s, k, d, pl, pr);
      return std::make_pair(true, dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(desc, engine())));
    } catch (const dnnl::error&) {
      return std::make_pair(false, dnnl::pooling_v2_forward());
    }
  });
  KILN_CHECK(entry->first, "blocked_max_pool2d: oneDNN has no pooling for these parameters");
  Tensor result = empty(activationSizes(n, channels, out[0], out[1], block), ScalarType::Float);
  detail::useKilnThreadsForDnnl(threads);
  auto& stream = threadStream();
  memory src_mem(src_md, engine(), x.rawData());
  memory dst_mem(dst_md, engine(), result.rawData());
  entry->second.execute(stream, {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_DST, dst_mem}});
  stream.wait();
  return result;
}

}  // namespace kiln
