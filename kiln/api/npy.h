#pragma once
// numpy's .npy format (versions 1.0 to 3.0) for kiln tensors: what `kiln run`
// reads its tensor arguments from and writes its results to. Every dtype
// kiln has that numpy also has (bool, uint8, int8, int16, int32, int64,
// float16, float32, float64) round-trips; little- and big-endian data and C
// and Fortran order are read. Malformed or truncated files raise kiln::Error
// naming the file and the problem.
#include <string>
#include <string_view>

#include "kiln/tensor/tensor.h"

namespace kiln {

// The tensor stored in `bytes` (a whole .npy file), always contiguous;
// `name` names the file in errors.
Tensor decodeNpy(std::string_view bytes, const std::string& name = "<bytes>");
// A whole .npy file holding `t`, in C (row-major) or Fortran (column-major) order.
std::string encodeNpy(const Tensor& t, bool fortran_order = false);

Tensor loadNpy(const std::string& path);
void saveNpy(const std::string& path, const Tensor& t, bool fortran_order = false);

}  // namespace kiln
