// The IR text, exactly as PyTorch 1.13 prints it:
//
//   graph(%x.1 : Tensor,
//         %y : int):
//     %2 : int = prim::Constant[value=1]() # f.py:3:4
//     %3 : Tensor = prim::If(%c)
//       block0():
//         -> (%x.1)
//       ...
//     return (%3)
//   with prim::FusionGroup_0 = graph(...):
//
// Nodes holding a Subgraph attribute print as `kind_<n>` and their graphs
// follow the main one in `with` sections, numbered in print order.
#include <algorithm>
#include <ostream>
#include <sstream>

#include "kiln/ir/graph.h"

namespace kiln {

namespace {

std::ostream& indent(std::ostream& out, size_t level) {
  for (size_t i = 0; i < level; ++i) out << "  ";
  return out;
}

template <typename Values>
void printValues(std::ostream& out, const Values& values, bool with_types, const char* separator = ", ") {
  bool first = true;
  for (const Value* v : values) {
    if (!first) out << separator;
    first = false;
    out << "%" << v->debugName();
    if (with_types) out << " : " << *v->type();
  }
}

// One-element tensors print like the number they usually box, small ones in
// PyTorch's C++ text on one line, bigger ones as a placeholder.
void printTensorAttribute(std::ostream& out, const Tensor& t) {
  constexpr int64_t kMaxDisplayed = 10;
  if (!t.defined() || t.numel() > kMaxDisplayed) {
    out << "<Tensor>";
  } else if (t.numel() == 1) {
    Scalar s = t.item();
    out << "{";
    if (s.isFloatingPoint()) {
      out << s.toDouble();
    } else {
      out << s.toLong();
    }
    out << "}";
  } else {
    std::ostringstream text;
    printTensorATenStyle(text, t);
    std::string s = text.str();
    std::replace(s.begin(), s.end(), '\n', ' ');
    out << s;
  }
}

template <typename T, typename Print>
void printList(std::ostream& out, const std::vector<T>& items, Print print) {
  out << "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out << ", ";
    print(items[i]);
  }
  out << "]";
}

}  // namespace

void Node::printAttributeValue(std::ostream& out, const Attribute& a) const {
  switch (a.kind) {
    case AttributeKind::f: printIRDouble(out, std::get<double>(a.value)); break;
    case AttributeKind::fs:
      printList(out, std::get<std::vector<double>>(a.value), [&](double d) { printIRDouble(out, d); });
      break;
    case AttributeKind::i: out << std::get<int64_t>(a.value); break;
    case AttributeKind::is:
      printList(out, std::get<std::vector<int64_t>>(a.value), [&](int64_t i) { out << i; });
      break;
    case AttributeKind::s: printQuotedString(out, std::get<std::string>(a.value)); break;
    case AttributeKind::ss:
      printList(out, std::get<std::vector<std::string>>(a.value),
                [&](const std::string& s) { printQuotedString(out, s); });
      break;
    case AttributeKind::t: printTensorAttribute(out, std::get<Tensor>(a.value)); break;
    case AttributeKind::ts: out << "[<Tensors>]"; break;
    case AttributeKind::g: out << "<Graph>"; break;
    case AttributeKind::gs: out << "[<Graphs>]"; break;
    case AttributeKind::ty: out << *std::get<TypePtr>(a.value); break;
    case AttributeKind::tys:
      printList(out, std::get<std::vector<TypePtr>>(a.value), [&](const TypePtr& t) { out << *t; });
      break;
    case AttributeKind::ival:
      std::get<IValue>(a.value).repr(out, [](std::ostream& o, const IValue& v) {
        if (v.isTensor()) {
          printTensorAttribute(o, v.toTensor());
          return true;
        }
        if (v.isTensorList()) {
          o << "[<Tensors>]";
          return true;
        }
        if (v.isObject()) {
          o << "object(" << static_cast<const void*>(&v.toObjectRef()) << ")";
          return true;
        }
        return false;
      });
      break;
  }
}

void Node::printAttributes(std::ostream& out, bool ignore_subgraph) const {
  out << "[";
  bool first = true;
  for (const Attribute& a : attributes_) {
    if (ignore_subgraph && a.name == attr::Subgraph) continue;
    if (!first) out << ", ";
    first = false;
    out << a.name.name() << "=";
    printAttributeValue(out, a);
  }
  out << "]";
}

std::ostream& Node::print(std::ostream& out, size_t level, std::vector<const Node*>* groups,
                          bool print_source_locations, bool print_attributes, bool print_scopes,
                          bool print_body) const {
  indent(out, level);
  printValues(out, outputs_, true);
  out << " = ";
  bool is_group = groups && hasAttribute(attr::Subgraph) && kindOf(attr::Subgraph) == AttributeKind::g;
  if (is_group) {
    out << kind_.toQualString() << "_" << groups->size();
    if (print_attributes && numAttributes() > 1 && kind_ != prim::DifferentiableGraph) printAttributes(out, true);
    groups->push_back(this);
  } else {
    out << kind_.toQualString();
    if (print_attributes && hasAttributes()) printAttributes(out, false);
  }
  out << "(";
  printValues(out, inputs_, false);
  out << ")";
  if (print_scopes) {
    std::string scope = scopeName();
    if (!scope.empty()) out << ", scope: " << scope;
  }
  if (print_source_locations) {
    if (auto location = source_range_.fileLineCol()) {
      const auto& [file, line, column] = *location;
      out << " # " << file << ":" << line << ":" << column;
    }
  }
  if (!print_body) return out;
  out << "\n";
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block* b = blocks_[i];
    indent(out, level + 1) << "block" << i << "(";
    printValues(out, b->inputs(), true);
    out << "):\n";
    // PyTorch 1.13 prints nested nodes with their source locations whatever
    // the caller asked for; so does kiln, to print the same text.
    for (const Node* nested : b->nodes()) nested->print(out, level + 2, groups);
    indent(out, level + 2) << "-> (";
    printValues(out, b->outputs(), false);
    out << ")\n";
  }
  return out;
}

std::ostream& Graph::print(std::ostream& out, bool print_source_locations) const {
  out << "graph(";
  printValues(out, inputs(), true, ",\n      ");
  out << "):\n";
  std::vector<const Node*> groups;
  for (const Node* n : nodes()) n->print(out, 1, &groups, print_source_locations);
  out << "  return (";
  printValues(out, outputs(), false);
  out << ")\n";
  for (size_t i = 0; i < groups.size(); ++i) {
    out << "with " << groups[i]->kind().toQualString() << "_" << i << " = " << *groups[i]->g(attr::Subgraph);
  }
  return out;
}

}  // namespace kiln
