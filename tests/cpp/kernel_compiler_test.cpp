// The kernel compiler and its caches, on small hand-written kernels.
#include <fstream>
#include <thread>

#include "tests/cpp/fuser_test_util.h"

namespace kiln::fuser {
namespace {

using testing::FreshKernelCache;

class KernelCache : public FreshKernelCache {};

// out[i] = in[i] * factor, as a kernel with the fused-kernel ABI.
std::string scaleKernel(int factor) {
  return "extern \"C\" void kiln_fused_kernel(long begin, long end, char* const* data, const long*, const long*,\n"
         "                                   const void*) {\n"
         "  float* out = (float*)data[0];\n"
         "  const float* in = (const float*)data[1];\n"
         "  for (long i = begin; i < end; ++i) out[i] = in[i] * " +
         std::to_string(factor) + ".0f;\n}\n";
}

// Runs a scale kernel on {1, 2, 3} and returns out[2].
float runScale(FusedKernelFn fn) {
  float in[3] = {1, 2, 3}, out[3] = {0, 0, 0};
  char* data[2] = {reinterpret_cast<char*>(out), reinterpret_cast<char*>(in)};
  const int64_t sizes[1] = {3}, strides[2] = {1, 1};
  fn(0, 3, data, sizes, strides, nullptr);
  return out[2];
}

// Kernel files (sources and shared objects), not the remembered compiler version.
size_t filesIn(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    n += entry.path().filename().string().rfind("toolchain-", 0) == 0 ? 0 : 1;
  }
  return n;
}

size_t linesIn(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST_F(KernelCache, CompilesOnceThenHitsMemory) {
  const std::string source = scaleKernel(2);
  std::vector<CompiledKernel> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results) threads.emplace_back([&r, &source] { r = compileKernel(source); });
  for (auto& t : threads) t.join();
  for (const CompiledKernel& r : results) {
    ASSERT_NE(r.fn, nullptr) << r.error;
    EXPECT_EQ(r.fn, results[0].fn);
  }
  EXPECT_EQ(runScale(results[0].fn), 6.0f);
  KernelCacheStats stats = kernelCacheStats();
  EXPECT_EQ(stats.compiled, 1);  // the threads waited for one compilation
  EXPECT_GT(stats.compile_seconds, 0);

  EXPECT_EQ(compileKernel(source).fn, results[0].fn);
  EXPECT_EQ(kernelCacheStats().memory_hits, 1);
  EXPECT_EQ(kernelCacheStats().compiled, 1);
  // The kernel and its source are in the disk cache, no temporaries beside them.
  const std::string path = detail::kernelCachePath(source);
  EXPECT_EQ(path.rfind(dir_ + "/", 0), 0u) << path;
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(filesIn(dir_), 2u);
}

// A second process asks the compiler nothing: its version is remembered in
// the cache until the compiler's file changes.
TEST_F(KernelCache, CompilerVersionIsRemembered) {
  const std::string fake = dir_ + "/fake-cxx", calls = dir_ + "/calls";
  std::ofstream(fake) << "#!/bin/sh\necho called >> " << calls << "\necho 'fake c++ 1.0'\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const std::string cache = dir_ + "/cache";
  EXPECT_EQ(detail::compilerVersion({fake}, cache), "fake c++ 1.0");
  EXPECT_EQ(detail::compilerVersion({fake}, cache), "fake c++ 1.0");
  EXPECT_EQ(linesIn(calls), 1u);
  // A new compiler at the same path (another size) is asked again.
  std::ofstream(fake, std::ios::app) << "# updated\n";
  EXPECT_EQ(detail::compilerVersion({fake}, cache), "fake c++ 1.0");
  EXPECT_EQ(linesIn(calls), 2u);
  // Without a cache folder every call asks.
  EXPECT_EQ(detail::compilerVersion({fake}, ""), "fake c++ 1.0");
  EXPECT_EQ(linesIn(calls), 3u);
}

TEST_F(KernelCache, NewProcessLoadsFromDisk) {
  const std::string source = scaleKernel(2);
  ASSERT_NE(compileKernel(source).fn, nullptr);
  detail::clearKernelMemoryCache();
  resetKernelCacheStats();
  CompiledKernel again = compileKernel(source);
  ASSERT_NE(again.fn, nullptr) << again.error;
  EXPECT_EQ(runScale(again.fn), 6.0f);
  KernelCacheStats stats = kernelCacheStats();
  EXPECT_EQ(stats.compiled, 0);
  EXPECT_EQ(stats.disk_hits, 1);
}

TEST_F(KernelCache, CorruptCacheFileIsRebuilt) {
  // A truncated shared object where the kernel of `source` belongs.
  const std::string good = detail::kernelCachePath(scaleKernel(2));
  ASSERT_NE(compileKernel(scaleKernel(2)).fn, nullptr);
  const std::string source = scaleKernel(3);
  const std::string path = detail::kernelCachePath(source);
  {
    std::ifstream in(good, std::ios::binary);
    std::string head(256, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream out(path, std::ios::binary);
    out.write(head.data(), in.gcount());
  }
  resetKernelCacheStats();
  CompiledKernel rebuilt = compileKernel(source);
  ASSERT_NE(rebuilt.fn, nullptr) << rebuilt.error;
  EXPECT_EQ(runScale(rebuilt.fn), 9.0f);
  EXPECT_EQ(kernelCacheStats().compiled, 1);
  EXPECT_EQ(kernelCacheStats().disk_hits, 0);
  EXPECT_GT(std::filesystem::file_size(path), 256u);
}

TEST_F(KernelCache, CompileErrorIsReturnedNotThrown) {
  CompiledKernel bad = compileKernel("extern \"C\" void kiln_fused_kernel( { this is not C++ }\n");
  EXPECT_EQ(bad.fn, nullptr);
  EXPECT_NE(bad.error.find("error"), std::string::npos) << bad.error;
  EXPECT_EQ(kernelCacheStats().failures, 1);
  EXPECT_EQ(kernelCacheStats().compiled, 0);
  EXPECT_EQ(filesIn(dir_), 0u);  // nothing half-written is left behind
}

TEST_F(KernelCache, WorksWithoutDiskCache) {
  setenv("KILN_KERNEL_CACHE", "", 1);
  EXPECT_EQ(kernelCacheDir(), "");
  EXPECT_EQ(detail::kernelCachePath(scaleKernel(4)), "");
  CompiledKernel k = compileKernel(scaleKernel(4));
  ASSERT_NE(k.fn, nullptr) << k.error;
  EXPECT_EQ(runScale(k.fn), 12.0f);
  EXPECT_EQ(kernelCacheStats().compiled, 1);
}

// Restores an environment variable when the test ends.
class SavedEnv {
 public:
  explicit SavedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) value_ = v;
  }
  ~SavedEnv() {
    if (value_) {
      setenv(name_, value_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> value_;
};

TEST(KernelCompiler, CacheFolderAndCommand) {
  SavedEnv saved[] = {SavedEnv("KILN_KERNEL_CACHE"), SavedEnv("XDG_CACHE_HOME"), SavedEnv("HOME"),
                      SavedEnv("KILN_CXX")};
  setenv("KILN_KERNEL_CACHE", "/somewhere/kernels", 1);
  EXPECT_EQ(kernelCacheDir(), "/somewhere/kernels");
  unsetenv("KILN_KERNEL_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(kernelCacheDir(), "/xdg/kiln/kernels");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(kernelCacheDir(), "/home/someone/.cache/kiln/kernels");

  setenv("KILN_CXX", "my-c++", 1);
  const std::string command = kernelCompileCommand();
  unsetenv("KILN_CXX");
  EXPECT_EQ(command.rfind("my-c++ ", 0), 0u) << command;
  for (const char* flag : {"-O3", "-march=native", "-fPIC", "-shared", "-fopenmp-simd", "-fno-math-errno", "libkiln"}) {
    EXPECT_NE(command.find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(command.find("fast-math"), std::string::npos);  // NaN semantics must hold
}

}  // namespace
}  // namespace kiln::fuser
