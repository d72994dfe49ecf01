// Schema and type-annotation text: parse or raise kiln::Error; a parsed
// schema prints to text that parses back to the same schema text.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "kiln/core/function_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kiln::parseTypeAnnotation(text);
  } catch (const kiln::Error&) {
  }
  std::string printed;
  try {
    printed = kiln::parseSchema(text).str();
  } catch (const kiln::Error&) {
    return 0;
  }
  try {
    std::string again = kiln::parseSchema(printed).str();
    if (again != printed) {
      std::cerr << "round trip changed the schema:\n" << printed << "\n" << again << "\n";
      std::abort();
    }
  } catch (const kiln::Error& e) {
    std::cerr << "printed schema does not parse: " << e.what() << "\n" << printed << "\n";
    std::abort();
  }
  return 0;
}
