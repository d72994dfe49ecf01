#pragma once
// kiln's own pickle reader and writer: the format under both torch.save files
// (a state dict's data.pkl) and torch.jit.save archives (data.pkl,
// constants.pkl). The zip container and the archive importer sit on top of
// this and plug in through callbacks: the storage bytes and the script
// objects are theirs; the pickle program is ours.
//
// The unpickler runs no code. A pickle names functions and classes (GLOBAL),
// and Python's pickle would import and call them; kiln builds only the values
// of a fixed allowlist of torch globals, hands `__torch__.*` classes to the
// caller, and raises for any other name. docs/serialization.md has the list
// of opcodes and globals and the limits that keep bad input from crashing or
// exhausting the process.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/ivalue.h"

namespace kiln {

struct UnpickleOptions {
  // Returns the storage behind a persistent id ('storage', torch.FloatStorage,
  // key, location, numel): what the archive keeps in its `data/<key>` record.
  // It must hold at least numel elements of dtype (the unpickler checks).
  // Called once per key; every later use of the key gets the same storage, so
  // tensors that were views of one storage stay views of one storage. Without
  // it, a persistent id raises.
  std::function<StoragePtr(const std::string& key, ScalarType dtype, int64_t numel, const std::string& location)>
      load_storage;
  // Builds a script object of class `qualified_name` (`__torch__.Foo`) from its
  // pickled state: the argument of BUILD, a dict of attributes or what the
  // class's __getstate__ returned. Lists and dicts inside the state may still
  // have element type Any: element types are settled when the whole pickle
  // has been read, and the state stays whole after unpickle returns (the
  // caller may keep it, to run __setstate__ then). Without it, a class raises.
  std::function<IValue(const std::string& qualified_name, IValue state)> load_object;
  // Resolves the type text of torch.jit._pickle.restore_type_tag
  // (`Dict[str, Tensor]`, `List[__torch__.Foo]`). Without it,
  // parseTypeAnnotation, which knows no class names.
  std::function<TypePtr(const std::string& type_text)> resolve_type;
  // Values nested deeper than this (containers in containers) raise: the
  // rest of kiln walks values recursively.
  size_t max_depth = 1000;
};

// The value the pickle in `data` describes. Bytes after its STOP are
// ignored; `end`, when given, receives the offset just past the STOP. Any
// malformed input raises kiln::Error naming the byte offset and the opcode.
//
// Lists and dicts get the common type of their elements (List[int],
// Dict[str, Tensor], Any when there is none) unless the pickle tags them
// (build_intlist, restore_type_tag). Python bytes become strings, sets and
// frozensets become lists, dtypes (torch.float32) become their ScalarType
// number as TorchScript carries them.
IValue unpickle(std::string_view data, const UnpickleOptions& options = {}, size_t* end = nullptr);

struct PickleOptions {
  // Writes a dict at the root as collections.OrderedDict, as torch.save
  // writes a state dict.
  bool root_ordered_dict = false;
  // Tags lists and dicts with their TorchScript types, as torch.jit.save
  // does: torch.jit._pickle.build_intlist (and _tensorlist, _doublelist,
  // _boollist) for the specialized lists, restore_type_tag for the others.
  // Python can read those only with torch imported.
  bool type_tags = false;
  // Deeper values (or values that contain themselves through tuples or
  // objects) raise.
  size_t max_depth = 1000;
  // The state written for a script object (the argument of its BUILD):
  // what the class's __getstate__ returns, or nullopt for the dict of its
  // attributes. The archive writer runs __getstate__ here; without it,
  // objects are always written as their attributes.
  std::function<std::optional<IValue>(const IValue& object)> get_state;
  // Called with each class the pickle writes an object of, the first time
  // (the archive writer prints their code in this order).
  std::function<void(const std::shared_ptr<ClassType>& cls)> on_class;
};

// A storage the pickle refers to by persistent id: the zip layer writes its
// first numel * elementSize(dtype) bytes as the record `data/<key>`.
struct PickledStorage {
  std::string key;
  StoragePtr storage;
  ScalarType dtype;
  int64_t numel;
};

struct PickleResult {
  std::string data;                      // the pickle program, protocol 2
  std::vector<PickledStorage> storages;  // each distinct storage once, keys "0", "1", ... in order
};

// Writes `value` as torch 1.13 does: tensors as torch._utils._rebuild_tensor_v2
// over a persistent id ('storage', torch.FloatStorage, key, 'cpu', numel),
// script objects as GLOBAL/NEWOBJ/BUILD with their attributes as state.
// Futures, undefined tensors and strings that are not UTF-8 raise (Python
// could not read them back).
PickleResult pickle(const IValue& value, const PickleOptions& options = {});

// The type a list of these values gets when nothing says it: their common
// type (int, Tensor, List[int], Optional[int], ...) or Any.
TypePtr commonElementType(const std::vector<IValue>& values);

}  // namespace kiln
