#pragma once
// Helpers for tests of graphs and optimization passes: graphs compared up
// to value names, graphs run before and after a pass on the same inputs,
// and the message of an error a call raises.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/runtime/function.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/tensor/copy.h"

namespace kiln::testing {

// Renames every %value to %v<n> in order of first appearance and folds
// whitespace, so graphs compare independently of numbering and wrapping.
// With `keep_names`, only numbered values (%12) are renamed: debug names are
// compared too.
inline std::string canonicalIR(const std::string& ir, bool keep_names = false) {
  static const std::regex any_value(R"(%[A-Za-z0-9_.]+)");
  static const std::regex numbered_value(R"(%[0-9]+\b)");
  std::unordered_map<std::string, std::string> names;
  std::string out;
  size_t last = 0;
  const std::regex& pattern = keep_names ? numbered_value : any_value;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), pattern); it != std::sregex_iterator(); ++it) {
    out += ir.substr(last, static_cast<size_t>(it->position()) - last);
    auto [entry, inserted] = names.emplace(it->str(), "");
    if (inserted) entry->second = "%v" + std::to_string(names.size() - 1);
    out += entry->second;
    last = static_cast<size_t>(it->position() + it->length());
  }
  out += ir.substr(last);
  out = std::regex_replace(out, std::regex(R"(\s+)"), " ");
  size_t first = out.find_first_not_of(' ');
  size_t end = out.find_last_not_of(' ');
  return first == std::string::npos ? "" : out.substr(first, end - first + 1);
}

inline std::string printedIR(const std::shared_ptr<Graph>& g) { return canonicalIR(g->toString(false)); }

// The graph after `pass`, linted and printed canonically.
template <typename Pass>
std::string afterPass(Pass pass, const std::string& ir) {
  auto g = parseIR(ir);
  pass(g);
  g->lint();
  return printedIR(g);
}

// How many nodes of `kind` the block holds, nested blocks included.
inline size_t countNodes(const Block* block, std::string_view kind) {
  size_t n = 0;
  for (const Node* node : block->nodes()) {
    n += node->kind().toQualString() == kind;
    for (const Block* b : node->blocks()) n += countNodes(b, kind);
  }
  return n;
}

// A value as printed: tensors compare by their printed values (IValue's ==
// wants one element).
inline std::string shown(const IValue& v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Runs a copy of `g` on `inputs` and returns its output; errors propagate.
inline IValue runCopy(const std::shared_ptr<Graph>& g, Stack inputs) {
  GraphFunction fn("f", g->copy());
  return fn(std::move(inputs));
}

// Runs a copy of `g` on `inputs` (tensors are copied, so the graph may write
// to them) and returns its output, or the error it raised.
struct RunResult {
  std::optional<IValue> value;
  std::string error;
};

inline IValue copyInputs(const IValue& v) {
  if (v.isTensor() && v.toTensor().defined()) return IValue(clone(v.toTensor()));
  return v;
}

inline RunResult runGraph(const std::shared_ptr<Graph>& g, const Stack& inputs) {
  Stack copies;
  for (const IValue& v : inputs) copies.push_back(copyInputs(v));
  try {
    GraphFunction fn("f", g->copy());
    return {fn(std::move(copies)), ""};
  } catch (const Error& e) {
    return {std::nullopt, e.what()};
  }
}

// Values equal in structure, dtypes and shapes; tensors within `tolerance`
// relative to their magnitude (0: exactly).
inline ::testing::AssertionResult sameValues(const IValue& a, const IValue& b, double tolerance) {
  if (a.isTensor() && b.isTensor()) {
    const Tensor& x = a.toTensor();
    const Tensor& y = b.toTensor();
    if (x.dtype() != y.dtype() || x.sizes() != y.sizes()) {
      return ::testing::AssertionFailure() << "tensors differ in dtype or shape: " << a << " vs " << b;
    }
    Tensor xd = contiguous(to(x, ScalarType::Double));
    Tensor yd = contiguous(to(y, ScalarType::Double));
    const double* p = xd.data<double>();
    const double* q = yd.data<double>();
    for (int64_t i = 0; i < xd.numel(); ++i) {
      bool both_nan = std::isnan(p[i]) && std::isnan(q[i]);
      if (!both_nan && !(std::abs(p[i] - q[i]) <= tolerance * (1 + std::abs(q[i])))) {
        return ::testing::AssertionFailure() << "element " << i << ": " << p[i] << " vs " << q[i];
      }
    }
    return ::testing::AssertionSuccess();
  }
  if ((a.isTuple() && b.isTuple()) || (a.isList() && b.isList())) {
    const auto& xs = a.isTuple() ? a.toTupleRef().elements : a.toListRef().elements;
    const auto& ys = b.isTuple() ? b.toTupleRef().elements : b.toListRef().elements;
    if (xs.size() != ys.size()) return ::testing::AssertionFailure() << "lengths differ: " << a << " vs " << b;
    for (size_t i = 0; i < xs.size(); ++i) {
      auto r = sameValues(xs[i], ys[i], tolerance);
      if (!r) return r << " (at " << i << ")";
    }
    return ::testing::AssertionSuccess();
  }
  std::ostringstream x, y;
  x << a;
  y << b;
  if (x.str() != y.str()) return ::testing::AssertionFailure() << x.str() << " vs " << y.str();
  return ::testing::AssertionSuccess();
}

// Both graphs raise on `inputs`, or both give the same values.
inline ::testing::AssertionResult sameResults(const std::shared_ptr<Graph>& before, const std::shared_ptr<Graph>& after,
                                              const Stack& inputs, double tolerance = 0) {
  RunResult x = runGraph(before, inputs);
  RunResult y = runGraph(after, inputs);
  if (!x.value || !y.value) {
    if (!x.value && !y.value) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "only one raised: before '" << x.error << "', after '" << y.error << "'";
  }
  return sameValues(*x.value, *y.value, tolerance);
}

// `ir` with its inputs typed as the executor's shape plans type them
// (complete types of the tensor `inputs`, or their ranks only), shapes
// propagated.
inline std::shared_ptr<Graph> specializedGraph(const char* ir, const Stack& inputs, bool with_sizes = true) {
  auto g = parseIR(ir);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isTensor()) continue;
    TypePtr complete = TensorType::fromTensor(inputs[i].toTensor());
    g->inputs()[i]->setType(with_sizes ? complete : complete->cast<TensorType>()->dimensionedOnly());
  }
  propagateShapes(g);
  return g;
}

// The message of the kiln::Error `f` raises, or "" when it raises none.
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A linted copy of `g` after `pass` (a function that returns whether it
// changed the graph), which must have changed it or not as `expect_change`.
template <class Pass>
std::shared_ptr<Graph> copyAfterPass(Pass pass, const std::shared_ptr<Graph>& g, bool expect_change) {
  auto copy = g->copy();
  EXPECT_EQ(pass(copy), expect_change);
  copy->lint();
  return copy;
}

// While alive, graphs run as written: the executor's pipeline would apply
// the pass under test to both sides of a comparison.
struct UnoptimizedRuns {
  UnoptimizedRuns() { setGraphExecutorOptimize(false); }
  ~UnoptimizedRuns() { setGraphExecutorOptimize(true); }
  UnoptimizedRuns(const UnoptimizedRuns&) = delete;
  UnoptimizedRuns& operator=(const UnoptimizedRuns&) = delete;
};

}  // namespace kiln::testing
