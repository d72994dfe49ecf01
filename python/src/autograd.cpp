// Autograd's Python face: Tensor.grad, grad_fn, backward, is_leaf,
// retain_grad, register_hook, requires_grad(_), and the functions behind
// kiln.autograd.grad / kiln.autograd.backward. Backward runs with the GIL
// held, so that Python hooks may run from the engine.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/autograd/engine.h"
#include "kiln/autograd/formula.h"
#include "kiln/autograd/function.h"
#include "kiln/core/op_description.h"
#include "kiln/tensor/factory.h"

namespace kiln::python {

namespace {

using autograd::Node;
using autograd::TensorList;

// What a hook registration returns: removing it turns the hook off.
struct RemovableHandle {
  std::shared_ptr<bool> active;
  void remove() { *active = false; }
};

py::object gradFnObject(const std::shared_ptr<Node>& node) {
  if (!node) return py::none();
  return py::cast(node);
}

TensorList tensorsOf(py::handle obj) {
  TensorList out;
  if (obj.is_none()) return out;
  if (py::isinstance<Tensor>(obj)) {
    out.push_back(obj.cast<Tensor>());
    return out;
  }
  for (py::handle item : obj) out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
  return out;
}

std::optional<bool> optionalBool(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return obj.cast<bool>();
}

bool isTensorType(const TypePtr& type) {
  if (type->kind() == TypeKind::Tensor) return true;
  if (type->kind() == TypeKind::Optional || type->kind() == TypeKind::List) {
    for (const TypePtr& contained : type->containedTypes()) {
      if (contained->kind() == TypeKind::Tensor) return true;
    }
  }
  return false;
}

// Whether autograd records `op`: it takes a tensor that may require grad
// (not only an out= one) and returns tensors, and is not a factory.
bool recordable(const Operator& op) {
  const FunctionSchema& schema = op.schema();
  if (op.description().has(OpTrait::NeverRequiresGrad) || op.description().has(OpTrait::Factory)) return false;
  bool takes = false;
  for (const Argument& arg : schema.arguments()) {
    if (arg.isOutOrInPlace() && (arg.kwarg_only || arg.name == "out")) return false;
    takes |= isTensorType(arg.type);
  }
  bool returns = false;
  for (const Argument& ret : schema.returns()) returns |= isTensorType(ret.type);
  return takes && returns;
}

std::string qualifiedName(const Operator& op) {
  const std::string& overload = op.schema().overloadName();
  return op.schema().name() + (overload.empty() ? "" : "." + overload);
}

// The backward node of a kiln.autograd.Function call. Its backward is a
// Python callable (made by Function.apply) taking the output gradients and
// the unpacked saved tensors and returning one gradient per next edge. It
// runs on the thread that called backward, which holds the GIL.
class PythonFunctionNode final : public Node {
 public:
  PythonFunctionNode(std::string name, py::object backward)
      : Node(0), name_(std::move(name)), backward_(std::move(backward)) {}
  ~PythonFunctionNode() override {
    if (!Py_IsInitialized()) {
      backward_.release();  // the interpreter is gone: nothing left to free
      return;
    }
    py::gil_scoped_acquire gil;
    backward_ = py::object();
  }

  std::string name() const override { return name_; }
  bool runsOnCallingThread() const override { return true; }
  void releaseVariables() override {
    for (autograd::SavedVariable& v : saved_) v.reset();
  }

  TensorList apply(TensorList&& grads) override {
    py::gil_scoped_acquire gil;
    py::tuple grad_args(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined() && materialize_grads_ && i < inputGeometry().size()) {
        const autograd::TensorGeometry& g = inputGeometry()[i];
        grads[i] = zeros(g.sizes, g.dtype);
      }
      grad_args[i] = grads[i].defined() ? py::cast(grads[i]) : py::none();
    }
    py::list saved;
    for (const autograd::SavedVariable& v : saved_) {
      Tensor t = v.unpack(*this);
      saved.append(t.defined() ? py::cast(t) : py::none());
    }
    py::object result = backward_(grad_args, py::tuple(saved));
    TensorList out;
    for (py::handle item : result) out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
    return out;
  }

  std::vector<autograd::SavedVariable> saved_;
  bool materialize_grads_ = true;

 private:
  std::string name_;
  py::object backward_;
};

bool sameTensor(const Tensor& a, const Tensor& b) { return a.defined() && a.impl() == b.impl(); }

bool containsTensor(const TensorList& list, const Tensor& t) {
  for (const Tensor& x : list) {
    if (sameTensor(x, t)) return true;
  }
  return false;
}

// Hooks a Function call's outputs into autograd (torch's
// THPFunction_apply / _wrap_outputs): the node's next edges are the inputs'
// gradient edges; each differentiable output gets the node as its grad_fn;
// an output that is an input, unmodified, becomes a view of it first (torch
// does the same, so the input's own history is untouched); a modified
// (dirty) input takes the node as its new history. Returns the outputs to
// hand to the caller.
TensorList recordFunction(const std::shared_ptr<PythonFunctionNode>& node, const TensorList& inputs,
                          const TensorList& outputs, const TensorList& saved, const TensorList& dirty,
                          const TensorList& non_differentiable, bool materialize_grads) {
  for (const Tensor& d : dirty) {
    KILN_CHECK(containsTensor(inputs, d), "mark_dirty only accepts input tensors, but argument 0 isn't one");
    KILN_CHECK(containsTensor(outputs, d),
               "Some elements marked as dirty during the forward method were not returned as output. The inputs "
               "that are modified inplace must all be outputs of the Function.");
    KILN_CHECK(!(autograd::isLeaf(d) && autograd::requiresGrad(d)),
               "a leaf Variable that requires grad is being used in an in-place operation.");
  }
  for (const Tensor& in : inputs)
    node->nextEdges().push_back(in.defined() ? autograd::gradientEdge(in) : autograd::Edge{});
  node->materialize_grads_ = materialize_grads;
  TensorList result;
  node->setNumInputs(static_cast<uint32_t>(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor out = outputs[k];
    node->inputGeometry().push_back(out.defined() ? autograd::TensorGeometry{DimVector(out.sizes()), out.dtype()}
                                                  : autograd::TensorGeometry{});
    if (!out.defined() || containsTensor(non_differentiable, out)) {
      result.push_back(out);
      continue;
    }
    if (containsTensor(inputs, out) && !containsTensor(dirty, out)) out = autograd::detach(out);
    autograd::setGradFn(out, node, static_cast<uint32_t>(k));
    result.push_back(out);
  }
  // A saved output is kept without its history (it is this node's own result).
  for (const Tensor& t : saved) {
    bool is_output = false;
    uint32_t output_nr = 0;
    for (size_t k = 0; k < result.size() && !is_output; ++k) {
      if (sameTensor(result[k], t) && autograd::gradFn(t) == node) {
        is_output = true;
        output_nr = static_cast<uint32_t>(k);
      }
    }
    node->saved_.emplace_back(t, is_output, output_nr);
  }
  return result;
}

}  // namespace

void bindAutograd(py::module_& m) {
  py::class_<Node, std::shared_ptr<Node>>(m, "_GradFn")
      .def("name", &Node::name)
      .def_property_readonly("next_functions",
                             [](const Node& node) {
                               py::list out;
                               for (const autograd::Edge& e : node.nextEdges()) {
                                 out.append(py::make_tuple(gradFnObject(e.function), e.input_nr));
                               }
                               return py::tuple(out);
                             })
      .def_property_readonly("variable",
                             [](const Node& node) -> py::object {
                               if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&node)) {
                                 return py::cast(acc->variable());
                               }
                               KILN_ERROR("'", node.name(), "' object has no attribute 'variable'");
                             })
      .def("__repr__", [](const Node& node) {
        std::ostringstream out;
        out << "<" << node.name() << " object at " << static_cast<const void*>(&node) << ">";
        return out.str();
      });
  py::class_<RemovableHandle>(m, "_RemovableHandle").def("remove", &RemovableHandle::remove);

  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor
      .def_property(
          "requires_grad", [](const Tensor& t) { return t.requiresGrad(); },
          [](const Tensor& t, bool value) { autograd::setRequiresGrad(t, value); })
      .def(
          "requires_grad_",
          [](const Tensor& t, bool value) {
            autograd::setRequiresGrad(t, value);
            return t;
          },
          py::arg("requires_grad") = true)
      .def_property_readonly("is_leaf", [](const Tensor& t) { return autograd::isLeaf(t); })
      .def_property_readonly("grad_fn", [](const Tensor& t) { return gradFnObject(autograd::gradFn(t)); })
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            Tensor g = autograd::grad(t);
            if (!g.defined()) return py::none();
            return py::cast(g);
          },
          [](const Tensor& t, py::object value) {
            autograd::setGrad(t, value.is_none() ? Tensor() : value.cast<Tensor>());
          })
      .def_property_readonly("retains_grad", [](const Tensor& t) { return autograd::retainsGrad(t); })
      .def("retain_grad", [](const Tensor& t) { autograd::retainGrad(t); })
      .def("register_hook",
           [](const Tensor& t, py::function fn) {
             RemovableHandle handle{std::make_shared<bool>(true)};
             std::shared_ptr<bool> active = handle.active;
             autograd::registerHook(t, [fn, active](const Tensor& g) -> Tensor {
               if (!*active) return Tensor();
               py::object result = fn(g);
               if (result.is_none()) return Tensor();
               return result.cast<Tensor>();
             });
             return handle;
           })
      .def(
          "backward",
          [](const Tensor& t, py::object gradient, py::object retain_graph, bool create_graph, py::object inputs) {
            TensorList grads;
            if (!gradient.is_none()) grads.push_back(gradient.cast<Tensor>());
            autograd::backward({t}, grads, optionalBool(retain_graph), create_graph, tensorsOf(inputs));
          },
          py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(), py::arg("create_graph") = false,
          py::arg("inputs") = py::none());

  // The coverage test's view of derivatives: {"aten::add.Tensor": has a
  // derivative} for every operator autograd records (recordable above).
  m.def("_recorded_ops", [] {
    std::map<std::string, bool> out;
    for (const OperatorPtr& op : getAllOperators()) {
      if (recordable(*op)) out[qualifiedName(*op)] = autograd::derivativeFor(*op) != nullptr;
    }
    return out;
  });
  // {"aten::_native_multi_head_attention": torch's reason} for every
  // recorded operator declared not differentiable (as in torch 1.13).
  m.def("_not_differentiable_ops", [] {
    std::map<std::string, std::string> out;
    for (const OperatorPtr& op : getAllOperators()) {
      if (!recordable(*op)) continue;
      std::string why = autograd::notDifferentiableReason(*op);
      if (!why.empty()) out[qualifiedName(*op)] = why;
    }
    return out;
  });
  m.def("_op_has_derivative", [](const std::string& qualified) {
    auto dot = qualified.find('.', qualified.find("::"));
    std::string name = qualified.substr(0, dot);
    std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
    OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
    KILN_CHECK(op, "no operator ", qualified);
    return autograd::derivativeFor(*op) != nullptr;
  });
  py::class_<PythonFunctionNode, Node, std::shared_ptr<PythonFunctionNode>>(m, "_FunctionNode")
      .def(py::init<std::string, py::object>());
  m.def("_record_function",
        [](const std::shared_ptr<PythonFunctionNode>& node, py::object inputs, py::object outputs, py::object saved,
           py::object dirty, py::object non_differentiable, bool materialize_grads) {
          TensorList result = recordFunction(node, tensorsOf(inputs), tensorsOf(outputs), tensorsOf(saved),
                                             tensorsOf(dirty), tensorsOf(non_differentiable), materialize_grads);
          py::list out;
          for (const Tensor& t : result) out.append(t.defined() ? py::cast(t) : py::none());
          return out;
        });
  m.def(
      "_autograd_backward",
      [](py::object tensors, py::object grad_tensors, py::object retain_graph, bool create_graph, py::object inputs) {
        autograd::backward(tensorsOf(tensors), tensorsOf(grad_tensors), optionalBool(retain_graph), create_graph,
                           tensorsOf(inputs));
      },
      py::arg("tensors"), py::arg("grad_tensors") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false, py::arg("inputs") = py::none());
  m.def(
      "_autograd_grad",
      [](py::object outputs, py::object inputs, py::object grad_outputs, py::object retain_graph, bool create_graph,
         bool allow_unused) {
        TensorList result = autograd::grad(tensorsOf(outputs), tensorsOf(inputs), tensorsOf(grad_outputs),
                                           optionalBool(retain_graph), create_graph, allow_unused);
        py::list out;
        for (const Tensor& g : result) out.append(g.defined() ? py::cast(g) : py::none());
        return py::tuple(out);
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false, py::arg("allow_unused") = false);
}

}  // namespace kiln::python
