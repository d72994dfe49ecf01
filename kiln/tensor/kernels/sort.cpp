// sort, argsort, msort. Each element becomes an unsigned key whose integer
// order is PyTorch's order (bit-inverted when descending, so NaN comes first),
// paired with its position in the line. A stable sort is an LSD radix sort
// over the key bytes (stable by construction); an unstable one runs
// std::sort comparing keys only, which takes the same steps as PyTorch's
// std::sort over (value, index) pairs and so leaves equal elements in the
// same order. Lines (every index of the other dims) sort in parallel.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/sort.h"

namespace kiln {
namespace {

// Below this many elements a comparison sort beats the radix passes.
constexpr int64_t kRadixMinLength = 256;

template <typename T>
using KeyOf = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// The key of x: ascending keys are PyTorch's ascending order.
template <typename T>
KeyOf<T> sortKey(T x) {
  using K = KeyOf<T>;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return std::numeric_limits<K>::max();    // no number maps there: its bits are a NaN's
    const K bits = std::bit_cast<K>(static_cast<T>(x + T(0)));  // -0.0 + 0.0 is +0.0: zeros are equal
    return (bits & kSign) ? K(~bits) : K(bits | kSign);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<K>(static_cast<K>(x) ^ kSign);
  } else {
    return static_cast<K>(x);
  }
}

// The value whose key is `key`, for keys that name one value: every key but
// a float's NaN and zero (which stand for any NaN, and for both zeros).
template <typename T>
T fromKey(KeyOf<T> key) {
  using K = KeyOf<T>;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<T>((key & kSign) ? K(key ^ kSign) : K(~key));
  } else if constexpr (std::is_same_v<T, bool>) {
    return key != 0;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<K>(key ^ kSign));
  } else {
    return static_cast<T>(key);
  }
}

// (key, position) in one uint64 when both fit in 32 bits: the key in the high half,
// so that comparing items compares keys first, then positions.
struct PackedItems {
  using Item = uint64_t;
  static Item make(uint64_t key, int64_t pos) { return key << 32 | static_cast<uint64_t>(pos); }
  static uint64_t key(Item item) { return item >> 32; }
  static int64_t pos(Item item) { return static_cast<int64_t>(item & 0xffffffffu); }
};

struct WideItems {
  struct Item {
    uint64_t key;
    int64_t pos;
    bool operator<(const Item& other) const { return key < other.key || (key == other.key && pos < other.pos); }
  };
  static Item make(uint64_t key, int64_t pos) { return {key, pos}; }
  static uint64_t key(const Item& item) { return item.key; }
  static int64_t pos(const Item& item) { return item.pos; }
};

// LSD radix sort of items[0, n) by their kKeyBytes-byte keys, using `scratch`;
// returns the buffer the result ended in. Passes whose digit is the same for
// every item are skipped.
template <typename Items, int kKeyBytes, typename Item>
Item* radixSort(Item* items, Item* scratch, int64_t n) {
  std::array<std::array<int64_t, 256>, kKeyBytes> counts{};
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t key = Items::key(items[i]);
    for (int p = 0; p < kKeyBytes; ++p) ++counts[p][(key >> (8 * p)) & 0xff];
  }
  Item* src = items;
  Item* dst = scratch;
  for (int p = 0; p < kKeyBytes; ++p) {
    auto& count = counts[p];
    if (count[(Items::key(src[0]) >> (8 * p)) & 0xff] == n) continue;
    int64_t offset = 0;
    for (auto& c : count) {
      const int64_t size = c;
      c = offset;
      offset += size;
    }
    for (int64_t i = 0; i < n; ++i) dst[count[(Items::key(src[i]) >> (8 * p)) & 0xff]++] = src[i];
    std::swap(src, dst);
  }
  return src;
}

template <typename Items, typename T>
void sortLine(const T* x, int64_t stride, int64_t n, bool descending, bool stable, typename Items::Item* items,
              T* values, int64_t* indices) {
  using Item = typename Items::Item;
  using K = KeyOf<T>;
  const K flip = descending ? std::numeric_limits<K>::max() : K(0);
  for (int64_t i = 0; i < n; ++i) items[i] = Items::make(static_cast<K>(sortKey(x[i * stride]) ^ flip), i);
  Item* sorted = items;
  if (!stable) {
    std::sort(items, items + n, [](const Item& a, const Item& b) { return Items::key(a) < Items::key(b); });
  } else if (n < kRadixMinLength) {
    std::sort(items, items + n);  // positions break ties: the order is the stable one
  } else {
    sorted = radixSort<Items, sizeof(K)>(items, items + n, n);
  }
  // Values come back from the keys, which is sequential, rather than from x
  // by position, which is not; NaNs and zeros keep their exact bits from x.
  const K nan_key = static_cast<K>(sortKey(std::numeric_limits<T>::quiet_NaN()) ^ flip);
  const K zero_key = static_cast<K>(sortKey(T(0)) ^ flip);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = Items::pos(sorted[i]);
    const K key = static_cast<K>(Items::key(sorted[i]));
    if (std::is_floating_point_v<T> && (key == nan_key || key == zero_key)) {
      values[i * stride] = x[pos * stride];
    } else {
      values[i * stride] = fromKey<T>(static_cast<K>(key ^ flip));
    }
    indices[i * stride] = pos;
  }
}

// Sorts `in` (contiguous) along `d` into the contiguous `values` and `indices`.
void sortInto(const Tensor& in, int64_t d, bool descending, bool stable, Tensor& values, Tensor& indices) {
  const int64_t n = in.dim() == 0 ? 1 : in.sizes()[d];
  if (in.numel() == 0) return;
  int64_t inner = 1;
  for (int64_t k = d + 1; k < in.dim(); ++k) inner *= in.sizes()[k];
  const int64_t lines = in.numel() / n;
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(in.dtype(), "sort", [&] {
    using T = scalar_t;
    const T* x = in.data<T>();
    T* v = values.data<T>();
    int64_t* idx = indices.data<int64_t>();
    auto run = [&]<typename Items>(Items) {
      parallelFor(0, lines, std::max<int64_t>(1, kGrainSize / n), [&](int64_t lo, int64_t hi) {
        // Items, and scratch for the radix passes; left uninitialized (every line writes before
        // it reads), as fresh pages are costly.
        const size_t size = static_cast<size_t>(stable && n >= kRadixMinLength ? 2 * n : n);
        const auto buffer = std::make_unique_for_overwrite<typename Items::Item[]>(size);
        for (int64_t line = lo; line < hi; ++line) {
          const int64_t start = line / inner * n * inner + line % inner;
          sortLine<Items>(x + start, inner, n, descending, stable, buffer.get(), v + start, idx + start);
        }
      });
    };
    if (sizeof(KeyOf<T>) <= 4 && n <= int64_t{std::numeric_limits<uint32_t>::max()}) {
      run(PackedItems{});
    } else {
      run(WideItems{});
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  const int64_t d = wrapDim(dim, self.dim());
  const Tensor in = contiguous(self);
  Tensor values = empty(self.sizes(), self.dtype());
  Tensor indices = empty(self.sizes(), ScalarType::Long);
  sortInto(in, d, descending, stable, values, indices);
  return {values, indices};
}

std::tuple<Tensor&, Tensor&> sortOut(const Tensor& self, int64_t dim, bool descending, bool stable, Tensor& values,
                                     Tensor& indices) {
  detail::checkOutDtype(values, self.dtype());
  detail::checkOutDtype(indices, ScalarType::Long);
  auto [v, i] = sort(self, dim, descending, stable);
  return {detail::assignOut(values, v), detail::assignOut(indices, i)};
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  return std::get<1>(sort(self, dim, descending, stable));
}

// Like PyTorch's generated argsort.stable_out, converts to `out`'s dtype, whatever it is.
Tensor& argsortOut(const Tensor& self, int64_t dim, bool descending, bool stable, Tensor& out) {
  return detail::assignOut(out, argsort(self, dim, descending, stable));
}

Tensor msort(const Tensor& self) { return std::get<0>(sort(self, 0)); }

Tensor& msortOut(const Tensor& self, Tensor& out) {
  detail::checkOutDtype(out, self.dtype());
  return detail::assignOut(out, msort(self));
}

}  // namespace kiln
