#pragma once
// A device as TorchScript names it: `cpu`, `cuda`, `cuda:1`, `meta`. kiln
// computes on the CPU only, but graphs printed by PyTorch mention other
// devices (in tensor types and `torch.device` constants), so they must parse,
// print and compare like PyTorch's.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kiln {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1: the current device of that type

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  // "cpu", "cuda", "cuda:1", "meta"; raises kiln::Error on anything else.
  static Device parse(std::string_view text);

  bool isCpu() const { return type == DeviceType::CPU; }
  std::string str() const;
  friend bool operator==(Device a, Device b) { return a.type == b.type && a.index == b.index; }
  friend bool operator!=(Device a, Device b) { return !(a == b); }
};

std::ostream& operator<<(std::ostream& out, Device d);

}  // namespace kiln
