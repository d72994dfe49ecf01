#include "kiln/tensor/kernels/winograd.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/kernels/gemm_kernel.h"
#include "kiln/tensor/kernels/vec.h"
#include "kiln/tensor/parallel.h"

namespace kiln::detail {
namespace {

// F(4x4, 3x3): 6x6 input tiles give 4x4 outputs; 36 transform points.
constexpr int64_t kTile = 4;
constexpr int64_t kAlpha = 6;
constexpr int64_t kPoints = kAlpha * kAlpha;
constexpr int64_t kBlock = 8;  // channels per vector; nChw16c blocks are two of them

int64_t param(IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

bool winogradEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("KILN_WINOGRAD");
    return !(env && std::string(env) == "0");
  }();
  return enabled;
}

// G (6x3) of F(4x4, 3x3), points 0, 1, -1, 2, -2 and infinity: the weight
// transform U = G g G^T.
constexpr double kG[kAlpha][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};

// Channels padded to whole blocks of `block`.
int64_t padded(int64_t channels, int64_t block) { return (channels + block - 1) / block * block; }

// The transformed weight: U[point][co / 8][ci][co % 8], Cin and Cout padded
// to whole blocks of `block` (8 or 16) with zeros, so that a GEMM's column
// block streams.
Tensor transformWeight(const Tensor& weight, int64_t block) {
  Tensor w = weight.isContiguous() ? weight : contiguous(weight);
  const int64_t oc = w.size(0), ic = w.size(1);
  const int64_t ocb = padded(oc, block) / kBlock, icp = padded(ic, block);
  Tensor u = empty({kPoints * ocb * icp * kBlock}, ScalarType::Float);
  float* up = u.data<float>();
  std::memset(up, 0, static_cast<size_t>(u.nbytes()));
  const float* wp = w.data<float>();
  for (int64_t co = 0; co < oc; ++co) {
    for (int64_t ci = 0; ci < ic; ++ci) {
      const float* g = wp + (co * ic + ci) * 9;
      double gg[kAlpha][3];  // G g
      for (int i = 0; i < kAlpha; ++i)
        for (int j = 0; j < 3; ++j) gg[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
      for (int i = 0; i < kAlpha; ++i) {
        for (int j = 0; j < kAlpha; ++j) {
          double v = gg[i][0] * kG[j][0] + gg[i][1] * kG[j][1] + gg[i][2] * kG[j][2];
          up[(((i * kAlpha + j) * ocb + co / kBlock) * icp + ci) * kBlock + co % kBlock] = static_cast<float>(v);
        }
      }
    }
  }
  return u;
}

// Transformed weights of constants, one per weight (its address), holding
// the weight so that the address stays its; weights nothing else holds any
// more are dropped at the next transform.
class WeightCache {
 public:
  Tensor get(const Tensor& weight, int64_t block) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int64_t numel = kPoints * padded(weight.size(0), block) * padded(weight.size(1), block);
    if (auto it = entries_.find(weight.rawData());
        it != entries_.end() && it->second.source.sizes() == weight.sizes() && it->second.transformed.numel() == numel)
      return it->second.transformed;
    sweep();
    Tensor u = transformWeight(weight, block);
    entries_.insert_or_assign(weight.rawData(), Entry{weight, u});
    return u;
  }
  int64_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    sweep();
    return static_cast<int64_t>(entries_.size());
  }

 private:
  struct Entry {
    Tensor source, transformed;
  };
  void sweep() {
    for (auto it = entries_.begin(); it != entries_.end();) {
      const Tensor& t = it->second.source;
      it = t.useCount() == 1 && t.storage()->useCount() == 1 ? entries_.erase(it) : std::next(it);
    }
  }
  std::mutex mutex_;
  std::unordered_map<const void*, Entry> entries_;
};

WeightCache& weightCache() {
  static WeightCache* cache = new WeightCache();  // never destroyed: tensors may outlive statics
  return *cache;
}

// Multiply-adds below which a step runs on one thread (as oneDNN's work is
// kept serial below 2^19, dnnl_glue).
constexpr double kSerialWork = 1 << 19;

#if KILN_HAVE_AVX2
using kernels::Vec;
using V = Vec<float>;
static_assert(V::kSize == kBlock, "kiln's Winograd runs on 8-float vectors");

inline V fmadd(V a, V b, V c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline V zero() { return V::broadcast(0.f); }

// B^T d over one line of 6 (the input transform, applied to rows then columns).
inline void inputLine(const V d[kAlpha], V o[kAlpha]) {
  const V four = V::broadcast(4.f), five = V::broadcast(5.f), two = V::broadcast(2.f);
  o[0] = fmadd(four, d[0], d[4]) - five * d[2];
  const V a = d[3] + d[4], b = four * (d[1] + d[2]);
  o[1] = a - b;
  const V c = d[4] - d[3], e = four * (d[1] - d[2]);
  o[2] = c + e;
  const V f = d[4] - d[2], g = two * (d[3] - d[1]);
  o[3] = f + g;
  o[4] = f - g;
  o[5] = fmadd(four, d[1], d[5]) - five * d[3];
}

// A^T m over one line of 6 (the output transform).
inline void outputLine(const V m[kAlpha], V o[kTile]) {
  const V s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
  o[0] = m[0] + s12 + s34;
  o[1] = fmadd(V::broadcast(2.f), d34, d12);
  o[2] = fmadd(V::broadcast(4.f), s34, s12);
  o[3] = fmadd(V::broadcast(8.f), d34, d12) + m[5];
}

struct Shape {
  int64_t n, h, w, oh, ow, ph, pw;
  int64_t block;                   // channels per block in memory, 8 or 16
  int64_t icb, icp, ocb, ocp, oc;  // groups of 8 channels and padded counts (whole memory blocks)
  int64_t th, tw, tiles;           // tiles per column, row, in all
};

// Tiles per chunk: V and M of a chunk in about 1 MiB (the L2 of one core,
// or a slice of L3), at least 12 rows (two micro-kernel calls) so that each
// point's weights, read once per chunk, are reused enough.
int64_t tilesPerChunk(const Shape& s) {
  constexpr int64_t kChunkBytes = int64_t{1} << 20;
  const int64_t per_tile = kPoints * (s.icp + s.ocp) * static_cast<int64_t>(sizeof(float));
  const int64_t rows =
      std::max<int64_t>(2 * kernels::kGemmRows, kChunkBytes / per_tile / kernels::kGemmRows * kernels::kGemmRows);
  return std::min(rows, s.tiles);
}

// V[point][tile - t0][ci] for the tiles [t0, t1).
void inputTransform(const float* x, float* vt, const Shape& s, int64_t t0, int64_t t1) {
  const int64_t rows = t1 - t0;
  for (int64_t item = t0 * s.icb; item < t1 * s.icb; ++item) {
    const int64_t t = item / s.icb, cb = item % s.icb;
    const int64_t img = t / (s.th * s.tw), ty = t / s.tw % s.th, tx = t % s.tw;
    const int64_t halves = s.block / kBlock, blocks = s.icb / halves;
    const float* base = x + (img * blocks + cb / halves) * s.h * s.w * s.block + cb % halves * kBlock;
    const int64_t iy0 = ty * kTile - s.ph, ix0 = tx * kTile - s.pw;
    V d[kAlpha][kAlpha];
    const bool inside = iy0 >= 0 && ix0 >= 0 && iy0 + kAlpha <= s.h && ix0 + kAlpha <= s.w;
    for (int i = 0; i < kAlpha; ++i) {
      const int64_t iy = iy0 + i;
      for (int j = 0; j < kAlpha; ++j) {
        const int64_t ix = ix0 + j;
        d[i][j] =
            inside || (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) ? V::load(base + (iy * s.w + ix) * s.block) : zero();
      }
    }
    V r[kAlpha][kAlpha];  // B^T d: columns first
    for (int j = 0; j < kAlpha; ++j) {
      V col[kAlpha], out[kAlpha];
      for (int i = 0; i < kAlpha; ++i) col[i] = d[i][j];
      inputLine(col, out);
      for (int i = 0; i < kAlpha; ++i) r[i][j] = out[i];
    }
    for (int i = 0; i < kAlpha; ++i) {
      V out[kAlpha];
      inputLine(r[i], out);
      for (int j = 0; j < kAlpha; ++j) out[j].store(vt + ((i * kAlpha + j) * rows + t - t0) * s.icp + cb * kBlock);
    }
  }
}

// M[point][row][co] = V[point][row][:] U[point][:][co] for `rows` tiles,
// every point and output channel.
void pointGemms(const float* vt, const float* u, float* m, const Shape& s, int64_t rows) {
  const int64_t pairs = (s.ocb + 1) / 2;
  for (int64_t item = 0; item < kPoints * pairs; ++item) {
    const int64_t p = item / pairs, ob = item % pairs * 2;
    const int cols = ob + 1 < s.ocb ? 2 : 1;
    const float* a = vt + p * rows * s.icp;
    const float* b = u + (p * s.ocb + ob) * s.icp * kBlock;
    float* c = m + p * rows * s.ocp + ob * kBlock;
    for (int64_t t = 0; t < rows; t += kernels::kGemmRows) {
      const int r = static_cast<int>(std::min<int64_t>(kernels::kGemmRows, rows - t));
      if (cols == 2) {
        kernels::gemmMicroRows<2>(r, a + t * s.icp, s.icp, b, s.icp * kBlock, kBlock, s.icp, nullptr, c + t * s.ocp,
                                  s.ocp);
      } else {
        kernels::gemmMicroRows<1>(r, a + t * s.icp, s.icp, b, s.icp * kBlock, kBlock, s.icp, nullptr, c + t * s.ocp,
                                  s.ocp);
      }
    }
  }
}

enum class Act { None, Relu, Clip };

struct PostOps {
  const float* bias;      // padded to ocp, or null
  const float* residual;  // blocked like the output, or null
  Act act;
  float lo, hi;
};

// The output tiles [t0, t1) from M[point][tile - t0][co]: A^T m A, then
// bias, residual and activation.
void outputTransform(const float* m, float* out, const Shape& s, const PostOps& post, int64_t t0, int64_t t1) {
  const int64_t rows = t1 - t0;
  const V lo = V::broadcast(post.lo), hi = V::broadcast(post.hi);
  const int64_t halves = s.block / kBlock, blocks = s.ocb / halves;
  for (int64_t item = t0 * s.ocb; item < t1 * s.ocb; ++item) {
    const int64_t t = item / s.ocb, ob = item % s.ocb;
    const int64_t img = t / (s.th * s.tw), ty = t / s.tw % s.th, tx = t % s.tw;
    // Lanes from `live` on are padding past the last channel: kept zero.
    const int64_t live = std::clamp<int64_t>(s.oc - ob * kBlock, 0, kBlock);
    V r[kTile][kAlpha];  // A^T m
    for (int j = 0; j < kAlpha; ++j) {
      V col[kAlpha], o[kTile];
      for (int i = 0; i < kAlpha; ++i) col[i] = V::load(m + ((i * kAlpha + j) * rows + t - t0) * s.ocp + ob * kBlock);
      outputLine(col, o);
      for (int i = 0; i < kTile; ++i) r[i][j] = o[i];
    }
    const V bias = post.bias ? V::load(post.bias + ob * kBlock) : zero();
    const int64_t plane = (img * blocks + ob / halves) * s.oh * s.ow * s.block + ob % halves * kBlock;
    for (int i = 0; i < kTile; ++i) {
      const int64_t oy = ty * kTile + i;
      if (oy >= s.oh) break;
      V o[kTile];
      outputLine(r[i], o);
      for (int j = 0; j < kTile; ++j) {
        const int64_t ox = tx * kTile + j;
        if (ox >= s.ow) break;
        const int64_t at = plane + (oy * s.ow + ox) * s.block;
        V v = o[j] + bias;
        if (post.residual) v = v + V::load(post.residual + at);
        if (post.act == Act::Relu) {
          v = V::max(v, zero());
        } else if (post.act == Act::Clip) {
          const V above = V::max(v, lo);
          v = above - V::max(above - hi, zero());  // min(max(v, lo), hi)
        }
        v.store(out + at);
        for (int64_t lane = live; lane < kBlock; ++lane) out[at + lane] = 0.f;
      }
    }
  }
}
#endif

}  // namespace

bool winogradApplies(const FusedConv2dParams& p) {
#if KILN_HAVE_AVX2
  const auto& ws = p.weight_size;
  const bool act = p.activation == "none" || p.activation == "relu" || p.activation == "hardtanh";
  return winogradEnabled() && act && p.groups == 1 && (p.in_block == 8 || p.in_block == 16) &&
         p.out_block == p.in_block && ws.size() == 4 && ws[2] == 3 && ws[3] == 3 && param(p.stride, 0) == 1 &&
         param(p.stride, 1) == 1 && param(p.dilation, 0) == 1 && param(p.dilation, 1) == 1;
#else
  (void)p;
  return false;
#endif
}

// Weights above 128x128 channels keep oneDNN's prepacked layout. The
// transformed weight is 36/9 = 4 times the plain one, which stays beside
// it (the constant it is made from): with ResNet-18's 256-channel layers
// too (9.4 MB each as Winograd's) kiln held 94 MiB at batch 1 against
// torch's 72 (AMD Zen 3, AVX2), 68 without them; they run on 14x14 images,
// where Winograd saves the least (2.56 against 1.25 ms a layer; the whole
// model went from about 0.65 to 0.75 of torch's time). Wider layers run on
// the smallest images (ResNet-18's 512 channels on 7x7, where Winograd
// measured slower), and a torch-layout constant that oneDNN then converts
// would be held twice.
constexpr int64_t kMaxChannelProduct = 128 * 128;

bool winogradMayRun(const FusedConv2dParams& p) {
  return winogradApplies(p) && p.in_block == kBlock && p.weight_size[0] * p.weight_size[1] <= kMaxChannelProduct;
}

// Measured on a Zen 5 at AVX2, 1 thread, batch 1, ResNet-18's 3x3 layers
// (bias and ReLU) against oneDNN's jit:avx2 direct kernel: 64 channels on
// 56x56 (196 tiles) 3.1x faster, 128 on 28x28 (49) 3.4x, 256 on 14x14 (16)
// 1.6x, 512 on 7x7 (4 tiles) 1.03x slower: with few tiles the GEMMs are
// short and stream 4x the weight bytes.
constexpr int64_t kMinTiles = 16;

bool winogradChosen(const FusedConv2dParams& p, int64_t n, int64_t h, int64_t w) {
  // Blocked by 16 (oneDNN at AVX-512) it runs, still at 8 floats a vector,
  // slower than oneDNN's AVX-512 kernels: 0.79 against 0.62 ms (64 channels
  // on 56x56, oneDNN's Winograd), 1.44 against 1.25 (256 on 14x14, direct).
  if (!winogradMayRun(p)) return false;
  const int64_t oh = h + 2 * param(p.padding, 0) - 2, ow = w + 2 * param(p.padding, 1) - 2;
  return oh > 0 && ow > 0 && n * ((oh + kTile - 1) / kTile) * ((ow + kTile - 1) / kTile) >= kMinTiles;
}

Tensor winogradConv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      const std::optional<Tensor>& residual, const FusedConv2dParams& p, bool cache_weight) {
#if KILN_HAVE_AVX2
  KILN_CHECK(winogradApplies(p), "winograd_conv2d: not a convolution kiln's Winograd runs");
  for (const Tensor* t : {&input, &weight, bias ? &*bias : nullptr, residual ? &*residual : nullptr})
    KILN_CHECK(!t || t->dtype() == ScalarType::Float, "winograd_conv2d: expected float tensors");
  KILN_CHECK(input.dim() == 5 && input.size(4) == p.in_block, "winograd_conv2d: expected an input blocked by ",
             p.in_block);
  Tensor x = input.isContiguous() ? input : contiguous(input);
  Shape s{};
  s.n = x.size(0);
  s.h = x.size(2);
  s.w = x.size(3);
  s.ph = param(p.padding, 0);
  s.pw = param(p.padding, 1);
  s.oh = s.h + 2 * s.ph - 2;
  s.ow = s.w + 2 * s.pw - 2;
  KILN_CHECK(s.oh > 0 && s.ow > 0, "winograd_conv2d: the kernel is larger than the padded input");
  s.oc = p.weight_size[0];
  s.block = p.in_block;
  s.icp = x.size(1) * s.block;
  s.icb = s.icp / kBlock;
  s.ocp = padded(s.oc, s.block);
  s.ocb = s.ocp / kBlock;
  s.th = (s.oh + kTile - 1) / kTile;
  s.tw = (s.ow + kTile - 1) / kTile;
  s.tiles = s.n * s.th * s.tw;
  KILN_CHECK(weight.dim() == 4 && weight.size(0) == s.oc && padded(weight.size(1), s.block) == s.icp,
             "winograd_conv2d: weight of shape ", shapeString(weight.sizes()), " for ", x.size(1), " input blocks");
  Tensor u = cache_weight ? weightCache().get(weight, s.block) : transformWeight(weight, s.block);
  Tensor out = empty({s.n, s.ocp / s.block, s.oh, s.ow, s.block}, ScalarType::Float);
  Tensor b, r;
  PostOps post{nullptr, nullptr, Act::None, 0.f, 0.f};
  if (p.has_bias) {
    KILN_CHECK(bias.has_value() && bias->numel() == s.oc, "winograd_conv2d: bias of the wrong size");
    b = zeros({s.ocp}, ScalarType::Float);
    Tensor given = bias->isContiguous() ? *bias : contiguous(*bias);
    std::memcpy(b.rawData(), given.rawData(), static_cast<size_t>(s.oc) * sizeof(float));
    post.bias = b.data<float>();
  }
  if (p.has_residual) {
    KILN_CHECK(residual.has_value() && residual->sizes() == out.sizes(),
               "winograd_conv2d: residual of the wrong shape");
    r = residual->isContiguous() ? *residual : contiguous(*residual);
    post.residual = r.data<float>();
  }
  if (p.activation == "relu") post.act = Act::Relu;
  if (p.activation == "hardtanh") {
    post.act = Act::Clip;
    post.lo = static_cast<float>(p.alpha);
    post.hi = static_cast<float>(p.beta);
  }
  // Tiles go through the three steps in chunks whose transformed input and
  // product (V and M) stay in cache: taken whole, a batch of large images
  // streamed both through memory twice (a small UNet at batch 8: 38 MB
  // each, the transforms then took twice the GEMMs' time). Each thread
  // takes its own range of tiles, in chunks, with scratch of its own: one
  // fork and join a convolution, no barrier between the steps (on the
  // loaded 2-core machine each one waited for a descheduled team thread).
  const int64_t chunk = tilesPerChunk(s);
  const double work = static_cast<double>(s.tiles) * kPoints * s.icp * s.ocp;
  const int64_t slots = work < kSerialWork ? 1 : std::min<int64_t>(getNumThreads(), (s.tiles + chunk - 1) / chunk);
  const int64_t slot_floats = kPoints * chunk * (s.icp + s.ocp);
  Tensor scratch = empty({slots * slot_floats}, ScalarType::Float);
  const int64_t per_slot = (s.tiles + slots - 1) / slots;
  const float* xp = x.data<float>();
  const float* upp = u.data<float>();
  float* sp = scratch.data<float>();
  float* op = out.data<float>();
  parallelFor(0, slots, 1, [&](int64_t first, int64_t last) {
    for (int64_t slot = first; slot < last; ++slot) {
      float* vp = sp + slot * slot_floats;
      float* mp = vp + kPoints * chunk * s.icp;
      const int64_t end = std::min(s.tiles, (slot + 1) * per_slot);
      for (int64_t t0 = slot * per_slot; t0 < end; t0 += chunk) {
        const int64_t t1 = std::min(end, t0 + chunk);
        inputTransform(xp, vp, s, t0, t1);
        pointGemms(vp, upp, mp, s, t1 - t0);
        outputTransform(mp, op, s, post, t0, t1);
      }
    }
  });
  return out;
#else
  (void)input, (void)weight, (void)bias, (void)residual, (void)p, (void)cache_weight;
  KILN_CHECK(false, "winograd_conv2d: this build has no AVX2");
  return Tensor();
#endif
}

int64_t winogradCachedWeights() { return weightCache().size(); }

}  // namespace kiln::detail
