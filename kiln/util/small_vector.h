#pragma once
// A vector of trivially copyable values that keeps up to N of them inline.
// Tensor sizes and strides live here, so making a tensor of rank <= 5 does
// not touch the heap for its shape.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>

#include "kiln/util/array_ref.h"

namespace kiln {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(size_t count, T value = T()) { assign(count, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  SmallVector(ArrayRef<T> values) { assign(values.data(), values.data() + values.size()); }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { moveFrom(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      moveFrom(other);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }

  operator ArrayRef<T>() const { return {data_, size_}; }

  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    T* fresh = static_cast<T*>(std::malloc(capacity * sizeof(T)));
    if (!fresh) throw std::bad_alloc();
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(T));
    if (data_ != inline_) std::free(data_);
    data_ = fresh;
    capacity_ = capacity;
  }
  void push_back(T value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = value;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(size_t count, T value = T()) {
    reserve(count);
    for (size_t i = size_; i < count; ++i) data_[i] = value;
    size_ = count;
  }
  void assign(size_t count, T value) {
    size_ = 0;
    resize(count, value);
  }
  void assign(const T* first, const T* last) {
    size_t count = static_cast<size_t>(last - first);
    reserve(count);
    if (count) std::memmove(data_, first, count * sizeof(T));
    size_ = count;
  }
  T* insert(T* pos, T value) {
    size_t index = static_cast<size_t>(pos - data_);
    if (size_ == capacity_) reserve(capacity_ * 2);
    std::memmove(data_ + index + 1, data_ + index, (size_ - index) * sizeof(T));
    data_[index] = value;
    ++size_;
    return data_ + index;
  }
  T* erase(T* pos) {
    size_t index = static_cast<size_t>(pos - data_);
    std::memmove(data_ + index, data_ + index + 1, (size_ - index - 1) * sizeof(T));
    --size_;
    return data_ + index;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void release() {
    if (data_ != inline_) std::free(data_);
    data_ = inline_;
    capacity_ = N;
    size_ = 0;
  }
  void moveFrom(SmallVector& other) {
    if (other.data_ == other.inline_) {
      data_ = inline_;
      capacity_ = N;
      assign(other.begin(), other.end());
    } else {
      data_ = other.data_;
      capacity_ = other.capacity_;
      size_ = other.size_;
      other.data_ = other.inline_;
      other.capacity_ = N;
    }
    other.size_ = 0;
  }

  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace kiln
