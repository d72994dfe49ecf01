#pragma once
// The passes by name, for `kiln opt FILE.ir -p dce,constant_propagation` and
// for tests: each name stands for one pass's entry function.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Graph;

using GraphPass = std::function<void(const std::shared_ptr<Graph>&)>;

// Adds a pass defined in a layer below passes/ (the fuser), which this
// file cannot include; called while the library loads. `name` must be new.
void registerPass(std::string name, GraphPass pass);
// The pass called `name`, or null.
const GraphPass* findPass(std::string_view name);
// Every name, in alphabetical order.
std::vector<std::string> passNames();

}  // namespace kiln
