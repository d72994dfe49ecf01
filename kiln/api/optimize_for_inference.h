#pragma once
// Optimizing a module for inference (PyTorch 1.13's
// torch.jit.optimize_for_inference, kiln's own way):
//
//   kiln::Module fast = kiln::optimizeForInference(module);
//
// As torch does, the module is put in eval mode (`module.eval()`: the one
// change to the original) and frozen (kiln::freeze, keeping
// `other_methods`); then forward and `other_methods` get
// optimizeFrozenGraphForInference (kiln/passes/optimize_for_inference.h):
// convolutions fused with bias, residual add and activation as oneDNN
// post-ops, weights prepacked once into oneDNN's blocked layout, and
// activations kept in that layout from convolution to convolution.
// Convolutions must then see float32 (N, C, H, W) inputs.
#include <string>
#include <vector>

#include "kiln/runtime/module.h"

namespace kiln {

Module optimizeForInference(Module& module, const std::vector<std::string>& other_methods = {});

}  // namespace kiln
