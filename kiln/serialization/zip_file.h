#pragma once
// The zip container under torch's two file kinds (torch.save and
// torch.jit.save): named records below one top folder (`model/data.pkl`,
// `model/data/0`, `model/code/__torch__.py`). Zip parsing and deflate are
// minizip's and zlib's (Debian's libminizip, zlib licence); what is kiln's
// is the policy: records are addressed without the top folder, every read
// is bounds- and CRC-checked, and tensor records are stored uncompressed at
// 64-byte aligned offsets so a loader can build tensors over the mapped file
// instead of copying them.
//
//   kiln::ZipReader archive = kiln::ZipReader::openFile("model.pt");
//   std::string pickle = archive.readRecord("data.pkl");
//   kiln::StoragePtr weights = archive.recordStorage("data/0", 4 * 9);
//
//   kiln::ZipWriter out = kiln::ZipWriter::toFile("model.pt");   // top folder "model"
//   out.writeRecord("data/0", bytes, size, /*compress=*/false);
//   out.finish();
#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/tensor/storage.h"

namespace kiln {

// The bytes of an archive: a read-only mapping of a file, or a buffer.
// Storages built over a record hold it, so the file stays mapped as long as
// any tensor over it lives.
class ArchiveBytes;

class ZipReader {
 public:
  // Maps the file. `name` in errors is the path.
  static ZipReader openFile(const std::string& path);
  // Reads from a buffer the reader keeps (moved in).
  static ZipReader fromBuffer(std::string bytes, const std::string& name = "<buffer>");
  // Reads the whole stream into a buffer.
  static ZipReader fromStream(std::istream& in, const std::string& name = "<stream>");

  ZipReader(ZipReader&&) noexcept;
  ZipReader& operator=(ZipReader&&) noexcept;
  ~ZipReader();

  // For messages: the path or the name given.
  const std::string& name() const { return name_; }
  // The top folder every record sits in, with its slash ("model/").
  const std::string& prefix() const { return prefix_; }
  // Record names below the prefix, in the order of the zip's directory.
  std::vector<std::string> records() const;
  bool hasRecord(const std::string& record) const;
  // The uncompressed size the directory gives.
  size_t recordSize(const std::string& record) const;
  // The record's bytes, inflated if deflated; the CRC is checked. A missing
  // record raises.
  std::string readRecord(const std::string& record) const;
  // At least `min_bytes` bytes of the record as tensor memory. A stored
  // record whose data starts 64-byte aligned in a file's mapping is not
  // copied: the storage points into it. Others, and every record of a
  // buffer, are copied into a fresh storage.
  StoragePtr recordStorage(const std::string& record, size_t min_bytes) const;
  // Whether recordStorage would point into the mapping (for tests).
  bool recordIsMapped(const std::string& record) const;

 private:
  struct Entry {
    uint64_t directory_offset;  // minizip's position of its directory entry
    uint64_t number;            // and its number in the directory
    uint64_t size;
    uint64_t compressed_size;
    uint32_t crc;
    int method;
  };
  ZipReader(std::shared_ptr<ArchiveBytes> bytes, std::string name);
  // Lists the records (the constructor's second half).
  void readDirectory();
  const Entry& entry(const std::string& record) const;
  // Opens the record in minizip and returns the offset of its data in the bytes.
  uint64_t openRecord(const std::string& record, const Entry& e) const;
  // Fails unless the stored record at `offset` has the CRC its entry says.
  void checkCrc(const std::string& record, const Entry& e, uint64_t offset) const;
  [[noreturn]] void fail(const std::string& record, const std::string& problem) const;

  std::shared_ptr<ArchiveBytes> bytes_;
  std::string name_;
  std::string prefix_;
  void* unz_ = nullptr;
  std::vector<std::string> order_;
  std::unordered_map<std::string, Entry> entries_;
};

class ZipWriter {
 public:
  // Writes `path` (a temporary file beside it, renamed over it by finish(),
  // so that a failed save leaves the old file and a module loaded from it
  // intact); every record goes below the folder `archive_name`, by default
  // the file's stem as torch names it ("model" for model.pt).
  static ZipWriter toFile(const std::string& path, const std::string& archive_name = "");
  // Writes into a buffer that finish() returns.
  static ZipWriter toBuffer(const std::string& archive_name);

  ZipWriter(ZipWriter&&) noexcept;
  ZipWriter& operator=(ZipWriter&&) noexcept;
  ~ZipWriter();

  // Adds `archive_name/record`. Uncompressed records start at a 64-byte
  // aligned offset (padding goes into the local header's extra field, as
  // torch pads); compressed ones are deflated.
  void writeRecord(const std::string& record, const void* data, size_t size, bool compress = false);
  void writeRecord(const std::string& record, const std::string& data, bool compress = false) {
    writeRecord(record, data.data(), data.size(), compress);
  }
  // Writes the directory and closes; returns the archive for toBuffer
  // writers (empty for files).
  std::string finish();

 private:
  struct Sink;
  explicit ZipWriter(std::unique_ptr<Sink> sink);
  std::unique_ptr<Sink> sink_;
  void* zip_ = nullptr;
};

}  // namespace kiln
