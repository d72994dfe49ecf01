#include "kiln/serialization/pickle_file.h"

#include "kiln/tensor/scalar_type.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

void writeArchive(ZipWriter& out, const IValue& value) {
  PickleOptions options;
  options.root_ordered_dict = true;
  PickleResult pickled = pickle(value, options);
  writePickleRecords(out, pickled, "data", "data/");
  // The format version torch.save 1.13 writes.
  out.writeRecord("version", "3\n");
}

}  // namespace

void writePickleRecords(ZipWriter& out, const PickleResult& pickled, const std::string& name,
                        const std::string& storage_prefix) {
  // Storages first, as torch orders them: the pickle is small and last.
  for (const PickledStorage& s : pickled.storages) {
    size_t nbytes = static_cast<size_t>(s.numel) * elementSize(s.dtype);
    out.writeRecord(storage_prefix + s.key, s.storage->data(), nbytes);
  }
  out.writeRecord(name + ".pkl", pickled.data);
}

IValue readPickleRecord(const ZipReader& archive, const std::string& name, UnpickleOptions options) {
  std::string folder = name + "/";
  options.load_storage = [&archive, &folder](const std::string& key, ScalarType dtype, int64_t numel,
                                             const std::string& /*location*/) {
    KILN_CHECK(numel >= 0, "archive '", archive.name(), "': storage '", key, "' has ", numel, " elements");
    return archive.recordStorage(folder + key, static_cast<size_t>(numel) * elementSize(dtype));
  };
  std::string record = name + ".pkl";
  std::string data = archive.readRecord(record);
  try {
    return unpickle(data, options);
  } catch (const Error& e) {
    std::string message = e.what();
    // Errors about the archive's other records (a storage) already name it.
    if (message.find("archive '" + archive.name() + "'") != std::string::npos) throw;
    KILN_ERROR("archive '", archive.name(), "': record '", record, "': ", message);
  }
}

IValue loadPickle(const ZipReader& archive) { return readPickleRecord(archive, "data"); }

IValue loadPickle(const std::string& path) {
  ZipReader archive = ZipReader::openFile(path);
  return loadPickle(archive);
}

IValue loadPickle(std::istream& in) {
  ZipReader archive = ZipReader::fromStream(in);
  return loadPickle(archive);
}

void savePickle(const IValue& value, const std::string& path) {
  ZipWriter out = ZipWriter::toFile(path);
  writeArchive(out, value);
  out.finish();
}

std::string savePickleToBuffer(const IValue& value, const std::string& archive_name) {
  ZipWriter out = ZipWriter::toBuffer(archive_name);
  writeArchive(out, value);
  return out.finish();
}

}  // namespace kiln
