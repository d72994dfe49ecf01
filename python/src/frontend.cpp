// Script frontend bindings: parsing only, for tests and tools.
#include "bindings.h"
#include "kiln/frontend/parser.h"

namespace kiln::python {

void bindFrontend(py::module_& m) {
  // One s-expression line per top-level statement.
  m.def(
      "_parse_source",
      [](const std::string& text) {
        std::string out;
        for (const TreeRef& tree : parseSource(text)) out += tree->toString() + "\n";
        return out;
      },
      py::arg("text"));
}

}  // namespace kiln::python
