#pragma once
// What `kiln info model.pt` reports about a TorchScript archive: its
// methods and their signatures, parameter and buffer sizes, and every
// operator its code calls, marking those kiln lacks. The operators are read
// from the code/ text (parsed, not compiled), so an archive kiln cannot
// load still gets its list, and the missing operators are the reason.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class ZipReader;

struct OperatorUse {
  std::string name;    // aten::linear, prim::unchecked_cast, ...
  size_t uses = 0;     // call sites in the code
  bool known = false;  // kiln registers an operator of this name
};

struct TensorTotals {
  size_t tensors = 0;
  int64_t elements = 0;
  int64_t bytes = 0;
};

struct ArchiveInfo {
  std::string path;
  std::string top_folder;
  int64_t version = 0;
  std::vector<std::string> code_files;
  std::vector<OperatorUse> operators;  // sorted by name
  // Set when kiln::load fails (what it said); the rest below is then empty.
  std::optional<std::string> load_error;
  std::string class_name;
  std::vector<std::string> methods;  // `forward(Tensor x) -> Tensor`, without self
  TensorTotals parameters;
  TensorTotals buffers;
};

ArchiveInfo describeArchive(const ZipReader& archive);

// The report as `kiln info` prints it.
std::string formatArchiveInfo(const ArchiveInfo& info);

}  // namespace kiln
