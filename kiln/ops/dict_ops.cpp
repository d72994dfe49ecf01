// TorchScript's dict operators with PyTorch 1.13's schemas: one overload per
// key type (str, int, bool, float, Tensor) of each operation. Dicts are
// insertion ordered, shared and mutable; tensor keys compare by identity.
#include "kiln/core/op_registration.h"

namespace kiln {
namespace {

DictObj& dictOf(const IValue& v) { return v.toDictRef(); }

[[noreturn]] void keyError(const IValue& key) { KILN_ERROR("KeyError: ", key); }

int64_t dictLen(const IValue& self) { return static_cast<int64_t>(dictOf(self).size()); }

IValue dictKeys(const IValue& self) {
  const DictObj& dict = dictOf(self);
  std::vector<IValue> keys;
  keys.reserve(dict.size());
  for (const auto& item : dict.items()) keys.push_back(item.first);
  return IValue::list(dict.key_type, std::move(keys));
}

IValue dictValues(const IValue& self) {
  const DictObj& dict = dictOf(self);
  std::vector<IValue> values;
  values.reserve(dict.size());
  for (const auto& item : dict.items()) values.push_back(item.second);
  return IValue::list(dict.value_type, std::move(values));
}

IValue dictItems(const IValue& self) {
  const DictObj& dict = dictOf(self);
  std::vector<IValue> items;
  items.reserve(dict.size());
  for (const auto& [key, value] : dict.items()) items.push_back(IValue::tuple({key, value}));
  return IValue::list(TupleType::create({dict.key_type, dict.value_type}), std::move(items));
}

IValue dictGetItem(const IValue& self, const IValue& key) {
  const IValue* value = dictOf(self).find(key);
  if (!value) keyError(key);
  return *value;
}

IValue dictGet(const IValue& self, const IValue& key) {
  const IValue* value = dictOf(self).find(key);
  return value ? *value : IValue();
}

IValue dictGetDefault(const IValue& self, const IValue& key, const IValue& default_value) {
  const IValue* value = dictOf(self).find(key);
  return value ? *value : default_value;
}

IValue dictSetDefault(const IValue& self, const IValue& key, const IValue& default_value) {
  DictObj& dict = dictOf(self);
  if (const IValue* value = dict.find(key)) return *value;
  dict.insert(key, default_value);
  return default_value;
}

void dictSetItem(const IValue& self, const IValue& key, const IValue& value) {
  dictOf(self).insertOrAssign(key, value);
}

IValue dictPop(const IValue& self, const IValue& key) {
  DictObj& dict = dictOf(self);
  IValue* value = dict.find(key);
  if (!value) keyError(key);
  IValue out = std::move(*value);
  dict.erase(key);
  return out;
}

IValue dictPopDefault(const IValue& self, const IValue& key, const IValue& default_value) {
  return dictOf(self).contains(key) ? dictPop(self, key) : default_value;
}

void dictDelete(const IValue& self, const IValue& key) { dictPop(self, key); }

// The first item, as 1.13 does (Python pops the last).
IValue dictPopItem(const IValue& self) {
  DictObj& dict = dictOf(self);
  KILN_CHECK(!dict.empty(), "popitem(): dictionary is empty");
  auto [key, value] = dict.items().front();
  dict.erase(key);
  return IValue::tuple({std::move(key), std::move(value)});
}

void dictClear(const IValue& self) { dictOf(self).clear(); }

void dictUpdate(const IValue& self, const IValue& to_add) {
  // A copy: `d.update(d)` reads what it writes.
  std::vector<std::pair<IValue, IValue>> items = dictOf(to_add).items();
  DictObj& dict = dictOf(self);
  for (auto& [key, value] : items) dict.insertOrAssign(std::move(key), std::move(value));
}

IValue dictCopy(const IValue& self) {
  const DictObj& dict = dictOf(self);
  auto out = makeIntrusive<DictObj>(dict.key_type, dict.value_type);
  for (const auto& [key, value] : dict.items()) out->insert(key, value);
  return IValue(std::move(out));
}

bool dictContains(const IValue& self, const IValue& key) { return dictOf(self).contains(key); }

// dict([(k, v), ...]): key and value types from the list's tuple type; later
// pairs overwrite earlier ones.
IValue dictFromPairs(const IValue& inputs) {
  const ListObj& list = inputs.toListRef();
  const auto* pair_type = list.element_type->cast<TupleType>();
  KILN_CHECK(pair_type && pair_type->elements().size() == 2, "aten::dict: expected a list of (key, value) tuples, got ",
             ListType::create(list.element_type)->annotationStr());
  auto out = makeIntrusive<DictObj>(pair_type->elements()[0], pair_type->elements()[1]);
  for (const IValue& pair : list.elements) {
    const auto& kv = pair.toTupleRef().elements;
    out->insertOrAssign(kv[0], kv[1]);
  }
  return IValue(std::move(out));
}

}  // namespace

// The schemas of one key type, spelled as 1.13 prints them.
#define KILN_DICT_OPS(K)                                                                                               \
  op("aten::len.Dict_" K "(Dict(" K ", t) self) -> int", dictLen),                                                     \
      op("aten::keys." K "(Dict(" K ", t) self) -> " K "[](*)", dictKeys),                                             \
      op("aten::values." K "(Dict(" K ", t) self) -> t[](*)", dictValues),                                             \
      op("aten::__getitem__.Dict_" K "(Dict(" K ", t) self, " K " key) -> t(*)", dictGetItem),                         \
      op("aten::get." K "(Dict(" K ", t) self, " K " key) -> t(*)?", dictGet),                                         \
      op("aten::get.default_" K "(Dict(" K ", t) self, " K " key, t default_value) -> t(*)", dictGetDefault),          \
      op("aten::setdefault." K "(Dict(" K ", t)(a!) self, " K "(b -> *) key, t(c -> *) default_value) -> t(*)",        \
         dictSetDefault),                                                                                              \
      op("aten::Delete.Dict_" K "(Dict(" K ", t)(a!) self, " K " key) -> ()", dictDelete),                             \
      op("aten::pop.Dict_" K "(Dict(" K ", t)(a!) self, " K " key) -> t(*)", dictPop),                                 \
      op("aten::pop.Dict_default_" K "(Dict(" K ", t)(a!) self, " K " key, t default_value) -> t(*)", dictPopDefault), \
      op("aten::popitem." K "(Dict(" K ", t)(a!) self) -> ((" K ", t))", dictPopItem),                                 \
      op("aten::clear." K "(Dict(" K ", t)(a!) self) -> ()", dictClear),                                               \
      op("aten::update." K "(Dict(" K ", t)(a!) self, Dict(" K ", t)(a!) to_add) -> ()", dictUpdate),                  \
      op("aten::items." K "(Dict(" K ", t) self) -> ((" K ", t)[])", dictItems),                                       \
      op("aten::copy.Dict_" K "(Dict(" K ", t)(a) self) -> Dict(" K ", t)", dictCopy),                                 \
      op("aten::__contains__." K "(Dict(" K ", t) dict, " K " key) -> bool", dictContains),                            \
      op("aten::_set_item." K "(Dict(" K ", t)(a!) l, " K "(b -> *) idx, t(c -> *) v) -> ()", dictSetItem),            \
      op("aten::dict." K "((" K ", tVal)[] inputs) -> Dict(" K ", tVal)", dictFromPairs),                              \
      op("aten::dict.Dict_" K "(Dict(" K ", t)(a) self) -> Dict(" K ", t)", dictCopy)

KILN_REGISTER_SCRIPT_OPS(op("aten::dict() -> Dict(str, Tensor)",
                            [] { return IValue(makeIntrusive<DictObj>(StringType::get(), TensorType::get())); }),
                         KILN_DICT_OPS("str"), KILN_DICT_OPS("int"), KILN_DICT_OPS("bool"), KILN_DICT_OPS("float"),
                         KILN_DICT_OPS("complex"), KILN_DICT_OPS("Tensor"), );

#undef KILN_DICT_OPS

}  // namespace kiln
