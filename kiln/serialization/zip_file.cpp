#include "kiln/serialization/zip_file.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unzip.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "kiln/tensor/parallel.h"
#include "kiln/util/error.h"

namespace kiln {

// --- the bytes ----------------------------------------------------------------------------------

class ArchiveBytes {
 public:
  explicit ArchiveBytes(std::string buffer) : buffer_(std::move(buffer)) {
    data_ = buffer_.data();
    size_ = buffer_.size();
  }
  // A mapping of the file open as `fd`, which this object closes.
  ArchiveBytes(void* mapping, size_t size, int fd) : mapping_(mapping), fd_(fd) {
    data_ = static_cast<char*>(mapping);
    size_ = size;
  }
  ~ArchiveBytes() {
    if (mapping_ != nullptr) munmap(mapping_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  ArchiveBytes(const ArchiveBytes&) = delete;
  ArchiveBytes& operator=(const ArchiveBytes&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  // A file mapping (tensors may point into it), not a buffer read whole.
  bool mapped() const { return mapping_ != nullptr; }

  // The CRC-32 of `size` bytes at `offset`, or nothing when the file cannot
  // be read there (it was truncated after it was mapped).
  std::optional<uint32_t> crc(uint64_t offset, uint64_t size) const;

 private:
  std::string buffer_;
  void* mapping_ = nullptr;
  int fd_ = -1;
  char* data_ = nullptr;
  size_t size_ = 0;
};

namespace {

constexpr size_t kRecordAlignment = 64;

// minizip reads through these callbacks from the bytes in memory, so the
// offsets it reports are offsets into the mapping.
struct MemoryStream {
  const char* data;
  uint64_t size;
  uint64_t pos = 0;
};

voidpf ZCALLBACK memoryOpen(voidpf opaque, const void* /*filename*/, int /*mode*/) {
  auto* bytes = static_cast<ArchiveBytes*>(opaque);
  return new MemoryStream{bytes->data(), bytes->size()};
}

uLong ZCALLBACK memoryRead(voidpf /*opaque*/, voidpf stream, void* buf, uLong size) {
  auto* s = static_cast<MemoryStream*>(stream);
  uint64_t n = std::min<uint64_t>(size, s->pos < s->size ? s->size - s->pos : 0);
  if (n > 0) std::memcpy(buf, s->data + s->pos, n);
  s->pos += n;
  return static_cast<uLong>(n);
}

uLong ZCALLBACK memoryWrite(voidpf, voidpf, const void*, uLong) { return 0; }

ZPOS64_T ZCALLBACK memoryTell(voidpf /*opaque*/, voidpf stream) { return static_cast<MemoryStream*>(stream)->pos; }

long ZCALLBACK memorySeek(voidpf /*opaque*/, voidpf stream, ZPOS64_T offset, int origin) {
  auto* s = static_cast<MemoryStream*>(stream);
  uint64_t base = origin == ZLIB_FILEFUNC_SEEK_SET ? 0 : origin == ZLIB_FILEFUNC_SEEK_CUR ? s->pos : s->size;
  if (offset > s->size || base > s->size - offset) return -1;
  s->pos = base + offset;
  return 0;
}

int ZCALLBACK memoryClose(voidpf /*opaque*/, voidpf stream) {
  delete static_cast<MemoryStream*>(stream);
  return 0;
}

int ZCALLBACK memoryError(voidpf, voidpf) { return 0; }

std::string errnoText() { return std::strerror(errno); }

// The storage's release callback drops its share of the archive's bytes.
void releaseArchiveBytes(void* context) { delete static_cast<std::shared_ptr<ArchiveBytes>*>(context); }

}  // namespace

// The CRC-32 of a stored record. libdeflate's (carry-less multiply) is
// several times faster than zlib's, which matters when a model's tensors are
// tens of megabytes and loading is meant to cost little more than mapping
// them. Large records are checked in 1 MiB pieces on kiln's intra-op
// threads (none beyond what set_num_threads allows) and the pieces' CRCs
// combined.
//
// A mapped file is checked through pread into a small buffer, not through
// the mapping: touching 46 MB of mapping costs a page fault per page (11 to
// 15 ms here, more than the CRC itself), while pread copies from the page
// cache without mapping anything (about 8 ms for the same bytes, CRC
// included). The tensors over the mapping are touched later, when they are
// used, a few pages per fault.
std::optional<uint32_t> ArchiveBytes::crc(uint64_t offset, uint64_t size) const {
  constexpr uint64_t kPiece = uint64_t{1} << 20;
  constexpr size_t kReadBuffer = size_t{1} << 18;  // stays in L2 between the read and the CRC
  std::atomic<bool> unreadable{false};
  auto piece_crc = [&](uint64_t at, uint64_t n) -> uint32_t {
    if (fd_ < 0) return libdeflate_crc32(0, data_ + at, n);
    thread_local std::unique_ptr<char[]> buffer(new char[kReadBuffer]);
    uint32_t crc = 0;
    while (n > 0) {
      ssize_t got = pread(fd_, buffer.get(), std::min<uint64_t>(n, kReadBuffer), static_cast<off_t>(at));
      if (got <= 0) {
        unreadable = true;
        return 0;
      }
      crc = libdeflate_crc32(crc, buffer.get(), static_cast<size_t>(got));
      at += static_cast<uint64_t>(got);
      n -= static_cast<uint64_t>(got);
    }
    return crc;
  };
  if (size < 2 * kPiece || getNumThreads() <= 1) {
    uint32_t crc = piece_crc(offset, size);
    if (unreadable) return std::nullopt;
    return crc;
  }
  int64_t pieces = static_cast<int64_t>((size + kPiece - 1) / kPiece);
  std::vector<uint32_t> crcs(static_cast<size_t>(pieces));
  parallelFor(0, pieces, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint64_t at = static_cast<uint64_t>(i) * kPiece;
      crcs[static_cast<size_t>(i)] = piece_crc(offset + at, std::min(kPiece, size - at));
    }
  });
  if (unreadable) return std::nullopt;
  uint32_t crc = crcs[0];
  for (int64_t i = 1; i < pieces; ++i) {
    uint64_t at = static_cast<uint64_t>(i) * kPiece;
    crc = static_cast<uint32_t>(
        crc32_combine64(crc, crcs[static_cast<size_t>(i)], static_cast<z_off64_t>(std::min(kPiece, size - at))));
  }
  return crc;
}

namespace {

// Deflate cannot expand more than about 1032 to 1: a directory entry that
// claims more is lying, and believing it would allocate without bound.
bool plausibleInflatedSize(uint64_t size, uint64_t compressed) { return size <= compressed * 1032 + 1024; }

// --- ZipReader ----------------------------------------------------------------------------------

// Whether the last end-of-central-directory record is whole: minizip
// accepts one cut short and reads what follows it as zeros.
bool hasWholeEndRecord(const char* data, size_t size) {
  constexpr size_t kEndRecordSize = 22;
  if (size < kEndRecordSize) return false;
  size_t lowest = size > kEndRecordSize + 0xffff ? size - kEndRecordSize - 0xffff : 0;
  for (size_t at = size - 4 + 1; at-- > lowest;) {
    if (std::memcmp(data + at, "PK\x05\x06", 4) == 0) {
      if (size - at < kEndRecordSize) return false;
      size_t comment = static_cast<unsigned char>(data[at + 20]) | static_cast<unsigned char>(data[at + 21]) << 8;
      return size - at >= kEndRecordSize + comment;
    }
  }
  return false;
}

}  // namespace

ZipReader::ZipReader(std::shared_ptr<ArchiveBytes> bytes, std::string name)
    : bytes_(std::move(bytes)), name_(std::move(name)) {
  zlib_filefunc64_def io{memoryOpen, memoryRead,  memoryWrite, memoryTell,
                         memorySeek, memoryClose, memoryError, bytes_.get()};
  unz_ = hasWholeEndRecord(bytes_->data(), bytes_->size()) ? unzOpen2_64(name_.c_str(), &io) : nullptr;
  if (unz_ == nullptr) {
    const char* data = bytes_->data();
    if (bytes_->size() >= 2 && static_cast<unsigned char>(data[0]) == 0x80 && data[1] <= 5) {
      KILN_ERROR("archive '", name_,
                 "': a bare pickle, torch.save's legacy format "
                 "(_use_new_zipfile_serialization=False); kiln reads the zip format torch writes by default");
    }
    KILN_ERROR("archive '", name_, "': not a zip file (no readable end of central directory",
               bytes_->size() == 0 ? "; the file is empty)" : ")");
  }
  // The destructor does not run for a constructor that throws: close here.
  try {
    readDirectory();
  } catch (...) {
    unzClose(unz_);
    unz_ = nullptr;
    throw;
  }
}

void ZipReader::readDirectory() {
  unz_global_info64 global{};
  KILN_CHECK(unzGetGlobalInfo64(unz_, &global) == UNZ_OK, "archive '", name_, "': unreadable zip directory");
  // Every directory entry takes at least 46 bytes; a count beyond that is a lie.
  KILN_CHECK(global.number_entry <= bytes_->size() / 46, "archive '", name_, "': the zip directory claims ",
             global.number_entry, " records in ", bytes_->size(), " bytes");
  int status = unzGoToFirstFile(unz_);
  uint64_t number = 0;
  while (status == UNZ_OK) {
    unz_file_info64 info{};
    char filename[1024];
    status = unzGetCurrentFileInfo64(unz_, &info, filename, sizeof(filename), nullptr, 0, nullptr, 0);
    KILN_CHECK(status == UNZ_OK, "archive '", name_, "': unreadable zip directory entry ", number);
    KILN_CHECK(info.size_filename < sizeof(filename), "archive '", name_, "': directory entry ", number,
               " has a name of ", info.size_filename, " bytes");
    std::string full(filename, info.size_filename);
    if (number == 0) {
      size_t slash = full.find('/');
      KILN_CHECK(slash != std::string::npos && slash > 0, "archive '", name_, "': record '", full,
                 "' is not inside a top folder (torch archives keep every record in one)");
      prefix_ = full.substr(0, slash + 1);
    }
    KILN_CHECK(full.compare(0, prefix_.size(), prefix_) == 0, "archive '", name_, "': record '", full,
               "' is outside the archive's top folder '", prefix_, "'");
    std::string record = full.substr(prefix_.size());
    unz64_file_pos pos{};
    KILN_CHECK(unzGetFilePos64(unz_, &pos) == UNZ_OK, "archive '", name_, "': unreadable zip directory");
    Entry e{pos.pos_in_zip_directory,        pos.num_of_file,
            info.uncompressed_size,          info.compressed_size,
            static_cast<uint32_t>(info.crc), static_cast<int>(info.compression_method)};
    if (!record.empty() && record.back() != '/') {  // folders have no bytes
      KILN_CHECK(entries_.emplace(record, e).second, "archive '", name_, "': record '", record, "' appears twice");
      order_.push_back(record);
    }
    ++number;
    status = unzGoToNextFile(unz_);
  }
  KILN_CHECK(status == UNZ_END_OF_LIST_OF_FILE, "archive '", name_, "': unreadable zip directory after ", number,
             " records");
  KILN_CHECK(number == global.number_entry, "archive '", name_, "': the zip directory lists ", number,
             " records but claims ", global.number_entry);
}

ZipReader ZipReader::openFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  KILN_CHECK(fd >= 0, "cannot open archive '", path, "': ", errnoText());
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    KILN_ERROR("cannot read archive '", path, "': not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return ZipReader(std::make_shared<ArchiveBytes>(std::string()), path);
  }
  // Private and writable: a tensor over the mapping may be changed in place
  // (an optimizer step); the change stays in this process, the file is untouched.
  void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (mapping == MAP_FAILED) {
    int mmap_errno = errno;
    ::close(fd);
    errno = mmap_errno;
    KILN_ERROR("cannot map archive '", path, "': ", errnoText());
  }
  // The file stays open: CRCs are checked by reading it (ArchiveBytes::crc).
  return ZipReader(std::make_shared<ArchiveBytes>(mapping, size, fd), path);
}

ZipReader ZipReader::fromBuffer(std::string bytes, const std::string& name) {
  return ZipReader(std::make_shared<ArchiveBytes>(std::move(bytes)), name);
}

ZipReader ZipReader::fromStream(std::istream& in, const std::string& name) {
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  KILN_CHECK(!in.bad(), "cannot read archive '", name, "' from its stream");
  return fromBuffer(std::move(bytes), name);
}

ZipReader::ZipReader(ZipReader&& other) noexcept { *this = std::move(other); }

ZipReader& ZipReader::operator=(ZipReader&& other) noexcept {
  if (this != &other) {
    if (unz_ != nullptr) unzClose(unz_);
    bytes_ = std::move(other.bytes_);
    name_ = std::move(other.name_);
    prefix_ = std::move(other.prefix_);
    unz_ = std::exchange(other.unz_, nullptr);
    order_ = std::move(other.order_);
    entries_ = std::move(other.entries_);
  }
  return *this;
}

ZipReader::~ZipReader() {
  if (unz_ != nullptr) unzClose(unz_);
}

std::vector<std::string> ZipReader::records() const { return order_; }

bool ZipReader::hasRecord(const std::string& record) const { return entries_.count(record) != 0; }

void ZipReader::fail(const std::string& record, const std::string& problem) const {
  KILN_ERROR("archive '", name_, "': record '", record, "': ", problem);
}

const ZipReader::Entry& ZipReader::entry(const std::string& record) const {
  auto it = entries_.find(record);
  if (it == entries_.end()) fail(record, "missing");
  return it->second;
}

void ZipReader::checkCrc(const std::string& record, const Entry& e, uint64_t offset) const {
  std::optional<uint32_t> crc = bytes_->crc(offset, e.size);
  if (!crc) fail(record, "cannot be read: the file is shorter than when it was opened");
  if (*crc != e.crc) fail(record, "CRC mismatch");
}

size_t ZipReader::recordSize(const std::string& record) const { return entry(record).size; }

uint64_t ZipReader::openRecord(const std::string& record, const Entry& e) const {
  unz64_file_pos pos{e.directory_offset, e.number};
  if (unzGoToFilePos64(unz_, &pos) != UNZ_OK) fail(record, "its directory entry cannot be read");
  if (e.method != 0 && e.method != Z_DEFLATED) {
    fail(record, "compression method " + std::to_string(e.method) + " (only stored and deflated records are read)");
  }
  if (unzOpenCurrentFile(unz_) != UNZ_OK) fail(record, "its local header is malformed or disagrees with the directory");
  uint64_t offset = unzGetCurrentFileZStreamPos64(unz_);
  if (offset > bytes_->size() || e.compressed_size > bytes_->size() - offset) {
    unzCloseCurrentFile(unz_);
    fail(record, "its " + std::to_string(e.compressed_size) + " bytes at offset " + std::to_string(offset) +
                     " run past the end of the file (" + std::to_string(bytes_->size()) + " bytes)");
  }
  if (e.method == 0 && e.compressed_size != e.size) {
    unzCloseCurrentFile(unz_);
    fail(record, "stored with a compressed size that differs from its size");
  }
  return offset;
}

std::string ZipReader::readRecord(const std::string& record) const {
  const Entry& e = entry(record);
  uint64_t offset = openRecord(record, e);
  if (e.method == 0) {
    unzCloseCurrentFile(unz_);
    checkCrc(record, e, offset);
    const char* data = bytes_->data() + offset;
    return std::string(data, e.size);
  }
  if (!plausibleInflatedSize(e.size, e.compressed_size)) {
    unzCloseCurrentFile(unz_);
    fail(record,
         "claims " + std::to_string(e.size) + " bytes from " + std::to_string(e.compressed_size) + " deflated bytes");
  }
  std::string out(e.size, '\0');
  uint64_t done = 0;
  int n = 0;
  while (done < e.size) {
    unsigned chunk = static_cast<unsigned>(std::min<uint64_t>(e.size - done, 1u << 30));
    n = unzReadCurrentFile(unz_, out.data() + done, chunk);
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  char extra = 0;
  bool longer = n > 0 && unzReadCurrentFile(unz_, &extra, 1) > 0;
  int closed = unzCloseCurrentFile(unz_);
  if (n < 0) fail(record, "its deflated data is corrupt");
  if (done < e.size)
    fail(record, "its deflated data ends after " + std::to_string(done) + " of " + std::to_string(e.size) + " bytes");
  if (longer) fail(record, "its deflated data is longer than its size");
  if (closed == UNZ_CRCERROR) fail(record, "CRC mismatch");
  if (closed != UNZ_OK) fail(record, "its deflated data is corrupt");
  return out;
}

bool ZipReader::recordIsMapped(const std::string& record) const {
  const Entry& e = entry(record);
  if (e.method != 0) return false;
  uint64_t offset = openRecord(record, e);
  unzCloseCurrentFile(unz_);
  return bytes_->mapped() && reinterpret_cast<uintptr_t>(bytes_->data() + offset) % kRecordAlignment == 0;
}

StoragePtr ZipReader::recordStorage(const std::string& record, size_t min_bytes) const {
  const Entry& e = entry(record);
  if (e.size < min_bytes) {
    fail(record, "holds " + std::to_string(e.size) + " bytes where " + std::to_string(min_bytes) + " are needed");
  }
  if (e.method == 0) {
    uint64_t offset = openRecord(record, e);
    unzCloseCurrentFile(unz_);
    checkCrc(record, e, offset);
    char* data = bytes_->data() + offset;
    // Only a file mapping is shared: its pages are the page cache's. A
    // buffer is copied from, so that it goes once loading is done; shared,
    // any one tensor still alive (one optimize_for_inference did not
    // replace) would keep the whole archive's bytes resident.
    if (bytes_->mapped() && reinterpret_cast<uintptr_t>(data) % kRecordAlignment == 0) {
      return makeIntrusive<Storage>(data, e.size, releaseArchiveBytes, new std::shared_ptr<ArchiveBytes>(bytes_));
    }
    auto storage = makeIntrusive<Storage>(std::max<size_t>(e.size, 1));
    std::memcpy(storage->data(), data, e.size);
    return storage;
  }
  std::string bytes = readRecord(record);
  auto storage = makeIntrusive<Storage>(std::max<size_t>(bytes.size(), 1));
  std::memcpy(storage->data(), bytes.data(), bytes.size());
  return storage;
}

// --- ZipWriter ----------------------------------------------------------------------------------

// Where minizip's output goes: a file or a buffer. It tracks the position
// itself, so the writer knows where the next record's data will start.
struct ZipWriter::Sink {
  std::string path;
  std::string temporary_path;  // written, then renamed to path by finish()
  std::string archive_name;
  FILE* file = nullptr;
  std::string buffer;
  uint64_t pos = 0;
  uint64_t end = 0;
  bool failed = false;

  ~Sink() {
    if (file != nullptr) {
      fclose(file);
      std::remove(temporary_path.c_str());  // never finished: leave the old file alone
    }
  }

  static voidpf ZCALLBACK open(voidpf opaque, const void*, int) { return opaque; }
  static uLong ZCALLBACK read(voidpf, voidpf, void*, uLong) { return 0; }
  static uLong ZCALLBACK write(voidpf, voidpf stream, const void* buf, uLong size) {
    auto* s = static_cast<Sink*>(stream);
    if (s->file != nullptr) {
      if (fseeko(s->file, static_cast<off_t>(s->pos), SEEK_SET) != 0 || fwrite(buf, 1, size, s->file) != size) {
        s->failed = true;
        return 0;
      }
    } else {
      if (s->buffer.size() < s->pos + size) s->buffer.resize(s->pos + size);
      std::memcpy(s->buffer.data() + s->pos, buf, size);
    }
    s->pos += size;
    s->end = std::max(s->end, s->pos);
    return size;
  }
  static ZPOS64_T ZCALLBACK tell(voidpf, voidpf stream) { return static_cast<Sink*>(stream)->pos; }
  static long ZCALLBACK seek(voidpf, voidpf stream, ZPOS64_T offset, int origin) {
    auto* s = static_cast<Sink*>(stream);
    uint64_t base = origin == ZLIB_FILEFUNC_SEEK_SET ? 0 : origin == ZLIB_FILEFUNC_SEEK_CUR ? s->pos : s->end;
    s->pos = base + offset;
    return 0;
  }
  static int ZCALLBACK close(voidpf, voidpf) { return 0; }
  static int ZCALLBACK error(voidpf, voidpf stream) { return static_cast<Sink*>(stream)->failed ? 1 : 0; }
};

ZipWriter::ZipWriter(std::unique_ptr<Sink> sink) : sink_(std::move(sink)) {
  zlib_filefunc64_def io{Sink::open, Sink::read,  Sink::write, Sink::tell,
                         Sink::seek, Sink::close, Sink::error, sink_.get()};
  zip_ = zipOpen2_64(sink_->path.c_str(), APPEND_STATUS_CREATE, nullptr, &io);
  KILN_CHECK(zip_ != nullptr, "cannot start archive '", sink_->path, "'");
}

ZipWriter ZipWriter::toFile(const std::string& path, const std::string& archive_name) {
  auto sink = std::make_unique<Sink>();
  sink->path = path;
  sink->archive_name = archive_name;
  if (sink->archive_name.empty()) sink->archive_name = std::filesystem::path(path).stem().string();
  if (sink->archive_name.empty()) sink->archive_name = "archive";
  // A temporary file beside the target, renamed over it when complete: the
  // target may be the very archive whose mapped records the module being
  // saved still uses (kiln.save(kiln.load(p), p)), and a half-written file
  // must not replace a good one.
  sink->temporary_path = path + ".kiln-tmp-" + std::to_string(::getpid());
  sink->file = fopen(sink->temporary_path.c_str(), "wb");
  KILN_CHECK(sink->file != nullptr, "cannot write archive '", path, "': ", errnoText());
  return ZipWriter(std::move(sink));
}

ZipWriter ZipWriter::toBuffer(const std::string& archive_name) {
  auto sink = std::make_unique<Sink>();
  sink->path = "<buffer>";
  sink->archive_name = archive_name;
  return ZipWriter(std::move(sink));
}

ZipWriter::ZipWriter(ZipWriter&& other) noexcept { *this = std::move(other); }

ZipWriter& ZipWriter::operator=(ZipWriter&& other) noexcept {
  if (this != &other) {
    if (zip_ != nullptr) zipClose(zip_, nullptr);
    sink_ = std::move(other.sink_);
    zip_ = std::exchange(other.zip_, nullptr);
  }
  return *this;
}

ZipWriter::~ZipWriter() {
  if (zip_ != nullptr) zipClose(zip_, nullptr);
}

void ZipWriter::writeRecord(const std::string& record, const void* data, size_t size, bool compress) {
  KILN_CHECK(zip_ != nullptr, "archive '", sink_->path, "': written after finish()");
  std::string name = sink_->archive_name + "/" + record;
  KILN_CHECK(name.size() < 0xffff, "archive '", sink_->path, "': record name of ", name.size(), " bytes");
  int zip64 = size >= 0xffffffffu ? 1 : 0;
  // Pad the local header with an extra field (id "FB", as torch writes it)
  // so the data starts on a 64-byte boundary.
  std::string padding;
  if (!compress) {
    uint64_t header_end = sink_->pos + 30 + name.size() + 4 + (zip64 ? 20 : 0);
    size_t pad = (kRecordAlignment - header_end % kRecordAlignment) % kRecordAlignment;
    padding = "FB";
    padding.push_back(static_cast<char>(pad & 0xff));
    padding.push_back(static_cast<char>(pad >> 8));
    padding.append(pad, 'Z');
  }
  zip_fileinfo info{};
  info.tmz_date.tm_year = 1980;
  info.tmz_date.tm_mday = 1;
  int status = zipOpenNewFileInZip4_64(
      zip_, name.c_str(), &info, padding.empty() ? nullptr : padding.data(), static_cast<uInt>(padding.size()), nullptr,
      0, nullptr, compress ? Z_DEFLATED : 0, compress ? Z_DEFAULT_COMPRESSION : 0, 0, -MAX_WBITS, DEF_MEM_LEVEL,
      Z_DEFAULT_STRATEGY, nullptr, 0, 0, 1u << 11 /* names are UTF-8 */, zip64);
  KILN_CHECK(status == ZIP_OK && !sink_->failed, "archive '", sink_->path, "': cannot start record '", record, "'");
  KILN_INTERNAL_ASSERT(compress || sink_->pos % kRecordAlignment == 0, "record data is not aligned");
  const char* bytes = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(size - done, 1u << 30));
    KILN_CHECK(zipWriteInFileInZip(zip_, bytes + done, chunk) == ZIP_OK && !sink_->failed, "archive '", sink_->path,
               "': cannot write record '", record, "'");
    done += chunk;
  }
  KILN_CHECK(zipCloseFileInZip(zip_) == ZIP_OK && !sink_->failed, "archive '", sink_->path, "': cannot finish record '",
             record, "'");
}

std::string ZipWriter::finish() {
  KILN_CHECK(zip_ != nullptr, "archive '", sink_->path, "': finished twice");
  int status = zipClose(std::exchange(zip_, nullptr), nullptr);
  KILN_CHECK(status == ZIP_OK && !sink_->failed, "archive '", sink_->path, "': cannot write the zip directory");
  if (sink_->file != nullptr) {
    int closed = fclose(std::exchange(sink_->file, nullptr));
    if (closed != 0 || std::rename(sink_->temporary_path.c_str(), sink_->path.c_str()) != 0) {
      std::string problem = errnoText();
      std::remove(sink_->temporary_path.c_str());
      KILN_ERROR("archive '", sink_->path, "': ", problem);
    }
    return {};
  }
  sink_->buffer.resize(sink_->end);
  return std::move(sink_->buffer);
}

}  // namespace kiln
