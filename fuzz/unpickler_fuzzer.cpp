// Any bytes given to the unpickler must either load or raise kiln::Error.
// What loads must write back (or raise kiln::Error for what Python could not
// read: bytes that are not UTF-8, a storage viewed as two dtypes), and the
// pickle written must load again and write the same bytes, with and without
// TorchScript type tags.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "kiln/serialization/pickle.h"

namespace {

// Storages of the size asked for (bounded), zeroed; script objects of a
// class made on the spot, their state a dict of attributes.
kiln::UnpickleOptions fuzzOptions() {
  kiln::UnpickleOptions options;
  options.load_storage = [](const std::string&, kiln::ScalarType dtype, int64_t numel, const std::string&) {
    KILN_CHECK(numel <= (1 << 16), "storage too large for the fuzzer");
    size_t nbytes = static_cast<size_t>(numel) * kiln::elementSize(dtype);
    auto storage = kiln::makeIntrusive<kiln::Storage>(nbytes);
    std::memset(storage->data(), 0, nbytes);
    return storage;
  };
  options.load_object = [](const std::string& name, kiln::IValue state) {
    KILN_CHECK(state.isDict(), "object state must be a dict");
    auto object = kiln::makeIntrusive<kiln::ObjectObj>(kiln::ClassType::create(name));
    for (const auto& [key, value] : state.toDictRef().items()) {
      KILN_CHECK(key.isString(), "attribute names are strings");
      object->setAttr(key.toStringRef(), value);
    }
    return kiln::IValue(std::move(object));
  };
  return options;
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::cerr << what << ": " << detail << "\n";
  std::abort();
}

void roundTrip(const kiln::IValue& value, bool type_tags) {
  kiln::PickleOptions write_options;
  write_options.type_tags = type_tags;
  kiln::PickleResult first;
  try {
    first = kiln::pickle(value, write_options);
  } catch (const kiln::Error&) {
    return;
  }
  kiln::UnpickleOptions options = fuzzOptions();
  options.load_storage = [&](const std::string& key, kiln::ScalarType dtype, int64_t numel, const std::string&) {
    size_t index = std::stoul(key);
    if (index >= first.storages.size() || first.storages[index].key != key || first.storages[index].dtype != dtype ||
        first.storages[index].numel != numel) {
      fail("the pickler wrote a storage it did not report", key);
    }
    return first.storages[index].storage;
  };
  kiln::IValue again;
  try {
    again = kiln::unpickle(first.data, options);
  } catch (const kiln::Error& e) {
    // Class names in type tags need the archive's resolver.
    if (type_tags && std::string_view(e.what()).find("type annotation error") != std::string_view::npos) return;
    fail("what kiln wrote does not read back", e.what());
  }
  std::string second;
  try {
    second = kiln::pickle(again, write_options).data;
  } catch (const kiln::Error& e) {
    fail("what kiln read back does not write", e.what());
  }
  if (second != first.data) fail("writing what was read back changed the pickle", type_tags ? "type tags" : "plain");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kiln::IValue value;
  try {
    value = kiln::unpickle(bytes, fuzzOptions());
  } catch (const kiln::Error& e) {
    // Messages quote the pickle's own text, so only the start tells a broken
    // invariant from bad input.
    if (std::string_view(e.what()).starts_with("unpickler: internal assert failed")) fail("bug", e.what());
    return 0;
  }
  roundTrip(value, false);
  roundTrip(value, true);
  return 0;
}
