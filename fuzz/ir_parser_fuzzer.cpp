// Any text given to the IR parser must either parse or raise kiln::Error;
// what parses must print, and the printed text must parse back to itself.
// A graph that lints must also compile to interpreter code or raise
// kiln::Error (unknown operators, bad callees).
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "kiln/ir/ir_parser.h"
#include "kiln/runtime/code.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    auto g = kiln::parseIR(text);
    printed = g->toString();
    bool valid = true;
    try {
      g->lint();
    } catch (const kiln::Error&) {
      // The parser does not lint: text may describe an invalid graph.
      valid = false;
    }
    if (valid) {
      try {
        kiln::Code code(g, "fuzz");
      } catch (const kiln::Error& e) {
        if (std::string_view(e.what()).find("internal assert failed") != std::string_view::npos) {
          std::cerr << e.what() << "\n" << printed;
          std::abort();
        }
      }
    }
  } catch (const kiln::Error&) {
    return 0;
  }
  // Small tensor constants print in PyTorch's C++ tensor text, which is not
  // IR syntax; everything else must read back.
  if (printed.find("Type{") != std::string::npos) return 0;
  try {
    std::string again = kiln::parseIR(printed)->toString();
    if (again != printed) {
      std::cerr << "round trip changed the text:\n" << printed << "---\n" << again;
      std::abort();
    }
  } catch (const kiln::Error& e) {
    std::cerr << "printed text does not parse: " << e.what() << "\n" << printed;
    std::abort();
  }
  return 0;
}
