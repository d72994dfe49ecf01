#include "kiln/serialization/export.h"

#include "kiln/core/function.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/function.h"
#include "kiln/serialization/pickle.h"
#include "kiln/serialization/pickle_file.h"
#include "kiln/serialization/python_print.h"
#include "kiln/serialization/zip_file.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

// torch 1.13 writes the lowest version whose operator semantics its code
// needs (3 by default; 4 for div, 5 for full, 8 for linspace, 9 for
// logspace, 10 for gelu's approximate argument) and applies upgraders to
// the operators of older archives. kiln's code always means the current
// semantics, so it claims the newest version torch 1.13 reads: no upgrader
// then changes what an operator means. Versions from 6 on live in
// `.data/version`, as torch writes them.
void writeVersion(ZipWriter& out) {
  out.writeRecord(kProducedArchiveVersion >= 6 ? ".data/version" : "version",
                  std::to_string(kProducedArchiveVersion) + "\n");
}

// The state a class's __getstate__ returns, run on the object.
std::optional<IValue> stateOf(const IValue& object) {
  Function* getstate = object.toObjectRef().type->findMethod("__getstate__");
  if (getstate == nullptr) return std::nullopt;
  Stack stack{object};
  getstate->run(stack);
  KILN_CHECK(stack.size() == 1, "__getstate__ of '", object.toObjectRef().type->name(), "' returned ", stack.size(),
             " values");
  return std::move(stack.back());
}

void writeArchive(const Module& module, ZipWriter& out, const ExtraFilesMap& extra_files) {
  for (const auto& [name, contents] : extra_files) out.writeRecord("extra/" + name, contents);

  // Functions compiled from a string have bare names (`g`); an archive
  // needs every definition under a qualifier, so they go to `__torch__`.
  ArchiveCodeWriter code([](const Type& type) -> std::optional<std::string> {
    if (const auto* fn = type.cast<FunctionType>()) {
      if (fn->name().find('.') == std::string::npos) return "__torch__." + fn->name();
    }
    return std::nullopt;
  });
  PickleOptions data_options;
  data_options.type_tags = true;
  data_options.get_state = stateOf;
  data_options.on_class = [&code](const ClassTypePtr& cls) { code.convertTypes(cls); };
  PickleResult data = pickle(module.toIValue(), data_options);
  // A class that only the code names (an attribute's type with no object
  // yet, a type the methods construct) is printed through its users.
  code.convertTypes(module.type());
  writePickleRecords(out, data, "data", "data/");

  for (const CodeFile& file : code.files()) out.writeRecord(file.path, file.text, /*compress=*/true);

  PickleOptions constant_options;
  constant_options.type_tags = true;
  PickleResult constants = pickle(IValue::tuple(code.constants()), constant_options);
  writePickleRecords(out, constants, "constants", "constants/");
  writeVersion(out);
}

}  // namespace

void save(const Module& module, const std::string& path, const ExtraFilesMap& extra_files) {
  ZipWriter out = ZipWriter::toFile(path);
  writeArchive(module, out, extra_files);
  out.finish();
}

std::string saveToBuffer(const Module& module, const ExtraFilesMap& extra_files, const std::string& archive_name) {
  ZipWriter out = ZipWriter::toBuffer(archive_name);
  writeArchive(module, out, extra_files);
  return out.finish();
}

void save(const Module& module, std::ostream& out, const ExtraFilesMap& extra_files) {
  std::string bytes = saveToBuffer(module, extra_files);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  KILN_CHECK(out.good(), "cannot write the archive to its stream");
}

Module moduleForFunction(const Function& function) {
  auto* graph_function = dynamic_cast<const GraphFunction*>(&function);
  KILN_CHECK(graph_function != nullptr, "save: '", function.name(), "' is not a TorchScript function");
  Module module("PlaceholderModule");
  std::shared_ptr<Graph> forward = graph_function->graph()->copy();
  forward->insertInput(0, "self")->setType(module.type());
  // The function's own schema, defaults included (torch drops them).
  const FunctionSchema& schema = function.getSchema();
  Argument self_argument;
  self_argument.name = "self";
  self_argument.type = module.type();
  std::vector<Argument> arguments{std::move(self_argument)};
  arguments.insert(arguments.end(), schema.arguments().begin(), schema.arguments().end());
  module.compilationUnit()->createMethod(module.type(), "forward", std::move(forward),
                                         FunctionSchema("forward", "", std::move(arguments), schema.returns()));
  return module;
}

}  // namespace kiln
