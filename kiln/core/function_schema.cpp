#include "kiln/core/function_schema.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <sstream>

#include "kiln/util/source_highlight.h"

namespace kiln {

std::string AliasInfo::str() const {
  std::string s = "(";
  for (size_t i = 0; i < before_sets.size(); ++i) s += (i ? "|" : "") + before_sets[i];
  if (is_write) s += "!";
  if (after_sets != before_sets) {
    s += " -> ";
    for (size_t i = 0; i < after_sets.size(); ++i) s += (i ? "|" : "") + after_sets[i];
  }
  return s + ")";
}

std::string Argument::str() const {
  // Schemas built in code rather than parsed have no spelling of their own.
  std::string s = type_text.empty() && type ? type->str() : type_text;
  if (!name.empty()) s += " " + name;
  if (default_value) s += "=" + default_text;
  return s;
}

FunctionSchema::FunctionSchema(std::string name, std::string overload_name, std::vector<Argument> arguments,
                               std::vector<Argument> returns, bool is_vararg, bool is_varret)
    : name_(std::move(name)), overload_name_(std::move(overload_name)), arguments_(std::move(arguments)),
      returns_(std::move(returns)), is_vararg_(is_vararg), is_varret_(is_varret) {}

std::optional<size_t> FunctionSchema::argumentIndex(std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name == name) return i;
  }
  return std::nullopt;
}

bool FunctionSchema::isMutable() const {
  for (const Argument& a : arguments_) {
    if (a.isOutOrInPlace()) return true;
  }
  return false;
}

std::string FunctionSchema::str() const {
  std::ostringstream out;
  out << *this;
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema) {
  out << schema.name();
  if (!schema.overloadName().empty()) out << "." << schema.overloadName();
  out << "(";
  bool seen_kwarg_only = false;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const Argument& a = schema.arguments()[i];
    if (i) out << ", ";
    if (a.kwarg_only && !seen_kwarg_only) {
      out << "*, ";
      seen_kwarg_only = true;
    }
    out << a.str();
  }
  if (schema.isVararg()) out << (schema.arguments().empty() ? "..." : ", ...");
  out << ") -> ";
  // Parentheses unless there is one return (or only `...`); a single return
  // whose text starts with `(` (a tuple type) keeps them, so it parses back.
  const auto& rets = schema.returns();
  bool parens = !((rets.size() == 1 && !schema.isVarret()) || (rets.empty() && schema.isVarret()));
  if (rets.size() == 1 && !parens && rets[0].str().front() == '(') parens = true;
  if (parens) out << "(";
  for (size_t i = 0; i < rets.size(); ++i) out << (i ? ", " : "") << rets[i].str();
  if (schema.isVarret()) out << (rets.empty() ? "..." : ", ...");
  if (parens) out << ")";
  return out;
}

namespace {

// The character a backslash escape in a string default stands for: C's
// control escapes (`str chars=" \n\t\f\v"`), else the character itself.
char unescape(char c) {
  switch (c) {
    case 'a': return '\a';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    default: return c;
  }
}

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  std::variant<std::string, FunctionSchema> parseDeclaration(bool allow_name_only) {
    std::string name = parseQualifiedName();
    std::string overload;
    if (accept('.')) overload = parseIdent("an overload name");
    skipSpace();
    if (pos_ == text_.size() && allow_name_only) return overload.empty() ? name : name + "." + overload;
    expect('(');
    std::vector<Argument> args;
    bool kwarg_only = false, is_vararg = false;
    if (!accept(')')) {
      do {
        skipSpace();
        if (acceptWord("...")) {
          is_vararg = true;
          continue;
        }
        if (accept('*')) {
          kwarg_only = true;
          continue;
        }
        KILN_CHECK(!is_vararg, error("'...' must be the last argument"));
        Argument a = parseArgument(/*is_return=*/false);
        a.kwarg_only = kwarg_only;
        args.push_back(std::move(a));
      } while (accept(','));
      expect(')');
    }
    skipSpace();
    KILN_CHECK(acceptWord("->"), error("expected '->' and the return types"));
    std::vector<Argument> rets;
    bool is_varret = false;
    skipSpace();
    // As in PyTorch, `(` starts the list of returns; a single return whose
    // type is a tuple is written inside it: `-> ((str, t)[])`.
    if (accept('(')) {
      if (!accept(')')) {
        do {
          skipSpace();
          if (acceptWord("...")) {
            is_varret = true;
            continue;
          }
          KILN_CHECK(!is_varret, error("'...' must be the last return"));
          rets.push_back(parseArgument(/*is_return=*/true));
        } while (accept(','));
        expect(')');
      }
    } else if (acceptWord("...")) {
      is_varret = true;
    } else {
      rets.push_back(parseArgument(/*is_return=*/true));
    }
    skipSpace();
    KILN_CHECK(pos_ == text_.size(), error("unexpected text after the return types"));
    return FunctionSchema(std::move(name), std::move(overload), std::move(args), std::move(rets), is_vararg, is_varret);
  }

 private:
  Argument parseArgument(bool is_return) {
    Argument a;
    size_t type_start = pos_;
    parseType(a);
    a.type_text = std::string(text_.substr(type_start, pos_ - type_start));
    skipSpace();
    if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_') {
      a.name = parseIdent("an argument name");
    } else {
      KILN_CHECK(is_return, error("expected an argument name"));
    }
    skipSpace();
    if (!is_return && accept('=')) {
      skipSpace();
      size_t start = pos_;
      a.default_value = parseDefault(a);
      a.default_text = std::string(text_.substr(start, pos_ - start));
    }
    return a;
  }

  void parseType(Argument& a) {
    skipSpace();
    TypePtr type;
    if (peek() == '(') {
      expect('(');
      std::vector<TypePtr> elems;
      if (!accept(')')) {
        do {
          Argument inner;
          parseType(inner);
          elems.push_back(inner.type);
        } while (accept(','));
        expect(')');
      }
      type = TupleType::create(std::move(elems));
    } else {
      size_t start = pos_;
      std::string name = parseIdent("a type");
      if (name == "Dict") {
        expect('(');
        Argument k, v;
        parseType(k);
        expect(',');
        parseType(v);
        expect(')');
        type = DictType::create(k.type, v.type);
      } else if (name == "Future" || name == "RRef") {
        expect('(');
        Argument e;
        parseType(e);
        expect(')');
        type = name == "Future" ? FutureType::create(e.type) : RRefType::create(e.type);
      } else if (name == "__torch__") {
        // A registered class: __torch__.torch.classes.<namespace>.<name>
        while (peek() == '.') {
          ++pos_;
          name += '.';
          name += parseIdent("a class name");
        }
        type = ClassType::create(name);
      } else {
        type = simpleType(name, start);
      }
      if (peek() == '(') a.alias_info = parseAlias();
    }
    while (true) {
      if (peek() == '[') {
        expect('[');
        skipSpace();
        if (std::isdigit(static_cast<unsigned char>(peek()))) {
          size_t start = pos_;
          while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
          // A default like `int[N] stride=1` expands to N elements, so N is
          // bounded: fixed sizes in real schemas are 1 to 3.
          constexpr size_t kMaxFixedSize = 64;
          const std::string digits(text_.substr(start, pos_ - start));
          if (digits.size() > 2 || std::stoul(digits) > kMaxFixedSize) {
            pos_ = start;
            KILN_ERROR(error("fixed list size " + digits + " is larger than " + std::to_string(kMaxFixedSize)));
          }
          a.fixed_size = static_cast<int64_t>(std::stoul(digits));
        }
        expect(']');
        type = ListType::create(type);
        if (peek() == '(') {
          // `Tensor(a)[](b)`: the annotation after [] is the list's; the first one its elements'.
          AliasInfo list_alias = parseAlias();
          if (a.alias_info) list_alias.contained.push_back(*a.alias_info);
          a.alias_info = list_alias;
        }
      } else if (peek() == '?') {
        ++pos_;
        type = OptionalType::create(type);
      } else {
        break;
      }
    }
    a.type = type;
  }

  TypePtr simpleType(const std::string& name, size_t start) {
    if (name == "Tensor") return TensorType::get();
    if (name == "int" || name == "SymInt" || name == "ScalarType" || name == "Layout" || name == "MemoryFormat" ||
        name == "QScheme" || name == "Storage" || name == "ConstQuantizerPtr")
      return IntType::get();
    if (name == "float") return FloatType::get();
    if (name == "complex") return ComplexType::get();
    if (name == "bool") return BoolType::get();
    if (name == "str" || name == "Dimname") return StringType::get();
    if (name == "Scalar" || name == "number") return NumberType::get();
    if (name == "Device") return DeviceObjType::get();
    if (name == "Stream") return StreamObjType::get();
    if (name == "Generator") return GeneratorType::get();
    if (name == "Capsule") return CapsuleType::get();
    if (name == "Any" || name == "AnyEnumType" || name == "AnyClassType") return AnyType::get();
    if (name == "NoneType" || name == "None") return NoneType::get();
    // As in PyTorch, other lowercase names are type variables (`t`, `tVal`).
    if (std::islower(static_cast<unsigned char>(name[0]))) return VarType::create(name);
    pos_ = start;
    KILN_ERROR(error("unknown type '" + name + "'"));
  }

  AliasInfo parseAlias() {
    expect('(');
    AliasInfo info;
    auto parse_sets = [&](std::vector<std::string>& sets) {
      do {
        skipSpace();
        if (accept('*')) {
          sets.push_back("*");
        } else {
          sets.push_back(parseIdent("an alias set"));
        }
        skipSpace();
      } while (accept('|'));
    };
    parse_sets(info.before_sets);
    if (accept('!')) info.is_write = true;
    skipSpace();
    if (acceptWord("->")) {
      parse_sets(info.after_sets);
    } else {
      info.after_sets = info.before_sets;
    }
    expect(')');
    return info;
  }

  IValue parseDefault(const Argument& a) {
    IValue v = parseDefaultValue();
    // `int[2] stride=1` means [1, 1].
    if (a.type->kind() == TypeKind::List && (v.isInt() || v.isDouble() || v.isBool())) {
      std::vector<IValue> elems(a.fixed_size.value_or(1), v);
      auto elem = a.type->cast<ListType>()->elementType();
      return IValue(makeIntrusive<ListObj>(elem, std::move(elems)));
    }
    return v;
  }

  IValue parseDefaultValue() {
    skipSpace();
    char c = peek();
    if (c == '[') {
      ++pos_;
      std::vector<IValue> elems;
      TypePtr elem_type = IntType::get();
      skipSpace();
      if (!accept(']')) {
        do {
          elems.push_back(parseDefaultValue());
          if (elems.back().isDouble()) elem_type = FloatType::get();
          if (elems.back().isBool()) elem_type = BoolType::get();
        } while (accept(','));
        expect(']');
      }
      return IValue(makeIntrusive<ListObj>(elem_type, std::move(elems)));
    }
    if (c == '"' || c == '\'') {
      ++pos_;
      std::string s;
      while (pos_ < text_.size() && text_[pos_] != c) {
        char ch = text_[pos_++];
        if (ch == '\\' && pos_ < text_.size()) ch = unescape(text_[pos_++]);
        s += ch;
      }
      expect(c);
      return IValue(std::move(s));
    }
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      ++pos_;
      bool is_float = false;
      while (pos_ < text_.size()) {
        char d = text_[pos_];
        if (std::isdigit(static_cast<unsigned char>(d))) {
          ++pos_;
        } else if (d == '.' || d == 'e' || d == 'E') {
          is_float = true;
          ++pos_;
          if ((d == 'e' || d == 'E') && (peek() == '-' || peek() == '+')) ++pos_;
        } else {
          break;
        }
      }
      std::string num(text_.substr(start, pos_ - start));
      if (num == "-" || num == "+") {
        if (acceptWord("inf")) return IValue(num == "-" ? -INFINITY : INFINITY);
        KILN_ERROR(error("expected a number"));
      }
      if (is_float) return IValue(std::strtod(num.c_str(), nullptr));
      return IValue(static_cast<int64_t>(std::strtoll(num.c_str(), nullptr, 10)));
    }
    std::string word = parseIdent("a default value");
    if (word == "None") return IValue();
    if (word == "True") return IValue(true);
    if (word == "False") return IValue(false);
    if (word == "inf") return IValue(INFINITY);
    if (word == "nan") return IValue(NAN);
    if (word == "Mean") return IValue(int64_t{1});  // at::Reduction::Mean
    if (word == "contiguous_format" || word == "strided") return IValue(int64_t{0});
    if (word == "long") return IValue(int64_t{4});  // ScalarType::Long
    return IValue(word);
  }

  std::string parseQualifiedName() {
    skipSpace();
    size_t start = pos_;
    parseIdent("an operator name");
    KILN_CHECK(acceptWord("::"), error("expected '::' in the operator name (namespace::name)"));
    parseIdent("an operator name");
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string parseIdent(const char* what) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    KILN_CHECK(pos_ > start, error(std::string("expected ") + what));
    return std::string(text_.substr(start, pos_ - start));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skipSpace();
    if (peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool acceptWord(std::string_view w) {
    skipSpace();
    if (text_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  void expect(char c) { KILN_CHECK(accept(c), error(std::string("expected '") + c + "'")); }

  std::string error(const std::string& message) const {
    return sourceErrorMessage("schema parse error", text_, pos_, pos_ + 1, message);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

FunctionSchema parseSchema(std::string_view text) {
  return std::get<FunctionSchema>(SchemaParser(text).parseDeclaration(false));
}

std::variant<std::string, FunctionSchema> parseSchemaOrName(std::string_view text) {
  return SchemaParser(text).parseDeclaration(true);
}

}  // namespace kiln
