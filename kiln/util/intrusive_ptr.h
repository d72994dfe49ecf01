#pragma once
// Intrusive reference counting: the count lives in the object, so a handle is
// one pointer wide (IValue stays 16 bytes) and can be rebuilt from a raw
// pointer (IValue stores payloads as raw pointers).
#include <atomic>
#include <cstdint>
#include <utility>

namespace kiln {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) : refcount_(0) {}
  RefCounted& operator=(const RefCounted&) { return *this; }
  virtual ~RefCounted() = default;

  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when this was the last reference and the object is gone.
  bool decref() const {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
      return true;
    }
    return false;
  }
  uint32_t useCount() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(std::nullptr_t) {}
  explicit IntrusivePtr(T* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->incref();
  }
  IntrusivePtr(const IntrusivePtr& other) : ptr_(other.ptr_) {
    if (ptr_) ptr_->incref();
  }
  IntrusivePtr(IntrusivePtr&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  IntrusivePtr(IntrusivePtr<U> other) : ptr_(other.release()) {}
  ~IntrusivePtr() { reset(); }

  IntrusivePtr& operator=(IntrusivePtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  // Takes over a reference the caller already owns (no incref).
  static IntrusivePtr adopt(T* ptr) {
    IntrusivePtr result;
    result.ptr_ = ptr;
    return result;
  }
  // Gives up ownership of the reference without decref.
  T* release() {
    T* ptr = ptr_;
    ptr_ = nullptr;
    return ptr;
  }
  void reset() {
    if (ptr_) ptr_->decref();
    ptr_ = nullptr;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  uint32_t useCount() const { return ptr_ ? ptr_->useCount() : 0; }
  friend bool operator==(const IntrusivePtr& a, const IntrusivePtr& b) { return a.ptr_ == b.ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> makeIntrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace kiln
