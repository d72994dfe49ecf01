#pragma once
// Files torch.save writes and torch.load reads (the zip format torch 1.6+
// writes by default): `data.pkl`, the pickle of the value, and one record
// `data/<key>` per tensor storage it refers to, all below one top folder.
// A state dict is the common case:
//
//   kiln::IValue weights = kiln::loadPickle("resnet18.pth");   // Dict[str, Tensor]
//   kiln::savePickle(weights, "copy.pth");                       // torch.load reads it
//
// Tensors are built over the mapped file where the record is aligned (see
// zip_file.h); views of one storage stay views of one storage. Every tensor
// is on the CPU whatever device the file names (kiln has only the CPU).
#include <istream>
#include <string>

#include "kiln/core/ivalue.h"
#include "kiln/serialization/pickle.h"
#include "kiln/serialization/zip_file.h"

namespace kiln {

// The value of the pickle record `<name>.pkl` in `archive`, its storages
// read from the records `<name>/<key>` (torch.save's data.pkl and data/,
// torch.jit.save's constants.pkl and constants/). `options` may add a
// load_object and resolve_type; load_storage is the archive's. Errors name
// the archive and the record.
IValue readPickleRecord(const ZipReader& archive, const std::string& name, UnpickleOptions options = {});
// What torch.save wrote: readPickleRecord(archive, "data").
IValue loadPickle(const ZipReader& archive);
IValue loadPickle(const std::string& path);
IValue loadPickle(std::istream& in);

// Writes `value` as torch.save does (a dict at the root as an OrderedDict).
void savePickle(const IValue& value, const std::string& path);
// The archive's bytes, for streams and Python file objects.
std::string savePickleToBuffer(const IValue& value, const std::string& archive_name = "archive");

// The records of `pickled` and its storages into `out`: `<name>.pkl` and
// `<storage_prefix><key>` for each storage, uncompressed and aligned.
void writePickleRecords(ZipWriter& out, const PickleResult& pickled, const std::string& name,
                        const std::string& storage_prefix);

}  // namespace kiln
