#include "kiln/tensor/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#if KILN_HAVE_AVX2
#include <immintrin.h>
#include <sleef.h>
#endif

#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

namespace kiln {

namespace {

constexpr int kLanes = 8;  // Philox blocks computed together: one AVX2 register per word
constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;

// Philox4x32-10 on kLanesN consecutive counters; words[w][l] is word w of lane l.
template <int kLanesN>
void philoxLanes(uint64_t key, uint64_t first_counter, uint32_t (&words)[4][kLanesN]) {
  uint32_t c0[kLanesN], c1[kLanesN], c2[kLanesN], c3[kLanesN];
  for (int l = 0; l < kLanesN; ++l) {
    const uint64_t counter = first_counter + static_cast<uint64_t>(l);
    c0[l] = static_cast<uint32_t>(counter);
    c1[l] = static_cast<uint32_t>(counter >> 32);
    c2[l] = 0;
    c3[l] = 0;
  }
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    for (int l = 0; l < kLanesN; ++l) {
      const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0[l];
      const uint64_t p1 = static_cast<uint64_t>(kMul1) * c2[l];
      const uint32_t next0 = static_cast<uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
      const uint32_t next2 = static_cast<uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = static_cast<uint32_t>(p1);
      c3[l] = static_cast<uint32_t>(p0);
      c0[l] = next0;
      c2[l] = next2;
    }
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  for (int l = 0; l < kLanesN; ++l) {
    words[0][l] = c0[l];
    words[1][l] = c1[l];
    words[2][l] = c2[l];
    words[3][l] = c3[l];
  }
}

#if KILN_HAVE_AVX2
// The same on 8 lanes with AVX2: _mm256_mul_epu32 multiplies the even 32-bit
// lanes, so even and odd lanes are multiplied separately and their high and
// low halves blended back into place.
void philoxLanes(uint64_t key, uint64_t first_counter, uint32_t (&words)[4][8]) {
  const __m256i mul0 = _mm256_set1_epi64x(kMul0), mul1 = _mm256_set1_epi64x(kMul1);
  auto mulHiLo = [](__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
    const __m256i even = _mm256_mul_epu32(a, m);
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  };
  alignas(32) uint32_t lo32[8], hi32[8];
  for (int l = 0; l < 8; ++l) {
    const uint64_t counter = first_counter + static_cast<uint64_t>(l);
    lo32[l] = static_cast<uint32_t>(counter);
    hi32[l] = static_cast<uint32_t>(counter >> 32);
  }
  __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo32));
  __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi32));
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    __m256i hi0, lo0, hi1, lo1;
    mulHiLo(c0, mul0, hi0, lo0);
    mulHiLo(c2, mul1, hi1, lo1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[0]), c0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[1]), c1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[2]), c2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[3]), c3);
}
#endif

}  // namespace

std::array<uint32_t, 4> philox(uint64_t key, uint64_t counter) {
  uint32_t words[4][1];
  philoxLanes<1>(key, counter, words);
  return {words[0][0], words[1][0], words[2][0], words[3][0]};
}

void Generator::manualSeed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::initialSeed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

Generator::Draw Generator::reserve(uint64_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  Draw draw{seed_, offset_};
  offset_ += count;
  return draw;
}

Generator& defaultGenerator() {
  static Generator* generator = new Generator();
  return *generator;
}

void manualSeed(uint64_t seed) { defaultGenerator().manualSeed(seed); }

namespace {

using Words = uint32_t[4][kLanes];

uint64_t join(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }
// Uniform in [0, 1) from the top 53 bits.
double unitDouble(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }
// Uniform in [0, 1) from the top 24 bits.
float unitFloat(uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1.0p-24f; }

// Fills `self` kPerBatch values at a time from kLanes Philox blocks:
// make(words, values) writes kPerBatch values of type T. Batch b always uses
// counters first + kLanes * b ..., whatever the thread split.
template <typename T, int kPerBatch, typename Make>
void fillRandom(Tensor& self, const Make& make) {
  const int64_t n = self.numel();
  if (n == 0) return;
  // As PyTorch: an expanded self raises before any numbers are drawn.
  assertNoInternalOverlap(self);
  const int64_t batches = (n + kPerBatch - 1) / kPerBatch;
  const Generator::Draw draw = defaultGenerator().reserve(static_cast<uint64_t>(batches) * kLanes);
  writeContiguous<T>(self, [&](T* data) {
    parallelFor(0, batches, std::max<int64_t>(1, kGrainSize / kPerBatch), [&](int64_t begin, int64_t end) {
      Words words;
      alignas(32) T tail[kPerBatch];
      for (int64_t b = begin; b < end; ++b) {
        philoxLanes(draw.key, draw.counter + static_cast<uint64_t>(b) * kLanes, words);  // the AVX2 one when built
        const int64_t first = b * kPerBatch;
        if (n - first >= kPerBatch) {
          make(words, data + first);
        } else {
          make(words, tail);
          std::copy_n(tail, n - first, data + first);
        }
      }
    });
  });
}

// Box-Muller on kLanes pairs of uniforms: u1 in (0, 1], u2 in [0, 1) give
// independent normals r cos(2 pi u2) and r sin(2 pi u2), r = sqrt(-2 log u1).
// The cosines go to out[0, kLanes), the sines to out[kLanes, 2 kLanes).
template <typename T>
void boxMuller(const T* u1, const T* u2, T mean, T std, T* out) {
  constexpr T kTwoPi = static_cast<T>(2 * std::numbers::pi);
#if KILN_HAVE_AVX2
  if constexpr (std::is_same_v<T, float>) {
    const __m256 radius =
        _mm256_mul_ps(_mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), Sleef_logf8_u10avx2(_mm256_loadu_ps(u1)))),
                      _mm256_set1_ps(std));
    const Sleef___m256_2 sc = Sleef_sincosf8_u10avx2(_mm256_mul_ps(_mm256_set1_ps(kTwoPi), _mm256_loadu_ps(u2)));
    _mm256_storeu_ps(out, _mm256_fmadd_ps(radius, sc.y, _mm256_set1_ps(mean)));
    _mm256_storeu_ps(out + kLanes, _mm256_fmadd_ps(radius, sc.x, _mm256_set1_ps(mean)));
  } else {
    for (int half = 0; half < 2; ++half) {
      const __m256d radius = _mm256_mul_pd(
          _mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), Sleef_logd4_u10avx2(_mm256_loadu_pd(u1 + 4 * half)))),
          _mm256_set1_pd(std));
      const Sleef___m256d_2 sc =
          Sleef_sincosd4_u10avx2(_mm256_mul_pd(_mm256_set1_pd(kTwoPi), _mm256_loadu_pd(u2 + 4 * half)));
      _mm256_storeu_pd(out + 4 * half, _mm256_fmadd_pd(radius, sc.y, _mm256_set1_pd(mean)));
      _mm256_storeu_pd(out + kLanes + 4 * half, _mm256_fmadd_pd(radius, sc.x, _mm256_set1_pd(mean)));
    }
  }
#else
  for (int l = 0; l < kLanes; ++l) {
    const T radius = std::sqrt(T(-2) * std::log(u1[l])) * std;
    out[l] = radius * std::cos(kTwoPi * u2[l]) + mean;
    out[kLanes + l] = radius * std::sin(kTwoPi * u2[l]) + mean;
  }
#endif
}

// C's name for the element type, as PyTorch's bounds messages print it.
const char* cTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "unsigned char";
    case ScalarType::Char: return "signed char";
    case ScalarType::Short: return "short";
    case ScalarType::Int: return "int";
    case ScalarType::Long: return "long";
    case ScalarType::Bool: return "bool";
    default: return "float";
  }
}

// Writes from + (x scaled to [0, range)) for uniformly random 64-bit x;
// range 0 stands for 2^64. Scaling by a 128-bit multiply instead of x % range
// avoids a division per value and has the same (negligible) bias.
Tensor& randomFromRange(Tensor& self, int64_t from, uint64_t range) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), "random_", [&] {
    fillRandom<scalar_t, 2 * kLanes>(self, [&](const Words& w, scalar_t* values) {
      for (int half = 0; half < 2; ++half) {
        for (int l = 0; l < kLanes; ++l) {
          const uint64_t x = join(w[2 * half][l], w[2 * half + 1][l]);
          const uint64_t offset =
              range == 0 ? x : static_cast<uint64_t>((static_cast<unsigned __int128>(x) * range) >> 64);
          const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(from) + offset);
          if constexpr (std::is_same_v<scalar_t, bool>) {
            values[half * kLanes + l] = v != 0;
          } else {
            values[half * kLanes + l] = static_cast<scalar_t>(v);
          }
        }
      }
    });
  });
  return self;
}

// The largest value random_ draws for a dtype: its max, or 2^mantissa bits.
int64_t randomUpperBound(ScalarType dtype) {
  return KILN_DISPATCH_ALL_TYPES_AND_BOOL(dtype, "random_", [&]() -> int64_t {
    if constexpr (std::is_floating_point_v<scalar_t>) {
      return int64_t{1} << std::numeric_limits<scalar_t>::digits;
    } else {
      return static_cast<int64_t>(std::numeric_limits<scalar_t>::max());
    }
  });
}

}  // namespace

Tensor& uniform_(Tensor& self, double from, double to) {
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "uniform_", [&] {
    KILN_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
    KILN_CHECK(to - from <= std::numeric_limits<scalar_t>::max(), "uniform_ expects to-from <= std::numeric_limits<",
               scalarTypeShortName(self.dtype()), ">::max(), but found to=", to, " and from=", from,
               " which result in to-from to exceed the limit");
    if constexpr (std::is_same_v<scalar_t, float>) {
      const float low = static_cast<float>(from), width = static_cast<float>(to - from);
      fillRandom<float, 4 * kLanes>(self, [&](const Words& w, float* values) {
        for (int word = 0; word < 4; ++word) {
          for (int l = 0; l < kLanes; ++l) values[word * kLanes + l] = unitFloat(w[word][l]) * width + low;
        }
      });
    } else {
      const double width = to - from;
      fillRandom<double, 2 * kLanes>(self, [&](const Words& w, double* values) {
        for (int half = 0; half < 2; ++half) {
          for (int l = 0; l < kLanes; ++l) {
            values[half * kLanes + l] = unitDouble(join(w[2 * half][l], w[2 * half + 1][l])) * width + from;
          }
        }
      });
    }
  });
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std) {
  KILN_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "normal_", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      // Two Box-Muller batches per Philox batch: words 0/1 and 2/3 pair up.
      fillRandom<float, 4 * kLanes>(self, [&](const Words& w, float* values) {
        for (int pair = 0; pair < 2; ++pair) {
          alignas(32) float u1[kLanes], u2[kLanes];
          for (int l = 0; l < kLanes; ++l) {
            u1[l] = 1.0f - unitFloat(w[2 * pair][l]);
            u2[l] = unitFloat(w[2 * pair + 1][l]);
          }
          boxMuller<float>(u1, u2, static_cast<float>(mean), static_cast<float>(std), values + 2 * kLanes * pair);
        }
      });
    } else {
      fillRandom<double, 2 * kLanes>(self, [&](const Words& w, double* values) {
        alignas(32) double u1[kLanes], u2[kLanes];
        for (int l = 0; l < kLanes; ++l) {
          u1[l] = 1.0 - unitDouble(join(w[0][l], w[1][l]));
          u2[l] = unitDouble(join(w[2][l], w[3][l]));
        }
        boxMuller<double>(u1, u2, mean, std, values);
      });
    }
  });
  return self;
}

Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to) {
  const int64_t upper = randomUpperBound(self.dtype());
  // The largest value drawn; inclusive, so int64's full range fits.
  int64_t last;
  if (to) {
    KILN_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    last = *to - 1;
  } else {
    KILN_CHECK(from <= upper,
               "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
               "dtype, but got from=",
               from, " > to_inc=", upper);
    last = upper;
  }
  if (!isFloatingType(self.dtype())) {
    const int64_t lowest = self.dtype() == ScalarType::Bool || !isSignedType(self.dtype()) ? 0 : -upper - 1;
    KILN_CHECK(from >= lowest && from <= upper, "from is out of bounds for ", cTypeName(self.dtype()));
    KILN_CHECK(last >= lowest && last <= upper, "to - 1 is out of bounds for ", cTypeName(self.dtype()));
  }
  const uint64_t range = static_cast<uint64_t>(last) - static_cast<uint64_t>(from) + 1;
  return randomFromRange(self, from, range);
}

Tensor& random_(Tensor& self) { return random_(self, 0, std::nullopt); }

Tensor rand(IntArrayRef sizes, ScalarType dtype) {
  Tensor t = empty(sizes, dtype);
  return uniform_(t, 0, 1);
}

Tensor randn(IntArrayRef sizes, ScalarType dtype) {
  Tensor t = empty(sizes, dtype);
  return normal_(t, 0, 1);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, ScalarType dtype) {
  Tensor t = empty(sizes, dtype);
  return random_(t, low, high);
}

Tensor randperm(int64_t n, ScalarType dtype) {
  KILN_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  KILN_CHECK(n == 0 || n - 1 <= randomUpperBound(dtype), "randperm: n is too large for result tensor type: '",
             scalarTypeShortName(dtype), "'");
  Tensor perm = empty({n}, ScalarType::Long);
  int64_t* data = perm.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) data[i] = i;
  // Fisher-Yates, one 64-bit draw per swap.
  const Generator::Draw draw = defaultGenerator().reserve(static_cast<uint64_t>((n + 1) / 2));
  for (int64_t i = 0; i + 1 < n; ++i) {
    const std::array<uint32_t, 4> w = philox(draw.key, draw.counter + static_cast<uint64_t>(i / 2));
    const uint64_t x = join(w[2 * (i % 2)], w[2 * (i % 2) + 1]);
    std::swap(data[i], data[i + static_cast<int64_t>(x % static_cast<uint64_t>(n - i))]);
  }
  return to(perm, dtype);
}

}  // namespace kiln
