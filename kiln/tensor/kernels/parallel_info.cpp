#include "kiln/tensor/parallel_info.h"

#include <cblas.h>
#include <omp.h>

#include <sstream>

#include "kiln/tensor/parallel.h"

namespace kiln {

namespace {

const char* blasThreading() {
  // openblas_get_parallel: 0 sequential, 1 its own pthreads, 2 OpenMP.
  switch (openblas_get_parallel()) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "OpenMP";
  }
  return "unknown";
}

}  // namespace

bool blasHasOwnThreadPool() { return openblas_get_parallel() == 1; }

std::string parallelInfo() {
  std::ostringstream out;
  out << "kiln threads: " << getNumThreads() << "\n";
  out << "OpenMP: " << _OPENMP << ", omp_get_max_threads() = " << omp_get_max_threads() << "\n";
  out << "BLAS: " << openblas_get_config() << ", threading: " << blasThreading() << "\n";
  if (blasHasOwnThreadPool()) {
    out << "note: this OpenBLAS runs its own pthreads, which compete with kiln's OpenMP threads; "
           "select Debian's OpenMP build (libopenblas0-openmp, `make deps` does it)\n";
  }
  return out.str();
}

}  // namespace kiln
