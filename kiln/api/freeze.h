#pragma once
// Freezing a module for inference (PyTorch 1.13's torch.jit.freeze and
// torch._C._freeze_module):
//
//   module.eval();
//   kiln::Module frozen = kiln::freeze(module);
//   frozen.forward({kiln::IValue(x)});
//
// The result is a new module (the original stays usable; both share the
// tensors) whose `forward`, and the methods named in `preserved_attrs`, have
// every call inlined and every attribute read that nothing writes replaced
// by a constant: parameters and buffers become tensor constants, `training`
// and other plain attributes become constants, and the graph is optimized
// over them (constant propagation folds `if self.training:` away, ...).
// Attributes that the preserved methods write (prim::SetAttr, or an in-place
// op on the attribute's tensor, found by alias analysis with each attribute
// read a fresh location) stay attributes, as do those named in
// `preserved_attrs` (`"version"`, `"sub.version"`); everything else the
// frozen methods no longer read goes: attributes, submodules, methods.
// Submodules a preserved method returns keep all their attributes and methods.
//
// freeze() then runs the frozen-graph optimizations (dropout removal, and
// with `optimize_numerics` convolution/linear + batch norm and convolution +
// add/sub/mul/div folding: kiln/passes/frozen_graph_optimizations.h) on
// forward and the preserved methods.
//
// Errors (kiln::Error, with PyTorch's words): a module in training mode
// (freeze only), a forward that returns the module itself, a name in
// `preserved_attrs` that is neither an attribute nor a method, module
// interfaces and prim::ModuleContainerIndex (kiln does not freeze those).
#include <optional>
#include <string>
#include <vector>

#include "kiln/runtime/module.h"

namespace kiln {

Module freeze(const Module& module, const std::optional<std::vector<std::string>>& preserved_attrs = std::nullopt,
              bool optimize_numerics = true);

// The freezing step alone (torch._C._freeze_module): no frozen-graph
// optimizations, and no check of training mode (in training mode, parameters
// and buffers stay attributes).
Module freezeModule(const Module& module, const std::vector<std::string>& preserved_attrs = {});

}  // namespace kiln
