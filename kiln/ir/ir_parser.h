#pragma once
// Reads the IR text Graph::print writes (and PyTorch 1.13 prints), so that
// print(parseIR(text)) is what 1.13 prints after its own torch._C.parse_ir,
// values renumbered alike: graph and block inputs keep their names, node
// outputs are numbered in order.
//
// Beyond 1.13's parser it reads nodes with zero outputs (` = prim::Print(%x)`),
// `with prim::FusionGroup_0 = graph(...)` subgraph sections, `, scope: ...`,
// refined types with partly known sizes (`Float(*, 3)`), `Tensor(2, 3)`,
// `FloatTensor`, `Union(...)`, `NamedTuple(...)`, class types (`__torch__.C`),
// and constant literals: `{1.5}` tensors, tuples, dicts, nested lists,
// `None`, `True`/`False`, `torch.device("cpu")`, `annotate(List[int], [])`,
// `inf`/`nan`.
// Indentation is not significant.
//
// Malformed text raises kiln::Error with the line, the column, the line
// itself and a caret.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kiln/ir/graph.h"

namespace kiln {

std::shared_ptr<Graph> parseIR(std::string_view text);
// Parses into an empty graph; `values`, when given, receives name -> value
// for every %name in the text.
void parseIR(std::string_view text, Graph& graph, std::unordered_map<std::string, Value*>* values = nullptr);

}  // namespace kiln
