#include "kiln/serialization/import.h"

#include <charconv>
#include <unordered_set>

#include "kiln/core/function.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/script_type_parser.h"
#include "kiln/runtime/function.h"
#include "kiln/serialization/import_source.h"
#include "kiln/serialization/pickle_file.h"
#include "kiln/serialization/zip_file.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

// torch 1.13 reads format versions 1 to 10; 1 and 2 are the legacy format
// (model.json and protobuf), which kiln does not read.
constexpr int64_t kMinVersion = 3;
constexpr int64_t kMaxVersion = 10;

class ArchiveImporter {
 public:
  explicit ArchiveImporter(const ZipReader& archive) : archive_(archive), unit_(std::make_shared<CompilationUnit>()) {}

  Module run(ExtraFilesMap* extra_files) {
    archiveVersion(archive_);
    std::vector<IValue> constants;
    if (archive_.hasRecord("constants.pkl")) {
      IValue table = readPickleRecord(archive_, "constants");
      KILN_CHECK(table.isTuple(), "archive '", archive_.name(), "': record 'constants.pkl' holds a ", table.tagName(),
                 ", not a tuple of constants");
      constants = table.toTupleRef().elements;
    }
    importer_.emplace(unit_, std::move(constants), [this](const std::string& qualifier) -> std::optional<std::string> {
      std::string record = SourceImporter::filenameOf(qualifier);
      if (!archive_.hasRecord(record)) return std::nullopt;
      return archive_.readRecord(record);
    });

    UnpickleOptions options;
    options.load_object = [this](const std::string& name, IValue state) { return buildObject(name, std::move(state)); };
    options.resolve_type = [this](const std::string& text) { return resolveType(text); };
    IValue root;
    try {
      root = readPickleRecord(archive_, "data", options);
    } catch (const Error&) {
      if (code_error_) KILN_ERROR("archive '", archive_.name(), "': its code does not compile in kiln: ", *code_error_);
      throw;
    }
    for (const IntrusivePtr<ObjectObj>& object : objects_) checkSlots(*object);
    runSetstate();
    KILN_CHECK(root.isObject() && root.toObject()->type->isModule(), "archive '", archive_.name(),
               "': record 'data.pkl' holds ",
               root.isObject() ? "an object of class '" + root.toObject()->type->name() + "'"
                               : "a " + std::string(root.tagName()),
               ", not a module");
    if (extra_files != nullptr) {
      for (auto& [name, contents] : *extra_files) {
        contents = archive_.hasRecord("extra/" + name) ? archive_.readRecord("extra/" + name) : std::string();
      }
    }
    return Module(root.toObject());
  }

 private:
  ClassTypePtr classNamed(const std::string& name) {
    TypePtr type;
    try {
      type = importer_->loadType(name);
    } catch (const Error& e) {
      // The code is at fault, not the pickle that asked for the class: run()
      // reports this error as it is, without the unpickler's context.
      code_error_ = e.what();
      throw;
    }
    // (Errors raised here are wrapped with the archive's and the record's name.)
    KILN_CHECK(type, "the pickle names the class '", name, "', which the archive's code does not define");
    KILN_CHECK(type->isa<ClassType>(), "the pickle builds an object of '", name, "', which is a ",
               type->annotationStr(), ", not a class");
    // Types are shared as const; objects hold their class as the importer made it.
    return std::const_pointer_cast<ClassType>(std::static_pointer_cast<const ClassType>(type));
  }

  // NEWOBJ + BUILD of a `__torch__` class: its __setstate__ takes the state
  // when it has one; otherwise the state is the dict of its attributes.
  IValue buildObject(const std::string& name, IValue state) {
    ClassTypePtr cls = classNamed(name);
    auto object = makeIntrusive<ObjectObj>(cls);
    if (Function* setstate = cls->findMethod("__setstate__")) {
      // Run once the whole pickle is read (runSetstate): the state's element
      // types are settled then. Inner objects are built first, so running in
      // order gives each __setstate__ its attributes' objects ready.
      pending_setstate_.push_back({object, setstate, std::move(state)});
      return IValue(object);
    }
    KILN_CHECK(state.isDict(), "object of class '", name, "' has a state of type ", state.tagName(),
               "; expected a dict of its attributes");
    const DictObj& attributes = state.toDictRef();
    for (size_t slot = 0; slot < cls->numAttributes(); ++slot) {
      const std::string& attribute = cls->attributeName(slot);
      const IValue* value = attributes.find(IValue(attribute));
      KILN_CHECK(value != nullptr, "object of class '", name, "' has no value for its attribute '", attribute, "'");
      object->slots[slot] = *value;
    }
    objects_.push_back(object);
    return IValue(object);
  }

  void runSetstate() {
    for (Pending& p : pending_setstate_) {
      Stack stack{IValue(p.object), std::move(p.state)};
      p.setstate->run(stack);
    }
    pending_setstate_.clear();
  }

  // The pickle fills slots without knowing the class; check every value
  // against its attribute's type once element types are settled, so a
  // method never sees a value of another type than it was compiled for.
  void checkSlots(const ObjectObj& object) {
    const ClassType& cls = *object.type;
    for (size_t slot = 0; slot < cls.numAttributes(); ++slot) {
      const IValue& value = object.slots[slot];
      TypePtr actual = value.type();
      KILN_CHECK(actual->isSubtypeOf(*cls.attributeType(slot)), "archive '", archive_.name(), "': attribute '",
                 cls.attributeName(slot), "' of class '", cls.name(), "' is declared ",
                 cls.attributeType(slot)->annotationStr(), " but the pickle holds a ",
                 unshapedType(actual)->annotationStr());
    }
  }

  TypePtr resolveType(const std::string& text) {
    TreeRef tree = parseExpression(text);
    return typeFromExpr(Expr(tree), [this](const std::string& name, const SourceRange&) -> TypePtr {
      if (name.rfind("__torch__.", 0) != 0) return nullptr;
      return importer_->loadType(name);
    });
  }

  struct Pending {
    IntrusivePtr<ObjectObj> object;
    Function* setstate;
    IValue state;
  };

  const ZipReader& archive_;
  std::shared_ptr<CompilationUnit> unit_;
  std::optional<SourceImporter> importer_;
  std::vector<IntrusivePtr<ObjectObj>> objects_;
  std::vector<Pending> pending_setstate_;
  std::optional<std::string> code_error_;
};

}  // namespace

int64_t archiveVersion(const ZipReader& archive) {
  KILN_CHECK(!archive.hasRecord("model.json"), "archive '", archive.name(),
             "': the legacy format (model.json, torch < 1.3), which kiln does not read");
  std::string record = archive.hasRecord("version") ? "version" : ".data/version";
  KILN_CHECK(archive.hasRecord(record), "archive '", archive.name(),
             "': no record 'version' (not a TorchScript archive; torch.save files load with loadPickle)");
  std::string text = archive.readRecord(record);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  int64_t version = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  KILN_CHECK(ec == std::errc() && end == text.data() + text.size(), "archive '", archive.name(), "': record '", record,
             "' is not a number");
  KILN_CHECK(version >= kMinVersion && version <= kMaxVersion, "archive '", archive.name(), "': format version ",
             version, "; kiln reads versions ", kMinVersion, " to ", kMaxVersion, " (what torch 1.13 writes)");
  return version;
}

Module load(const ZipReader& archive, ExtraFilesMap* extra_files) {
  bool has_code = archive.hasRecord("constants.pkl");
  for (const std::string& record : archive.records()) has_code = has_code || record.rfind("code/", 0) == 0;
  KILN_CHECK(has_code || archive.hasRecord("model.json"), "archive '", archive.name(),
             "' has no code/: a torch.save file, not a TorchScript archive (load it with load_pickle)");
  return ArchiveImporter(archive).run(extra_files);
}

Module load(const std::string& path, ExtraFilesMap* extra_files) {
  ZipReader archive = ZipReader::openFile(path);
  return load(archive, extra_files);
}

Module load(std::istream& in, ExtraFilesMap* extra_files) {
  ZipReader archive = ZipReader::fromStream(in);
  return load(archive, extra_files);
}

Module loadFromBuffer(std::string bytes, ExtraFilesMap* extra_files, const std::string& name) {
  ZipReader archive = ZipReader::fromBuffer(std::move(bytes), name);
  return load(archive, extra_files);
}

}  // namespace kiln
