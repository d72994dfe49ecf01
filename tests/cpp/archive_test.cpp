// TorchScript archives in C++ (kiln/serialization/import.h, export.h):
// modules saved and loaded from paths, buffers and streams; the archives
// torch 1.13 wrote in tests/fuzz_corpus/archive/; malformed archives, which
// must raise kiln::Error. tests/python/test_load.py and test_save.py check
// against torch live.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kiln/api/kiln.h"
#include "kiln/serialization/export.h"
#include "kiln/serialization/import.h"
#include "kiln/serialization/python_print.h"
#include "kiln/serialization/zip_file.h"
#include "kiln/tensor/factory.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

// __FILE__ is relative to the build folder, where ctest runs the tests;
// from the repository root the corpus is where it is.
std::string corpusPath(const std::string& name) {
  auto beside = std::filesystem::path(__FILE__).parent_path() / ".." / "fuzz_corpus" / "archive" / name;
  if (std::filesystem::exists(beside)) return beside.string();
  return (std::filesystem::path("tests") / "fuzz_corpus" / "archive" / name).string();
}

Module scaleModule() {
  Module sub("Sub");
  sub.register_parameter("w", full({2}, Scalar(3.0), ScalarType::Float));
  sub.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w\n");
  Module m("Net");
  m.register_parameter("bias", ones({2}));
  m.register_module("sub", sub);
  m.register_attribute("names", ListType::create(StringType::get()),
                       IValue::list(StringType::get(), {IValue("a"), IValue("b")}));
  m.define(R"PY(
def forward(self, x: Tensor, k: int = 2) -> Tensor:
    return self.sub(x) * k + self.bias

def count(self) -> int:
    return len(self.names)
)PY");
  return m;
}

double sumOf(const IValue& v) {
  const Tensor& t = v.toTensor();
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i) s += t.data<float>()[i];
  return s;
}

template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Archive, SaveAndLoadThroughBuffersStreamsAndFiles) {
  Module m = scaleModule();
  double expected = sumOf(m.forward({IValue(ones({2}))}));
  ExtraFilesMap extra{{"meta.txt", "kiln"}};
  std::string bytes = saveToBuffer(m, extra);

  ExtraFilesMap asked{{"meta.txt", ""}, {"absent.txt", "x"}};
  Module again = loadFromBuffer(bytes, &asked);
  EXPECT_EQ(asked["meta.txt"], "kiln");
  EXPECT_EQ(asked["absent.txt"], "");
  EXPECT_DOUBLE_EQ(sumOf(again.forward({IValue(ones({2}))})), expected);
  EXPECT_EQ(again.run_method("count", {}).toInt(), 2);
  EXPECT_EQ(again.named_parameters().size(), 2u);
  EXPECT_EQ(again.named_parameters()[1].name, "sub.w");

  std::istringstream in(bytes);
  EXPECT_DOUBLE_EQ(sumOf(load(in).forward({IValue(ones({2})), IValue(int64_t{1})})), 2 * (3 + 1));

  std::string path = ::testing::TempDir() + "kiln_archive_test.pt";
  save(m, path);
  Module from_file = load(path);
  EXPECT_DOUBLE_EQ(sumOf(from_file.forward({IValue(ones({2}))})), expected);
  // The parameters are built over the mapped file.
  EXPECT_FALSE(from_file.named_parameters()[0].value.storage()->ownsMemory());
  ZipReader archive = ZipReader::openFile(path);
  EXPECT_EQ(archive.prefix(), "kiln_archive_test/");
  EXPECT_TRUE(archive.hasRecord("code/__torch__.py"));
  EXPECT_TRUE(archive.recordIsMapped("data/0"));
  EXPECT_EQ(archiveVersion(archive), kProducedArchiveVersion);
  std::remove(path.c_str());
}

TEST(Archive, FunctionsAreSavedAsPlaceholderModules) {
  auto unit = compile(R"PY(
def twice(x: Tensor) -> Tensor:
    return x * 2

def f(x: Tensor, n: int = 3) -> Tensor:
    return twice(x) + n
)PY");
  Module m = moduleForFunction(unit->getFunction("f"));
  Module again = loadFromBuffer(saveToBuffer(m));
  EXPECT_EQ(again.type()->name(), "__torch__.PlaceholderModule");
  // The default and the callee came along.
  EXPECT_DOUBLE_EQ(sumOf(again.forward({IValue(ones({2}))})), 2 * (2 + 3));
}

TEST(Archive, LoadsWhatTorchWrote) {
  for (const char* name : {"linear.pt", "rich.pt", "setstate.pt", "frozen.pt", "traced.pt"}) {
    ExtraFilesMap extra{{"meta.txt", ""}};
    Module m = load(corpusPath(name), &extra);
    EXPECT_TRUE(m.find_method("forward")) << name;
    if (std::string(name) != "traced.pt") {
      EXPECT_EQ(extra["meta.txt"], "kiln") << name;
    }
  }
  Module rich = load(corpusPath("rich.pt"));
  EXPECT_EQ(rich.run_method("other", {IValue("x")}).toInt(), 1);
  // A buffer that was a view of a parameter still shares its storage.
  EXPECT_EQ(rich.attr("row").toTensor().storage().get(), rich.attr("w").toTensor().storage().get());
  Module setstate = load(corpusPath("setstate.pt"));
  EXPECT_EQ(setstate.attr("n").toInt(), 5);  // __setstate__ added one
}

TEST(Archive, MalformedArchivesRaise) {
  std::ifstream in(corpusPath("linear.pt"), std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(good.empty());
  EXPECT_NE(errorOf([&] { loadFromBuffer(good.substr(0, good.size() / 3), nullptr, "cut.pt"); }).find("cut.pt"),
            std::string::npos);
  // Every byte flipped in turn, over the first records: each load either
  // works (a byte no check covers, such as a timestamp) or raises kiln::Error.
  for (size_t at = 0; at < std::min<size_t>(good.size(), 1500); at += 7) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    try {
      loadFromBuffer(bad, nullptr, "flipped.pt");
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("internal assert"), std::string::npos) << e.what();
    }
  }
  // A torch.save file is not an archive.
  std::ifstream sd(corpusPath("state_dict.pt"), std::ios::binary);
  std::string state_dict((std::istreambuf_iterator<char>(sd)), std::istreambuf_iterator<char>());
  EXPECT_NE(errorOf([&] { loadFromBuffer(state_dict); }).find("load_pickle"), std::string::npos);
}

}  // namespace
}  // namespace kiln
