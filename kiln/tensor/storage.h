#pragma once
// The memory behind tensors. Owned memory is 64-byte aligned; borrowed memory
// (a numpy array) carries a release callback that drops the owner.
#include <cstddef>
#include <cstdint>

#include "kiln/util/intrusive_ptr.h"

namespace kiln {

class Storage : public RefCounted {
 public:
  using Release = void (*)(void* context);

  // Allocates nbytes of 64-byte aligned, uninitialized memory.
  explicit Storage(size_t nbytes);
  // Wraps memory owned elsewhere; `release(context)` runs when the last tensor goes.
  Storage(void* data, size_t nbytes, Release release, void* context);
  ~Storage() override;
  // Storage objects come and go with every small tensor: cached blocks.
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size);
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  bool ownsMemory() const { return release_ == nullptr; }

  // How many times an operator wrote to this memory in place: every tensor
  // viewing it shares the count, which autograd reads to tell that a tensor
  // it saved for backward has changed since (torch's version counter). The
  // dispatch wrapper bumps it for every argument a schema marks written.
  uint32_t version() const { return version_; }
  void bumpVersion() { ++version_; }

 private:
  void* data_;
  size_t nbytes_;
  Release release_ = nullptr;
  void* context_ = nullptr;
  uint32_t version_ = 0;
};

using StoragePtr = IntrusivePtr<Storage>;

}  // namespace kiln
