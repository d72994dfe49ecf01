#include "kiln/tensor/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"

namespace kiln {

std::array<uint32_t, 4> philox(uint64_t key, uint64_t counter) {
  constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
    c0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    c2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
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

constexpr double kTwoPi = 2 * std::numbers::pi;

uint64_t join(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }
// Uniform in [0, 1) from the top 53 bits.
double unitDouble(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Fills `self` with values made kPerBlock at a time from one Philox output:
// make(words, values) writes kPerBlock values of type T. Block b always uses
// counter `first + b`, whatever the thread split.
template <typename T, int kPerBlock, typename Make>
void fillRandom(Tensor& self, const Make& make) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  const Generator::Draw draw = defaultGenerator().reserve(static_cast<uint64_t>(blocks));
  writeContiguous<T>(self, [&](T* data) {
    parallelFor(0, blocks, kGrainSize / kPerBlock, [&](int64_t begin, int64_t end) {
      T values[kPerBlock];
      for (int64_t b = begin; b < end; ++b) {
        const std::array<uint32_t, 4> words = philox(draw.key, draw.counter + static_cast<uint64_t>(b));
        make(words, values);
        const int64_t first = b * kPerBlock;
        std::copy_n(values, std::min<int64_t>(kPerBlock, n - first), data + first);
      }
    });
  });
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

// Writes from + (x mod range) for uniformly random 64-bit x; range 0 stands for 2^64.
Tensor& randomFromRange(Tensor& self, int64_t from, uint64_t range) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), "random_", [&] {
    fillRandom<scalar_t, 2>(self, [&](const std::array<uint32_t, 4>& w, scalar_t* values) {
      for (int i = 0; i < 2; ++i) {
        const uint64_t x = join(w[2 * i], w[2 * i + 1]);
        const uint64_t offset = range == 0 ? x : x % range;
        const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(from) + offset);
        if constexpr (std::is_same_v<scalar_t, bool>) {
          values[i] = v != 0;
        } else {
          values[i] = static_cast<scalar_t>(v);
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
    const double width = to - from;
    if constexpr (std::is_same_v<scalar_t, float>) {
      fillRandom<float, 4>(self, [&](const std::array<uint32_t, 4>& w, float* values) {
        for (int i = 0; i < 4; ++i) values[i] = static_cast<float>((w[i] >> 8) * 0x1.0p-24 * width + from);
      });
    } else {
      fillRandom<double, 2>(self, [&](const std::array<uint32_t, 4>& w, double* values) {
        for (int i = 0; i < 2; ++i) values[i] = unitDouble(join(w[2 * i], w[2 * i + 1])) * width + from;
      });
    }
  });
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std) {
  KILN_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  // Box-Muller: a pair of uniforms gives a pair of independent normals.
  auto box_muller = [mean, std](double u1, double u2, auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const double radius = std::sqrt(-2.0 * std::log(1.0 - u1)) * std;  // 1 - u1 is in (0, 1]
    const double angle = kTwoPi * u2;
    out[0] = static_cast<T>(radius * std::cos(angle) + mean);
    out[1] = static_cast<T>(radius * std::sin(angle) + mean);
  };
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "normal_", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      fillRandom<float, 4>(self, [&](const std::array<uint32_t, 4>& w, float* values) {
        box_muller(w[0] * 0x1.0p-32, w[1] * 0x1.0p-32, values);
        box_muller(w[2] * 0x1.0p-32, w[3] * 0x1.0p-32, values + 2);
      });
    } else {
      fillRandom<double, 2>(self, [&](const std::array<uint32_t, 4>& w, double* values) {
        box_muller(unitDouble(join(w[0], w[1])), unitDouble(join(w[2], w[3])), values);
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
    KILN_CHECK(from <= upper, "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
               "dtype, but got from=", from, " > to_inc=", upper);
    last = upper;
  }
  if (!isFloatingType(self.dtype())) {
    const int64_t lowest = self.dtype() == ScalarType::Bool || !isSignedType(self.dtype())
                               ? 0
                               : -upper - 1;
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
