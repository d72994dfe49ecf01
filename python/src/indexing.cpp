// Python indexing (t[...] and t[...] = v): filled in by the indexing work.
#include "bindings.h"

namespace kiln::python {

void bindIndexing(py::module_& m) {}

}  // namespace kiln::python
