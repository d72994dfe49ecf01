#include "kiln/api/freeze.h"

#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/interface_type.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/frozen_graph_optimizations.h"
#include "kiln/passes/inliner.h"
#include "kiln/passes/loop_unrolling.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/passes/peephole.h"
#include "kiln/passes/remove_mutation.h"
#include "kiln/tensor/shape.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

const char* const kTrainingModeError =
    "Freezing is currently only implemented for modules in eval mode. Please call .eval() on your module before "
    "freezing.";

std::vector<std::string> splitName(const std::string& name) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(name);
  while (std::getline(in, part, '.')) parts.push_back(part);
  return parts;
}

bool isModuleObject(const IValue& v) { return v.isObject() && v.toObjectRef().type->isModule(); }

bool isMutableValue(const IValue& v) { return isMutableType(*v.type()); }

bool isModuleType(const TypePtr& t) {
  auto cls = t->cast<ClassType>();
  return cls && cls->isModule();
}

// `t`, a class type, as the mutable ClassTypePtr modules hold.
ClassTypePtr asClassType(const TypePtr& t) {
  return std::const_pointer_cast<ClassType>(std::static_pointer_cast<const ClassType>(t));
}

bool isInterfaceType(const TypePtr& t) { return dynamic_cast<const InterfaceType*>(t.get()) != nullptr; }

// Tensors, and the tensors inside lists, tuples and dicts (PyTorch's getSubValues).
void collectSubValues(const IValue& v, std::vector<IValue>& out) {
  out.push_back(v);
  if (v.isList()) {
    for (const IValue& e : v.toListRef().elements) collectSubValues(e, out);
  } else if (v.isTuple()) {
    for (const IValue& e : v.toTupleRef().elements) collectSubValues(e, out);
  } else if (v.isDict()) {
    for (const auto& [key, value] : v.toDictRef().items()) collectSubValues(value, out);
  }
}

// Whether two values are one object, tensors counting as one when they share storage
// (PyTorch's HashAliasedIValues).
bool sameObject(const IValue& a, const IValue& b) {
  if (a.isTensor() && b.isTensor()) {
    const Tensor& x = a.toTensor();
    const Tensor& y = b.toTensor();
    if (!x.defined() || !y.defined()) return x.isSame(y);
    return x.storage().get() == y.storage().get();
  }
  return a.tag() == b.tag() && a.isSameIdentity(b);
}

class AliasedSet {
 public:
  bool contains(const IValue& v) const {
    for (const IValue& item : items_) {
      if (sameObject(item, v)) return true;
    }
    return false;
  }
  void insert(const IValue& v) {
    if (!contains(v)) items_.push_back(v);
  }
  const std::vector<IValue>& items() const { return items_; }

 private:
  std::vector<IValue> items_;
};

bool overlaps(const IValue& a, const IValue& b) {
  std::vector<IValue> xs, ys;
  collectSubValues(a, xs);
  collectSubValues(b, ys);
  for (const IValue& x : xs) {
    if (!x.isTensor() && !x.isList() && !x.isDict() && !x.isObject()) continue;
    for (const IValue& y : ys) {
      if (sameObject(x, y)) return true;
    }
  }
  return false;
}

// Whether a prim::Constant can hold `v` (no objects or futures anywhere inside).
bool insertable(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::Object:
    case IValue::Tag::Future: return false;
    case IValue::Tag::List:
      for (const IValue& e : v.toListRef().elements) {
        if (!insertable(e)) return false;
      }
      return true;
    case IValue::Tag::Tuple:
      for (const IValue& e : v.toTupleRef().elements) {
        if (!insertable(e)) return false;
      }
      return true;
    case IValue::Tag::Dict:
      for (const auto& [key, value] : v.toDictRef().items()) {
        if (!insertable(key) || !insertable(value)) return false;
      }
      return true;
    default: return true;
  }
}

// A tensor that requires grad as one that does not, sharing its memory
// (PyTorch's overrideGradient): constants never require grad.
IValue withoutGrad(const IValue& v) {
  if (!v.isTensor() || !v.toTensor().defined() || !v.toTensor().requiresGrad()) return v;
  Tensor detached = alias(v.toTensor());
  detached.impl()->setRequiresGrad(false);
  return IValue(detached);
}

// The optimizations PyTorch runs on each frozen method after folding
// attributes (runOptimization without loop unrolling, then LowerSimpleTuples).
void optimizeAfterFolding(const std::shared_ptr<Graph>& graph) {
  eliminateDeadCode(graph);
  eliminateCommonSubexpression(graph);
  peepholeOptimize(graph);
  constantPropagation(graph);
  constantPooling(graph);
  if (unrollLoops(graph, UnrollPolicy::ConstantTripCounts)) {
    removeMutation(graph);
    peepholeOptimize(graph);
    constantPropagation(graph);
  }
  eliminateCommonSubexpression(graph);
  lowerSimpleTuples(graph);
}

class Freezer {
 public:
  Freezer(const Module& module, const std::vector<std::string>& preserved_attrs) : root_(module) {
    if (auto forward = root_.find_method("forward")) addMethod(root_, forward->function());
    for (const std::string& name : preserved_attrs) KILN_CHECK(preserveName(name), "Unknown name: ", name);
  }

  // Freezes, and runs the frozen-graph optimizations unless `optimize` is nullopt.
  Module run(std::optional<bool> optimize_numerics) {
    for (Method& m : methods_) {
      m.graph = m.function->graph()->copy();
      inlineCalls(m.graph);
      checkSupported(m);
    }
    for (Method& m : methods_) recordMutableAttrs(m);
    for (Method& m : methods_) {
      propagateAttributes(m);
      optimizeAfterFolding(m.graph);
      if (optimize_numerics) optimizeFrozenGraph(m.graph, *optimize_numerics);
    }
    for (Method& m : methods_) {
      recordReferencedAttrs(m);
      handleSharedClassType(root_, *m.graph);
    }
    return build();
  }

 private:
  struct Method {
    Module owner;
    GraphFunction* function;
    std::shared_ptr<Graph> graph;
  };

  void addMethod(const Module& owner, GraphFunction& function) {
    for (const Method& m : methods_) {
      if (m.function == &function && m.owner._ivalue() == owner._ivalue()) return;
    }
    methods_.push_back({owner, &function, nullptr});
  }

  // `sub.sub2.name`: an attribute (kept) or a method (kept and frozen) of a
  // submodule, which is kept with the modules on its path.
  bool preserveName(const std::string& name) {
    std::vector<std::string> parts = splitName(name);
    if (parts.empty()) return false;
    const std::string& attr = parts.back();
    Module current = root_;
    std::vector<std::pair<const ObjectObj*, std::string>> path;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      bool found = false;
      for (const auto& [child_name, child] : current.named_children()) {
        if (child_name == parts[i]) {
          path.emplace_back(current._ivalue().get(), child_name);
          current = child;
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    if (current.hasattr(attr)) {
      for (const auto& [owner, child_name] : path) user_preserved_attrs_[owner].insert(child_name);
      IValue value = current.attr(attr);
      if (isModuleObject(value)) preserved_submodules_.insert(&value.toObjectRef());
      insertMutableAttr(attr, value, current._ivalue().get());
      return true;
    }
    if (auto method = current.find_method(attr)) {
      for (const auto& [owner, child_name] : path) user_preserved_attrs_[owner].insert(child_name);
      addMethod(current, method->function());
      return true;
    }
    return false;
  }

  void checkSupported(const Method& m) {
    static const Symbol container_index = Symbol::prim("ModuleContainerIndex");
    walkNodes(*m.graph, WalkOrder::PreOrder, [&](Node* n) {
      KILN_CHECK(n->kind() != container_index,
                 "Freezing modules containing prim::ModuleContainerIndex is not supported");
      if (n->kind() == prim::GetAttr || n->kind() == prim::SetAttr) {
        KILN_CHECK(!isInterfaceType(n->input(0)->type()) &&
                       !(n->kind() == prim::GetAttr && isInterfaceType(n->output()->type())),
                   "attempted to freeze a module that uses interface attributes");
      }
    });
  }

  void insertMutableAttr(const std::string& name, const IValue& value, const ObjectObj* owner) {
    if (isMutableValue(value)) {
      preserved_attrs_.insert(value);
    } else {
      preserved_scalar_attrs_[owner].insert(name);
    }
  }

  // The names of the GetAttr chain from `m`'s self to `v` (empty for self
  // itself); nullopt when `v` comes from anything else.
  std::optional<std::deque<std::string>> modulePath(Value* v, const Method& m) const {
    std::deque<std::string> names;
    while (v != m.graph->inputs()[0]) {
      Node* n = v->node();
      if (n->kind() != prim::GetAttr) return std::nullopt;
      names.push_front(n->s(attr::name));
      v = n->input(0);
    }
    return names;
  }

  // The module holding attribute `name` of the module `object` stands for,
  // when the attribute may become a constant (PyTorch's findConstantAttr):
  // the module is reached from self through attributes that are not
  // preserved, and the attribute is not preserved nor overlaps one that is.
  std::optional<Module> findConstantAttr(Value* object, const std::string& name, const Method& m) const {
    if (!isModuleType(object->type())) return std::nullopt;
    auto path = modulePath(object, m);
    if (!path) return std::nullopt;
    Module module = m.owner;
    for (const std::string& step : *path) {
      if (!module.type()->hasAttribute(step)) return std::nullopt;
      IValue sub = module.attr(step);
      if (!isModuleObject(sub) || preserved_attrs_.contains(sub)) return std::nullopt;
      module = Module(sub.toObject());
    }
    if (!module.type()->hasAttribute(name)) return std::nullopt;
    IValue value = module.attr(name);
    if (!isMutableValue(value)) {
      auto it = preserved_scalar_attrs_.find(module._ivalue().get());
      if (it != preserved_scalar_attrs_.end() && it->second.count(name)) return std::nullopt;
      return module;
    }
    if (preserved_attrs_.contains(value)) return std::nullopt;
    if (!value.isObject()) {
      for (const IValue& preserved : preserved_attrs_.items()) {
        if (!preserved.isObject() && overlaps(preserved, value)) return std::nullopt;
      }
    }
    return module;
  }

  // Attributes the method writes: prim::SetAttr, or a write (found by alias
  // analysis) to what an attribute read returns. PyTorch builds its alias
  // database in "frozen" mode for this, where each attribute read is a fresh
  // location rather than the wildcard: here each read is stood in for by a
  // value-less prim::Constant (a fresh location) while the database is built.
  void recordMutableAttrs(const Method& m) {
    std::vector<std::pair<Node*, Node*>> stand_ins;
    walkNodes(*m.graph, WalkOrder::PreOrder, [&](Node* n) {
      if (n->kind() != prim::GetAttr || !isModuleType(n->input(0)->type()) || isModuleType(n->output()->type()) ||
          !isMutableType(n->output()))
        return;
      // A prim::Constant without a value is a fresh location to AliasDb
      // (unless Optional, which it takes for None: use the contained type).
      Node* fresh = m.graph->create(prim::Constant, {}, 1);
      TypePtr type = n->output()->type();
      if (auto optional = type->cast<OptionalType>()) type = optional->containedTypes().at(0);
      fresh->output()->setType(type);
      fresh->insertAfter(n);
      n->output()->replaceAllUsesWith(fresh->output());
      stand_ins.emplace_back(n, fresh);
    });
    std::unordered_map<const Node*, const Node*> stand_in_of;
    for (const auto& [read, fresh] : stand_ins) stand_in_of[read] = fresh;
    {
      AliasDb db(m.graph);
      AliasedSet used;
      walkNodes(*m.graph, WalkOrder::PreOrder, [&](Node* n) {
        if (n->kind() != prim::GetAttr && n->kind() != prim::SetAttr) return;
        const std::string& name = n->s(attr::name);
        auto module = findConstantAttr(n->input(0), name, m);
        if (!module) return;
        IValue value = module->attr(name);
        bool written = n->kind() == prim::SetAttr;
        if (n->kind() == prim::GetAttr) {
          if (value.isObject() || !isMutableValue(value)) return;
          used.insert(value);
          auto it = stand_in_of.find(n);
          written = it != stand_in_of.end() && db.hasOutputWriters(it->second);
        }
        if (written) insertMutableAttr(name, value, module->_ivalue().get());
      });
      // Alias analysis does not follow values inside containers: attributes
      // sharing memory could not be told apart (PyTorch raises the same).
      std::vector<IValue> seen;
      for (const IValue& value : used.items()) {
        std::vector<IValue> subs;
        collectSubValues(value, subs);
        for (const IValue& sub : subs) {
          if (!sub.isTensor() && !sub.isList() && !sub.isDict()) continue;
          for (const IValue& other : seen) {
            KILN_CHECK(!sameObject(sub, other), "module contains attributes values that overlaps ",
                       value.type()->str());
          }
        }
        for (const IValue& sub : subs) seen.push_back(sub);
      }
    }
    for (const auto& [read, fresh] : stand_ins) {
      fresh->output()->replaceAllUsesWith(read->output());
      fresh->destroy();
    }
  }

  // Replaces each attribute read findConstantAttr allows by a constant at
  // the top of the graph, named `self.sub.name` (PyTorch's propagateAttributes).
  void propagateAttributes(const Method& m) {
    const bool eval = !root_.hasattr("training") || !root_.is_training();
    Graph& graph = *m.graph;
    std::map<std::pair<const ObjectObj*, std::string>, Value*> constants;
    std::vector<Node*> reads;
    walkNodes(graph, WalkOrder::PreOrder, [&](Node* n) {
      if (n->kind() == prim::GetAttr) reads.push_back(n);
    });
    for (Node* n : reads) {
      const std::string name = n->s(attr::name);
      auto module = findConstantAttr(n->input(0), name, m);
      if (!module) continue;
      auto key = std::make_pair(static_cast<const ObjectObj*>(module->_ivalue().get()), name);
      Value* constant = nullptr;
      if (auto it = constants.find(key); it != constants.end()) {
        constant = it->second;
      } else {
        IValue value = module->attr(name);
        if (!eval) {
          const ClassType& cls = *module->type();
          size_t slot = *cls.findAttributeSlot(name);
          if (cls.attributeKind(slot) == SlotKind::Parameter || cls.attributeKind(slot) == SlotKind::Buffer ||
              name == "training")
            continue;
        }
        value = withoutGrad(value);
        if (!insertable(value)) continue;
        Node* top = graph.block()->nodes().empty() ? graph.block()->returnNode() : graph.block()->nodes().front();
        {
          WithInsertPoint guard(top);
          constant = graph.insertConstant(value);
        }
        std::string full_name = "self.";
        auto path = modulePath(n->input(0), m);  // a named local: iterating *temporary would dangle
        for (const std::string& step : *path) full_name += step + ".";
        full_name += name;
        if (Value::isValidName(full_name)) constant->setDebugName(full_name);
        constants[key] = constant;
      }
      n->output()->replaceAllUsesWith(constant);
      n->destroy();
    }
  }

  // Attributes the frozen graph still reads, from any module of the read's
  // type (PyTorch's recordReferencedAttrs), and those the user preserved.
  void recordReferencedAttrs(const Method& m) {
    std::vector<const ObjectObj*> modules = {m.owner._ivalue().get()};
    walkNodes(*m.graph, WalkOrder::PreOrder, [&](Node* n) {
      if (n->kind() != prim::GetAttr) return;
      const std::string& name = n->s(attr::name);
      std::vector<const ObjectObj*> found;
      for (const ObjectObj* module : modules) {
        if (module->type.get() != n->input(0)->type().get() || !module->type->hasAttribute(name)) continue;
        IValue value = module->getAttr(name);
        insertMutableAttr(name, value, module);
        if (isModuleObject(value)) found.push_back(&value.toObjectRef());
      }
      for (const ObjectObj* module : found) {
        if (std::find(modules.begin(), modules.end(), module) == modules.end()) modules.push_back(module);
      }
    });
    for (const auto& [module, names] : user_preserved_attrs_) {
      for (const std::string& name : names) insertMutableAttr(name, module->getAttr(name), module);
    }
  }

  bool moduleEscapes(const Module& module, const Graph& graph) const {
    for (const Value* out : graph.outputs()) {
      if (module.type()->isSubtypeOf(*out->type())) return true;
    }
    return preserved_submodules_.count(module._ivalue().get()) > 0;
  }

  // For each class type, the attribute slots to keep (PyTorch's
  // handleSharedClassType): the preserved ones, and everything of a module
  // a method returns or the user preserved.
  void handleSharedClassType(const Module& module, const Graph& graph) {
    const ClassType* type = module.type().get();
    auto& keep = attrs_to_keep_[type];
    if (moduleEscapes(module, graph)) {
      keep_all_.insert(type);
      return;
    }
    auto scalars = preserved_scalar_attrs_.find(module._ivalue().get());
    for (size_t i = 0; i < type->numAttributes(); ++i) {
      const std::string& name = type->attributeName(i);
      IValue value = module._ivalue()->getAttr(name);
      bool kept = isMutableValue(value) ? preserved_attrs_.contains(value)
                                        : scalars != preserved_scalar_attrs_.end() && scalars->second.count(name) > 0;
      if (!kept) continue;
      keep.insert(i);
      if (isModuleObject(value)) handleSharedClassType(Module(value.toObject()), graph);
    }
  }

  // --- the frozen module: new class types holding the kept attributes ---

  bool keepsEverything(const ClassType* type) const { return !attrs_to_keep_.count(type) || keep_all_.count(type); }

  TypePtr remapType(const TypePtr& type) const {
    if (auto it = type_remap_.find(type.get()); it != type_remap_.end()) return it->second;
    std::vector<TypePtr> contained = type->containedTypes();
    if (contained.empty()) return type;
    bool changed = false;
    for (TypePtr& t : contained) {
      TypePtr mapped = remapType(t);
      changed |= mapped != t;
      t = mapped;
    }
    return changed ? type->withContained(std::move(contained)) : type;
  }

  void remapGraph(Graph& graph) const {
    auto remapValues = [&](ArrayRef<Value*> values) {
      for (Value* v : values) v->setType(remapType(v->type()));
    };
    walkBlocks(graph, WalkOrder::PreOrder, [&](Block* b) {
      remapValues(b->inputs());
      for (Node* n : b->nodes()) remapValues(n->outputs());
    });
  }

  FunctionSchema remapSchema(const FunctionSchema& schema) const {
    std::vector<Argument> arguments = schema.arguments();
    std::vector<Argument> returns = schema.returns();
    for (Argument& a : arguments) a.type = remapType(a.type);
    for (Argument& r : returns) r.type = remapType(r.type);
    return FunctionSchema(schema.name(), schema.overloadName(), std::move(arguments), std::move(returns),
                          schema.isVararg(), schema.isVarret());
  }

  ClassTypePtr cloneType(const ClassTypePtr& old) {
    if (auto it = type_remap_.find(old.get()); it != type_remap_.end()) return asClassType(it->second);
    ClassTypePtr type = ClassType::create(old->name(), /*is_module=*/true, old->iterableKind());
    CompilationUnit::registerClass(unit_, type);
    type_remap_[old.get()] = type;
    cloned_types_.emplace_back(old, type);
    const bool all = keepsEverything(old.get());
    const auto& keep = attrs_to_keep_[old.get()];
    for (size_t i = 0; i < old->numAttributes(); ++i) {
      if (!all && !keep.count(i)) continue;
      TypePtr attr_type = old->attributeType(i);
      if (old->attributeKind(i) == SlotKind::Module && isModuleType(attr_type)) {
        attr_type = cloneType(asClassType(attr_type));
      }
      type->addAttribute(old->attributeName(i), attr_type, old->attributeKind(i));
    }
    for (const auto& [name, value] : old->constants()) type->addConstant(name, value);
    return type;
  }

  IntrusivePtr<ObjectObj> cloneObject(const IntrusivePtr<ObjectObj>& old) {
    if (auto it = object_memo_.find(old.get()); it != object_memo_.end()) return it->second;
    ClassTypePtr type = cloneType(old->type);
    auto object = makeIntrusive<ObjectObj>(type);
    object_memo_[old.get()] = object;
    for (size_t i = 0; i < type->numAttributes(); ++i) {
      IValue value = old->getAttr(type->attributeName(i));
      object->slot(i) = isModuleObject(value) ? IValue(cloneObject(value.toObject())) : value;
    }
    return object;
  }

  Module build() {
    unit_ = std::make_shared<CompilationUnit>();
    IntrusivePtr<ObjectObj> root = cloneObject(root_._ivalue());
    // The frozen methods, then every method of the types that keep everything.
    std::set<std::pair<const ClassType*, std::string>> defined;
    for (Method& m : methods_) {
      ClassTypePtr type = cloneType(m.owner.type());
      const std::string& name = m.function->getSchema().name();
      if (!defined.insert({m.owner.type().get(), name}).second) continue;
      remapGraph(*m.graph);
      unit_->createMethod(type, name, m.graph, remapSchema(m.function->getSchema()), /*check_graph=*/false);
    }
    for (const auto& [old, type] : cloned_types_) {
      if (!keepsEverything(old.get())) continue;
      for (Function* f : old->methods()) {
        auto* function = dynamic_cast<GraphFunction*>(f);
        if (!function || !defined.insert({old.get(), function->getSchema().name()}).second) continue;
        auto graph = function->graph()->copy();
        remapGraph(*graph);
        unit_->createMethod(type, function->getSchema().name(), graph, remapSchema(function->getSchema()),
                            /*check_graph=*/false);
      }
    }
    return Module(root);
  }

  Module root_;
  std::vector<Method> methods_;
  AliasedSet preserved_attrs_;
  std::unordered_map<const ObjectObj*, std::unordered_set<std::string>> preserved_scalar_attrs_;
  std::unordered_set<const ObjectObj*> preserved_submodules_;
  std::map<const ObjectObj*, std::set<std::string>> user_preserved_attrs_;
  std::unordered_map<const ClassType*, std::set<size_t>> attrs_to_keep_;
  std::unordered_set<const ClassType*> keep_all_;

  std::shared_ptr<CompilationUnit> unit_;
  std::unordered_map<const Type*, TypePtr> type_remap_;
  std::vector<std::pair<ClassTypePtr, ClassTypePtr>> cloned_types_;
  std::unordered_map<const ObjectObj*, IntrusivePtr<ObjectObj>> object_memo_;
};

void checkDoesNotReturnSelf(const Module& module) {
  if (auto forward = module.find_method("forward")) {
    for (const Value* out : forward->graph()->outputs()) {
      KILN_CHECK(out->type().get() != module.type().get(), "attempted to freeze a module that returns itself");
    }
  }
}

Module freezeImpl(const Module& module, const std::vector<std::string>& preserved_attrs,
                  std::optional<bool> optimize_numerics) {
  KILN_CHECK(module.type()->isModule(), "freeze expects a module, got an object of '", module.type()->name(), "'");
  checkDoesNotReturnSelf(module);
  return Freezer(module, preserved_attrs).run(optimize_numerics);
}

}  // namespace

Module freeze(const Module& module, const std::optional<std::vector<std::string>>& preserved_attrs,
              bool optimize_numerics) {
  KILN_CHECK(!module.hasattr("training") || !module.is_training(), kTrainingModeError);
  return freezeImpl(module, preserved_attrs.value_or(std::vector<std::string>{}), optimize_numerics);
}

Module freezeModule(const Module& module, const std::vector<std::string>& preserved_attrs) {
  return freezeImpl(module, preserved_attrs, std::nullopt);
}

}  // namespace kiln
