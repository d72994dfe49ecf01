// The pickle reader and writer (kiln/serialization/pickle.h): what Python's
// pickle and torch 1.13 write (the byte strings below were made by them),
// hand-made pickles for the other opcodes, bad input, and round trips.
// tests/python/test_pickle.py checks against Python and torch live.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "kiln/serialization/pickle.h"
#include "kiln/tensor/factory.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

using namespace std::string_literals;

// Written by tools/make_pickle_corpus.py, which also writes them to the fuzz
// corpus (tests/fuzz_corpus/pickle/):
// kP2, kP4: pickle.dumps(VALUE, protocol=2 / 4);
// kSd: torch.save's data.pkl of OrderedDict(w=arange(6.).reshape(2, 3),
//      v=w[1], i=tensor([7, 8], dtype=int32));
// kLin: torch.save's data.pkl of nn.Linear(2, 2).state_dict();
// kJit: torch.jit.save's data.pkl of a scripted module with typed list, dict,
//      tuple and device attributes, a submodule, and a buffer viewing a
//      parameter's storage.
const std::string kP2(
    "\x80\x02\x7d\x71\x00\x28\x58\x03\x00\x00\x00\x69\x6e\x74\x71\x01\x5d\x71\x02\x28\x4b\x00\x4b\xff\x4d\x00\x01\x4d"
    "\xff\xff\x4a\x00\x00\x01\x00\x4a\xff\xff\xff\xff"
    "\x4a\xff\xff\xff\x7f\x4a\x00\x00\x00\x80\x8a\x05\x00\x00\x00\x80\x00\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x8a"
    "\x08\x00\x00\x00\x00\x00\x00\x00\x80\x65\x58\x05"
    "\x00\x00\x00\x66\x6c\x6f\x61\x74\x71\x03\x5d\x71\x04\x28\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x47\x80\x00\x00\x00"
    "\x00\x00\x00\x00\x47\x7e\x37\xe4\x3c\x88\x00\x75"
    "\x9c\x65\x58\x01\x00\x00\x00\x73\x71\x05\x58\x06\x00\x00\x00\x68\xc3\xa9\x6c\x6c\x6f\x71\x06\x58\x01\x00\x00\x00"
    "\x62\x71\x07\x88\x89\x4e\x87\x71\x08\x58\x06\x00"
    "\x00\x00\x6e\x65\x73\x74\x65\x64\x71\x09\x5d\x71\x0a\x28\x28\x4b\x01\x4b\x02\x4b\x03\x4b\x04\x74\x71\x0b\x7d\x71"
    "\x0c\x58\x01\x00\x00\x00\x6b\x71\x0d\x5d\x71\x0e"
    "\x73\x65\x75\x2e",
    204);
const std::string kP4(
    "\x80\x04\x95\xa6\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x03\x69\x6e\x74\x94\x5d\x94\x28\x4b\x00\x4b\xff\x4d"
    "\x00\x01\x4d\xff\xff\x4a\x00\x00\x01\x00\x4a\xff"
    "\xff\xff\xff\x4a\xff\xff\xff\x7f\x4a\x00\x00\x00\x80\x8a\x05\x00\x00\x00\x80\x00\x8a\x08\x00\x00\x00\x00\x00\x00"
    "\x00\x40\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"
    "\x65\x8c\x05\x66\x6c\x6f\x61\x74\x94\x5d\x94\x28\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x47\x80\x00\x00\x00\x00\x00"
    "\x00\x00\x47\x7e\x37\xe4\x3c\x88\x00\x75\x9c\x65"
    "\x8c\x01\x73\x94\x8c\x06\x68\xc3\xa9\x6c\x6c\x6f\x94\x8c\x01\x62\x94\x88\x89\x4e\x87\x94\x8c\x06\x6e\x65\x73\x74"
    "\x65\x64\x94\x5d\x94\x28\x28\x4b\x01\x4b\x02\x4b"
    "\x03\x4b\x04\x74\x94\x7d\x94\x8c\x01\x6b\x94\x5d\x94\x73\x65\x75\x2e",
    177);
const std::string kSd(
    "\x80\x02\x63\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f\x6e\x73\x0a\x4f\x72\x64\x65\x72\x65\x64\x44\x69\x63\x74\x0a\x71"
    "\x00\x29\x52\x71\x01\x28\x58\x01\x00\x00\x00\x77"
    "\x71\x02\x63\x74\x6f\x72\x63\x68\x2e\x5f\x75\x74\x69\x6c\x73\x0a\x5f\x72\x65\x62\x75\x69\x6c\x64\x5f\x74\x65\x6e"
    "\x73\x6f\x72\x5f\x76\x32\x0a\x71\x03\x28\x28\x58"
    "\x07\x00\x00\x00\x73\x74\x6f\x72\x61\x67\x65\x71\x04\x63\x74\x6f\x72\x63\x68\x0a\x46\x6c\x6f\x61\x74\x53\x74\x6f"
    "\x72\x61\x67\x65\x0a\x71\x05\x58\x01\x00\x00\x00"
    "\x30\x71\x06\x58\x03\x00\x00\x00\x63\x70\x75\x71\x07\x4b\x06\x74\x71\x08\x51\x4b\x00\x4b\x02\x4b\x03\x86\x71\x09"
    "\x4b\x03\x4b\x01\x86\x71\x0a\x89\x68\x00\x29\x52"
    "\x71\x0b\x74\x71\x0c\x52\x71\x0d\x58\x01\x00\x00\x00\x76\x71\x0e\x68\x03\x28\x28\x68\x04\x68\x05\x68\x06\x68\x07"
    "\x4b\x06\x74\x71\x0f\x51\x4b\x03\x4b\x03\x85\x71"
    "\x10\x4b\x01\x85\x71\x11\x89\x68\x00\x29\x52\x71\x12\x74\x71\x13\x52\x71\x14\x58\x01\x00\x00\x00\x69\x71\x15\x68"
    "\x03\x28\x28\x68\x04\x63\x74\x6f\x72\x63\x68\x0a"
    "\x49\x6e\x74\x53\x74\x6f\x72\x61\x67\x65\x0a\x71\x16\x58\x01\x00\x00\x00\x31\x71\x17\x68\x07\x4b\x02\x74\x71\x18"
    "\x51\x4b\x00\x4b\x02\x85\x71\x19\x4b\x01\x85\x71"
    "\x1a\x89\x68\x00\x29\x52\x71\x1b\x74\x71\x1c\x52\x71\x1d\x75\x2e",
    296);
const std::string kLin(
    "\x80\x02\x63\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f\x6e\x73\x0a\x4f\x72\x64\x65\x72\x65\x64\x44\x69\x63\x74\x0a\x71"
    "\x00\x29\x52\x71\x01\x28\x58\x06\x00\x00\x00\x77"
    "\x65\x69\x67\x68\x74\x71\x02\x63\x74\x6f\x72\x63\x68\x2e\x5f\x75\x74\x69\x6c\x73\x0a\x5f\x72\x65\x62\x75\x69\x6c"
    "\x64\x5f\x74\x65\x6e\x73\x6f\x72\x5f\x76\x32\x0a"
    "\x71\x03\x28\x28\x58\x07\x00\x00\x00\x73\x74\x6f\x72\x61\x67\x65\x71\x04\x63\x74\x6f\x72\x63\x68\x0a\x46\x6c\x6f"
    "\x61\x74\x53\x74\x6f\x72\x61\x67\x65\x0a\x71\x05"
    "\x58\x01\x00\x00\x00\x30\x71\x06\x58\x03\x00\x00\x00\x63\x70\x75\x71\x07\x4b\x04\x74\x71\x08\x51\x4b\x00\x4b\x02"
    "\x4b\x02\x86\x71\x09\x4b\x02\x4b\x01\x86\x71\x0a"
    "\x89\x68\x00\x29\x52\x71\x0b\x74\x71\x0c\x52\x71\x0d\x58\x04\x00\x00\x00\x62\x69\x61\x73\x71\x0e\x68\x03\x28\x28"
    "\x68\x04\x68\x05\x58\x01\x00\x00\x00\x31\x71\x0f"
    "\x68\x07\x4b\x02\x74\x71\x10\x51\x4b\x00\x4b\x02\x85\x71\x11\x4b\x01\x85\x71\x12\x89\x68\x00\x29\x52\x71\x13\x74"
    "\x71\x14\x52\x71\x15\x75\x7d\x71\x16\x58\x09\x00"
    "\x00\x00\x5f\x6d\x65\x74\x61\x64\x61\x74\x61\x71\x17\x68\x00\x29\x52\x71\x18\x58\x00\x00\x00\x00\x71\x19\x7d\x71"
    "\x1a\x58\x07\x00\x00\x00\x76\x65\x72\x73\x69\x6f"
    "\x6e\x71\x1b\x4b\x01\x73\x73\x73\x62\x2e",
    290);
const std::string kJit(
    "\x80\x02\x63\x5f\x5f\x74\x6f\x72\x63\x68\x5f\x5f\x0a\x4d\x6f\x64\x65\x6c\x0a\x71\x00\x29\x81\x7d\x28\x58\x04\x00"
    "\x00\x00\x76\x69\x65\x77\x71\x01\x63\x74\x6f\x72"
    "\x63\x68\x2e\x5f\x75\x74\x69\x6c\x73\x0a\x5f\x72\x65\x62\x75\x69\x6c\x64\x5f\x74\x65\x6e\x73\x6f\x72\x5f\x76\x32"
    "\x0a\x71\x02\x28\x28\x58\x07\x00\x00\x00\x73\x74"
    "\x6f\x72\x61\x67\x65\x71\x03\x63\x74\x6f\x72\x63\x68\x0a\x46\x6c\x6f\x61\x74\x53\x74\x6f\x72\x61\x67\x65\x0a\x71"
    "\x04\x58\x01\x00\x00\x00\x30\x71\x05\x58\x03\x00"
    "\x00\x00\x63\x70\x75\x71\x06\x4b\x04\x74\x51\x71\x07\x4b\x02\x28\x4b\x02\x74\x28\x4b\x01\x74\x89\x63\x63\x6f\x6c"
    "\x6c\x65\x63\x74\x69\x6f\x6e\x73\x0a\x4f\x72\x64"
    "\x65\x72\x65\x64\x44\x69\x63\x74\x0a\x71\x08\x29\x52\x74\x52\x71\x09\x58\x08\x00\x00\x00\x74\x72\x61\x69\x6e\x69"
    "\x6e\x67\x71\x0a\x88\x58\x16\x00\x00\x00\x5f\x69"
    "\x73\x5f\x66\x75\x6c\x6c\x5f\x62\x61\x63\x6b\x77\x61\x72\x64\x5f\x68\x6f\x6f\x6b\x71\x0b\x4e\x58\x01\x00\x00\x00"
    "\x64\x71\x0c\x63\x74\x6f\x72\x63\x68\x2e\x6a\x69"
    "\x74\x2e\x5f\x70\x69\x63\x6b\x6c\x65\x0a\x72\x65\x73\x74\x6f\x72\x65\x5f\x74\x79\x70\x65\x5f\x74\x61\x67\x0a\x71"
    "\x0d\x7d\x28\x58\x01\x00\x00\x00\x61\x71\x0e\x4b"
    "\x01\x75\x58\x0e\x00\x00\x00\x44\x69\x63\x74\x5b\x73\x74\x72\x2c\x20\x69\x6e\x74\x5d\x71\x0f\x86\x52\x58\x01\x00"
    "\x00\x00\x6c\x71\x10\x63\x74\x6f\x72\x63\x68\x2e"
    "\x6a\x69\x74\x2e\x5f\x70\x69\x63\x6b\x6c\x65\x0a\x62\x75\x69\x6c\x64\x5f\x69\x6e\x74\x6c\x69\x73\x74\x0a\x71\x11"
    "\x28\x5d\x28\x4b\x01\x4b\x02\x65\x74\x52\x58\x01"
    "\x00\x00\x00\x74\x71\x12\x63\x74\x6f\x72\x63\x68\x2e\x6a\x69\x74\x2e\x5f\x70\x69\x63\x6b\x6c\x65\x0a\x62\x75\x69"
    "\x6c\x64\x5f\x74\x65\x6e\x73\x6f\x72\x6c\x69\x73"
    "\x74\x0a\x71\x13\x28\x5d\x28\x68\x02\x28\x28\x68\x03\x68\x04\x58\x01\x00\x00\x00\x31\x71\x14\x68\x06\x4b\x01\x74"
    "\x51\x71\x15\x4b\x00\x28\x4b\x01\x74\x28\x4b\x01"
    "\x74\x89\x68\x08\x29\x52\x74\x52\x71\x16\x65\x74\x52\x58\x01\x00\x00\x00\x66\x71\x17\x63\x74\x6f\x72\x63\x68\x2e"
    "\x6a\x69\x74\x2e\x5f\x70\x69\x63\x6b\x6c\x65\x0a"
    "\x62\x75\x69\x6c\x64\x5f\x64\x6f\x75\x62\x6c\x65\x6c\x69\x73\x74\x0a\x71\x18\x28\x5d\x28\x47\x3f\xf8\x00\x00\x00"
    "\x00\x00\x00\x65\x74\x52\x58\x01\x00\x00\x00\x67"
    "\x71\x19\x68\x0d\x5d\x28\x68\x11\x28\x5d\x28\x4b\x01\x65\x74\x52\x65\x58\x0f\x00\x00\x00\x4c\x69\x73\x74\x5b\x4c"
    "\x69\x73\x74\x5b\x69\x6e\x74\x5d\x5d\x71\x1a\x86"
    "\x52\x58\x02\x00\x00\x00\x62\x6c\x71\x1b\x63\x74\x6f\x72\x63\x68\x2e\x6a\x69\x74\x2e\x5f\x70\x69\x63\x6b\x6c\x65"
    "\x0a\x62\x75\x69\x6c\x64\x5f\x62\x6f\x6f\x6c\x6c"
    "\x69\x73\x74\x0a\x71\x1c\x28\x5d\x28\x88\x65\x74\x52\x58\x02\x00\x00\x00\x74\x75\x71\x1d\x4b\x01\x58\x01\x00\x00"
    "\x00\x78\x71\x1e\x86\x58\x03\x00\x00\x00\x64\x65"
    "\x76\x71\x1f\x63\x74\x6f\x72\x63\x68\x0a\x64\x65\x76\x69\x63\x65\x0a\x71\x20\x68\x06\x85\x52\x71\x21\x58\x03\x00"
    "\x00\x00\x73\x75\x62\x71\x22\x63\x5f\x5f\x74\x6f"
    "\x72\x63\x68\x5f\x5f\x0a\x53\x75\x62\x0a\x71\x23\x29\x81\x7d\x28\x68\x0a\x88\x68\x0b\x4e\x58\x03\x00\x00\x00\x6c"
    "\x69\x6e\x71\x24\x63\x5f\x5f\x74\x6f\x72\x63\x68"
    "\x5f\x5f\x2e\x74\x6f\x72\x63\x68\x2e\x6e\x6e\x2e\x6d\x6f\x64\x75\x6c\x65\x73\x2e\x6c\x69\x6e\x65\x61\x72\x0a\x4c"
    "\x69\x6e\x65\x61\x72\x0a\x71\x25\x29\x81\x7d\x28"
    "\x58\x06\x00\x00\x00\x77\x65\x69\x67\x68\x74\x71\x26\x68\x02\x28\x68\x07\x4b\x00\x28\x4b\x02\x4b\x02\x74\x28\x4b"
    "\x02\x4b\x01\x74\x88\x68\x08\x29\x52\x74\x52\x71"
    "\x27\x58\x04\x00\x00\x00\x62\x69\x61\x73\x71\x28\x68\x02\x28\x28\x68\x03\x68\x04\x58\x01\x00\x00\x00\x32\x71\x29"
    "\x68\x06\x4b\x02\x74\x51\x71\x2a\x4b\x00\x28\x4b"
    "\x02\x74\x28\x4b\x01\x74\x88\x68\x08\x29\x52\x74\x52\x71\x2b\x68\x0a\x88\x68\x0b\x4e\x75\x62\x71\x2c\x75\x62\x71"
    "\x2d\x75\x62\x71\x2e\x2e",
    874);

// Storages as an archive would give them: element i of each holds i.
struct Storages {
  std::map<std::string, StoragePtr> by_key;
  int calls = 0;

  UnpickleOptions options() {
    UnpickleOptions o;
    o.load_storage = [this](const std::string& key, ScalarType dtype, int64_t numel, const std::string& location) {
      ++calls;
      EXPECT_EQ(location, "cpu");
      Tensor t = arange(Scalar(int64_t{0}), Scalar(numel), Scalar(int64_t{1}), dtype);
      by_key[key] = t.storage();
      return t.storage();
    };
    return o;
  }
};

// Script objects as plain objects of a class made on the spot.
IValue makeObject(const std::string& name, IValue state) {
  auto object = makeIntrusive<ObjectObj>(ClassType::create(name));
  for (const auto& [key, value] : state.toDictRef().items()) object->setAttr(key.toStringRef(), value);
  return IValue(std::move(object));
}

std::string errorOf(const std::string& data, const UnpickleOptions& options = {}) {
  try {
    unpickle(data, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

const IValue& entry(const IValue& dict, const char* key) { return dict.toDictRef().at(IValue(key)); }

std::vector<float> floatsOf(const Tensor& t) {
  std::vector<float> out;
  const float* base = static_cast<const float*>(t.storage()->data());
  if (t.dim() == 1) {
    for (int64_t i = 0; i < t.size(0); ++i) out.push_back(base[t.storageOffset() + i * t.stride(0)]);
  } else {
    for (int64_t i = 0; i < t.size(0); ++i)
      for (int64_t j = 0; j < t.size(1); ++j)
        out.push_back(base[t.storageOffset() + i * t.stride(0) + j * t.stride(1)]);
  }
  return out;
}

TEST(Pickle, ReadsPythonProtocols2And4) {
  IValue v = unpickle(kP2);
  ASSERT_TRUE(v.isDict());
  EXPECT_EQ(entry(v, "int").toIntVector(),
            (std::vector<int64_t>{0, 255, 256, 65535, 65536, -1, 2147483647, -2147483648LL, 2147483648LL,
                                  int64_t{1} << 62, std::numeric_limits<int64_t>::min()}));
  std::vector<double> floats = entry(v, "float").toDoubleVector();
  ASSERT_EQ(floats.size(), 3u);
  EXPECT_EQ(floats[0], 1.5);
  EXPECT_TRUE(floats[1] == 0.0 && std::signbit(floats[1]));
  EXPECT_EQ(floats[2], 1e300);
  EXPECT_EQ(entry(v, "s").toStringRef(), "h\xc3\xa9llo");
  const auto& b = entry(v, "b").toTupleRef().elements;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_TRUE(b[0].toBool());
  EXPECT_FALSE(b[1].toBool());
  EXPECT_TRUE(b[2].isNone());
  const auto& nested = entry(v, "nested").toListRef().elements;
  EXPECT_EQ(nested[0].toTupleRef().elements.size(), 4u);
  EXPECT_EQ(entry(nested[1], "k").toListRef().elements.size(), 0u);
  // Protocol 4 (frames, SHORT_BINUNICODE, MEMOIZE) reads to the same value.
  EXPECT_TRUE(unpickle(kP4) == v);
}

TEST(Pickle, ListsAndDictsGetTheirElementsCommonType) {
  IValue v = unpickle(kP2);
  EXPECT_EQ(v.type()->str(), "Dict(str, Any)");
  EXPECT_EQ(entry(v, "int").type()->str(), "int[]");
  EXPECT_EQ(entry(v, "float").type()->str(), "float[]");
  const auto& nested = entry(v, "nested").toListRef();
  EXPECT_EQ(nested.element_type->str(), "Any");
  EXPECT_EQ(nested.elements[1].type()->str(), "Dict(str, Any[])");
  IValue optional = unpickle(
      "\x80\x02]q\x00(K\x01NK\x02"
      "e."s);
  EXPECT_EQ(optional.type()->annotationStr(), "List[Optional[int]]");
  IValue tuples = unpickle(
      "\x80\x02]q\x00(K\x01X\x01\x00\x00\x00"
      "a\x86K\x02X\x01\x00\x00\x00"
      "b\x86"
      "e."s);
  EXPECT_EQ(tuples.type()->annotationStr(), "List[Tuple[int, str]]");
}

TEST(Pickle, ReadsATorchSaveStateDict) {
  Storages storages;
  IValue sd = unpickle(kSd, storages.options());
  // Two keys, each loaded once although "0" is used twice.
  EXPECT_EQ(storages.calls, 2);
  Tensor w = entry(sd, "w").toTensor(), v = entry(sd, "v").toTensor(), i = entry(sd, "i").toTensor();
  EXPECT_EQ(w.dtype(), ScalarType::Float);
  EXPECT_EQ(std::vector<int64_t>(w.sizes().begin(), w.sizes().end()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<int64_t>(w.strides().begin(), w.strides().end()), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(floatsOf(w), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // v = w[1] stays a view of w's storage.
  EXPECT_EQ(v.storage().get(), w.storage().get());
  EXPECT_EQ(v.storageOffset(), 3);
  EXPECT_EQ(floatsOf(v), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(i.dtype(), ScalarType::Int);
  EXPECT_EQ(i.data<int32_t>()[1], 1);
  EXPECT_FALSE(w.requiresGrad());
  EXPECT_EQ(sd.type()->str(), "Dict(str, Tensor)");

  // A state dict's _metadata (BUILD on the OrderedDict) is read and dropped.
  IValue lin = unpickle(kLin, storages.options());
  EXPECT_EQ(lin.toDictRef().size(), 2u);
  EXPECT_EQ(entry(lin, "weight").toTensor().sizes().size(), 2u);
}

TEST(Pickle, ReadsATorchJitSaveArchivesData) {
  Storages storages;
  UnpickleOptions options = storages.options();
  std::vector<std::string> classes;
  options.load_object = [&](const std::string& name, IValue state) {
    classes.push_back(name);
    return makeObject(name, std::move(state));
  };
  IValue m = unpickle(kJit, options);
  EXPECT_EQ(classes,
            (std::vector<std::string>{"__torch__.torch.nn.modules.linear.Linear", "__torch__.Sub", "__torch__.Model"}));
  const ObjectObj& top = m.toObjectRef();
  // The type tags torch wrote are the element types.
  EXPECT_EQ(top.getAttr("d").type()->str(), "Dict(str, int)");
  EXPECT_EQ(top.getAttr("l").type()->str(), "int[]");
  EXPECT_EQ(top.getAttr("t").type()->str(), "Tensor[]");
  EXPECT_EQ(top.getAttr("f").type()->str(), "float[]");
  EXPECT_EQ(top.getAttr("bl").type()->str(), "bool[]");
  EXPECT_EQ(top.getAttr("g").type()->str(), "int[][]");
  EXPECT_EQ(top.getAttr("tu").toTupleRef().elements[1].toStringRef(), "x");
  EXPECT_TRUE(top.getAttr("dev").isDevice());
  EXPECT_TRUE(top.getAttr("training").toBool());
  // The buffer is a view of the submodule's weight: one storage.
  Tensor view = top.getAttr("view").toTensor();
  Tensor weight = top.getAttr("sub").toObjectRef().getAttr("lin").toObjectRef().getAttr("weight").toTensor();
  EXPECT_EQ(view.storage().get(), weight.storage().get());
  EXPECT_EQ(view.storageOffset(), 2);
  EXPECT_TRUE(weight.requiresGrad());
  EXPECT_FALSE(view.requiresGrad());
}

TEST(Pickle, ReadsTheOtherOpcodes) {
  // Protocol 0 memo (PUT, GET), POP, POP_MARK, DUP, LIST, DICT, APPEND, SETITEM, TUPLE.
  IValue v = unpickle("\x80\x02(K\x01K\x02lp0\n(K\x05K\x06tp1\n0(K\x07\x31g0\n\x86."s);
  ASSERT_TRUE(v.isTuple());
  EXPECT_EQ(v.toTupleRef().elements[0].toIntVector(), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(v.toTupleRef().elements[0].is(v.toTupleRef().elements[1]));
  v = unpickle("\x80\x02K\x05\x32\x86."s);
  EXPECT_EQ(v.toTupleRef().elements[1].toInt(), 5);
  v = unpickle(
      "\x80\x02(X\x01\x00\x00\x00"
      "aK\x01"
      "d]K\x02"
      "a\x86."s);
  EXPECT_EQ(entry(v.toTupleRef().elements[0], "a").toInt(), 1);
  EXPECT_EQ(v.toTupleRef().elements[1].toIntVector(), (std::vector<int64_t>{2}));
  v = unpickle(
      "\x80\x02}X\x01\x00\x00\x00"
      "bK\x03s."s);
  EXPECT_EQ(entry(v, "b").toInt(), 3);
  // LONG4, LONG1 short and negative, BININT negative.
  v = unpickle(
      "\x80\x02(\x8b\x02\x00\x00\x00\x00\x01\x8a\x01\xff\x8a\x00\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\xfft."s);
  EXPECT_EQ(v.toTupleRef().elements[0].toInt(), 256);
  EXPECT_EQ(v.toTupleRef().elements[1].toInt(), -1);
  EXPECT_EQ(v.toTupleRef().elements[2].toInt(), 0);
  EXPECT_EQ(v.toTupleRef().elements[3].toInt(), std::numeric_limits<int64_t>::min());
  // Bytes (protocol 3) are strings; BINUNICODE8 and BINBYTES8 (protocol 4).
  v = unpickle(
      "\x80\x03(C\x02\x00\xff"
      "B\x01\x00\x00\x00z\x8e\x01\x00\x00\x00\x00\x00\x00\x00y\x8d\x01\x00\x00\x00\x00\x00\x00\x00xt."s);
  EXPECT_EQ(v.toTupleRef().elements[0].toStringRef(), "\x00\xff"s);
  EXPECT_EQ(v.toTupleRef().elements[1].toStringRef(), "z");
  EXPECT_EQ(v.toTupleRef().elements[2].toStringRef(), "y");
  EXPECT_EQ(v.toTupleRef().elements[3].toStringRef(), "x");
  // Sets: EMPTY_SET, ADDITEMS, FROZENSET, and protocol 2's builtins.set.
  v = unpickle("\x80\x04\x8f(K\x01K\x02\x90(K\x03\x91\x86."s);
  EXPECT_EQ(v.toTupleRef().elements[0].toIntVector(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v.toTupleRef().elements[1].toIntVector(), (std::vector<int64_t>{3}));
  v = unpickle(
      "\x80\x02"
      "c__builtin__\nset\n]K\x04"
      "a\x85R."s);
  EXPECT_EQ(v.toIntVector(), (std::vector<int64_t>{4}));
  // STACK_GLOBAL, LONG_BINPUT / LONG_BINGET, dtypes, torch.Size.
  v = unpickle(
      "\x8c\x05torch\x8c\x07"
      "float64\x93r\x00\x01\x00\x00j\x00\x01\x00\x00\x86."s);
  EXPECT_EQ(v.toTupleRef().elements[0].toInt(), static_cast<int64_t>(ScalarType::Double));
  EXPECT_EQ(v.toTupleRef().elements[1].toInt(), static_cast<int64_t>(ScalarType::Double));
  v = unpickle(
      "\x80\x02"
      "ctorch\nSize\nK\x02K\x03\x86\x85R."s);
  EXPECT_EQ(v.toTupleRef().elements.size(), 2u);
  // Trailing bytes after STOP are left alone (torch puts data there).
  size_t end = 0;
  unpickle("\x80\x02N.garbage"s, {}, &end);
  EXPECT_EQ(end, 4u);
}

TEST(Pickle, RebuildsParameters) {
  Storages storages;
  // torch.save(nn.Parameter(torch.ones(2))) in the form torch writes it.
  std::string data =
      "\x80\x02\x63torch._utils\n_rebuild_parameter\nq\x00\x63torch._utils\n_rebuild_tensor_v2\nq\x01(("
      "X\x07\x00\x00\x00"
      "storageq\x02\x63torch\nFloatStorage\nq\x03X\x01\x00\x00\x00\x30q\x04X\x03\x00\x00\x00\x63puq\x05K\x02tq\x06QK"
      "\x00K"
      "\x02\x85K\x01\x85\x89\x63\x63ollections\nOrderedDict\nq\x07)Rq\x08tq\tRq\n\x88h\x07)R\x87R."s;
  Tensor p = unpickle(data, storages.options()).toTensor();
  EXPECT_TRUE(p.requiresGrad());
  EXPECT_EQ(p.numel(), 2);
}

TEST(Pickle, EveryTruncationRaises) {
  Storages storages;
  UnpickleOptions options = storages.options();
  options.load_object = makeObject;
  for (const std::string* data : {&kP2, &kP4, &kSd, &kLin, &kJit}) {
    ASSERT_NO_THROW(unpickle(*data, options));
    for (size_t n = 0; n < data->size(); ++n) {
      EXPECT_THROW(unpickle(data->substr(0, n), options), Error) << "prefix of " << n << " bytes";
    }
  }
}

TEST(Pickle, ErrorsNameTheOffsetAndOpcode) {
  std::string e = errorOf("\x80\x02K\x01\xff."s);
  EXPECT_NE(e.find("unknown opcode 0xff"), std::string::npos) << e;
  EXPECT_NE(e.find("at byte 4"), std::string::npos) << e;
  e = errorOf("\x80\x02h\x07."s);
  EXPECT_NE(e.find("memo key 7 was never stored (opcode BINGET at byte 2)"), std::string::npos) << e;
  e = errorOf(
      "\x80\x02X\xff\x00\x00\x00"
      "abc"s);
  EXPECT_NE(e.find("unexpected end of data: BINUNICODE needs 255 more bytes, 3 left"), std::string::npos) << e;
  e = errorOf("\x80\x02N"s);
  EXPECT_NE(e.find("no STOP"), std::string::npos) << e;
  EXPECT_NE(errorOf("\x80\x09N."s).find("pickle protocol 9"), std::string::npos);
}

TEST(Pickle, OnlyAllowlistedGlobals) {
  // What Python's pickle would run: os.system('echo hi').
  std::string e = errorOf("\x80\x02\x63os\nsystem\nX\x07\x00\x00\x00\x65\x63ho hi\x85R."s);
  EXPECT_NE(e.find("global 'os.system' is not allowed"), std::string::npos) << e;
  EXPECT_NE(e.find("opcode GLOBAL at byte 2"), std::string::npos) << e;
  e = errorOf("\x80\x04\x8c\x05posix\x8c\x06system\x93."s);
  EXPECT_NE(e.find("global 'posix.system' is not allowed"), std::string::npos) << e;
  for (const char* name : {"builtins\neval\n", "__builtin__\ngetattr\n", "torch._utils\n_rebuild_tensor\n",
                           "torch\nload\n", "__main__\nFoo\n", "collections\ndefaultdict\n"}) {
    EXPECT_NE(errorOf("\x80\x02\x63"s + name + ")R."s).find("is not allowed"), std::string::npos) << name;
  }
  // Script classes need the caller's loader.
  e = errorOf("\x80\x02\x63__torch__\nFoo\n)\x81}b."s);
  EXPECT_NE(e.find("'__torch__.Foo' is a script class, and nothing was given to build its objects"), std::string::npos)
      << e;
  UnpickleOptions options;
  options.load_object = makeObject;
  IValue foo = unpickle("\x80\x02\x63__torch__.a\nFoo\n)\x81}X\x01\x00\x00\x00xK\x01sb."s, options);
  EXPECT_EQ(foo.toObjectRef().type->name(), "__torch__.a.Foo");
  EXPECT_EQ(foo.toObjectRef().getAttr("x").toInt(), 1);
  e = errorOf("\x80\x02\x63__torch__\nFoo\n)R."s, options);
  EXPECT_NE(e.find("built with NEWOBJ and BUILD, not REDUCE"), std::string::npos) << e;
  // A global is not a value.
  e = errorOf("\x80\x02]\x63\x63ollections\nOrderedDict\na."s);
  EXPECT_NE(e.find("global 'collections.OrderedDict' used as a value"), std::string::npos) << e;
}

TEST(Pickle, TypeTagsAreChecked) {
  const std::string intlist = "\x80\x02\x63torch.jit._pickle\nbuild_intlist\n]"s;
  EXPECT_EQ(unpickle(intlist + "K\x01\x61\x85R."s).type()->str(), "int[]");
  EXPECT_NE(errorOf(intlist + "X\x01\x00\x00\x00z\x61\x85R."s).find("a str in a list tagged List[int]"),
            std::string::npos);
  // Appended after it was tagged: checked at the end all the same.
  EXPECT_NE(errorOf(intlist + "q\x00\x85R0h\x00N\x61."s).find("a None in a list tagged List[int]"), std::string::npos);
  const std::string tag = "\x80\x02\x63torch.jit._pickle\nrestore_type_tag\n}X\x01\x00\x00\x00kK\x01s"s;
  EXPECT_EQ(unpickle(tag + "X\x0e\x00\x00\x00"
                           "Dict[str, int]\x86R."s)
                .type()
                ->str(),
            "Dict(str, int)");
  EXPECT_NE(errorOf(tag + "X\x0e\x00\x00\x00"
                          "Dict[int, int]\x86R."s)
                .find("in a dict tagged Dict[int, int]"),
            std::string::npos);
  EXPECT_NE(errorOf(tag + "X\x09\x00\x00\x00List[int]\x86R."s).find("a dict tagged 'List[int]'"), std::string::npos);
  EXPECT_NE(errorOf(tag + "X\x0c\x00\x00\x00"
                          "Dict[str, Q]\x86R."s)
                .find("unknown type annotation 'Q'"),
            std::string::npos);
  UnpickleOptions options;
  options.resolve_type = [](const std::string& text) {
    EXPECT_EQ(text, "Dict[str, Q]");
    return DictType::create(StringType::get(), IntType::get());
  };
  EXPECT_NO_THROW(unpickle(tag + "X\x0c\x00\x00\x00"
                                 "Dict[str, Q]\x86R."s,
                           options));
}

TEST(Pickle, DepthBombsRaise) {
  // 100000 nested lists: [[[...]]] (EMPTY_LIST x n, then APPEND x n-1).
  const size_t n = 100000;
  std::string lists = "\x80\x02"s + std::string(n, ']') + std::string(n - 1, 'a') + ".";
  EXPECT_NE(errorOf(lists).find("containers nested deeper than 1000"), std::string::npos);
  // 100000 nested tuples: ((((None,),),),) fail as they are made.
  std::string tuples = "\x80\x02N"s + std::string(n, '\x85') + ".";
  EXPECT_NE(errorOf(tuples).find("tuples nested deeper than 1000"), std::string::npos);
  // Dicts, appended to after they are nested.
  std::string dicts = "\x80\x02"s;
  for (size_t i = 0; i < n; ++i) dicts += "}K\x01";
  for (size_t i = 0; i < n - 1; ++i) dicts += "s";
  dicts += "0.";
  EXPECT_THROW(unpickle(dicts), Error);
  // The limit itself: 1000 levels read, 1001 do not.
  auto nested = [](size_t depth) { return "\x80\x02"s + std::string(depth, ']') + std::string(depth - 1, 'a') + "."; };
  EXPECT_NO_THROW(unpickle(nested(1000)));
  EXPECT_THROW(unpickle(nested(1001)), Error);
  UnpickleOptions shallow;
  shallow.max_depth = 3;
  EXPECT_THROW(unpickle(nested(4), shallow), Error);
  // A deep chain that is not the result is freed without recursion too.
  EXPECT_NO_THROW(unpickle("\x80\x02"s + std::string(n, ']') + std::string(n - 1, 'a') + "0N."));
}

TEST(Pickle, ValuesContainingThemselvesRaise) {
  // l = []; l.append(l)
  EXPECT_NE(errorOf("\x80\x02]q\x00h\x00\x61."s).find("the value contains itself"), std::string::npos);
  // d = {}; d['d'] = (d,)
  EXPECT_NE(errorOf("\x80\x02}q\x00X\x01\x00\x00\x00\x64h\x00\x85s."s).find("contains itself"), std::string::npos);
}

TEST(Pickle, SharedTupleKeysAreBounded) {
  // t_k = (t_{k-1}, t_{k-1}): 2^64 parts counted through sharing.
  std::string data = "\x80\x02)q\x00\x30"s;
  for (int k = 1; k <= 64; ++k) data += "h\x00h\x00\x86q\x00\x30"s;
  // As a value it is fine (nothing walks it per path) ...
  IValue v = unpickle(data + "h\x00\x85."s);
  EXPECT_TRUE(v.isTuple());
  // ... and it writes back in linear size, the memo keeping the sharing.
  EXPECT_LT(pickle(v).data.size(), 2000u);
  // As a dict key, hashing it would take forever.
  EXPECT_NE(errorOf("\x80\x02}"s + data.substr(2) + "h\x00K\x01s."s).find("dict keys too large to hash"),
            std::string::npos);
}

TEST(Pickle, HugeLengthsRaiseWithoutAllocating) {
  EXPECT_THROW(unpickle("\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x80."s), Error);
  EXPECT_THROW(unpickle("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff."s), Error);
  EXPECT_THROW(unpickle("\x80\x03\x42\xff\xff\xff\xff."s), Error);
  EXPECT_THROW(unpickle("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7fN."s), Error);
  EXPECT_THROW(unpickle("\x80\x02\x8b\xff\xff\xff\xff."s), Error);
  // 2^64 does not fit.
  EXPECT_NE(errorOf("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."s).find("does not fit in 64 bits"),
            std::string::npos);
  EXPECT_THROW(unpickle("\x80\x02r\xff\xff\xff\xff."s), Error);  // LONG_BINPUT on an empty stack
  EXPECT_NO_THROW(unpickle("\x80\x02Nr\xff\xff\xff\xff."s));     // a sparse memo key is fine
}

TEST(Pickle, StackAndMarkErrors) {
  EXPECT_NE(errorOf("\x80\x02."s).find("leaves 0 values"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02K\x01K\x02."s).find("leaves 2 values"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02(N."s).find("STOP inside a MARK"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02t."s).find("TUPLE without a MARK"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02]K\x01(a."s).find("stack underflow"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02]K\x01K\x02s."s).find("SETITEM needs a dict, found list"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02}K\x01\x61."s).find("APPEND needs a list, found dict"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02}(K\x01u."s).find("SETITEMS with a key but no value"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02]]K\x01s."s).find("SETITEM needs a dict"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02}]K\x01s."s).find("can't use a value of type list as a dict key"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02\x63\x63ollections\nOrderedDict\nK\x02R."s).find("arguments must be a tuple"),
            std::string::npos);
  EXPECT_NE(errorOf("\x80\x02K\x01)R."s).find("REDUCE calls a global, found int"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02K\x01}b."s).find("BUILD on a int"), std::string::npos);
}

// ('storage', torch.<type>, key, 'cpu', numel) BINPERSID.
std::string persid(const std::string& type, const std::string& key, int numel) {
  return "(X\x07\x00\x00\x00storage\x63torch\n"s + type + "\nX"s + std::string(1, char(key.size())) + "\x00\x00\x00"s +
         key + "X\x03\x00\x00\x00\x63pu"s + "K" + std::string(1, char(numel)) + "tQ";
}
// _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict()) on a 1-d view.
std::string rebuild(const std::string& storage, int offset, int size, int stride) {
  return "\x63torch._utils\n_rebuild_tensor_v2\n(" + storage + "K" + std::string(1, char(offset)) + "K" +
         std::string(1, char(size)) + "\x85K" + std::string(1, char(stride)) +
         "\x85\x89\x63\x63ollections\nOrderedDict\n)RtR";
}

TEST(Pickle, PersistentIdsAndTensorsAreChecked) {
  std::string ok = "\x80\x02"s + rebuild(persid("FloatStorage", "0", 4), 1, 3, 1) + ".";
  Storages storages;
  EXPECT_EQ(unpickle(ok, storages.options()).toTensor().numel(), 3);
  EXPECT_NE(errorOf(ok).find("nothing was given to load storages"), std::string::npos);
  // Past the end of the storage: offset 2 + 3 elements > 4.
  std::string past = "\x80\x02"s + rebuild(persid("FloatStorage", "0", 4), 2, 3, 1) + ".";
  EXPECT_NE(errorOf(past, storages.options()).find("reaches past its storage of 4 elements"), std::string::npos);
  std::string strided = "\x80\x02"s + rebuild(persid("FloatStorage", "0", 4), 0, 3, 2) + ".";
  EXPECT_THROW(unpickle(strided, storages.options()), Error);
  // A storage that is shorter than the persistent id says.
  UnpickleOptions small;
  small.load_storage = [](const std::string&, ScalarType, int64_t, const std::string&) {
    return makeIntrusive<Storage>(8);
  };
  EXPECT_NE(errorOf(ok, small).find("has 8 bytes, fewer than its 4 elements of float32 need"), std::string::npos);
  // Unknown storage types and persistent ids of other shapes.
  EXPECT_NE(errorOf("\x80\x02"s + persid("QInt8Storage", "0", 1) + ".", storages.options()).find("not allowed"),
            std::string::npos);
  EXPECT_NE(errorOf("\x80\x02K\x01Q."s, storages.options()).find("persistent id must be"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02P0\n."s, storages.options()).find("persistent id must be"), std::string::npos);
  // _rebuild_tensor_v2 takes storages only, not tensors it made.
  std::string twice = "\x80\x02"s + rebuild(rebuild(persid("FloatStorage", "0", 4), 0, 4, 1), 0, 1, 1) + ".";
  EXPECT_NE(errorOf(twice, storages.options()).find("expects a storage"), std::string::npos);
}

TEST(Pickle, WorkStaysInProportionToTheInput) {
  // A long string used as a key again and again through the memo.
  std::string key = "\x80\x02}q\x00X\x00\x00\x01\x00"s + std::string(65536, 'k') + "q\x01"s;
  std::string many = key;
  for (int i = 0; i < 2000; ++i) many += "h\x00h\x01K\x01s0"s;
  EXPECT_NE(errorOf(many + "h\x00."s).find("dict keys too large to hash"), std::string::npos);
  // A big list made a set, and a long size tuple, many times over.
  std::string list = "\x80\x02]q\x00("s + std::string(4000, 'N') + "e0";
  for (int i = 0; i < 4000; ++i) list += "c__builtin__\nset\nh\x00\x85R0"s;
  EXPECT_NO_THROW(unpickle(list + "N."));
  EXPECT_NE(errorOf("\x80\x02"
                    "c__builtin__\nset\n)\x85R."s)
                .find("set expects a list"),
            std::string::npos);
  std::string dims = "\x80\x02"s + rebuild(persid("FloatStorage", "0", 4), 0, 1, 1) + ".";
  Storages storages;
  EXPECT_NO_THROW(unpickle(dims, storages.options()));
  std::string sizes;
  for (int i = 0; i < 65; ++i) sizes += "K\x01"s;
  std::string wide = "\x80\x02\x63torch._utils\n_rebuild_tensor_v2\n(" + persid("FloatStorage", "0", 4) + "K\x00("s +
                     sizes + "t(" + sizes + "t\x89N" + "tR.";
  EXPECT_NE(errorOf(wide, storages.options()).find("tensor of 65 dims"), std::string::npos);
  EXPECT_NE(errorOf("\x80\x02\x63torch\n"s + std::string(2000, 'x') + "\n.").find("is too long"), std::string::npos);
}

TEST(Pickle, RoundTripsPlainValues) {
  auto dict = makeIntrusive<DictObj>(StringType::get(), AnyType::get());
  dict->insertOrAssign(IValue("ints"), IValue(std::vector<int64_t>{
                                           0, -1, 255, 256, 65535, 65536, -70000, int64_t{1} << 40,
                                           std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}));
  dict->insertOrAssign(IValue("floats"), IValue(std::vector<double>{0.5, -1e-300, 1e300}));
  dict->insertOrAssign(IValue("tuple"), IValue::tuple({IValue(), IValue(true), IValue(false), IValue("s"),
                                                       IValue::tuple({}), IValue::tuple({IValue(1)})}));
  dict->insertOrAssign(IValue("device"), IValue(Device::parse("cpu")));
  std::vector<IValue> strings;
  for (int i = 0; i < 600; ++i) strings.emplace_back(std::to_string(i % 300) + "s");  // > 256 memo entries
  dict->insertOrAssign(IValue("strings"), IValue::list(StringType::get(), strings));
  std::vector<IValue> many;
  for (int i = 0; i < 2500; ++i) many.emplace_back(i);  // APPENDS in batches
  dict->insertOrAssign(IValue("many"), IValue::list(IntType::get(), many));
  auto tuple_keys = makeIntrusive<DictObj>(AnyType::get(), IntType::get());
  tuple_keys->insertOrAssign(IValue::tuple({IValue(1), IValue("a")}), IValue(1));
  dict->insertOrAssign(IValue("tuple_keys"), IValue(tuple_keys));
  IValue value(dict);
  for (bool tags : {false, true}) {
    PickleOptions options;
    options.type_tags = tags;
    PickleResult result = pickle(value, options);
    EXPECT_TRUE(result.storages.empty());
    IValue back = unpickle(result.data);
    EXPECT_TRUE(back == value) << "type_tags " << tags;
    EXPECT_EQ(back.type()->str(), tags ? "Dict(str, Any)" : "Dict(str, Any)");
    EXPECT_EQ(entry(back, "strings").type()->str(), "str[]");
    // Written again, the same bytes.
    EXPECT_EQ(pickle(back, options).data, result.data);
  }
}

TEST(Pickle, TypeTagsKeepElementTypesThatContentsCannotTell) {
  auto dict = makeIntrusive<DictObj>(StringType::get(), OptionalType::create(IntType::get()));
  dict->insertOrAssign(IValue("a"), IValue(1));
  IValue value = IValue::tuple({IValue::list(TensorType::get(), {}), IValue::list(FloatType::get(), {}),
                                IValue::list(ListType::ofInts(), {IValue(std::vector<int64_t>{})}), IValue(dict),
                                IValue::list(BoolType::get(), {IValue(true)})});
  PickleOptions options;
  options.type_tags = true;
  IValue back = unpickle(pickle(value, options).data);
  EXPECT_EQ(back.type()->annotationStr(),
            "Tuple[List[Tensor], List[float], List[List[int]], Dict[str, Optional[int]], List[bool]]");
  // Without tags, the contents decide.
  back = unpickle(pickle(value).data);
  EXPECT_EQ(back.type()->annotationStr(), "Tuple[List[Any], List[Any], List[List[Any]], Dict[str, int], List[bool]]");
}

TEST(Pickle, RoundTripsTensorsAndTheirStorages) {
  Tensor base = arange(Scalar(int64_t{0}), Scalar(int64_t{12}), Scalar(int64_t{1}), ScalarType::Float);
  int64_t sizes[] = {3, 2}, strides[] = {1, 3};
  Tensor view = makeView(base, IntArrayRef(sizes, 2), IntArrayRef(strides, 2), 4);
  Tensor ints = arange(Scalar(int64_t{0}), Scalar(int64_t{3}), Scalar(int64_t{1}), ScalarType::Long);
  ints.impl()->setRequiresGrad(true);
  auto sd = makeIntrusive<DictObj>(StringType::get(), TensorType::get());
  sd->insertOrAssign(IValue("base"), IValue(base));
  sd->insertOrAssign(IValue("view"), IValue(view));
  sd->insertOrAssign(IValue("ints"), IValue(ints));
  sd->insertOrAssign(IValue("again"), IValue(base));
  PickleOptions options;
  options.root_ordered_dict = true;
  PickleResult result = pickle(IValue(sd), options);
  EXPECT_EQ(result.data.substr(0, 31), "\x80\x02\x63\x63ollections\nOrderedDict\nq\x00)R"s);
  ASSERT_EQ(result.storages.size(), 2u);
  EXPECT_EQ(result.storages[0].key, "0");
  EXPECT_EQ(result.storages[0].numel, 12);
  EXPECT_EQ(result.storages[1].key, "1");
  EXPECT_EQ(result.storages[1].dtype, ScalarType::Long);

  UnpickleOptions load;
  load.load_storage = [&](const std::string& key, ScalarType dtype, int64_t numel, const std::string&) {
    const PickledStorage& s = result.storages.at(std::stoul(key));
    EXPECT_EQ(s.dtype, dtype);
    EXPECT_EQ(s.numel, numel);
    return s.storage;
  };
  IValue back = unpickle(result.data, load);
  Tensor b = entry(back, "base").toTensor(), v = entry(back, "view").toTensor(), i = entry(back, "ints").toTensor();
  EXPECT_EQ(b.storage().get(), base.storage().get());
  EXPECT_EQ(v.storage().get(), b.storage().get());
  EXPECT_EQ(v.storageOffset(), 4);
  EXPECT_EQ(std::vector<int64_t>(v.strides().begin(), v.strides().end()), (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(i.requiresGrad());
  // The same tensor twice is one tensor again.
  EXPECT_TRUE(entry(back, "again").toTensor().isSame(b));
}

TEST(Pickle, RoundTripsObjects) {
  auto type = ClassType::create("__torch__.pkg.Point");
  auto point = makeIntrusive<ObjectObj>(type);
  point->setAttr("x", IValue(1));
  point->setAttr("tags", IValue(std::vector<std::string>{"a"}));
  IValue value = IValue::tuple({IValue(point), IValue(point)});
  PickleResult result = pickle(value);
  UnpickleOptions options;
  options.load_object = makeObject;
  IValue back = unpickle(result.data, options);
  const auto& elems = back.toTupleRef().elements;
  EXPECT_EQ(elems[0].toObjectRef().type->name(), "__torch__.pkg.Point");
  EXPECT_EQ(elems[0].toObjectRef().getAttr("x").toInt(), 1);
  EXPECT_TRUE(elems[0].is(elems[1]));
}

TEST(Pickle, PicklerRaisesForWhatPythonCannotRead) {
  EXPECT_THROW(pickle(IValue("\xff"s)), Error);
  EXPECT_THROW(pickle(IValue("\xc0\x80"s)), Error);  // overlong
  EXPECT_NO_THROW(pickle(IValue("\xe2\x82\xac \xf0\x9f\x98\x80"s)));
  EXPECT_THROW(pickle(IValue(Tensor())), Error);
  // One storage seen as two dtypes.
  Tensor f = zeros({2}, ScalarType::Float);
  Tensor i(
      makeIntrusive<TensorImpl>(f.storage(), ScalarType::Int, IntArrayRef(f.sizes()), IntArrayRef(f.strides()), 0));
  EXPECT_THROW(pickle(IValue::tuple({IValue(f), IValue(i)})), Error);
  // Too deep, and a list containing itself through a tuple.
  IValue deep = IValue::list(AnyType::get(), {});
  for (int k = 0; k < 1200; ++k) deep = IValue::list(AnyType::get(), {deep});
  EXPECT_THROW(pickle(deep), Error);
  IValue list = IValue::list(AnyType::get(), {});
  IValue tuple = IValue::tuple({list});
  list.toListRef().elements.push_back(tuple);
  PickleResult result = pickle(tuple);                   // Python's pickler writes such a value too
  EXPECT_NE(result.data.find("0h"), std::string::npos);  // POP, then BINGET of the tuple
  EXPECT_NE(errorOf(result.data).find("contains itself"), std::string::npos);
  list.toListRef().elements.clear();
}

}  // namespace
}  // namespace kiln
