#pragma once
// float16 and bfloat16 as storage types: conversions to and from float, with
// round-to-nearest-even like PyTorch. Arithmetic happens after conversion.
#include <bit>
#include <cstdint>

namespace kiln {

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float value) : bits(fromFloat(value)) {}
  operator float() const { return toFloat(bits); }

  static uint16_t fromFloat(float value) {
    uint32_t f = std::bit_cast<uint32_t>(value);
    uint32_t sign = (f >> 16) & 0x8000u;
    uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
    if (abs < 0x38800000u) {
      // Subnormal half (or zero): shift the mantissa with rounding.
      if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
      uint32_t exponent = abs >> 23;
      uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
      uint32_t shift = 126 - exponent;  // 14 + (113 - exponent) - 1
      uint32_t rounded = mantissa >> shift;
      uint32_t remainder = mantissa & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (remainder > halfway || (remainder == halfway && (rounded & 1u))) ++rounded;
      return static_cast<uint16_t>(sign | rounded);
    }
    uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }

  static float toFloat(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t f;
    if (exponent == 0x1fu) {
      f = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
      f = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
      f = sign;
    } else {
      // Subnormal: normalize.
      int shift = 0;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      f = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
    }
    return std::bit_cast<float>(f);
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float value) {
    uint32_t f = std::bit_cast<uint32_t>(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) {
      bits = 0x7fc0u;  // canonical nan
    } else {
      bits = static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
    }
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
};

}  // namespace kiln
