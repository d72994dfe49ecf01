#include "kiln/core/device.h"

#include <charconv>
#include <ostream>

#include "kiln/util/error.h"

namespace kiln {

Device Device::parse(std::string_view text) {
  std::string_view kind = text.substr(0, text.find(':'));
  DeviceType type;
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "cuda") {
    type = DeviceType::CUDA;
  } else if (kind == "meta") {
    type = DeviceType::Meta;
  } else {
    KILN_ERROR("Expected one of cpu, cuda, meta device type at start of device string: ", text);
  }
  if (kind.size() == text.size()) return Device(type);
  std::string_view index_text = text.substr(kind.size() + 1);
  int index = -1;
  auto [end, ec] = std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
  KILN_CHECK(ec == std::errc() && end == index_text.data() + index_text.size() && !index_text.empty() && index >= 0 &&
                 index < 128,
             "Invalid device string: '", text, "'");
  return Device(type, static_cast<int8_t>(index));
}

std::string Device::str() const {
  std::string s = type == DeviceType::CPU ? "cpu" : type == DeviceType::CUDA ? "cuda" : "meta";
  if (index >= 0) {
    s += ':';
    s += std::to_string(index);
  }
  return s;
}

std::ostream& operator<<(std::ostream& out, Device d) { return out << d.str(); }

}  // namespace kiln
