#include "kiln/tensor/storage.h"

#include <cstdlib>
#include <new>

#include "kiln/util/error.h"

namespace kiln {

namespace {
constexpr size_t kAlignment = 64;
}

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  // aligned_alloc wants a multiple of the alignment; allocate at least one line
  // so empty tensors still have a valid, unique pointer.
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  KILN_CHECK(data_ != nullptr, "out of memory: could not allocate ", nbytes, " bytes");
}

Storage::Storage(void* data, size_t nbytes, Release release, void* context)
    : data_(data), nbytes_(nbytes), release_(release), context_(context) {}

Storage::~Storage() {
  if (release_) {
    release_(context_);
  } else {
    std::free(data_);
  }
}

}  // namespace kiln
