// Serialization for Python (kiln/_serialization.py builds the public API on
// these): state dict files (_load_pickle, _save_pickle), TorchScript
// archives (_load, _save), and the pickle layer alone for tests (_unpickle,
// _pickle).
#include <cstring>

#include "bindings.h"
#include "kiln/runtime/function.h"
#include "kiln/serialization/export.h"
#include "kiln/serialization/import.h"
#include "kiln/serialization/pickle.h"
#include "kiln/serialization/pickle_file.h"
#include "kiln/serialization/python_print.h"
#include "kiln/serialization/zip_file.h"

namespace kiln::python {

namespace {

// Python values as IValues for the pickler: None, bool, int, float, str,
// kiln tensors, and tuples, lists and dicts of them.
IValue pickleableToIValue(py::handle obj, size_t depth) {
  KILN_CHECK(depth < 1000, "_pickle: the value is nested deeper than 1000");
  if (obj.is_none()) return IValue();
  if (PyBool_Check(obj.ptr())) return IValue(obj.cast<bool>());
  if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    KILN_CHECK(!overflow, "_pickle: int ", std::string(py::str(obj)), " does not fit in 64 bits");
    return IValue(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(obj.ptr())) return IValue(obj.cast<double>());
  if (PyComplex_Check(obj.ptr())) {
    Py_complex z = PyComplex_AsCComplex(obj.ptr());
    return IValue(std::complex<double>(z.real, z.imag));
  }
  if (PyUnicode_Check(obj.ptr())) return IValue(obj.cast<std::string>());
  if (py::isinstance<Tensor>(obj)) return IValue(obj.cast<Tensor>());
  if (PyTuple_Check(obj.ptr())) {
    std::vector<IValue> elements;
    for (py::handle e : obj) elements.push_back(pickleableToIValue(e, depth + 1));
    return IValue::tuple(std::move(elements));
  }
  if (PyList_Check(obj.ptr())) {
    std::vector<IValue> elements;
    for (py::handle e : obj) elements.push_back(pickleableToIValue(e, depth + 1));
    TypePtr element_type = commonElementType(elements);
    return IValue::list(std::move(element_type), std::move(elements));
  }
  if (PyDict_Check(obj.ptr())) {
    std::vector<IValue> keys, values;
    for (auto item : py::reinterpret_borrow<py::dict>(obj)) {
      keys.push_back(pickleableToIValue(item.first, depth + 1));
      values.push_back(pickleableToIValue(item.second, depth + 1));
    }
    auto dict = makeIntrusive<DictObj>(commonElementType(keys), commonElementType(values));
    for (size_t i = 0; i < keys.size(); ++i) dict->insertOrAssign(std::move(keys[i]), std::move(values[i]));
    return IValue(std::move(dict));
  }
  KILN_ERROR("_pickle: cannot pickle a ", std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
}

}  // namespace

std::string functionCode(const Function& function, bool as_method) {
  return as_method ? printMethodCode(function) : printFunctionCode(function);
}

py::tuple functionCodeWithConstants(const Function& function, bool as_method) {
  CodeWithConstants printed =
      as_method ? printMethodCodeWithConstants(function) : printFunctionCodeWithConstants(function);
  py::dict constants;
  for (size_t i = 0; i < printed.constants.size(); ++i) {
    std::string key = "c";
    key += std::to_string(i);
    constants[py::str(key)] = toPython(printed.constants[i]);
  }
  return py::make_tuple(printed.code, constants);
}

void bindSerialization(py::module_& m) {
  // _unpickle(data, storages): the value of a pickle (a torch.save data.pkl),
  // its persistent ids' storages read from `storages` (key -> bytes, the
  // archive's data/<key> records).
  m.def(
      "_unpickle",
      [](py::bytes data, py::dict storages) {
        std::string bytes = data;
        UnpickleOptions options;
        options.load_storage = [&](const std::string& key, ScalarType, int64_t, const std::string&) {
          py::str py_key(key);
          KILN_CHECK(storages.contains(py_key), "no storage '", key, "' was given");
          std::string record = py::bytes(storages[py_key]);
          auto storage = makeIntrusive<Storage>(record.size());
          if (!record.empty()) std::memcpy(storage->data(), record.data(), record.size());
          return storage;
        };
        return toPython(unpickle(bytes, options));
      },
      py::arg("data"), py::arg("storages") = py::dict());
  // _pickle(value, type_tags=False) -> (data, {key: bytes}): the pickle of a
  // value as torch.save writes it (an OrderedDict at the root stays one), and
  // the bytes of each storage it refers to.
  m.def(
      "_pickle",
      [](py::handle value, bool type_tags) {
        PickleOptions options;
        options.type_tags = type_tags;
        options.root_ordered_dict = py::isinstance(value, py::module_::import("collections").attr("OrderedDict"));
        PickleResult result = pickle(pickleableToIValue(value, 0), options);
        py::dict storages;
        for (const PickledStorage& s : result.storages) {
          size_t nbytes = static_cast<size_t>(s.numel) * elementSize(s.dtype);
          storages[py::str(s.key)] = py::bytes(static_cast<const char*>(s.storage->data()), nbytes);
        }
        return py::make_tuple(py::bytes(result.data), storages);
      },
      py::arg("value"), py::arg("type_tags") = false);
  // _load_pickle(path, data, name): what torch.save wrote, from a path or,
  // when path is None, from bytes (`name` in errors).
  m.def(
      "_load_pickle",
      [](py::object path, py::object data, const std::string& name) {
        if (!path.is_none()) return toPython(loadPickle(path.cast<std::string>()));
        ZipReader archive = ZipReader::fromBuffer(std::string(data.cast<py::bytes>()), name);
        return toPython(loadPickle(archive));
      },
      py::arg("path"), py::arg("data"), py::arg("name"));
  // _load(path, data, name, extra_names) -> (module object, {name: bytes}):
  // a torch.jit.save archive from a path or, when path is None, from bytes.
  m.def(
      "_load",
      [](py::object path, py::object data, const std::string& name, py::list extra_names) {
        ExtraFilesMap extra;
        for (py::handle n : extra_names) extra[n.cast<std::string>()] = "";
        Module module = path.is_none() ? loadFromBuffer(std::string(data.cast<py::bytes>()), &extra, name)
                                       : load(path.cast<std::string>(), &extra);
        py::dict files;
        for (const auto& [n, contents] : extra) files[py::str(n)] = py::bytes(contents);
        return py::make_tuple(toPython(module.toIValue()), files);
      },
      py::arg("path"), py::arg("data"), py::arg("name"), py::arg("extra_names"));
  // _save(module object or ScriptFunction, path, extra_files) writes a
  // torch.jit.save archive to path, or returns its bytes when path is None.
  m.def(
      "_save",
      [](py::handle what, py::object path, py::dict extra) -> py::object {
        Module module;
        if (auto object = objectToIValue(what, nullptr)) {
          module = Module(object->toObject());
        } else if (py::isinstance<GraphFunction>(what)) {
          module = moduleForFunction(what.cast<GraphFunction&>());
        } else {
          KILN_ERROR("save: expected a script module or function, got ",
                     std::string(py::str(py::type::handle_of(what).attr("__name__"))));
        }
        ExtraFilesMap files;
        for (auto item : extra) {
          py::handle contents = item.second;
          files[item.first.cast<std::string>()] =
              PyBytes_Check(contents.ptr()) ? std::string(contents.cast<py::bytes>()) : contents.cast<std::string>();
        }
        if (path.is_none()) return py::bytes(saveToBuffer(module, files));
        save(module, path.cast<std::string>(), files);
        return py::none();
      },
      py::arg("what"), py::arg("path"), py::arg("extra_files"));
  // _save_pickle(value, path=None): writes the file torch.save would, or
  // returns its bytes when no path is given.
  m.def(
      "_save_pickle",
      [](py::handle value, py::object path) -> py::object {
        IValue v = pickleableToIValue(value, 0);
        if (!path.is_none()) {
          savePickle(v, path.cast<std::string>());
          return py::none();
        }
        return py::bytes(savePickleToBuffer(v));
      },
      py::arg("value"), py::arg("path") = py::none());
}

}  // namespace kiln::python
