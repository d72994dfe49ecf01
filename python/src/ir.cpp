// kiln.parse_ir and the Graph/Node/Value/Block/Type objects for inspecting
// graphs from Python. Node, Value and Block handles hold their graph, so a
// handle keeps the graph alive.
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/pass_registry.h"

namespace kiln::python {

namespace {

template <typename T>
struct Handle {
  GraphPtr graph;
  T* ptr;
  bool operator==(const Handle& other) const { return ptr == other.ptr; }
};
using PyNode = Handle<Node>;
using PyValue = Handle<Value>;
using PyBlock = Handle<Block>;

GraphPtr graphOf(Graph* g) { return g->shared_from_this(); }

template <typename T>
std::vector<Handle<T>> handles(const GraphPtr& g, ArrayRef<T*> items) {
  std::vector<Handle<T>> out;
  for (T* item : items) out.push_back({g, item});
  return out;
}

std::vector<PyNode> nodesOf(const GraphPtr& g, Block* b) {
  std::vector<PyNode> out;
  for (Node* n : b->nodes()) out.push_back({g, n});
  return out;
}

std::string nodeText(const Node* n) {
  std::ostringstream out;
  n->print(out, 0, nullptr);
  return out.str();
}

template <typename T, typename F>
py::list mapList(const std::vector<T>& items, F f) {
  py::list out;
  for (const T& item : items) out.append(f(item));
  return out;
}

py::object attributeValue(const PyNode& n, const std::string& name) {
  Symbol s = Symbol::attr(name);
  Node* node = n.ptr;
  switch (node->kindOf(s)) {
    case AttributeKind::f: return py::float_(node->f(s));
    case AttributeKind::fs: return py::cast(node->fs(s));
    case AttributeKind::i: return py::int_(node->i(s));
    case AttributeKind::is: return py::cast(node->is(s));
    case AttributeKind::s: return py::str(node->s(s));
    case AttributeKind::ss: return py::cast(node->ss(s));
    case AttributeKind::t: return py::cast(node->t(s));
    case AttributeKind::ts: return mapList(node->ts(s), [](const Tensor& t) { return py::cast(t); });
    case AttributeKind::g: return py::cast(node->g(s));
    case AttributeKind::gs: return mapList(node->gs(s), [](const GraphPtr& g) { return py::cast(g); });
    case AttributeKind::ty: return py::cast(std::const_pointer_cast<Type>(node->ty(s)));
    case AttributeKind::tys:
      return mapList(node->tys(s), [](const TypePtr& t) { return py::cast(std::const_pointer_cast<Type>(t)); });
    case AttributeKind::ival: return toPython(node->ival(s));
  }
  return py::none();
}

const char* typeKindName(TypeKind k) {
  switch (k) {
    case TypeKind::Any: return "AnyType";
    case TypeKind::Tensor: return "TensorType";
    case TypeKind::Tuple: return "TupleType";
    case TypeKind::List: return "ListType";
    case TypeKind::Dict: return "DictType";
    case TypeKind::Number: return "NumberType";
    case TypeKind::Float: return "FloatType";
    case TypeKind::Complex: return "ComplexType";
    case TypeKind::Future: return "FutureType";
    case TypeKind::RRef: return "RRefType";
    case TypeKind::Int: return "IntType";
    case TypeKind::None: return "NoneType";
    case TypeKind::String: return "StringType";
    case TypeKind::Generator: return "GeneratorType";
    case TypeKind::Bool: return "BoolType";
    case TypeKind::Optional: return "OptionalType";
    case TypeKind::Var: return "VarType";
    case TypeKind::Device: return "DeviceObjType";
    case TypeKind::Stream: return "StreamObjType";
    case TypeKind::Function: return "FunctionType";
    case TypeKind::Class: return "ClassType";
    case TypeKind::Capsule: return "CapsuleType";
    case TypeKind::Union: return "UnionType";
  }
  return "?";
}

}  // namespace

void bindIR(py::module_& m) {
  py::class_<Type, std::shared_ptr<Type>>(m, "Type")
      .def("__str__", [](const Type& t) { return irStr(t); })
      .def("__repr__", [](const Type& t) { return irStr(t); })
      .def("str", &Type::str)
      .def("annotation_str", &Type::annotationStr)
      .def("kind", [](const Type& t) { return typeKindName(t.kind()); })
      .def("isSubtypeOf", [](const Type& a, const Type& b) { return a.isSubtypeOf(b); })
      .def("containedTypes",
           [](const Type& t) {
             std::vector<std::shared_ptr<Type>> out;
             for (const TypePtr& c : t.containedTypes()) out.push_back(std::const_pointer_cast<Type>(c));
             return out;
           })
      .def("__eq__", [](const Type& a, const Type& b) { return a == b; });

  py::class_<Graph, std::shared_ptr<Graph>>(m, "Graph")
      .def("__str__", [](const Graph& g) { return g.toString(); })
      .def("__repr__", [](const Graph& g) { return g.toString(); })
      .def("str", &Graph::toString, py::arg("print_source_locations") = true)
      .def("nodes", [](Graph& g) { return nodesOf(graphOf(&g), g.block()); })
      .def("inputs", [](Graph& g) { return handles(graphOf(&g), g.inputs()); })
      .def("outputs", [](Graph& g) { return handles(graphOf(&g), g.outputs()); })
      .def("block",
           [](Graph& g) {
             return PyBlock{graphOf(&g), g.block()};
           })
      .def("param_node",
           [](Graph& g) {
             return PyNode{graphOf(&g), g.paramNode()};
           })
      .def("return_node",
           [](Graph& g) {
             return PyNode{graphOf(&g), g.returnNode()};
           })
      .def("lint", &Graph::lint)
      .def("copy", [](const Graph& g) { return g.copy(); });

  py::class_<PyBlock>(m, "Block")
      .def("nodes", [](const PyBlock& b) { return nodesOf(b.graph, b.ptr); })
      .def("inputs", [](const PyBlock& b) { return handles(b.graph, b.ptr->inputs()); })
      .def("outputs", [](const PyBlock& b) { return handles(b.graph, b.ptr->outputs()); })
      .def("paramNode",
           [](const PyBlock& b) {
             return PyNode{b.graph, b.ptr->paramNode()};
           })
      .def("returnNode",
           [](const PyBlock& b) {
             return PyNode{b.graph, b.ptr->returnNode()};
           })
      .def("owningNode",
           [](const PyBlock& b) -> std::optional<PyNode> {
             if (!b.ptr->owningNode()) return std::nullopt;
             return PyNode{b.graph, b.ptr->owningNode()};
           })
      .def("__eq__", &PyBlock::operator==)
      .def("__hash__", [](const PyBlock& b) { return std::hash<const void*>()(b.ptr); });

  py::class_<PyNode>(m, "Node")
      .def("kind", [](const PyNode& n) { return n.ptr->kind().toQualString(); })
      .def("inputs", [](const PyNode& n) { return handles(n.graph, n.ptr->inputs()); })
      .def("outputs", [](const PyNode& n) { return handles(n.graph, n.ptr->outputs()); })
      .def("input",
           [](const PyNode& n) {
             return PyValue{n.graph, n.ptr->input()};
           })
      .def("output",
           [](const PyNode& n) {
             return PyValue{n.graph, n.ptr->output()};
           })
      .def("inputsSize", [](const PyNode& n) { return n.ptr->inputs().size(); })
      .def("outputsSize", [](const PyNode& n) { return n.ptr->outputs().size(); })
      .def("blocks", [](const PyNode& n) { return handles(n.graph, n.ptr->blocks()); })
      .def("owningBlock",
           [](const PyNode& n) -> std::optional<PyBlock> {
             if (!n.ptr->owningBlock()) return std::nullopt;
             return PyBlock{n.graph, n.ptr->owningBlock()};
           })
      .def("attributeNames",
           [](const PyNode& n) {
             std::vector<std::string> names;
             for (Symbol s : n.ptr->attributeNames()) names.emplace_back(s.name());
             return names;
           })
      .def("hasAttribute",
           [](const PyNode& n, const std::string& name) { return n.ptr->hasAttribute(Symbol::attr(name)); })
      .def("hasAttributes", [](const PyNode& n) { return n.ptr->hasAttributes(); })
      .def("kindOf", [](const PyNode& n,
                        const std::string& name) { return attributeKindName(n.ptr->kindOf(Symbol::attr(name))); })
      .def("__getitem__", &attributeValue)
      .def("i", [](const PyNode& n, const std::string& name) { return n.ptr->i(Symbol::attr(name)); })
      .def("f", [](const PyNode& n, const std::string& name) { return n.ptr->f(Symbol::attr(name)); })
      .def("s", [](const PyNode& n, const std::string& name) { return n.ptr->s(Symbol::attr(name)); })
      .def("t", [](const PyNode& n, const std::string& name) { return n.ptr->t(Symbol::attr(name)); })
      .def("g", [](const PyNode& n, const std::string& name) { return n.ptr->g(Symbol::attr(name)); })
      .def("ty", [](const PyNode& n,
                    const std::string& name) { return std::const_pointer_cast<Type>(n.ptr->ty(Symbol::attr(name))); })
      .def("is_", [](const PyNode& n, const std::string& name) { return n.ptr->is(Symbol::attr(name)); })
      .def("fs", [](const PyNode& n, const std::string& name) { return n.ptr->fs(Symbol::attr(name)); })
      .def("ss", [](const PyNode& n, const std::string& name) { return n.ptr->ss(Symbol::attr(name)); })
      .def("ival", [](const PyNode& n, const std::string& name) { return toPython(n.ptr->ival(Symbol::attr(name))); })
      .def("schema", [](const PyNode& n) { return n.ptr->schema().str(); })
      .def("scopeName", [](const PyNode& n) { return n.ptr->scopeName(); })
      .def("isBefore", [](const PyNode& a, const PyNode& b) { return a.ptr->isBefore(b.ptr); })
      .def("isAfter", [](const PyNode& a, const PyNode& b) { return a.ptr->isAfter(b.ptr); })
      .def("__str__", [](const PyNode& n) { return nodeText(n.ptr); })
      .def("__repr__", [](const PyNode& n) { return nodeText(n.ptr); })
      .def("__eq__", &PyNode::operator==)
      .def("__hash__", [](const PyNode& n) { return std::hash<const void*>()(n.ptr); });

  py::class_<PyValue>(m, "Value")
      .def("debugName", [](const PyValue& v) { return v.ptr->debugName(); })
      .def("type", [](const PyValue& v) { return std::const_pointer_cast<Type>(v.ptr->type()); })
      .def("node",
           [](const PyValue& v) {
             return PyNode{v.graph, v.ptr->node()};
           })
      .def("offset", [](const PyValue& v) { return v.ptr->offset(); })
      .def("unique", [](const PyValue& v) { return v.ptr->unique(); })
      .def("uses",
           [](const PyValue& v) {
             std::vector<std::pair<PyNode, size_t>> out;
             for (const Use& u : v.ptr->uses()) out.emplace_back(PyNode{v.graph, u.user}, u.offset);
             return out;
           })
      .def("toIValue",
           [](const PyValue& v) -> py::object {
             auto iv = toIValue(v.ptr);
             return iv ? toPython(*iv) : py::none();
           })
      .def("__str__", [](const PyValue& v) { return "%" + v.ptr->debugName() + " : " + irStr(*v.ptr->type()); })
      .def("__repr__", [](const PyValue& v) { return "%" + v.ptr->debugName() + " : " + irStr(*v.ptr->type()); })
      .def("__eq__", &PyValue::operator==)
      .def("__hash__", [](const PyValue& v) { return std::hash<const void*>()(v.ptr); });

  m.def(
      "parse_ir", [](const std::string& text) { return parseIR(text); }, py::arg("text"),
      "Parses IR text (as Graph.__str__ and PyTorch print it) into a Graph.");
  m.def(
      "_jit_pass",
      [](const std::string& name, const std::shared_ptr<Graph>& graph) {
        const GraphPass* pass = findPass(name);
        KILN_CHECK(pass, "unknown pass '", name, "'");
        (*pass)(graph);
      },
      py::arg("name"), py::arg("graph"),
      "Runs the pass called `name` (as `kiln opt -p` names it) on the graph in place.");
  m.def("_pass_names", &passNames);
}

}  // namespace kiln::python
