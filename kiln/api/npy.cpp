#include "kiln/api/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "kiln/tensor/copy.h"

namespace kiln {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// Magic, two version bytes and the shortest (version 1) length field.
constexpr size_t kPreambleSize = 10;

struct DtypeCode {
  char kind;
  size_t size;
  ScalarType type;
};

constexpr DtypeCode kDtypeCodes[] = {
    {'b', 1, ScalarType::Bool},  {'u', 1, ScalarType::Byte},  {'i', 1, ScalarType::Char},
    {'i', 2, ScalarType::Short}, {'i', 4, ScalarType::Int},   {'i', 8, ScalarType::Long},
    {'f', 2, ScalarType::Half},  {'f', 4, ScalarType::Float}, {'f', 8, ScalarType::Double},
};

struct Header {
  ScalarType dtype = ScalarType::Undefined;
  bool big_endian = false;
  bool fortran_order = false;
  DimVector shape;
};

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }. Only that much Python is accepted.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  Header parse() {
    Header header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (!consume('}')) {
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        parseDescr(header);
        seen_descr = true;
      } else if (key == "fortran_order") {
        header.fortran_order = parseBool();
        seen_order = true;
      } else if (key == "shape") {
        header.shape = parseShape();
        seen_shape = true;
      } else {
        fail("unknown key '" + key + "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    if (!seen_descr || !seen_order || !seen_shape) fail("the header lacks 'descr', 'fortran_order' or 'shape'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    KILN_ERROR(name_, ": bad .npy header: ", what, " (header: ", text_, ")");
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
  }

  std::string parseString() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail("expected a string at offset " + std::to_string(pos_));
    }
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  bool parseBool() {
    skipSpace();
    for (auto [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("'fortran_order' must be True or False");
  }

  DimVector parseShape() {
    DimVector shape;
    expect('(');
    while (!consume(')')) {
      skipSpace();
      size_t start = pos_;
      int64_t size = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (size > (INT64_MAX - 9) / 10) fail("a dimension is too large");
        size = size * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start) fail("expected a dimension at offset " + std::to_string(pos_));
      shape.push_back(size);
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  void parseDescr(Header& header) {
    std::string descr = parseString();
    if (descr.size() < 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) {
      fail("unsupported descr '" + descr + "'");
    }
    size_t size = 0;
    for (char c : descr.substr(2)) {
      if (c < '0' || c > '9' || size > 64) fail("unsupported descr '" + descr + "'");
      size = size * 10 + static_cast<size_t>(c - '0');
    }
    for (const DtypeCode& code : kDtypeCodes) {
      if (code.kind == descr[1] && code.size == size) header.dtype = code.type;
    }
    if (header.dtype == ScalarType::Undefined) {
      KILN_ERROR(name_, ": unsupported .npy dtype '", descr,
                 "' (kiln reads bool, uint8, int8, int16, int32, int64, float16, float32, float64)");
    }
    header.big_endian = descr[0] == '>' && size > 1;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

uint32_t readLittleEndian(std::string_view bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  return value;
}

DimVector fortranStrides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    strides[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

std::optional<std::string_view> npyDescr(ScalarType type) {
  switch (type) {
    case ScalarType::Bool: return "|b1";
    case ScalarType::Byte: return "|u1";
    case ScalarType::Char: return "|i1";
    case ScalarType::Short: return "<i2";
    case ScalarType::Int: return "<i4";
    case ScalarType::Long: return "<i8";
    case ScalarType::Half: return "<f2";
    case ScalarType::Float: return "<f4";
    case ScalarType::Double: return "<f8";
    default: return std::nullopt;
  }
}

}  // namespace

Tensor decodeNpy(std::string_view bytes, const std::string& name) {
  KILN_CHECK(bytes.substr(0, kMagic.size()) == kMagic, name, ": not a .npy file (it does not start with \\x93NUMPY)");
  KILN_CHECK(bytes.size() >= kMagic.size() + 2, name, ": truncated .npy header");
  auto major = static_cast<uint8_t>(bytes[6]);
  KILN_CHECK(major >= 1 && major <= 3, name, ": unsupported .npy format version ", static_cast<int>(major), ".",
             static_cast<int>(static_cast<uint8_t>(bytes[7])));
  size_t length_width = major == 1 ? 2 : 4;
  size_t header_start = 8 + length_width;
  KILN_CHECK(bytes.size() >= header_start, name, ": truncated .npy header");
  size_t header_length = readLittleEndian(bytes, 8, length_width);
  KILN_CHECK(bytes.size() - header_start >= header_length, name, ": truncated .npy header (", header_length,
             " bytes announced, ", bytes.size() - header_start, " present)");
  Header header = HeaderParser(bytes.substr(header_start, header_length), name).parse();

  int64_t numel = 1;
  for (int64_t size : header.shape) {
    KILN_CHECK(size == 0 || numel <= INT64_MAX / static_cast<int64_t>(elementSize(header.dtype)) / size, name,
               ": the shape ", shapeString(header.shape), " is too large");
    numel *= size;
  }
  size_t itemsize = elementSize(header.dtype);
  size_t data_size = static_cast<size_t>(numel) * itemsize;
  std::string_view data = bytes.substr(header_start + header_length);
  KILN_CHECK(data.size() == data_size, name, ": the data of a ", scalarTypeName(header.dtype), " array of shape ",
             shapeString(header.shape), " takes ", data_size, " bytes, the file has ", data.size(),
             data.size() < data_size ? " (truncated)" : " (trailing bytes)");

  DimVector strides = header.fortran_order ? fortranStrides(header.shape) : contiguousStrides(header.shape);
  Tensor t = emptyStrided(header.shape, strides, header.dtype);
  auto* out = static_cast<char*>(t.rawData());
  std::memcpy(out, data.data(), data_size);
  if (header.dtype == ScalarType::Bool) {
    // Any byte but 0 is true in numpy; kiln's bool must be exactly 0 or 1.
    for (size_t i = 0; i < data_size; ++i) out[i] = out[i] != 0;
  }
  if (header.big_endian) {
    for (size_t i = 0; i < data_size; i += itemsize) std::reverse(out + i, out + i + itemsize);
  }
  return contiguous(t);
}

std::string encodeNpy(const Tensor& t, bool fortran_order) {
  auto descr = npyDescr(t.dtype());
  KILN_CHECK(descr, "cannot save a ", scalarTypeName(t.dtype()), " tensor as .npy: numpy has no such dtype");
  Tensor laid_out = t;
  if (fortran_order) {
    laid_out = emptyStrided(t.sizes(), fortranStrides(t.sizes()), t.dtype());
    copy_(laid_out, t);
  } else {
    laid_out = contiguous(t);
  }

  std::ostringstream dict;
  dict << "{'descr': '" << *descr << "', 'fortran_order': " << (fortran_order ? "True" : "False") << ", 'shape': (";
  for (int64_t i = 0; i < t.dim(); ++i) dict << (i ? ", " : "") << t.sizes()[i];
  dict << (t.dim() == 1 ? ",), }" : "), }");
  std::string header = dict.str();
  // Version 1.0: a 2-byte length; the data starts 64-byte aligned after a '\n'.
  size_t total = kPreambleSize + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  KILN_CHECK(header.size() <= 0xffff, "cannot save a tensor of ", t.dim(), " dims as .npy: the header is too long");

  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(laid_out.rawData()), t.nbytes());
  return out;
}

Tensor loadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  KILN_CHECK(in, "cannot read ", path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  KILN_CHECK(!in.bad(), "cannot read ", path);
  return decodeNpy(bytes, path);
}

void saveNpy(const std::string& path, const Tensor& t, bool fortran_order) {
  std::string bytes = encodeNpy(t, fortran_order);
  std::ofstream out(path, std::ios::binary);
  KILN_CHECK(out, "cannot write ", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  KILN_CHECK(out, "cannot write ", path);
}

}  // namespace kiln
