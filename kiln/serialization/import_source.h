#pragma once
// Importing the TorchScript source of an archive (PyTorch's import_source.cpp).
//
// torch.jit.save writes the code of every class and function a model uses as
// Python-printed TorchScript under code/: the definitions qualified
// `__torch__.a.b.X` live in code/__torch__/a/b.py, and tensor constants the
// code names as `CONSTANTS.c<N>` are in constants.pkl. A SourceImporter reads
// those files on demand and defines what they hold in a CompilationUnit:
//
//   kiln::SourceImporter importer(unit, constants, [&](const std::string& qualifier) {
//     return archive.readText(kiln::SourceImporter::filenameOf(qualifier));  // nullopt when absent
//   });
//   kiln::TypePtr type = importer.loadType("__torch__.torchvision.models.resnet.ResNet");
//
// loadType parses the file of the name's qualifier the first time it is
// needed and defines the type:
//  - `class X(Module):` a ClassType flagged as a module: its attributes in
//    declaration order (`name : T`, `__annotations__["0"] = T`), parameters
//    and buffers as `__parameters__`/`__buffers__` list them, attributes of a
//    module type as submodules, `name : Final[T] = v` as constants; then every
//    method is compiled with `self` of that type;
//  - `class X:` a script class, the same without the module flag;
//  - `class X(NamedTuple):` a named TupleType with its field names;
//  - `class I(ModuleInterface):` / `class I(Interface):` an InterfaceType
//    (kiln/core/interface_type.h) declaring its methods' schemas;
//  - `def f(...)` at top level: the function `__torch__.a.b.f`, compiled when
//    first named (loadFunction, or a call `__torch__.a.b.f(x)` in code).
// Names `__torch__.x.Y` met in code (types, constructors, functions) resolve
// through the importer, so definitions of other files load when first used.
// The code may use what the Python printer writes: `ops.aten.f(...)`,
// `ops.prim.f(...)`, `annotate(T, v)`, `unchecked_cast(T, v)`,
// `uninitialized(T)`, `CONSTANTS.cN`, `inf`/`nan`.
// Enums are not supported yet: loading one raises.
//
// Errors (a file that does not parse or compile, a missing definition)
// raise kiln::Error naming the file (code/__torch__/a/b.py) and the line.
// The archive loader builds the module objects from the pickle and calls
// loadType for each `__torch__.*` class the pickle names.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/ivalue.h"
#include "kiln/core/type.h"

namespace kiln {

class CompilationUnit;
class Function;

class SourceImporter {
 public:
  // The text of the file holding qualifier `__torch__.a.b` (the archive's
  // code/__torch__/a/b.py), or nullopt when there is no such file.
  using SourceLoader = std::function<std::optional<std::string>(const std::string& qualifier)>;

  // Definitions go to `unit` (classes registered there, methods and functions
  // compiled into it); `constants` are the values of CONSTANTS.c0, c1, ...
  SourceImporter(std::shared_ptr<CompilationUnit> unit, std::vector<IValue> constants, SourceLoader loader);
  ~SourceImporter();
  SourceImporter(const SourceImporter&) = delete;
  SourceImporter& operator=(const SourceImporter&) = delete;

  // The class or named tuple `qualified_name`, imported (with its methods
  // compiled) when first asked for; null when its file does not define it.
  TypePtr loadType(const std::string& qualified_name);
  // The free function `qualified_name`, compiled when first asked for; null
  // when its file does not define it.
  std::shared_ptr<Function> loadFunction(const std::string& qualified_name);
  // Every class and function the file of `qualifier` defines, imported;
  // returns their qualified names in the file's order.
  std::vector<std::string> loadFile(const std::string& qualifier);

  // "code/__torch__/a/b.py" for qualifier "__torch__.a.b" (the name errors use).
  static std::string filenameOf(const std::string& qualifier);

  // The importer's state (defined in import_source.cpp, where its resolver shares it).
  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace kiln
