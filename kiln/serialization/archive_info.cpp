#include "kiln/serialization/archive_info.h"

#include <map>
#include <sstream>
#include <unordered_set>

#include "kiln/core/operator.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/tree_views.h"
#include "kiln/runtime/module.h"
#include "kiln/serialization/import.h"
#include "kiln/serialization/zip_file.h"
#include "kiln/tensor/scalar_type.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

// `a.b.c` as text when the expression is a chain of names, else "".
std::string dottedName(const TreeRef& tree) {
  if (tree->kind() == TK_VAR) return Var(tree).name().name();
  if (tree->kind() == '.') {
    Select select(tree);
    std::string base = dottedName(select.value().tree());
    return base.empty() ? "" : base + "." + select.selector().name();
  }
  return "";
}

// The operator a printed call names: `torch.f(...)` is aten::f and
// `ops.ns.f(...)` is ns::f, as the Python printer writes them.
std::optional<std::string> operatorOfCall(const std::string& callee) {
  if (callee.rfind("torch.", 0) == 0 && callee.find('.', 6) == std::string::npos) return "aten::" + callee.substr(6);
  if (callee.rfind("ops.", 0) == 0) {
    size_t dot = callee.find('.', 4);
    if (dot != std::string::npos && callee.find('.', dot + 1) == std::string::npos) {
      return callee.substr(4, dot - 4) + "::" + callee.substr(dot + 1);
    }
  }
  return std::nullopt;
}

void collectCalls(const TreeRef& tree, std::map<std::string, size_t>& uses) {
  // An explicit stack: code from a file may nest deeply.
  std::vector<TreeRef> work{tree};
  while (!work.empty()) {
    TreeRef t = std::move(work.back());
    work.pop_back();
    if (t->kind() == TK_APPLY) {
      if (auto op = operatorOfCall(dottedName(Apply(t).callee().tree()))) ++uses[*op];
    }
    for (const TreeRef& child : t->trees()) work.push_back(child);
  }
}

void addTensor(TensorTotals& totals, const Tensor& t, std::unordered_set<const void*>& seen) {
  if (!seen.insert(t.implPtr().get()).second) return;
  ++totals.tensors;
  totals.elements += t.numel();
  totals.bytes += t.numel() * static_cast<int64_t>(elementSize(t.dtype()));
}

std::string signatureWithoutSelf(const FunctionSchema& schema) {
  std::vector<Argument> arguments(schema.arguments().begin() + (schema.arguments().empty() ? 0 : 1),
                                  schema.arguments().end());
  return FunctionSchema(schema.name(), "", std::move(arguments), schema.returns()).str();
}

}  // namespace

ArchiveInfo describeArchive(const ZipReader& archive) {
  ArchiveInfo info;
  info.path = archive.name();
  info.top_folder = archive.prefix();
  if (!info.top_folder.empty()) info.top_folder.pop_back();
  info.version = archiveVersion(archive);
  std::map<std::string, size_t> uses;
  for (const std::string& record : archive.records()) {
    if (record.rfind("code/", 0) != 0 || record.size() < 3 || record.compare(record.size() - 3, 3, ".py") != 0) {
      continue;
    }
    info.code_files.push_back(record);
    auto source = std::make_shared<Source>(archive.readRecord(record), record, 1);
    for (const TreeRef& tree : Parser(source).parseFile()) collectCalls(tree, uses);
  }
  for (const auto& [name, count] : uses) {
    bool known = !getAllOperatorsFor(Symbol::fromQualString(name)).empty();
    info.operators.push_back(OperatorUse{name, count, known});
  }
  try {
    Module module = load(archive);
    info.class_name = module.type()->name();
    for (const Function* method : module.type()->methods())
      info.methods.push_back(signatureWithoutSelf(method->getSchema()));
    std::unordered_set<const void*> seen;
    for (const NamedTensor& p : module.named_parameters()) addTensor(info.parameters, p.value, seen);
    for (const NamedTensor& b : module.named_buffers()) addTensor(info.buffers, b.value, seen);
  } catch (const Error& e) {
    info.load_error = e.what();
  }
  return info;
}

std::string formatArchiveInfo(const ArchiveInfo& info) {
  std::ostringstream out;
  out << "archive: " << info.path << " (folder '" << info.top_folder << "', format version " << info.version << ", "
      << info.code_files.size() << " code files)\n";
  if (info.load_error) {
    out << "kiln cannot load it: " << *info.load_error << "\n";
  } else {
    out << "module: " << info.class_name << "\n";
    out << "methods:\n";
    for (const std::string& m : info.methods) out << "  " << m << "\n";
    auto totals = [&](const char* what, const TensorTotals& t) {
      out << what << ": " << t.tensors << " tensors, " << t.elements << " elements, " << t.bytes << " bytes\n";
    };
    totals("parameters", info.parameters);
    totals("buffers", info.buffers);
  }
  size_t missing = 0;
  for (const OperatorUse& op : info.operators) missing += op.known ? 0 : 1;
  out << "operators: " << info.operators.size() << " (" << missing << " that kiln lacks)\n";
  for (const OperatorUse& op : info.operators) {
    out << "  " << op.name << "  " << op.uses << (op.known ? "" : "  MISSING in kiln") << "\n";
  }
  return out.str();
}

}  // namespace kiln
