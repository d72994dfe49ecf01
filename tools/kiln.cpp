// The kiln command line: inspect operators, print graphs of IR text and of
// TorchScript source, run a function of a TorchScript file or a method of a
// TorchScript archive, and describe an archive.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/api/kiln.h"
#include "kiln/api/literal.h"
#include "kiln/api/npy.h"
#include "kiln/core/operator.h"
#include "kiln/frontend/convert_to_ssa.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/pass_registry.h"
#include "kiln/passes/peephole.h"
#include "kiln/passes/pipeline.h"
#include "kiln/serialization/archive_info.h"
#include "kiln/serialization/import.h"
#include "kiln/serialization/python_print.h"
#include "kiln/serialization/zip_file.h"

namespace {

// The frontend's SSA conversion (with the exit transform) as `kiln opt -p
// convert_to_ssa`, for lit tests of what it makes of the IR emitter's loads,
// stores and exit statements. The pass registry (kiln/passes/) names no
// frontend passes.
void convertToSSAPass(const std::shared_ptr<kiln::Graph>& graph) {
  std::shared_ptr<kiln::Graph> g = graph;  // convertToSSA changes the graph in place
  kiln::convertToSSA(g);
}

const bool convert_to_ssa_registered = (kiln::registerPass("convert_to_ssa", convertToSSAPass), true);

// The peephole pass with its shape peepholes off (what 1.13's
// torch._C._jit_pass_peephole(g, True) does), as `kiln opt -p
// peephole_without_shapes`, for lit tests of what they leave alone.
void peepholeWithoutShapesPass(const std::shared_ptr<kiln::Graph>& graph) {
  kiln::peepholeOptimize(graph, /*disable_shape_peepholes=*/true);
}

const bool peephole_without_shapes_registered =
    (kiln::registerPass("peephole_without_shapes", peepholeWithoutShapesPass), true);

int usage(std::ostream& out, int code) {
  out << "usage: kiln <command> [args]\n"
         "commands:\n"
         "  ops [PREFIX]            list the registered operator schemas (optionally those starting with PREFIX)\n"
         "  graph FILE.ir           parse IR text (`-` reads stdin), check it, and print it back canonically\n"
         "  graph FILE.py [FN]      compile a TorchScript source file and print the graphs of its functions\n"
         "                          (or of FN) as compiled, before optimization; other files are taken as\n"
         "                          IR text when they begin with `graph(`, else as TorchScript\n"
         "  graph --code FILE.py [FN]\n"
         "                          the functions (or FN) printed back as Python, as torch's `.code` prints them,\n"
         "                          then the source's classes as torch.jit.save writes them\n"
         "  graph --optimized FILE.ir\n"
         "                          the graph after the executor's pipeline, for the input types it declares\n"
         "  graph --optimized FILE.py [FN [ARG...]]\n"
         "                          the graphs after the executor's pipeline: for the declared argument types,\n"
         "                          or with ARGs (as for run) the plan the executor compiles for those arguments\n"
         "  run FILE.py FN ARG...   compile FILE.py, run FN and print its result; each ARG is a Python literal\n"
         "      [--out DIR]         (3, -1.5, True, None, 'text', [1, 2], (1, 'a'), {'k': 2.0}) or a .npy file\n"
         "                          for a tensor; --out saves the tensors of the result as DIR/out0.npy, ...\n"
         "  run MODEL.pt [ARG...]   load a TorchScript archive (torch.jit.save's or kiln's) and run its forward\n"
         "      [--method NAME]     (or NAME) on the ARGs (.npy files or literals, as above); prints the result\n"
         "      [-o OUT.npy]        and writes its tensor to OUT.npy (several: OUT_0.npy, OUT_1.npy, ...)\n"
         "  info MODEL.pt           the archive's methods and signatures, parameter and buffer sizes, and every\n"
         "                          operator its code calls, marking those kiln lacks\n"
         "  opt FILE.ir -p P1,P2    run the named passes on IR text in order and print the result\n"
         "  opt FILE.py [FN] -p P1,P2  compile a TorchScript source file and run the passes on a copy of the\n"
         "                          graph of FN (or of each function, printed as `graph` prints them)\n"
         "  --split-input-file      (before FILE, for graph and opt) split FILE at lines `# -----`, handle each\n"
         "                          part on its own and print the results separated by `# -----` lines\n"
         "  --help                  this text\n"
         "passes:";
  for (const std::string& name : kiln::passNames()) out << " " << name;
  out << "\n";
  return code;
}

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string readText(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    KILN_CHECK(in, "cannot read ", path);
    text << in.rdbuf();
  }
  return text.str();
}

// `--split-input-file`: the parts of a file between lines `# -----` (a
// comment in IR text and in TorchScript alike), each preceded by as many
// empty lines as precede it in the file, so that the line numbers in
// errors and source locations are those of the whole file.
constexpr std::string_view kSplitMarker = "# -----";

bool isSplitMarker(std::string_view line) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
  return line == kSplitMarker;
}

std::vector<std::string> splitInput(const std::string& text) {
  std::vector<std::string> chunks(1);
  size_t line_count = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + pos, end - pos);
    ++line_count;
    if (isSplitMarker(line)) {
      chunks.emplace_back(line_count, '\n');
    } else {
      chunks.back() += line;
    }
    pos = end;
  }
  return chunks;
}

// `handle` on each part of `text` (or on the whole of it), the outputs
// separated by split markers; an error in one part is reported and the
// others still run. The exit status: the first non-zero one, or 1 for an
// error.
int forEachPart(const std::string& text, bool split, const std::function<int(const std::string&)>& handle) {
  if (!split) return handle(text);
  int status = 0;
  std::vector<std::string> chunks = splitInput(text);
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i) std::cout << kSplitMarker << "\n";
    int result;
    try {
      result = handle(chunks[i]);
    } catch (const std::exception& e) {
      std::cout.flush();
      std::cerr << "kiln: error: " << e.what() << "\n";
      std::cerr.flush();
      result = 1;
    }
    if (status == 0) status = result;
  }
  return status;
}

int listOps(const char* prefix) {
  for (const auto& op : kiln::getAllOperators()) {
    std::string s = op->schema().str();
    if (!prefix || s.rfind(prefix, 0) == 0) std::cout << s << "\n";
  }
  return 0;
}

// IR text for a `.ir` file, TorchScript for a `.py` one; otherwise whichever
// the text is: IR text begins with `graph(` after comments.
bool isIRText(const std::string& path, const std::string& text) {
  if (endsWith(path, ".ir")) return true;
  if (endsWith(path, ".py")) return false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find_first_not_of(" \t\r\n", pos);
    if (start == std::string::npos) return false;
    if (text[start] != '#') return text.compare(start, 6, "graph(") == 0;
    pos = text.find('\n', start);
  }
  return false;
}

// A copy of `graph` put through the executor's pipeline for the input
// types it declares.
std::shared_ptr<kiln::Graph> optimizedCopy(const kiln::Graph& graph) {
  auto copy = graph.copy();
  kiln::runRequiredPasses(copy);
  kiln::runOptimizationPasses(copy);
  return copy;
}

int printIRGraph(const std::string& text, bool optimized) {
  auto graph = kiln::parseIR(text);
  graph->lint();
  std::cout << *(optimized ? optimizedCopy(*graph) : graph);
  return 0;
}

// The passes named in `a,b`, in order; raises for an unknown name.
std::vector<const kiln::GraphPass*> findPasses(const std::string& pass_list) {
  std::vector<const kiln::GraphPass*> passes;
  std::stringstream names(pass_list);
  for (std::string name; std::getline(names, name, ',');) {
    if (name.empty()) continue;
    const kiln::GraphPass* pass = kiln::findPass(name);
    if (!pass) {
      std::string known;
      for (const std::string& n : kiln::passNames()) known += (known.empty() ? "" : ", ") + n;
      KILN_ERROR("unknown pass '", name, "' (the passes are: ", known, ")");
    }
    passes.push_back(pass);
  }
  return passes;
}

// The passes in order, the graph checked after each, and before the first
// unless that is convert_to_ssa: IR as the emitter writes it is not a valid
// graph until converted (a loop's condition is in a block of its own).
void runPasses(const std::shared_ptr<kiln::Graph>& graph, const std::vector<const kiln::GraphPass*>& passes) {
  if (passes.empty() || passes.front() != kiln::findPass("convert_to_ssa")) graph->lint();
  for (const kiln::GraphPass* pass : passes) {
    (*pass)(graph);
    graph->lint();
  }
}

kiln::GraphFunction& findFunction(const kiln::CompilationUnit& unit, const std::string& name, const std::string& path) {
  if (kiln::GraphFunction* f = unit.findFunction(name)) return *f;
  std::string names;
  for (kiln::GraphFunction* f : unit.functions()) names += (names.empty() ? "" : ", ") + f->name();
  KILN_ERROR(path, " has no function '", name, "' (it has: ", names.empty() ? "none" : names, ")");
}

// Every function's graph, each under a `# NAME` line; or FN's graph alone.
int printScriptGraphs(const std::string& path, const std::string& text, const char* name, bool optimized) {
  auto unit = kiln::compile(text, nullptr, path);
  auto graph_of = [&](kiln::GraphFunction& f) { return optimized ? optimizedCopy(*f.graph()) : f.graph(); };
  if (name) {
    std::cout << *graph_of(findFunction(*unit, name, path));
    return 0;
  }
  bool first = true;
  for (kiln::GraphFunction* f : unit->functions()) {
    std::cout << (first ? "" : "\n") << "# " << f->name() << "\n" << *graph_of(*f);
    first = false;
  }
  // Then the methods of the source's classes (`# __torch__.Foo.get`).
  for (const kiln::ClassTypePtr& cls : unit->classes()) {
    for (kiln::Function* m : cls->methods()) {
      auto* f = dynamic_cast<kiln::GraphFunction*>(m);
      if (!f) continue;
      std::cout << (first ? "" : "\n") << "# " << f->name() << "\n" << *graph_of(*f);
      first = false;
    }
  }
  return 0;
}

// `kiln graph --code FILE.py [FN]`: each function's `.code` (blank lines
// between), then each class of the source as an archive's code/ file has it.
int printScriptCode(const std::string& path, const std::string& text, const char* name) {
  auto unit = kiln::compile(text, nullptr, path);
  if (name) {
    std::cout << kiln::printFunctionCode(findFunction(*unit, name, path));
    return 0;
  }
  bool first = true;
  for (kiln::GraphFunction* f : unit->functions()) {
    std::cout << (first ? "" : "\n") << kiln::printFunctionCode(*f);
    first = false;
  }
  std::vector<kiln::IValue> constants;
  kiln::PrintDeps deps;
  for (const kiln::ClassTypePtr& cls : unit->classes()) {
    kiln::PythonPrinter printer(constants, deps);
    printer.printNamedType(cls);
    std::cout << (first ? "" : "\n") << printer.str();
    first = false;
  }
  return 0;
}

// `kiln opt FILE [FN] -p a,b`: IR text, or copies of the compiled graphs
// (the functions' own graphs stay as compiled, for the calls between them).
int optimizeGraphs(const std::string& path, const std::string& text, const char* name,
                   const std::vector<const kiln::GraphPass*>& passes) {
  if (isIRText(path, text)) {
    KILN_CHECK(!name, "a function name is only for TorchScript source, and ", path, " is IR text");
    auto graph = kiln::parseIR(text);
    runPasses(graph, passes);
    std::cout << *graph;
    return 0;
  }
  auto unit = kiln::compile(text, nullptr, path);
  std::vector<kiln::GraphFunction*> functions =
      name ? std::vector<kiln::GraphFunction*>{&findFunction(*unit, name, path)} : unit->functions();
  for (size_t i = 0; i < functions.size(); ++i) {
    auto graph = functions[i]->graph()->copy();
    runPasses(graph, passes);
    if (!name) std::cout << (i ? "\n" : "") << "# " << functions[i]->name() << "\n";
    std::cout << *graph;
  }
  return 0;
}

// A string as Python's repr writes it.
void printPythonString(std::ostream& out, const std::string& s) {
  char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  out << quote;
  for (unsigned char c : s) {
    if (c == quote || c == '\\') {
      out << '\\' << c;
    } else if (c == '\n') {
      out << "\\n";
    } else if (c == '\t') {
      out << "\\t";
    } else if (c == '\r') {
      out << "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out << "\\x" << kHex[c >> 4] << kHex[c & 15];
    } else {
      out << c;
    }
  }
  out << quote;
}

// A float as Python's repr writes it: the shortest text that reads back.
void printPythonFloat(std::ostream& out, double d) {
  if (std::isnan(d)) {
    out << "nan";
    return;
  }
  if (std::isinf(d)) {
    out << (d > 0 ? "inf" : "-inf");
    return;
  }
  char buffer[64];
  double magnitude = std::fabs(d);
  bool scientific = magnitude != 0 && (magnitude >= 1e16 || magnitude < 1e-4);
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), d,
                              scientific ? std::chars_format::scientific : std::chars_format::fixed);
  std::string text(buffer, result.ptr);
  if (scientific) {
    // Python writes 1e-05 and 1e+16: a sign and at least two exponent digits.
    size_t e = text.find('e');
    std::string mantissa = text.substr(0, e), exponent = text.substr(e + 1);
    char sign = exponent[0] == '-' ? '-' : '+';
    size_t digits = exponent.find_first_not_of("+-");
    text = mantissa + "e" + sign + (exponent.size() - digits < 2 ? "0" : "") + exponent.substr(digits);
  } else if (text.find('.') == std::string::npos) {
    text += ".0";
  }
  out << text;
}

// A result as Python would print the value torch returns.
void printPythonValue(std::ostream& out, const kiln::IValue& v) {
  if (v.isNone()) {
    out << "None";
  } else if (v.isBool()) {
    out << (v.toBool() ? "True" : "False");
  } else if (v.isInt()) {
    out << v.toInt();
  } else if (v.isDouble()) {
    printPythonFloat(out, v.toDouble());
  } else if (v.isString()) {
    printPythonString(out, v.toStringRef());
  } else if (v.isTensor()) {
    out << v.toTensor();
  } else if (v.isList() || v.isTuple()) {
    const auto& elements = v.isList() ? v.toListRef().elements : v.toTupleRef().elements;
    out << (v.isList() ? "[" : "(");
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i) out << ", ";
      printPythonValue(out, elements[i]);
    }
    out << (v.isList() ? "]" : elements.size() == 1 ? ",)" : ")");
  } else if (v.isDict()) {
    out << "{";
    bool first = true;
    for (const auto& [key, value] : v.toDictRef().items()) {
      out << (first ? "" : ", ");
      printPythonValue(out, key);
      out << ": ";
      printPythonValue(out, value);
      first = false;
    }
    out << "}";
  } else {
    out << v;
  }
}

// The tensors in `v`, depth first (container elements in order, dict values).
void collectTensors(const kiln::IValue& v, std::vector<kiln::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isList() || v.isTuple()) {
    for (const kiln::IValue& e : v.isList() ? v.toListRef().elements : v.toTupleRef().elements) collectTensors(e, out);
  } else if (v.isDict()) {
    for (const auto& item : v.toDictRef().items()) collectTensors(item.second, out);
  }
}

kiln::IValue argumentValue(const kiln::GraphFunction& f, size_t position, const std::string& text) {
  const auto& formals = f.getSchema().arguments();
  f.checkPositionalCount(position + 1);
  const kiln::Argument& formal = formals[position];
  try {
    if (endsWith(text, ".npy")) return kiln::IValue(kiln::loadNpy(text));
    return kiln::parseLiteral(text, formal.type);
  } catch (const kiln::Error& e) {
    KILN_ERROR("argument ", position + 1, " ('", formal.name, "' of ", f.name(), "): ", e.what());
  }
}

kiln::Stack argumentValues(const kiln::GraphFunction& f, const std::vector<std::string>& args, size_t first) {
  kiln::Stack stack;
  for (size_t i = first; i < args.size(); ++i) stack.push_back(argumentValue(f, i - first, args[i]));
  return stack;
}

// `kiln graph --optimized FILE.py FN ARG...`: the graph of the plan the
// executor compiles for these arguments (bound and checked as a call's).
int printPlanGraph(const std::string& text, const std::vector<std::string>& args) {
  const std::string& path = args[0];
  auto unit = kiln::compile(text, nullptr, path);
  kiln::GraphFunction& f = findFunction(*unit, args[1], path);
  kiln::Stack stack = f.bindArguments(argumentValues(f, args, 2));
  f.checkInputs(stack);
  std::cout << *f.executor().getPlanFor(stack).graph;
  return 0;
}

int runFunction(const std::vector<std::string>& args, const std::optional<std::string>& out_dir) {
  const std::string& path = args[0];
  auto unit = kiln::compile(readText(path), nullptr, path);
  kiln::GraphFunction& f = findFunction(*unit, args[1], path);
  kiln::IValue result = f(argumentValues(f, args, 2));
  printPythonValue(std::cout, result);
  std::cout << "\n";
  if (out_dir) {
    std::vector<kiln::Tensor> tensors;
    collectTensors(result, tensors);
    std::error_code error;
    std::filesystem::create_directories(*out_dir, error);
    KILN_CHECK(!error, "cannot create ", *out_dir, ": ", error.message());
    for (size_t i = 0; i < tensors.size(); ++i) {
      kiln::saveNpy((std::filesystem::path(*out_dir) / ("out" + std::to_string(i) + ".npy")).string(), tensors[i]);
    }
  }
  return 0;
}

// A TorchScript archive rather than a source file: by its zip signature.
bool isArchive(const std::string& path) {
  if (endsWith(path, ".py")) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

// `kiln run MODEL.pt ARG... [--method NAME] [-o OUT.npy]`.
int runArchive(const std::string& path, const std::vector<std::string>& inputs, const std::string& method_name,
               const std::optional<std::string>& out_file) {
  kiln::Module module = kiln::load(path);
  kiln::Method method = module.get_method(method_name);
  kiln::GraphFunction& f = method.function();
  kiln::Stack stack;
  // The method's arguments after `self`.
  for (size_t i = 0; i < inputs.size(); ++i) stack.push_back(argumentValue(f, i + 1, inputs[i]));
  kiln::IValue result = method(std::move(stack));
  printPythonValue(std::cout, result);
  std::cout << "\n";
  if (out_file) {
    std::vector<kiln::Tensor> tensors;
    collectTensors(result, tensors);
    KILN_CHECK(!tensors.empty(), "-o ", *out_file, ": the result holds no tensor");
    if (tensors.size() == 1) {
      kiln::saveNpy(*out_file, tensors[0]);
    } else {
      std::filesystem::path out(*out_file);
      std::string stem = (out.parent_path() / out.stem()).string();
      for (size_t i = 0; i < tensors.size(); ++i) kiln::saveNpy(stem + "_" + std::to_string(i) + ".npy", tensors[i]);
    }
  }
  return 0;
}

int printArchiveInfo(const std::string& path) {
  kiln::ZipReader archive = kiln::ZipReader::openFile(path);
  kiln::ArchiveInfo info = kiln::describeArchive(archive);
  std::cout << kiln::formatArchiveInfo(info);
  return 0;
}

int runCommand(const std::vector<std::string>& args, bool split);

int run(const std::vector<std::string>& args) {
  const std::string& command = args[0];
  // `--split-input-file`, anywhere after `graph` or `opt`.
  auto flag = std::find(args.begin() + 1, args.end(), "--split-input-file");
  if ((command == "graph" || command == "opt") && flag != args.end()) {
    std::vector<std::string> rest(args.begin(), flag);
    rest.insert(rest.end(), flag + 1, args.end());
    return runCommand(rest, /*split=*/true);
  }
  return runCommand(args, /*split=*/false);
}

int runCommand(const std::vector<std::string>& args, bool split) {
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || command == "help") return usage(std::cout, 0);
  if (command == "ops") {
    if (args.size() > 2) return usage(std::cerr, 2);
    return listOps(args.size() == 2 ? args[1].c_str() : nullptr);
  }
  if (command == "graph" && args.size() > 1 && args[1] == "--code") {
    if (args.size() < 3 || args.size() > 4) return usage(std::cerr, 2);
    std::string text = readText(args[2]);
    KILN_CHECK(!isIRText(args[2], text), "kiln graph --code: ", args[2],
               " is IR text; --code prints TorchScript source");
    return forEachPart(text, split, [&](const std::string& part) {
      return printScriptCode(args[2], part, args.size() == 4 ? args[3].c_str() : nullptr);
    });
  }
  if (command == "graph") {
    bool optimized = args.size() > 1 && args[1] == "--optimized";
    std::vector<std::string> rest(args.begin() + (optimized ? 2 : 1), args.end());
    if (rest.empty() || (!optimized && rest.size() > 2)) return usage(std::cerr, 2);
    std::string text = readText(rest[0]);
    if (isIRText(rest[0], text) && rest.size() != 1) return usage(std::cerr, 2);
    return forEachPart(text, split, [&](const std::string& part) {
      if (isIRText(rest[0], part)) return printIRGraph(part, optimized);
      if (rest.size() > 2) return printPlanGraph(part, rest);
      return printScriptGraphs(rest[0], part, rest.size() == 2 ? rest[1].c_str() : nullptr, optimized);
    });
  }
  if (command == "opt") {
    const char* name = nullptr;
    if (args.size() == 5 && args[3] == "-p") {
      name = args[2].c_str();
    } else if (args.size() != 4 || args[2] != "-p") {
      return usage(std::cerr, 2);
    }
    std::vector<const kiln::GraphPass*> passes = findPasses(args.back());
    std::string text = readText(args[1]);
    return forEachPart(text, split,
                       [&](const std::string& part) { return optimizeGraphs(args[1], part, name, passes); });
  }
  if (command == "run") {
    std::vector<std::string> positional;
    std::optional<std::string> out_dir, out_file;
    std::string method = "forward";
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--out" || args[i] == "-o" || args[i] == "--method") {
        if (i + 1 == args.size()) return usage(std::cerr, 2);
        const std::string& value = args[++i];
        if (args[i - 1] == "--out") out_dir = value;
        if (args[i - 1] == "-o") out_file = value;
        if (args[i - 1] == "--method") method = value;
      } else {
        positional.push_back(args[i]);
      }
    }
    if (!positional.empty() && isArchive(positional[0])) {
      if (out_dir) return usage(std::cerr, 2);
      return runArchive(positional[0], std::vector<std::string>(positional.begin() + 1, positional.end()), method,
                        out_file);
    }
    if (positional.size() < 2 || out_file || method != "forward") return usage(std::cerr, 2);
    return runFunction(positional, out_dir);
  }
  if (command == "info") {
    if (args.size() != 2) return usage(std::cerr, 2);
    return printArchiveInfo(args[1]);
  }
  std::cerr << "kiln: unknown command '" << command << "'\n";
  return usage(std::cerr, 2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(std::cerr, 2);
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}
