#pragma once
// Writing the archives torch.jit.load reads (torch's export_module.cpp):
//
//   kiln::save(module, "model.pt");            // torch.jit.load("model.pt") runs it
//   kiln::Module again = kiln::load("model.pt");
//
// The archive holds what import.h describes: the module object pickled as
// data.pkl (tensors as data/<key>, stored and 64-byte aligned), the code of
// every class and function it uses printed by the Python printer
// (python_print.h) into code/, the tensors that code names as CONSTANTS.cN
// in constants.pkl and constants/, the extra files, and the format version.
// A class with __getstate__ is written as what it returns.
#include <ostream>
#include <string>

#include "kiln/runtime/module.h"
#include "kiln/serialization/import.h"

namespace kiln {

class Function;

void save(const Module& module, const std::string& path, const ExtraFilesMap& extra_files = {});
void save(const Module& module, std::ostream& out, const ExtraFilesMap& extra_files = {});
// The archive's bytes; its top folder is `archive_name`.
std::string saveToBuffer(const Module& module, const ExtraFilesMap& extra_files = {},
                         const std::string& archive_name = "archive");

// A function saved as torch saves one: the forward of a module of class
// `__torch__.PlaceholderModule`. The functions it calls are saved with it.
Module moduleForFunction(const Function& function);

// The format version kiln writes (see export.cpp).
constexpr int64_t kProducedArchiveVersion = 10;

}  // namespace kiln
