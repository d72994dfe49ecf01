// Any bytes given to the archive reader must either load or raise
// kiln::Error: the zip layer (minizip under kiln's bounds and CRC checks),
// torch.save files (loadPickle) and TorchScript archives (kiln::load: the
// version, constants, code/ through the importer, the module's pickle).
// Internal assertions are bugs. The corpus (tests/fuzz_corpus/archive) holds
// small archives torch 1.13 wrote; tools/make_archive_corpus.py makes them.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "kiln/serialization/import.h"
#include "kiln/serialization/pickle_file.h"
#include "kiln/serialization/zip_file.h"

namespace {

// An internal assertion's message ends with this line (kiln/util/error.cpp);
// the unpickler wraps it with the opcode that was running. Messages also
// quote the file's own bytes, so a mere mention of the words proves nothing.
constexpr std::string_view kBugLine = "This is a bug in kiln; please report it.";

void checkError(const kiln::Error& e) {
  std::string_view message = e.what();
  bool bug = message.ends_with(kBugLine);
  size_t at = message.rfind(kBugLine);
  if (!bug && at != std::string_view::npos) bug = message.substr(at + kBugLine.size()).starts_with(" (opcode ");
  if (bug) {
    std::cerr << "bug: " << message << "\n";
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    kiln::ZipReader archive = kiln::ZipReader::fromBuffer(bytes, "fuzz.pt");
    for (const std::string& record : archive.records()) {
      try {
        if (archive.recordSize(record) <= (1u << 20)) archive.readRecord(record);
      } catch (const kiln::Error& e) {
        checkError(e);
      }
    }
    try {
      kiln::loadPickle(archive);
    } catch (const kiln::Error& e) {
      checkError(e);
    }
    kiln::load(archive);
  } catch (const kiln::Error& e) {
    checkError(e);
  }
  return 0;
}
