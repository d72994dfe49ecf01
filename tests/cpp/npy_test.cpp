// .npy reading and writing (kiln/api/npy.h); tests/python/test_cli_run.py
// cross-checks the files with numpy itself.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "kiln/api/npy.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

const ScalarType kNumpyTypes[] = {ScalarType::Bool,  ScalarType::Byte,  ScalarType::Char,
                                  ScalarType::Short, ScalarType::Int,   ScalarType::Long,
                                  ScalarType::Half,  ScalarType::Float, ScalarType::Double};

// 0, 1, 2, ... (true/false alternating for bool) in `dtype`, shaped `sizes`.
Tensor counting(IntArrayRef sizes, ScalarType dtype) {
  int64_t n = shapeNumel(sizes);
  Tensor flat = arange(Scalar(int64_t{0}), Scalar(n), Scalar(int64_t{1}), ScalarType::Long);
  if (dtype == ScalarType::Bool) {
    auto* p = flat.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) p[i] %= 2;
  }
  return to(makeView(flat, sizes, contiguousStrides(sizes), 0), dtype, /*copy=*/true);
}

std::string bytesOf(const Tensor& t) {
  Tensor c = contiguous(t);
  return std::string(static_cast<const char*>(c.rawData()), c.nbytes());
}

// A .npy file with this header dict (padded) and data.
std::string npyFile(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + "\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  if (major == 1) {
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
  } else {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return out + header + data;
}

std::string errorOf(std::string_view bytes) {
  try {
    decodeNpy(bytes, "t.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  for (ScalarType dtype : kNumpyTypes) {
    for (const DimVector& sizes :
         {DimVector{}, DimVector{0}, DimVector{5}, DimVector{2, 3}, DimVector{2, 0, 3}, DimVector{2, 3, 4}}) {
      for (bool fortran : {false, true}) {
        Tensor t = counting(sizes, dtype);
        Tensor back = decodeNpy(encodeNpy(t, fortran));
        SCOPED_TRACE(std::string(scalarTypeName(dtype)) + " " + shapeString(sizes) + (fortran ? " F" : " C"));
        EXPECT_EQ(back.dtype(), dtype);
        EXPECT_EQ(shapeString(back.sizes()), shapeString(sizes));
        EXPECT_TRUE(back.isContiguous());
        EXPECT_EQ(bytesOf(back), bytesOf(t));
      }
    }
  }
}

TEST(Npy, WritesNumpysHeaderLayout) {
  std::string file = encodeNpy(counting({2, 3}, ScalarType::Float));
  ASSERT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_length = static_cast<uint8_t>(file[8]) | (static_cast<uint8_t>(file[9]) << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  std::string header = file.substr(10, header_length);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(file.size(), 10 + header_length + 6 * 4);
  EXPECT_NE(encodeNpy(counting({7}, ScalarType::Long)).find("'shape': (7,)"), std::string::npos);
  EXPECT_NE(encodeNpy(counting({}, ScalarType::Bool)).find("'descr': '|b1', 'fortran_order': False, 'shape': ()"),
            std::string::npos);
  EXPECT_NE(encodeNpy(counting({2, 2}, ScalarType::Half), true).find("'<f2', 'fortran_order': True"),
            std::string::npos);
}

TEST(Npy, WritesViewsByTheirValues) {
  Tensor t = counting({3, 4}, ScalarType::Int);
  Tensor transposed = makeView(t, {4, 3}, {1, 4}, 0);
  Tensor back = decodeNpy(encodeNpy(transposed));
  EXPECT_EQ(back.data<int32_t>()[1], 4);  // [0][1] of the transpose is [1][0] of t
  EXPECT_EQ(bytesOf(back), bytesOf(transposed));
}

TEST(Npy, ReadsFortranOrder) {
  int32_t column_major[6] = {0, 3, 1, 4, 2, 5};  // [[0, 1, 2], [3, 4, 5]] by columns
  Tensor t = decodeNpy(npyFile("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                               std::string(reinterpret_cast<const char*>(column_major), sizeof(column_major))));
  ASSERT_EQ(shapeString(t.sizes()), "[2, 3]");
  for (int32_t i = 0; i < 6; ++i) EXPECT_EQ(t.data<int32_t>()[i], i);
}

TEST(Npy, ReadsBigEndianAndVersion2) {
  std::string data("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  Tensor t = decodeNpy(npyFile("{'shape': (2,), 'fortran_order': False, 'descr': '>i4'}", data, 2));
  EXPECT_EQ(t.data<int32_t>()[0], 0x0102);
  EXPECT_EQ(t.data<int32_t>()[1], -2);
}

TEST(Npy, BoolBytesBecomeZeroOrOne) {
  Tensor t =
      decodeNpy(npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x00\x07\x01", 3)));
  EXPECT_EQ(bytesOf(t), std::string("\x00\x01\x01", 3));
}

TEST(Npy, RejectsBadFiles) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight(8, '\0');
  EXPECT_NE(errorOf("hello").find("t.npy: not a .npy file"), std::string::npos);
  EXPECT_NE(errorOf("").find("not a .npy file"), std::string::npos);
  std::string v9 = npyFile(f4, eight);
  v9[6] = 9;
  EXPECT_NE(errorOf(v9).find("unsupported .npy format version 9.0"), std::string::npos);
  EXPECT_NE(errorOf(npyFile(f4, eight).substr(0, 20)).find("truncated .npy header"), std::string::npos);
  EXPECT_NE(errorOf(npyFile(f4, eight).substr(0, 9)).find("truncated .npy header"), std::string::npos);
  EXPECT_NE(errorOf(npyFile(f4, "1234")).find("takes 8 bytes, the file has 4 (truncated)"), std::string::npos);
  EXPECT_NE(errorOf(npyFile(f4, eight + "x")).find("(trailing bytes)"), std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", eight))
                .find("unsupported .npy dtype '<c8'"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': 'f4', 'fortran_order': False, 'shape': (1,), }", eight)).find("bad .npy header"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", eight))
                .find("expected a string"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f4', 'shape': (2,), }", eight)).find("lacks"), std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", eight)).find("True or False"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2 2), }", eight)).find("expected ')'"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", eight))
                .find("expected a dimension"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", eight))
                .find("unknown key 'x'"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f4, 'fortran_order': False}", eight)).find("bad .npy header"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", eight))
                .find("too large"),
            std::string::npos);
  EXPECT_NE(errorOf(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", eight))
                .find("too large"),
            std::string::npos);
}

TEST(Npy, RefusesDtypesNumpyLacks) {
  Tensor t = empty({2}, ScalarType::BFloat16);
  try {
    encodeNpy(t);
    FAIL() << "bfloat16 was saved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("numpy has no such dtype"), std::string::npos);
  }
}

TEST(Npy, FilesRoundTrip) {
  std::string path = ::testing::TempDir() + "kiln_npy_test.npy";
  Tensor t = counting({3, 2}, ScalarType::Double);
  saveNpy(path, t, /*fortran_order=*/true);
  EXPECT_EQ(bytesOf(loadNpy(path)), bytesOf(t));
  std::remove(path.c_str());
  EXPECT_THROW(loadNpy(path), Error);
  EXPECT_THROW(saveNpy("/nonexistent-dir/x.npy", t), Error);
}

}  // namespace
}  // namespace kiln
