// Any text given to the script parser must either parse or raise kiln::Error;
// what parses must print as s-expressions.
#include <cstdint>
#include <string>

#include "kiln/frontend/parser.h"
#include "kiln/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const kiln::TreeRef& tree : kiln::parseSource(text, "fuzz.py")) (void)tree->toString();
  } catch (const kiln::Error&) {
  }
  return 0;
}
