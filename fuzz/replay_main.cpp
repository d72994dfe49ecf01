// Replays fuzz inputs without libFuzzer: calls a target's LLVMFuzzerTestOneInput
// once on each file named on the command line (a folder means every file in it,
// in name order). `make sanitize` builds each target with this main under gcc's
// ASan and UBSan and replays the committed corpora in tests/fuzz_corpus; a
// crash names the input it came from.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being replayed, for the message when it brings the process down.
char current_input[4096];

void nameCurrentInput() {
  // A sanitizer's report ends in abort() (abort_on_error): name it once.
  static volatile sig_atomic_t named = 0;
  if (named) return;
  named = 1;
  const char prefix[] = "\nreplay: crashing input: ";
  (void)!write(2, prefix, sizeof(prefix) - 1);
  (void)!write(2, current_input, strlen(current_input));
  (void)!write(2, "\n", 1);
}

void onAbort(int sig) {
  nameCurrentInput();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::string> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else {
      inputs.push_back(arg.string());
    }
  }
  std::signal(SIGABRT, onAbort);
  std::signal(SIGSEGV, onAbort);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(nameCurrentInput);
#endif
  for (const std::string& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 1;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::snprintf(current_input, sizeof(current_input), "%s", path.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
