// The zip layer (kiln/serialization/zip_file.h) and torch.save files over it
// (pickle_file.h): round trips, the alignment that lets tensors map the
// file, and malformed archives, which must raise kiln::Error naming the
// archive and the record. tests/python/test_serialization.py checks against
// torch 1.13's own files.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "kiln/serialization/pickle_file.h"
#include "kiln/serialization/zip_file.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/shape.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

std::string twoRecordArchive() {
  ZipWriter out = ZipWriter::toBuffer("model");
  std::string floats(36, '\0');
  for (int i = 0; i < 9; ++i) {
    float f = static_cast<float>(i);
    std::memcpy(floats.data() + 4 * i, &f, 4);
  }
  out.writeRecord("code/__torch__.py", std::string(300, 'x') + "def f():\n  pass\n", /*compress=*/true);
  out.writeRecord("data/0", floats);
  out.writeRecord("version", "3\n");
  return out.finish();
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

TEST(ZipFile, RoundTripsStoredAndDeflatedRecords) {
  ZipReader in = ZipReader::fromBuffer(twoRecordArchive(), "buffer.pt");
  EXPECT_EQ(in.prefix(), "model/");
  EXPECT_EQ(in.records(), (std::vector<std::string>{"code/__torch__.py", "data/0", "version"}));
  EXPECT_EQ(in.readRecord("version"), "3\n");
  EXPECT_EQ(in.readRecord("code/__torch__.py"), std::string(300, 'x') + "def f():\n  pass\n");
  EXPECT_EQ(in.recordSize("data/0"), 36u);
  StoragePtr storage = in.recordStorage("data/0", 36);
  EXPECT_EQ(static_cast<const float*>(storage->data())[8], 8.0f);
}

TEST(ZipFile, StoredRecordsAreAlignedAndMappedFromFiles) {
  std::string path = ::testing::TempDir() + "kiln_zip_aligned.pt";
  {
    ZipWriter out = ZipWriter::toFile(path, "kiln_zip_aligned");
    for (int i = 0; i < 5; ++i) out.writeRecord("data/" + std::to_string(i), std::string(13 * i + 1, char('a' + i)));
    out.finish();
  }
  ZipReader in = ZipReader::openFile(path);
  for (int i = 0; i < 5; ++i) {
    std::string record = "data/" + std::to_string(i);
    EXPECT_TRUE(in.recordIsMapped(record)) << record;
    StoragePtr s = in.recordStorage(record, 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % 64, 0u);
    EXPECT_FALSE(s->ownsMemory());
    EXPECT_EQ(static_cast<const char*>(s->data())[0], char('a' + i));
  }
  // The storage keeps the mapping alive after the reader is gone, and a
  // write into it stays private to the process.
  StoragePtr kept = ZipReader::openFile(path).recordStorage("data/4", 53);
  static_cast<char*>(kept->data())[0] = 'Q';
  EXPECT_EQ(ZipReader::openFile(path).readRecord("data/4")[0], 'e');
  std::remove(path.c_str());
}

TEST(ZipFile, StateDictsRoundTrip) {
  Tensor w = reshape(arange(Scalar(int64_t{0}), Scalar(int64_t{6}), Scalar(int64_t{1}), ScalarType::Float), {2, 3});
  Tensor second_row = select(w, 0, 1);
  auto dict = makeIntrusive<DictObj>(StringType::get(), TensorType::get());
  dict->insertOrAssign(IValue(std::string("w")), IValue(w));
  dict->insertOrAssign(IValue(std::string("row")), IValue(second_row));
  std::istringstream bytes(savePickleToBuffer(IValue(dict)));
  IValue back = loadPickle(bytes);
  ASSERT_TRUE(back.isDict());
  Tensor w2 = back.toDictRef().at(IValue(std::string("w"))).toTensor();
  Tensor row = back.toDictRef().at(IValue(std::string("row"))).toTensor();
  EXPECT_EQ(w2.sizes(), w.sizes());
  EXPECT_EQ(w2.data<float>()[5], 5.0f);
  EXPECT_EQ(row.sizes(), second_row.sizes());
  EXPECT_EQ(row.data<float>()[0], 3.0f);
  // One storage for both, as they were written.
  EXPECT_EQ(w2.storage().get(), row.storage().get());
}

TEST(ZipFile, MalformedArchivesRaise) {
  std::string good = twoRecordArchive();
  EXPECT_NE(errorOf([&] { ZipReader::fromBuffer(good.substr(0, good.size() / 2), "half.pt"); }).find("half.pt"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { ZipReader::fromBuffer("", "empty.pt"); }).find("empty"), std::string::npos);
  EXPECT_NE(errorOf([&] { ZipReader::fromBuffer("\x80\x02}q\x00.", "legacy.pt"); }).find("legacy"), std::string::npos);
  ZipReader in = ZipReader::fromBuffer(good, "good.pt");
  EXPECT_NE(errorOf([&] { in.readRecord("data/7"); }).find("record 'data/7': missing"), std::string::npos);
  EXPECT_NE(errorOf([&] { in.recordStorage("data/0", 40); }).find("holds 36 bytes"), std::string::npos);

  // Flip a byte of each record's data: its CRC no longer matches.
  for (const char* record : {"data/0", "version", "code/__torch__.py"}) {
    std::string bad = good;
    size_t at = std::string::npos;
    if (std::string(record) == "version") at = bad.find("3\n");
    if (std::string(record) == "data/0") at = bad.find(std::string("\0\0\0\0\0\0\x80\x3f", 8)) + 6;
    if (at == std::string::npos) {  // the deflated record: corrupt its middle
      at = bad.find("code/__torch__.py") + std::string("code/__torch__.py").size() + 10;
    }
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    ZipReader r = ZipReader::fromBuffer(bad, "bad.pt");
    std::string message = errorOf([&] { r.readRecord(record); });
    EXPECT_NE(message.find(std::string("record '") + record + "'"), std::string::npos) << message;
  }
}

TEST(ZipFile, RecordsOutsideTheFileRaise) {
  std::string good = twoRecordArchive();
  // Make data/0's directory entry claim a huge size: the central directory
  // header is "PK\1\2"; sizes sit at offsets 20 (compressed) and 24.
  size_t dir = good.find("PK\1\2");
  dir = good.find("PK\1\2", dir + 4);  // the second entry is data/0
  ASSERT_NE(dir, std::string::npos);
  std::string bad = good;
  uint32_t huge = 0x7fffff00;
  std::memcpy(bad.data() + dir + 20, &huge, 4);
  std::memcpy(bad.data() + dir + 24, &huge, 4);
  std::string message = errorOf([&] { ZipReader::fromBuffer(bad, "huge.pt").readRecord("data/0"); });
  EXPECT_NE(message.find("record 'data/0'"), std::string::npos) << message;
}

}  // namespace
}  // namespace kiln
