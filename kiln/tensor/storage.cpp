#include "kiln/tensor/storage.h"

#include <cstdlib>
#include <new>

#include "kiln/util/error.h"
#include "kiln/util/small_alloc.h"

namespace kiln {

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  try {
    // Empty tensors still get a valid, unique pointer (one cache line).
    data_ = smallAlloc(nbytes);
  } catch (const std::bad_alloc&) {
    KILN_ERROR("out of memory: could not allocate ", nbytes, " bytes");
  }
}

Storage::Storage(void* data, size_t nbytes, Release release, void* context)
    : data_(data), nbytes_(nbytes), release_(release), context_(context) {}

void* Storage::operator new(size_t size) { return smallAlloc(size); }
void Storage::operator delete(void* p, size_t size) { smallFree(p, size); }

Storage::~Storage() {
  if (release_) {
    release_(context_);
  } else {
    smallFree(data_, nbytes_);
  }
}

}  // namespace kiln
