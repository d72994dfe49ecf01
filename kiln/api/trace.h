#pragma once
// Tracing from C++ (kiln.trace's engine): run a function on example inputs
// while the tracer records the operators it calls, and get back a
// GraphFunction that runs the recorded graph.
//
//   auto traced = kiln::trace("f", [](const kiln::Stack& in) {
//     return kiln::IValue(add(in[0].toTensor(), in[1].toTensor()));
//   }, {kiln::IValue(x), kiln::IValue(y)}, {"x", "y"});
//   traced->graph();                 // the trace, as torch.jit.trace prints it
//   (*traced)({kiln::IValue(a), kiln::IValue(b)});
//
// Operators must be called through kiln::runOperator (kiln/core/dispatch_hook.h)
// to be recorded, and TorchScript functions through Function::run or
// GraphFunction::operator() (recorded as prim::CallFunction); plain tensor
// library calls are invisible to the trace.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/frontend/tracer.h"
#include "kiln/runtime/function.h"

namespace kiln {

struct TracedFunction {
  std::shared_ptr<GraphFunction> function;
  IValue output;  // what the traced code returned on the example inputs
};

// Traces `fn` on `example_inputs` (tensors, and tuples and lists of
// tensors) and makes a function of the cleaned-up trace (cleanupTrace).
// `arg_names` name the graph's inputs. `strict` as torch.jit.trace's: a dict
// output raises, a list output warns (kiln::tracer::warn). Errors of `fn`
// propagate, ending the trace.
// `context` names values and gives nodes source ranges (the Python binding's).
TracedFunction trace(const std::string& name, const std::function<IValue(const Stack&)>& fn,
                     const Stack& example_inputs, const std::vector<std::string>& arg_names = {}, bool strict = true,
                     tracer::TraceContext context = {});

// What torch 1.13 runs on a fresh trace of a function (tracer::trace's
// NormalizeOps, FixupTraceScopeBlocks' runCleanupPasses): aliases
// normalized (aten::absolute -> aten::abs), simple tuples lowered, dead code
// eliminated.
void cleanupTrace(const std::shared_ptr<Graph>& graph);

// A function running a (cleaned-up) trace: its schema takes the inputs'
// types without shapes (a trace runs on any shape; 1.13's schema says
// `Tensor x`) and returns the output's.
std::shared_ptr<GraphFunction> functionFromTrace(const std::string& name, const std::shared_ptr<Graph>& graph);

// Tracing modules (torch 1.13's trace_module; docs/tracing.md, "Tracing
// modules"). `module` is a module object whose type has no method
// `method_name` yet; `fn` runs that method's eager code on
// `example_inputs`. The trace's first input is the module (`self`): its
// parameters, buffers and submodules are read with prim::GetAttr, and the
// calls of submodules that `fn` makes through traceMethodCall become
// prim::CallMethod of methods traced into the submodules' types. The
// cleaned-up trace becomes method `method_name` of the module's type.
struct TracedMethod {
  GraphFunction* method;
  IValue output;  // what fn returned
};
TracedMethod traceMethod(const IValue& module, const std::string& method_name,
                         const std::function<IValue(const Stack&)>& fn, const Stack& example_inputs,
                         const std::vector<std::string>& arg_names = {}, bool strict = true,
                         tracer::TraceContext context = {});

// A call of `module`'s method `method_name` (`fn` runs its eager code) made
// while a module is traced: when `module` is the traced module or one of its
// submodules, the call is traced into a method of its type (named
// method_name, or method_name1, method_name2, ... when the type has that
// name already: a submodule called twice gets two methods, as 1.13 mangles
// them) and recorded as prim::CallMethod (whose outputs are the values of
// the call used after it: TracingState::exitMethod); otherwise it is just
// fn(). Returns fn's result.
IValue traceMethodCall(const IValue& module, const std::string& method_name, const std::function<IValue()>& fn);

}  // namespace kiln
