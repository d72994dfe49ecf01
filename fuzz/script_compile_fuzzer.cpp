// Any text given to kiln::compile must either compile or raise kiln::Error:
// the lexer, parser, IR emitter, SSA conversion and cleanup passes together
// never crash or hang, however broken the program. (script_parser_fuzzer
// covers the parser alone, with its s-expression printing.)
#include <cstdint>
#include <string>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto unit = kiln::compile(text, nullptr, "fuzz.py");
    // What compiles must be a well-formed graph.
    for (kiln::GraphFunction* f : unit->functions()) f->graph()->lint();
  } catch (const kiln::Error&) {
  }
  return 0;
}
