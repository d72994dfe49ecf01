#pragma once
// A non-owning view of contiguous values, constructible from a braced list
// (`empty({2, 3})`), a vector, a SmallVector or a pointer and length. The
// viewed values must outlive the ArrayRef, as with std::span.
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace kiln {

template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  constexpr ArrayRef(const T& single) : data_(&single), size_(1) {}
  // Valid for the full expression the list appears in, which is how braced
  // shapes are used (`empty({2, 3})`).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}
#pragma GCC diagnostic pop
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  template <typename Container,
            typename = decltype(std::declval<const Container&>().data() + std::declval<const Container&>().size()),
            typename = std::enable_if_t<std::is_same_v<
                std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const Container&>().data())>>, T>>>
  ArrayRef(const Container& c) : data_(c.data()), size_(c.size()) {}
  // A view of `U*` pointers read as `const U*` (`node->inputs()` passed to
  // a query that only reads).
  template <typename U, typename = std::enable_if_t<std::is_same_v<T, const U*>>>
  ArrayRef(ArrayRef<U*> other) : data_(const_cast<const U* const*>(other.data())), size_(other.size()) {}

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  ArrayRef slice(size_t start, size_t length) const { return ArrayRef(data_ + start, length); }
  ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }

  friend bool operator==(ArrayRef a, ArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i) {
      if (!(a.data_[i] == b.data_[i])) return false;
    }
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln
