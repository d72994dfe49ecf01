#pragma once
// Loading the archives torch.jit.save writes (torch's import.cpp):
//
//   kiln::Module model = kiln::load("resnet.pt");
//   kiln::IValue y = model.forward({kiln::IValue(x)});
//
// An archive holds, below one top folder:
//   code/__torch__/...py   the Python-printed code of every class and function
//                          (imported through kiln's frontend, import_source.h)
//   constants.pkl          the tensors the code names as CONSTANTS.cN
//   data.pkl, data/<key>   the module object: its attributes, submodules and
//                          tensors (pickle.h; storages over the mapped file)
//   extra/<name>           files the user attached (_extra_files)
//   version                the format version (3 to 10; or .data/version)
// The module's methods run on kiln's executor and fuser as if the module had
// been scripted in kiln. Tensors are on the CPU whatever device they name.
//
// Loading runs no code from the file except the model's own TorchScript
// (a class's __setstate__); the pickle builds only values, tensors and
// objects of the archive's classes. A malformed archive raises kiln::Error
// naming the archive, the record and the problem; an operator kiln lacks is
// named, with the method that uses it, when the code is imported.
#include <istream>
#include <map>
#include <string>

#include "kiln/runtime/module.h"

namespace kiln {

class ZipReader;

// Files stored beside the model (`extra/<name>`). On load, each name asked
// for gets the file's contents, or "" when the archive has none (as torch).
using ExtraFilesMap = std::map<std::string, std::string>;

Module load(const std::string& path, ExtraFilesMap* extra_files = nullptr);
Module load(std::istream& in, ExtraFilesMap* extra_files = nullptr);
Module loadFromBuffer(std::string bytes, ExtraFilesMap* extra_files = nullptr, const std::string& name = "<buffer>");
Module load(const ZipReader& archive, ExtraFilesMap* extra_files = nullptr);

// The format version of an archive torch 1.13 can write and read (3 to 10);
// raises for others and for the legacy (model.json) format.
int64_t archiveVersion(const ZipReader& archive);

}  // namespace kiln
