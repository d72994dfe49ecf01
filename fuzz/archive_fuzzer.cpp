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

void checkError(const kiln::Error& e) {
  if (std::string_view(e.what()).find("internal assert failed") != std::string_view::npos) {
    std::cerr << "bug: " << e.what() << "\n";
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
