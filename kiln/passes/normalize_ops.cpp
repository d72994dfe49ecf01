#include "kiln/passes/normalize_ops.h"

#include <unordered_map>

#include "kiln/ir/graph.h"

namespace kiln {

namespace {

const std::unordered_map<Symbol, Symbol>& aliasTargets() {
  static const std::unordered_map<Symbol, Symbol> targets = [] {
    std::unordered_map<Symbol, Symbol> m;
    const char* pairs[][2] = {
        {"absolute", "abs"},
        {"absolute_", "abs_"},
        {"clip", "clamp"},
        {"clip_", "clamp_"},
        {"det", "linalg_det"},
        {"matrix_power", "linalg_matrix_power"},
        {"matrix_exp", "linalg_matrix_exp"},
        {"ger", "outer"},
        {"arccos", "acos"},
        {"arccos_", "acos_"},
        {"arcsin", "asin"},
        {"arcsin_", "asin_"},
        {"arctan", "atan"},
        {"arctan_", "atan_"},
        {"arctan2", "atan2"},
        {"arctan2_", "atan2_"},
        {"arccosh", "acosh"},
        {"arccosh_", "acosh_"},
        {"arcsinh", "asinh"},
        {"arcsinh_", "asinh_"},
        {"arctanh", "atanh"},
        {"arctanh_", "atanh_"},
        {"fix", "trunc"},
        {"fix_", "trunc_"},
        {"negative", "neg"},
        {"negative_", "neg_"},
        {"subtract", "sub"},
        {"subtract_", "sub_"},
        {"greater_equal", "ge"},
        {"greater_equal_", "ge_"},
        {"greater", "gt"},
        {"greater_", "gt_"},
        {"less_equal", "le"},
        {"less_equal_", "le_"},
        {"less", "lt"},
        {"less_", "lt_"},
        {"not_equal", "ne"},
        {"not_equal_", "ne_"},
        {"divide", "div"},
        {"divide_", "div_"},
        {"multiply", "mul"},
        {"multiply_", "mul_"},
        {"linalg_matmul", "matmul"},
        {"inverse", "linalg_inv"},
        {"true_divide", "div"},
        {"true_divide_", "div_"},
        {"concat", "cat"},
        {"concatenate", "cat"},
        {"row_stack", "vstack"},
        {"swapdims", "transpose"},
        {"swapdims_", "transpose_"},
        {"swapaxes", "transpose"},
        {"swapaxes_", "transpose_"},
        {"moveaxis", "movedim"},
        {"special_erf", "erf"},
        {"special_erfc", "erfc"},
        {"special_erfinv", "erfinv"},
        {"special_expit", "sigmoid"},
        {"special_exp2", "exp2"},
        {"special_expm1", "expm1"},
        {"special_logit", "logit"},
        {"special_logsumexp", "logsumexp"},
        {"special_round", "round"},
        {"special_log1p", "log1p"},
        {"special_sinc", "sinc"},
        {"special_digamma", "digamma"},
        {"special_psi", "digamma"},
        {"special_i0", "i0"},
        {"special_xlogy", "xlogy"},
        {"special_log_softmax", "log_softmax"},
        {"orgqr", "linalg_householder_product"},
        {"adjoint", "mH"},
        {"special_multigammaln", "mvlgamma"},
        {"special_polygamma", "polygamma"},
        {"special_softmax", "softmax"},
        {"special_gammainc", "igamma"},
        {"special_gammaincc", "igammac"},
        {"special_gammaln", "lgamma"},
    };
    for (const auto& [alias, target] : pairs) m.emplace(Symbol::aten(alias), Symbol::aten(target));
    return m;
  }();
  return targets;
}

// Puts a call of `kind` on `inputs` in place of `n` and destroys `n`;
// leaves `n` alone when kiln has no such overload.
bool replaceWithCall(Node* n, Symbol kind, std::vector<Value*> inputs) {
  Graph* graph = n->owningGraph();
  Node* call = graph->create(kind, inputs, 0);
  call->insertBefore(n);
  if (!call->maybeOperator()) {
    call->destroy();
    return false;
  }
  for (Value* old : n->outputs()) {
    Value* replacement = call->addOutput()->copyMetadata(old);
    old->replaceAllUsesWith(replacement);
  }
  call->copyMetadata(n);
  n->destroy();
  return true;
}

bool normalize(Node* n) {
  if (auto it = aliasTargets().find(n->kind()); it != aliasTargets().end()) {
    return replaceWithCall(n, it->second, n->inputs().vec());
  }
  if (n->kind() == aten::rsub &&
      n->matches("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")) {
    std::vector<Value*> inputs = n->inputs().vec();
    std::swap(inputs[0], inputs[1]);
    return replaceWithCall(n, aten::sub, inputs);
  }
  if ((n->kind() == aten::__is__ || n->kind() == aten::__isnot__) && n->inputs().size() == 2 &&
      n->input(0)->type()->kind() == TypeKind::Bool && n->input(1)->type()->kind() == TypeKind::Bool) {
    return replaceWithCall(n, n->kind() == aten::__is__ ? aten::eq : aten::ne, n->inputs().vec());
  }
  return false;
}

void normalizeOps(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* n = *it;
    ++it;  // n may be replaced
    for (Block* b : n->blocks()) normalizeOps(b);
    normalize(n);
  }
}

}  // namespace

void normalizeOps(const std::shared_ptr<Graph>& graph) { normalizeOps(graph->block()); }

}  // namespace kiln
