#pragma once
// The Python printer: TorchScript functions, methods and classes as the
// Python source text PyTorch 1.13 prints for them (python_print.cpp there),
// character for character. It is what `.code` shows and what an archive's
// code/ records hold, so that text written here reads back in either system.
//
// The printer walks a function's graph: constants are inlined (or, for
// tensors and other values without a literal, named `CONSTANTS.c<n>` and
// collected in a table), single-use temporaries are inlined when the parser
// would emit them in the same order, prim::If and prim::Loop become
// `if`/`for`/`while` with their carried values assigned, and ops become
// `torch.<name>(...)` (aten) or `ops.<ns>.<name>(...)`, with keyword names for
// keyword-only arguments and trailing defaults left out.
//
// Two ways in:
//   - `.code` of one function or method: printFunctionCode, printMethodCode,
//     printMethodCodeWithConstants.
//   - an archive's code/ folder: ArchiveCodeWriter. Give it every named type
//     the archive's data pickle meets, in the order the pickler met them
//     (the root module first); it prints each type and, transitively, every
//     class, named tuple and function they use, grouped into one file per
//     qualifier (`__torch__.foo.Bar` goes to `code/__torch__/foo.py`), and
//     keeps the constant table the files' `CONSTANTS.c<n>` index (the
//     archive's constants.pkl is that table as a tuple).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/function.h"
#include "kiln/core/ivalue.h"
#include "kiln/core/type.h"

namespace kiln {

// How a named type (class, named tuple, function) is spelled in printed
// code: nullopt keeps its qualified name. An archive writer that renames
// types (mangling two types of the same name apart) says so here.
using TypeNamer = std::function<std::optional<std::string>(const Type&)>;

// The named types printed code refers to, each once (equal types count as
// one), in the order they were first met. Classes, named tuples and
// FunctionTypes (free functions) are the named types.
class PrintDeps {
 public:
  void add(const TypePtr& type);
  size_t size() const { return table_.size(); }
  const TypePtr& operator[](size_t i) const { return table_[i]; }
  const std::vector<TypePtr>& types() const { return table_; }

 private:
  std::vector<TypePtr> table_;
};

class PythonPrinterImpl;

// One stream of printed code (one archive file, or one `.code`). Several
// printers may share a constant table and a deps table, as an archive's
// files do: CONSTANTS.c<n> numbering then runs across all of them.
class PythonPrinter {
 public:
  // `enforce_importable` raises kiln::Error for what cannot be read back
  // (several return values, Python ops, closures) instead of printing it.
  PythonPrinter(std::vector<IValue>& constants, PrintDeps& deps, TypeNamer namer = nullptr,
                bool enforce_importable = false);
  ~PythonPrinter();
  PythonPrinter(PythonPrinter&&) noexcept;
  PythonPrinter& operator=(PythonPrinter&&) noexcept;

  // `def name(arg: T, ...) -> R:` and the body; every argument annotated.
  void printFunction(const Function& function);
  // As printFunction, but the first argument (`self`) without its type: the
  // spelling of a bound method's `.code`.
  void printMethod(const Function& function);
  // A class (`class M(Module):` with its parameters, buffers, attributes,
  // constants and methods, or a plain script class), a named tuple
  // (`class P(NamedTuple):`) or a free function (FunctionType).
  void printNamedType(const TypePtr& type);
  // The text printed so far.
  std::string str() const;

 private:
  std::unique_ptr<PythonPrinterImpl> impl_;
};

// `.code` of a function (torch.jit.script(f).code).
std::string printFunctionCode(const Function& function);
// `.code` of a method (module.forward.code): `self` not annotated.
std::string printMethodCode(const Function& method);

struct CodeWithConstants {
  std::string code;
  std::vector<IValue> constants;  // CONSTANTS.c0, c1, ...
};
// `.code_with_constants`: the code and the values its CONSTANTS.c<n> name.
CodeWithConstants printFunctionCodeWithConstants(const Function& function);
CodeWithConstants printMethodCodeWithConstants(const Function& method);

// One code/ record of an archive.
struct CodeFile {
  std::string qualifier;  // `__torch__.foo`
  std::string path;       // `code/__torch__/foo.py`
  std::string text;
};

// The code/ folder of an archive (ScriptModuleSerializer's convertTypes and
// writeFiles in PyTorch 1.13):
//
//   ArchiveCodeWriter code;
//   for (const TypePtr& t : types_the_pickler_met) code.convertTypes(t);
//   for (const CodeFile& f : code.files()) writeRecord(f.path, f.text);
//   writeRecord("constants.pkl", pickle(tuple(code.constants())));
//
// Each type is printed once, into the file of its qualifier, after the
// types converted before it; files come out in the order they were started.
class ArchiveCodeWriter {
 public:
  explicit ArchiveCodeWriter(TypeNamer namer = nullptr);
  ~ArchiveCodeWriter();
  // Prints `root` (a ClassType, named TupleType or FunctionType) and every
  // named type it depends on that is not printed yet.
  void convertTypes(const TypePtr& root);
  std::vector<CodeFile> files() const;
  const std::vector<IValue>& constants() const { return constants_; }
  // Every named type printed, in printing order.
  const std::vector<TypePtr>& types() const { return deps_.types(); }

 private:
  void convertNamedType(const TypePtr& type);
  std::string qualifiedNameOf(const TypePtr& type) const;

  TypeNamer namer_;
  std::vector<IValue> constants_;
  PrintDeps deps_;
  std::vector<TypePtr> converted_;
  // One printer per qualifier, in creation order.
  std::vector<std::pair<std::string, std::unique_ptr<PythonPrinter>>> files_;
};

// `code/__torch__/foo.py` for `__torch__.foo`.
std::string qualifierToArchivePath(const std::string& qualifier, const std::string& code_dir = "code/");

}  // namespace kiln
