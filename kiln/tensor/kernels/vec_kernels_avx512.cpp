// vec_kernels.cpp compiled again for AVX-512 (CMakeLists.txt gives this file
// -march=x86-64-v4); vec_isa.cpp runs it only on CPUs with AVX-512.
#if KILN_HAVE_AVX2
#if !defined(__AVX512F__) || !defined(__AVX512DQ__)
#error "vec_kernels_avx512.cpp must be compiled with AVX-512 flags (-march=x86-64-v4), see CMakeLists.txt"
#endif
#define KILN_VEC_KERNELS_AVX512 1
#include "kiln/tensor/kernels/vec_kernels.cpp"
#endif
