// The source importer (kiln/serialization/import_source.h) for Python,
// private for now: kiln._C._import_source is the seam the tests use to
// import the code/ files of torch.jit.save archives and read back the
// graphs of what they define; the archive loader builds on the C++ API.
#include <map>

#include "bindings.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/function.h"
#include "kiln/serialization/import_source.h"

namespace kiln::python {

namespace {

struct PyImporter {
  std::shared_ptr<CompilationUnit> unit;
  std::unique_ptr<SourceImporter> importer;
};

std::string graphText(const std::shared_ptr<Graph>& graph) { return graph->toString(/*print_source_locations=*/false); }

}  // namespace

void bindImportSource(py::module_& m) {
  py::class_<PyImporter>(m, "_SourceImporter")
      // The qualified names the file of `qualifier` defines, all imported.
      .def("load_file",
           [](PyImporter& self, const std::string& qualifier) {
             py::list names;
             for (const std::string& name : self.importer->loadFile(qualifier)) names.append(py::str(name));
             return names;
           })
      // The type `name` as TorchScript prints it, or None when no file defines it.
      .def("load_type",
           [](PyImporter& self, const std::string& name) -> py::object {
             TypePtr type = self.importer->loadType(name);
             if (!type) return py::none();
             return py::str(type->str());
           })
      // {method name: graph text} of the class `name` (imported first).
      .def("method_graphs",
           [](PyImporter& self, const std::string& name) {
             TypePtr type = self.importer->loadType(name);
             KILN_CHECK(type, "no class '", name, "' was imported");
             py::dict out;
             if (auto cls = std::dynamic_pointer_cast<const ClassType>(type)) {
               for (Function* f : cls->methods()) {
                 if (auto g = f->inlinableGraph()) out[py::str(f->name())] = graphText(g);
               }
             }
             return out;
           })
      // The qualified name of the function `name` once imported, or None.
      .def("load_function",
           [](PyImporter& self, const std::string& name) -> py::object {
             std::shared_ptr<Function> f = self.importer->loadFunction(name);
             if (!f) return py::none();
             return py::str(f->name());
           })
      // {qualified name: graph text} of every function and method imported so
      // far (`__torch__.a.f`, `__torch__.a.C.forward`).
      .def("graphs",
           [](PyImporter& self) {
             py::dict out;
             for (GraphFunction* f : self.unit->functions()) out[py::str(f->name())] = graphText(f->graph());
             for (const ClassTypePtr& cls : self.unit->classes()) {
               for (Function* m : cls->methods()) {
                 std::string name = m->name();
                 if (name.rfind(cls->name() + ".", 0) != 0) name = cls->name() + "." + name;
                 if (auto g = m->inlinableGraph()) out[py::str(name)] = graphText(g);
               }
             }
             return out;
           })
      // The graph text of the free function `name` (imported first).
      .def("function_graph", [](PyImporter& self, const std::string& name) {
        std::shared_ptr<Function> f = self.importer->loadFunction(name);
        KILN_CHECK(f && f->inlinableGraph(), "no function '", name, "' was imported");
        return graphText(f->inlinableGraph());
      });
  // _import_source(files, constants): an importer over `files` (archive path
  // "code/__torch__/a.py" -> text) and the values of CONSTANTS.c<N>
  // (tensors, or constants Python can give).
  m.def(
      "_import_source",
      [](py::dict files, py::object constants) {
        std::map<std::string, std::string> texts;
        for (auto item : files) texts[item.first.cast<std::string>()] = item.second.cast<std::string>();
        std::vector<IValue> values;
        if (!constants.is_none()) {
          for (py::handle c : constants) {
            if (py::isinstance<Tensor>(c)) {
              values.push_back(IValue(c.cast<Tensor>()));
              continue;
            }
            std::optional<IValue> v = constantFromPython(c);
            KILN_CHECK(v, "_import_source: constants must be tensors or Python constants");
            values.push_back(std::move(*v));
          }
        }
        auto out = std::make_unique<PyImporter>();
        out->unit = std::make_shared<CompilationUnit>();
        out->importer = std::make_unique<SourceImporter>(
            out->unit, std::move(values),
            [texts = std::move(texts)](const std::string& qualifier) -> std::optional<std::string> {
              auto it = texts.find(SourceImporter::filenameOf(qualifier));
              if (it == texts.end()) return std::nullopt;
              return it->second;
            });
        return out;
      },
      py::arg("files"), py::arg("constants") = py::none());
}

}  // namespace kiln::python
