// The kernel compiler: the system C++ compiler run as a child process (no
// shell), shared objects loaded with dlopen, a per-process map from source to
// function and a disk cache of shared objects named by a hash of everything
// that determines the machine code.
#include "kiln/fuser/kernel_compiler.h"

#include <dlfcn.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "kiln/tensor/kernels/vector_math.h"
#include "kiln/util/jit_log.h"

extern char** environ;

namespace kiln::fuser {

namespace {

namespace fs = std::filesystem;

// What a kernel links with: the loaded libkiln (by its path, so that the
// kernel's dependency resolves to the copy already in the process) and libm.
const std::vector<std::string>& linkArguments() {
  static const std::vector<std::string> arguments = [] {
    std::vector<std::string> args;
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&kiln_vm_expf), &info) && info.dli_fname) {
      const std::string library = fs::absolute(info.dli_fname).string();
      args.push_back(library);
      args.push_back("-Wl,-rpath," + fs::path(library).parent_path().string());
    }
    args.push_back("-lm");
    return args;
  }();
  return arguments;
}

// -fwrapv: integer arithmetic wraps as kiln's kernels (and PyTorch's) do.
// -fno-math-errno -fno-trapping-math (no errno, no floating-point traps)
// let sqrt, floor, ... become single instructions and selects vectorize;
// results do not change. -ffp-contract=off: a multiply-add rounds once
// only where kernel_math.h says k_fma, as in the library (see
// CMakeLists.txt). No -ffast-math, which would break NaN and signed-zero
// semantics.
constexpr const char* kFlags[] = {"-std=c++17",        "-O3",           "-march=native",   "-fPIC",
                                  "-shared",           "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math",
                                  "-ffp-contract=off", "-fwrapv"};
// GCC only (clang rejects them): they keep GCC from moving a libm call into
// one arm of a select (as in sinh's `|x| > 88 ? e^|x|/2 : sinh(x)`), which
// leaves control flow the vectorizer gives up on.
constexpr const char* kGccFlags[] = {"-fno-tree-sink", "-fno-thread-jumps"};
// Kernels call kiln's vector math (kiln_vm_*, kiln/tensor/kernels/vector_math.h)
// in libkiln itself, which the process has loaded; see linkArguments.
// How many lines of the compiler's complaint a failure reports.
constexpr int kErrorLines = 20;

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The compiler as argv words: KILN_CXX, else CXX, else c++ (split on spaces, so `ccache g++` works).
std::vector<std::string> compilerWords() {
  std::string cxx = envOr("KILN_CXX", "");
  if (cxx.empty()) cxx = envOr("CXX", "c++");
  std::vector<std::string> words;
  std::istringstream in(cxx);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string joinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

struct RunResult {
  bool ok = false;
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (searched in PATH) and collects its output; no shell is involved.
RunResult runProgram(const std::vector<std::string>& argv) {
  RunResult result;
  int fds[2];
  if (pipe(fds) != 0) {
    result.output = std::string("pipe failed: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawn_error != 0) {
    close(fds[0]);
    result.output = "cannot run " + argv[0] + ": " + std::strerror(spawn_error);
    return result;
  }
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    result.output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  // ECHILD: the embedding program reaps children itself; the loader judges the result.
  result.ok = waited < 0 ? errno == ECHILD : WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return result;
}

std::string firstLines(const std::string& text, int count) {
  size_t next = 0;
  for (int i = 0; i < count; ++i) {
    const size_t end = text.find('\n', next);
    if (end == std::string::npos) return text;
    next = end + 1;
  }
  return text.substr(0, next - 1);
}

// The compiler and what besides the source determines the machine code it
// makes: its version and, for -march=native, this CPU's model and features
// (a cache on a shared home directory may be read by another machine).
struct Toolchain {
  std::vector<std::string> command;  // compiler words and flags
  std::string identity;
};

// A 128-bit hash (two independent 64-bit ones) as 32 hex digits.
std::string hashHex(const std::string& text) {
  uint64_t fnv = 0xcbf29ce484222325ull;
  for (unsigned char c : text) fnv = (fnv ^ c) * 0x100000001b3ull;
  auto mix = [](uint64_t z) {  // splitmix64's finalizer
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  uint64_t h = mix(text.size() + 0x9e3779b97f4a7c15ull);
  for (size_t i = 0; i < text.size(); i += 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, text.data() + i, std::min<size_t>(8, text.size() - i));
    h = mix(h ^ chunk) + 0x9e3779b97f4a7c15ull;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(fnv),
                static_cast<unsigned long long>(h));
  return out;
}

// Loads the kernel of a shared object; null and `error` set when it does not load.
FusedKernelFn loadKernel(const std::string& path, std::string* error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    *error = e ? e : "dlopen failed";
    return nullptr;
  }
  void* symbol = dlsym(handle, kKernelSymbol);
  if (!symbol) {
    *error = std::string(path) + " has no symbol " + kKernelSymbol;
    dlclose(handle);
    return nullptr;
  }
  // The handle stays open: kernels live as long as the process.
  return reinterpret_cast<FusedKernelFn>(symbol);
}

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// What identifies the programs of the compiler words on this machine: each
// one's resolved path, size, inode and modification time; empty when a word
// is not found (then nothing is remembered).
std::string compilerStamp(const std::vector<std::string>& words) {
  std::string stamp;
  const std::string path_var = envOr("PATH", "");
  for (const std::string& word : words) {
    std::vector<std::string> candidates;
    if (word.find('/') != std::string::npos) {
      candidates.push_back(word);
    } else {
      std::istringstream dirs(path_var);
      for (std::string dir; std::getline(dirs, dir, ':');) candidates.push_back((dir.empty() ? "." : dir) + "/" + word);
    }
    bool found = false;
    for (const std::string& candidate : candidates) {
      struct stat info {};
      if (stat(candidate.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || access(candidate.c_str(), X_OK) != 0)
        continue;
      std::error_code ignored;
      stamp += fs::weakly_canonical(candidate, ignored).string() + " " + std::to_string(info.st_size) + " " +
               std::to_string(info.st_ino) + " " + std::to_string(info.st_mtim.tv_sec) + "." +
               std::to_string(info.st_mtim.tv_nsec) + "\n";
      found = true;
      break;
    }
    if (!found) return "";
  }
  return stamp;
}

// The first line of `words --version`. Running the compiler costs 10-20 ms,
// most of a warm process's first fused call, so the answer is kept in the
// kernel cache under the compiler's stamp: a new or updated compiler has a
// new stamp and is asked again.
std::string askCompilerVersion(const std::vector<std::string>& words, const std::string& cache_dir) {
  const std::string stamp = compilerStamp(words);
  const std::string memo =
      stamp.empty() || cache_dir.empty() ? "" : cache_dir + "/toolchain-" + hashHex(joinWords(words) + "\n" + stamp);
  if (!memo.empty()) {
    std::ifstream in(memo);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
  }
  std::vector<std::string> argv = words;
  argv.push_back("--version");
  const RunResult run = runProgram(argv);
  const std::string version = firstLines(run.output, 1);
  if (run.ok && !version.empty() && !memo.empty()) {
    // Written whole under a temporary name, so a reader never sees half of it.
    std::error_code ignored;
    fs::create_directories(cache_dir, ignored);
    const std::string tmp = memo + ".tmp" + std::to_string(getpid());
    if (writeFile(tmp, version + "\n")) fs::rename(tmp, memo, ignored);
    fs::remove(tmp, ignored);
  }
  return version;
}

// The toolchain of the current compiler words, asked for its version once per process.
const Toolchain& toolchain() {
  static std::mutex mutex;
  static std::unordered_map<std::string, Toolchain> known;
  const std::vector<std::string> words = compilerWords();
  const std::string key = joinWords(words);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(key); it != known.end()) return it->second;
  Toolchain t;
  t.identity = askCompilerVersion(words, kernelCacheDir());
  t.command = words;
  t.command.insert(t.command.end(), std::begin(kFlags), std::end(kFlags));
  if (t.identity.find("clang") == std::string::npos)
    t.command.insert(t.command.end(), std::begin(kGccFlags), std::end(kGccFlags));
  std::ifstream cpuinfo("/proc/cpuinfo");
  bool have_model = false, have_flags = false;
  for (std::string line; std::getline(cpuinfo, line) && !(have_model && have_flags);) {
    if (!have_model && line.rfind("model name", 0) == 0) {
      t.identity += "\n" + line;
      have_model = true;
    } else if (!have_flags && line.rfind("flags", 0) == 0) {
      t.identity += "\n" + line;
      have_flags = true;
    }
  }
  return known.emplace(key, std::move(t)).first->second;
}

class KernelCompiler {
 public:
  CompiledKernel compile(const std::string& source) {
    std::shared_future<CompiledKernel> pending;
    std::promise<CompiledKernel> mine;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = loaded_.find(source); it != loaded_.end()) {
        if (it->second.fn) ++stats_.memory_hits;
        return it->second;
      }
      // Another thread is building this source: wait for it instead of building it twice.
      if (auto it = in_flight_.find(source); it != in_flight_.end()) {
        pending = it->second;
      } else {
        in_flight_.emplace(source, mine.get_future().share());
      }
    }
    if (pending.valid()) return pending.get();
    CompiledKernel result;
    try {
      result = build(source);
    } catch (const std::exception& e) {  // a file system error: report it like a failed compile
      result = fail(std::string("kernel compilation failed: ") + e.what());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    loaded_.emplace(source, result);
    in_flight_.erase(source);
    mine.set_value(result);
    return result;
  }

  KernelCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  void resetStats() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_ = {};
  }
  void forget() {
    std::lock_guard<std::mutex> lock(mutex_);
    loaded_.clear();
  }

  // The disk cache file of `source`, or "" when the disk cache is off or unwritable.
  std::string cachePath(const std::string& source) {
    const std::string dir = writableCacheDir();
    return dir.empty() ? "" : dir + "/" + cacheKey(source) + ".so";
  }

 private:
  static std::string cacheKey(const std::string& source) {
    return hashHex(source + "\n// " + kernelCompileCommand() + "\n// " + toolchain().identity);
  }

  std::string writableCacheDir() {
    const std::string dir = kernelCacheDir();
    if (dir.empty()) return "";
    std::error_code error;
    fs::create_directories(dir, error);
    if (error || access(dir.c_str(), W_OK) != 0) return "";
    return dir;
  }

  // A private folder for kernels when there is no disk cache; files there are
  // removed once loaded.
  std::string scratchDir() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (scratch_dir_.empty()) {
      std::error_code error;
      fs::path tmp = fs::temp_directory_path(error);
      std::string pattern = ((error ? fs::path("/tmp") : tmp) / "kiln-kernels-XXXXXX").string();
      if (mkdtemp(pattern.data())) scratch_dir_ = pattern;
    }
    return scratch_dir_;
  }

  CompiledKernel build(const std::string& source) {
    const std::string key = cacheKey(source);
    const std::string cache_dir = writableCacheDir();
    if (!cache_dir.empty()) {
      const std::string path = cache_dir + "/" + key + ".so";
      if (access(path.c_str(), F_OK) == 0) {
        std::string error;
        if (FusedKernelFn fn = loadKernel(path, &error)) {
          std::lock_guard<std::mutex> lock(mutex_);
          ++stats_.disk_hits;
          GRAPH_UPDATE("fused kernel loaded from the cache: ", path);
          return {fn, ""};
        }
        GRAPH_UPDATE("removing the cached kernel ", path, ", which does not load: ", error);
        std::remove(path.c_str());
      }
    }
    const std::string dir = cache_dir.empty() ? scratchDir() : cache_dir;
    if (dir.empty()) return fail("no folder to compile the kernel in");
    return compileInto(source, dir, key, /*keep=*/!cache_dir.empty());
  }

  // Compiles to temporary names in `dir` and renames the results into place,
  // so that other processes see either no kernel or a whole one.
  CompiledKernel compileInto(const std::string& source, const std::string& dir, const std::string& key, bool keep) {
    const std::string unique = "." + std::to_string(getpid()) + "." + std::to_string(counter_++) + ".tmp";
    const std::string source_path = dir + "/" + key + ".cpp";
    const std::string tmp_source = source_path + unique;
    const std::string object_path = dir + "/" + key + ".so";
    const std::string tmp_object = object_path + unique + ".so";
    if (!writeFile(tmp_source, source)) {
      std::remove(tmp_source.c_str());
      return fail("cannot write " + tmp_source);
    }
    std::vector<std::string> argv = toolchain().command;
    argv.insert(argv.end(), {"-x", "c++", tmp_source, "-x", "none", "-o", tmp_object});
    argv.insert(argv.end(), linkArguments().begin(), linkArguments().end());

    const auto start = std::chrono::steady_clock::now();
    const RunResult run = runProgram(argv);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::error_code ignored;
    if (!run.ok || !fs::exists(tmp_object, ignored)) {
      std::remove(tmp_source.c_str());
      std::remove(tmp_object.c_str());
      GRAPH_UPDATE("fused kernel failed to compile in ", seconds * 1000, " ms: ", joinWords(argv), "\n", run.output);
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.failures;
      stats_.compile_seconds += seconds;
      return {nullptr, "kernel compilation failed: " + firstLines(run.output, kErrorLines)};
    }
    // The source is kept beside the kernel (and renamed first), for a reader of the cache.
    std::rename(tmp_source.c_str(), source_path.c_str());
    std::rename(tmp_object.c_str(), object_path.c_str());
    std::string error;
    FusedKernelFn fn = loadKernel(object_path, &error);
    if (!keep) {
      std::remove(source_path.c_str());
      std::remove(object_path.c_str());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.compile_seconds += seconds;
    if (!fn) {
      ++stats_.failures;
      return {nullptr, "the compiled kernel does not load: " + error};
    }
    ++stats_.compiled;
    GRAPH_UPDATE("compiled fused kernel ", object_path, " in ", static_cast<int64_t>(seconds * 1000), " ms");
    return {fn, ""};
  }

  CompiledKernel fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.failures;
    return {nullptr, why};
  }

  std::mutex mutex_;
  // Every source seen, failures included (a source that failed would fail again).
  std::unordered_map<std::string, CompiledKernel> loaded_;
  std::unordered_map<std::string, std::shared_future<CompiledKernel>> in_flight_;
  KernelCacheStats stats_;
  std::string scratch_dir_;
  std::atomic<uint64_t> counter_{0};
};

KernelCompiler& compiler() {
  static KernelCompiler* instance = new KernelCompiler();  // never destroyed: kernels outlive static teardown
  return *instance;
}

}  // namespace

CompiledKernel compileKernel(const std::string& source) { return compiler().compile(source); }

KernelCacheStats kernelCacheStats() { return compiler().stats(); }

void resetKernelCacheStats() { compiler().resetStats(); }

std::string kernelCacheDir() {
  if (const char* dir = std::getenv("KILN_KERNEL_CACHE")) return dir;
  const std::string xdg = envOr("XDG_CACHE_HOME", "");
  if (!xdg.empty()) return xdg + "/kiln/kernels";
  const std::string home = envOr("HOME", "");
  return home.empty() ? "" : home + "/.cache/kiln/kernels";
}

std::string kernelCompileCommand() {
  std::vector<std::string> words = toolchain().command;
  words.insert(words.end(), linkArguments().begin(), linkArguments().end());
  return joinWords(words);
}

namespace detail {
void clearKernelMemoryCache() { compiler().forget(); }
std::string kernelCachePath(const std::string& source) { return compiler().cachePath(source); }
std::string compilerVersion(const std::vector<std::string>& words, const std::string& cache_dir) {
  return askCompilerVersion(words, cache_dir);
}
}  // namespace detail

}  // namespace kiln::fuser
