#include "kiln/ir/ir_parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "kiln/tensor/copy.h"
#include "kiln/util/source_highlight.h"

namespace kiln {

namespace {

enum class Tok { Ident, Number, String, ValueName, Punct, Arrow, ScopeText, End };

struct Token {
  Tok kind;
  size_t start;
  size_t end;
  std::string_view text;  // for ValueName: the name after '%'
  bool is(char c) const { return kind == Tok::Punct && text[0] == c; }
  bool isIdent(std::string_view s) const { return kind == Tok::Ident && text == s; }
};

[[noreturn]] void failAt(std::string_view source, size_t start, size_t end, const std::string& message) {
  throw Error(sourceErrorMessage("IR parse error", source, start, std::max(end, start + 1), message));
}

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return isIdentChar(c) || c == '.'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The whole text at once: the grammar needs at most two tokens of lookahead.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto emit = [&](Tok kind, size_t start, size_t end, std::string_view text) {
    out.push_back({kind, start, end, text});
  };
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (isIdentStart(c)) {
      size_t start = i;
      while (i < s.size() && isIdentChar(s[i])) ++i;
      emit(Tok::Ident, start, i, s.substr(start, i - start));
      // `, scope: a/b/c` runs to the end of the line (or a source comment).
      size_t n = out.size();
      if (n >= 3 && out[n - 1].text == "scope" && out[n - 2].is(',') && out[n - 3].is(')') && i < s.size() &&
          s[i] == ':') {
        emit(Tok::Punct, i, i + 1, s.substr(i, 1));
        size_t text_start = ++i;
        while (i < s.size() && s[i] != '\n' && !(s[i] == '#' && i > text_start && s[i - 1] == ' ')) ++i;
        size_t text_end = i;
        while (text_end > text_start && std::isspace(static_cast<unsigned char>(s[text_end - 1]))) --text_end;
        while (text_start < text_end && s[text_start] == ' ') ++text_start;
        emit(Tok::ScopeText, text_start, text_end, s.substr(text_start, text_end - text_start));
      }
    } else if (isDigit(c)) {
      size_t start = i;
      while (i < s.size() && isDigit(s[i])) ++i;
      if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && isDigit(s[i])) ++i;
      }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i + 1;
        if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
        if (e < s.size() && isDigit(s[e])) {
          i = e;
          while (i < s.size() && isDigit(s[i])) ++i;
        }
      }
      if (i < s.size() && isIdentChar(s[i])) failAt(s, start, i + 1, "invalid number");
      emit(Tok::Number, start, i, s.substr(start, i - start));
    } else if (c == '%') {
      size_t start = i++;
      while (i < s.size() && isNameChar(s[i])) ++i;
      if (i == start + 1) failAt(s, start, i, "expected a value name after '%'");
      emit(Tok::ValueName, start, i, s.substr(start + 1, i - start - 1));
    } else if (c == '"' || c == '\'') {
      size_t start = i++;
      while (i < s.size() && s[i] != c && s[i] != '\n') i += s[i] == '\\' && i + 1 < s.size() ? 2 : 1;
      if (i >= s.size() || s[i] != c) failAt(s, start, i, "unterminated string literal");
      ++i;
      emit(Tok::String, start, i, s.substr(start, i - start));
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      emit(Tok::Arrow, i, i + 2, s.substr(i, 2));
      i += 2;
    } else if (std::string_view("()[]{},:=?*<>-.").find(c) != std::string_view::npos) {
      emit(Tok::Punct, i, i + 1, s.substr(i, 1));
      ++i;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
      failAt(s, i, i + 1,
             "unexpected character '" + (std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : hex) + "'");
    }
  }
  out.push_back({Tok::End, s.size(), s.size(), ""});
  return out;
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::End: return "the end of the text";
    case Tok::ValueName: return "'%" + std::string(t.text) + "'";
    default: return "'" + std::string(t.text) + "'";
  }
}

// A constant of an attribute list before it is known what list it makes.
struct Literal {
  enum class Kind { Int, Double, String, Type, Value } kind;
  int64_t i = 0;
  double d = 0;
  std::string s;
  TypePtr type;
  IValue value;
};

struct Output {
  std::string name;
  TypePtr type;
  Token token;
};

}  // namespace

class IRParser {
 public:
  IRParser(std::string_view text, std::unordered_map<std::string, Value*>* values)
      : text_(text), tokens_(tokenize(text)), source_(std::make_shared<Source>(std::string(text))),
        out_values_(values) {}

  void parse(Graph& g) {
    KILN_CHECK(g.inputs().empty() && g.outputs().empty() && g.nodes().empty(), "parseIR needs an empty graph");
    Env env{&g, {}, {}};
    parseGraph(env);
    if (cur().kind != Tok::End) {
      if (cur().isIdent("with")) fail(peekAt(1), "no node prints as " + qualName(1) + " for this subgraph section");
      fail(cur(), "unexpected " + describe(cur()) + " after the graph's return");
    }
    if (out_values_) *out_values_ = std::move(env.values);
  }

 private:
  // One graph's names; subgraph sections have their own.
  struct Env {
    Graph* graph;
    std::unordered_map<std::string, Value*> values;
    std::vector<std::pair<Node*, std::string>> group_candidates;  // nodes printed as `kind_<n>`
  };

  // Nesting (types, constants, blocks) is bounded so hostile text cannot
  // overflow the stack.
  class DepthGuard {
   public:
    DepthGuard(IRParser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.fail(p_.cur(), "nesting is too deep");
    }
    ~DepthGuard() { --p_.depth_; }

   private:
    static constexpr int kMaxDepth = 256;
    IRParser& p_;
  };

  // --- tokens ---

  const Token& cur() const { return tokens_[pos_]; }
  const Token& peekAt(size_t k) const { return tokens_[std::min(pos_ + k, tokens_.size() - 1)]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool accept(char c) {
    if (!cur().is(c)) return false;
    ++pos_;
    return true;
  }
  const Token& expect(char c) {
    if (!cur().is(c)) fail(cur(), std::string("expected '") + c + "' but found " + describe(cur()));
    return next();
  }
  const Token& expectIdent(const char* what) {
    if (cur().kind != Tok::Ident) fail(cur(), std::string("expected ") + what + " but found " + describe(cur()));
    return next();
  }
  [[noreturn]] void fail(const Token& t, const std::string& message) const { failAt(text_, t.start, t.end, message); }
  [[noreturn]] void fail(size_t start, size_t end, const std::string& message) const {
    failAt(text_, start, end, message);
  }
  // The `ns::name` text starting k tokens ahead (for messages).
  std::string qualName(size_t k) const {
    std::string s;
    for (size_t j = k; j < k + 4; ++j) s += std::string(peekAt(j).text);
    return s;
  }

  // --- graphs, blocks, nodes ---

  void parseGraph(Env& env) {
    expectIdent("'graph'");
    parseParams(env, env.graph->block());
    expect(':');
    parseStatements(env, env.graph->block());
    if (!cur().isIdent("return")) fail(cur(), "expected a statement or 'return' but found " + describe(cur()));
    next();
    for (Value* v : parseValueRefs(env)) env.graph->registerOutput(v);
    parseSubgraphSections(env);
  }

  // `with prim::FusionGroup_0 = graph(...)`: the subgraph of the n-th node
  // printed with a `_<n>` suffix. A graph's sections follow its return, each
  // subgraph's own sections right after it.
  void parseSubgraphSections(Env& env) {
    size_t matched = 0;
    size_t search_from = 0;
    while (cur().isIdent("with") && peekAt(1).kind == Tok::Ident && peekAt(2).is(':') && peekAt(3).is(':') &&
           peekAt(4).kind == Tok::Ident) {
      std::string name = std::string(peekAt(1).text) + "::" + std::string(peekAt(4).text);
      std::string expected_suffix = "_" + std::to_string(matched);
      if (name.size() <= expected_suffix.size() ||
          name.compare(name.size() - expected_suffix.size(), expected_suffix.size(), expected_suffix) != 0) {
        return;  // a section of an enclosing graph
      }
      size_t found = search_from;
      while (found < env.group_candidates.size() && env.group_candidates[found].second != name) ++found;
      if (found == env.group_candidates.size()) return;
      pos_ += 5;
      expect('=');
      auto subgraph = std::make_shared<Graph>();
      Env sub{subgraph.get(), {}, {}};
      DepthGuard guard(*this);
      parseGraph(sub);
      Node* n = env.group_candidates[found].first;
      n->kind_ = Symbol::fromQualString(name.substr(0, name.size() - expected_suffix.size()));
      n->g_(attr::Subgraph, std::move(subgraph));
      search_from = found + 1;
      ++matched;
    }
  }

  void parseParams(Env& env, Block* b) {
    expect('(');
    if (!accept(')')) {
      do {
        const Token& name = cur();
        if (name.kind != Tok::ValueName) fail(name, "expected an input like '%x : Tensor' but found " + describe(name));
        next();
        TypePtr type = accept(':') ? parseType() : TensorType::get();
        std::string n(name.text);
        Value* v = b->addInput(Value::isValidName(n) ? n : "");
        v->setType(type);
        env.values[n] = v;
      } while (accept(','));
      expect(')');
    }
  }

  std::vector<Value*> parseValueRefs(Env& env) {
    std::vector<Value*> out;
    expect('(');
    if (!accept(')')) {
      do {
        out.push_back(lookup(env, cur()));
        next();
      } while (accept(','));
      expect(')');
    }
    return out;
  }

  Value* lookup(Env& env, const Token& t) {
    if (t.kind != Tok::ValueName) fail(t, "expected a value like '%x' but found " + describe(t));
    auto it = env.values.find(std::string(t.text));
    if (it == env.values.end()) fail(t, "no value named %" + std::string(t.text) + " is defined before this use");
    return it->second;
  }

  bool atBlockHeader() const { return cur().kind == Tok::Ident && peekAt(1).is('(') && !cur().isIdent("return"); }

  void parseStatements(Env& env, Block* b) {
    while (cur().kind != Tok::Arrow && !cur().isIdent("return") && cur().kind != Tok::End) {
      if (atBlockHeader()) fail(cur(), "a block header where a statement was expected");
      parseStatement(env, b);
    }
  }

  void parseStatement(Env& env, Block* b) {
    std::vector<Output> outs;
    if (cur().kind == Tok::ValueName) {
      do {
        const Token& name = cur();
        if (name.kind != Tok::ValueName) fail(name, "expected an output like '%x' but found " + describe(name));
        next();
        outs.push_back({std::string(name.text), accept(':') ? parseType() : nullptr, name});
      } while (accept(','));
      expect('=');
    } else {
      accept('=');  // zero outputs: ` = prim::Print(%x)`
    }
    const Token& ns = expectIdent("an operator name like 'aten::add'");
    if (!cur().is(':') || !peekAt(1).is(':')) fail(cur(), "expected '::' in the operator name");
    pos_ += 2;
    const Token& name = expectIdent("an operator name after '::'");
    std::string kind_text = std::string(ns.text) + "::" + std::string(name.text);
    Graph* g = env.graph;
    Node* n = g->create(Symbol::fromQualString(kind_text), outs.size());
    n->setSourceRange(SourceRange(source_, ns.start, name.end));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].type) n->output(i)->setType(outs[i].type);
    }
    if (cur().is('[')) parseAttributes(n);
    for (Value* v : parseValueRefs(env)) n->addInput(v);
    if (cur().is(',') && peekAt(1).isIdent("scope")) {
      pos_ += 3;  // `,` `scope` `:`
      n->setScope(scopeFromText(g, cur().text));
      next();
    }
    // Unannotated outputs take the schema's result types; annotated ones must fit them.
    const FunctionSchema* schema = n->maybeSchema();
    for (size_t i = 0; i < outs.size(); ++i) {
      if (schema && !schema->isVarret() && i < schema->returns().size()) {
        const TypePtr& declared = schema->returns()[i].type;
        if (!outs[i].type) {
          n->output(i)->setType(declared);
        } else if (!declared->hasFreeVariables() && !outs[i].type->isSubtypeOf(*declared)) {
          fail(outs[i].token, "annotated type " + irStr(*outs[i].type) + " does not match the schema's type " +
                                  irStr(*declared) + " for operator " + schema->str());
        }
      }
      env.values[outs[i].name] = n->output(i);
    }
    b->appendNode(n);
    if (isGroupCandidate(kind_text)) env.group_candidates.emplace_back(n, kind_text);
    while (atBlockHeader()) parseBlock(env, n);
  }

  static bool isGroupCandidate(const std::string& kind) {
    size_t underscore = kind.rfind('_');
    return underscore != std::string::npos && underscore + 1 < kind.size() &&
           kind.find_first_not_of("0123456789", underscore + 1) == std::string::npos;
  }

  ScopePtr scopeFromText(Graph* g, std::string_view text) {
    ScopePtr scope = g->currentScope();
    while (!scope->isRoot()) scope = scope->parent();
    size_t start = 0;
    while (start <= text.size()) {
      size_t slash = text.find('/', start);
      if (slash == std::string_view::npos) slash = text.size();
      scope = scope->push(std::string(text.substr(start, slash - start)));
      start = slash + 1;
    }
    return scope;
  }

  void parseBlock(Env& env, Node* n) {
    DepthGuard guard(*this);
    next();  // the block's name (block0, ...) is not kept
    Block* b = n->addBlock();
    parseParams(env, b);
    expect(':');
    parseStatements(env, b);
    if (cur().kind != Tok::Arrow)
      fail(cur(), "expected a statement or '->' ending the block but found " + describe(cur()));
    next();
    for (Value* v : parseValueRefs(env)) b->registerOutput(v);
  }

  // --- types ---

  TypePtr parseType() {
    DepthGuard guard(*this);
    TypePtr type = parseBaseType();
    while (true) {
      if (cur().is('[') && peekAt(1).is(']')) {
        pos_ += 2;
        type = ListType::create(type);
      } else if (cur().is('[') && peekAt(1).isIdent("Undefined") && peekAt(2).is(']') &&
                 type->kind() == TypeKind::Tensor) {
        pos_ += 3;
        const auto& t = static_cast<const TensorType&>(*type);
        type = TensorType::create(t.scalarType(), t.device(), t.sizes(), t.strides(), t.requiresGrad(), true);
      } else if (accept('?')) {
        type = OptionalType::create(type);
      } else {
        return type;
      }
    }
  }

  std::vector<TypePtr> parseTypeList(char close) {
    std::vector<TypePtr> out;
    if (accept(close)) return out;
    do {
      out.push_back(parseType());
    } while (accept(','));
    expect(close);
    return out;
  }

  static std::optional<ScalarType> dtypeNamed(std::string_view name) {
    static constexpr ScalarType all[] = {ScalarType::Byte, ScalarType::Char,    ScalarType::Short, ScalarType::Int,
                                         ScalarType::Long, ScalarType::Half,    ScalarType::Float, ScalarType::Double,
                                         ScalarType::Bool, ScalarType::BFloat16};
    for (ScalarType t : all) {
      if (scalarTypeShortName(t) == name) return t;
    }
    return std::nullopt;
  }

  TypePtr parseBaseType() {
    const Token& t = cur();
    if (t.is('(')) {
      next();
      return TupleType::create(parseTypeList(')'));
    }
    if (t.kind != Tok::Ident) fail(t, "expected a type but found " + describe(t));
    std::string_view name = t.text;
    next();
    if (name == "Tensor") return parseTensorRefinement(std::nullopt, /*rank_from_parens=*/false);
    if (auto dtype = dtypeNamed(name)) return parseTensorRefinement(dtype, /*rank_from_parens=*/true);
    if (name.size() > 6 && name.substr(name.size() - 6) == "Tensor") {
      if (auto dtype = dtypeNamed(name.substr(0, name.size() - 6))) return parseTensorRefinement(dtype, false);
    }
    if (name == "Dict") {
      expect('(');
      TypePtr key = parseType();
      expect(',');
      TypePtr value = parseType();
      expect(')');
      return DictType::create(key, value);
    }
    if (name == "Future" || name == "RRef") {
      char close = cur().is('[') ? ']' : ')';
      if (!accept('[')) expect('(');
      TypePtr elem = parseType();
      expect(close);
      return name == "Future" ? FutureType::create(elem) : RRefType::create(elem);
    }
    if (name == "Union") {
      expect('(');
      auto members = parseTypeList(')');
      if (members.empty()) fail(t, "a Union needs member types");
      return UnionType::create(std::move(members));
    }
    if (name == "NamedTuple") return parseNamedTuple();
    if (name == "__torch__") return parseClassType(t);
    if (name == "int" || name == "ScalarType" || name == "Layout" || name == "MemoryFormat" || name == "SymInt") {
      return IntType::get();
    }
    if (name == "float") return FloatType::get();
    if (name == "bool") return BoolType::get();
    if (name == "str") return StringType::get();
    if (name == "complex") return ComplexType::get();
    if (name == "None" || name == "NoneType") return NoneType::get();
    if (name == "Any") return AnyType::get();
    if (name == "Scalar" || name == "number") return NumberType::get();
    if (name == "Device") return DeviceObjType::get();
    if (name == "Generator") return GeneratorType::get();
    if (name == "Stream") return StreamObjType::get();
    if (name == "Capsule") return CapsuleType::get();
    if (name == "Function") return FunctionType::get();
    // Lowercase names are type variables, as in schemas.
    if (std::islower(static_cast<unsigned char>(name[0]))) return VarType::create(std::string(name));
    fail(t, "unknown type '" + std::string(name) + "'");
  }

  // After `Tensor`, `Float` or `FloatTensor`: `(2, *, strides=[..], requires_grad=0, device=cpu)`.
  // Listed dims give the rank; `Float` alone (no parens) is not a type.
  TypePtr parseTensorRefinement(std::optional<ScalarType> dtype, bool rank_from_parens) {
    if (!cur().is('(')) {
      if (rank_from_parens) fail(cur(), "expected '(' after a dtype in a tensor type");
      return dtype ? TensorType::create(dtype, std::nullopt, {}, {}, std::nullopt) : TensorType::get();
    }
    const Token& open = next();
    std::vector<std::optional<int64_t>> sizes;
    std::optional<std::vector<std::optional<int64_t>>> strides;
    std::optional<Device> device;
    std::optional<bool> requires_grad;
    bool options_started = false;
    if (!cur().is(')')) {
      do {
        const Token& item = cur();
        if (item.kind == Tok::Ident) {
          options_started = true;
          next();
          expect('=');
          if (item.text == "device") {
            if (device) fail(item, "'device' is given twice");
            device = parseDevice();
          } else if (item.text == "requires_grad") {
            if (requires_grad) fail(item, "'requires_grad' is given twice");
            requires_grad = parseInt() != 0;
          } else if (item.text == "strides") {
            if (strides) fail(item, "'strides' is given twice");
            strides.emplace();
            expect('[');
            if (!cur().is(']')) {
              do {
                strides->push_back(parseInt());
              } while (accept(','));
            }
            expect(']');
          } else {
            fail(item, "unexpected tensor type option '" + std::string(item.text) + "'");
          }
        } else {
          if (options_started) fail(item, "sizes must come before the options of a tensor type");
          if (accept('*')) {
            sizes.emplace_back();
          } else {
            sizes.emplace_back(parseInt());
          }
        }
      } while (accept(','));
    }
    expect(')');
    if (strides && strides->size() != sizes.size()) {
      fail(open, "a tensor type with " + std::to_string(sizes.size()) + " sizes has " +
                     std::to_string(strides->size()) + " strides");
    }
    // `Tensor(device=cpu)` is how a tensor of unknown rank prints; `Float()` is rank 0.
    if (!rank_from_parens && sizes.empty()) {
      return TensorType::create(dtype, device, {}, {}, requires_grad);
    }
    VaryingShape stride_shape = strides ? VaryingShape(*strides) : VaryingShape(sizes.size());
    return TensorType::create(dtype, device, VaryingShape(std::move(sizes)), std::move(stride_shape), requires_grad);
  }

  Device parseDevice() {
    const Token& t = expectIdent("a device like 'cpu' or 'cuda:0'");
    std::string text(t.text);
    size_t end = t.end;
    if (cur().is(':') && peekAt(1).kind == Tok::Number) {
      text += ":" + std::string(peekAt(1).text);
      end = peekAt(1).end;
      pos_ += 2;
    }
    try {
      return Device::parse(text);
    } catch (const Error& e) {
      fail(t.start, end, e.what());
    }
  }

  int64_t parseInt() {
    bool negative = accept('-');
    const Token& t = cur();
    if (t.kind != Tok::Number || t.text.find_first_not_of("0123456789") != std::string_view::npos) {
      fail(t, "expected an integer but found " + describe(t));
    }
    next();
    return toInt(t, negative);
  }

  int64_t toInt(const Token& t, bool negative) const {
    // Parse the magnitude unsigned so INT64_MIN fits.
    uint64_t magnitude = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), magnitude);
    uint64_t limit = negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (ec != std::errc() || end != t.text.data() + t.text.size() || magnitude > limit) {
      fail(t, "integer " + std::string(negative ? "-" : "") + std::string(t.text) + " is out of range");
    }
    return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  }

  TypePtr parseNamedTuple() {
    expect('(');
    std::vector<std::string> names;
    std::vector<TypePtr> types;
    if (!accept(')')) {
      do {
        names.emplace_back(expectIdent("a field name").text);
        expect(':');
        types.push_back(parseType());
      } while (accept(','));
      expect(')');
    }
    return TupleType::createNamed(std::nullopt, std::move(names), std::move(types));
  }

  TypePtr parseClassType(const Token& first) {
    std::string name = "__torch__";
    while (cur().is('.') && peekAt(1).kind == Tok::Ident) {
      name += '.';
      name += peekAt(1).text;
      pos_ += 2;
    }
    if (name == "__torch__") fail(first, "expected a class name like __torch__.MyModule");
    auto& cls = classes_[name];
    if (!cls) cls = ClassType::create(name);
    return cls;
  }

  // --- attributes ---

  void parseAttributes(Node* n) {
    expect('[');
    if (!accept(']')) {
      do {
        const Token& name = expectIdent("an attribute name");
        expect('=');
        parseAttributeValue(n, Symbol::attr(name.text), name);
      } while (accept(','));
      expect(']');
    }
  }

  void parseAttributeValue(Node* n, Symbol name, const Token& name_token) {
    const Token& t = cur();
    if (t.is('[')) return parseAttributeList(n, name);
    if (t.kind == Tok::String) {
      n->s_(name, parseString(next()));
      return;
    }
    if (t.kind == Tok::Number || t.is('-') || t.isIdent("inf") || t.isIdent("nan")) {
      Literal lit = parseNumber();
      if (lit.kind == Literal::Kind::Int) {
        n->i_(name, lit.i);
      } else {
        n->f_(name, lit.d);
      }
      return;
    }
    if (t.is('<')) {
      next();
      const Token& what = expectIdent("'Tensor'");
      if (what.text != "Tensor")
        fail(what, "only <Tensor> placeholders can be parsed; found <" + std::string(what.text) + ">");
      expect('>');
      n->t_(name, tensorForOutput(n, name_token));
      return;
    }
    if (t.is('{')) {
      IValue v = parseBraceLiteral(n);
      if (v.isTensor()) {
        n->t_(name, v.toTensor());
      } else {
        n->ival_(name, std::move(v));
      }
      return;
    }
    if (startsValueLiteral(t)) {
      n->ival_(name, parseLiteral(n));
      return;
    }
    // Anything else is a type.
    n->ty_(name, parseType());
  }

  // `[1, 2]`, `[1.5, 2.]`, `["a"]`: ival lists; `[int, float]`: types; `[]`:
  // None, as PyTorch 1.13 reads it. Other elements make a generic list.
  void parseAttributeList(Node* n, Symbol name) {
    const Token& open = next();
    std::vector<Literal> elems;
    if (!cur().is(']')) {
      do {
        elems.push_back(parseListElement(n));
      } while (accept(','));
    }
    expect(']');
    if (elems.empty()) {
      n->ival_(name, IValue());
      return;
    }
    auto all = [&](std::initializer_list<Literal::Kind> kinds) {
      return std::all_of(elems.begin(), elems.end(), [&](const Literal& l) {
        return std::find(kinds.begin(), kinds.end(), l.kind) != kinds.end();
      });
    };
    using K = Literal::Kind;
    if (all({K::Type})) {
      std::vector<TypePtr> types;
      for (auto& l : elems) types.push_back(l.type);
      n->tys_(name, std::move(types));
    } else if (all({K::Int})) {
      std::vector<int64_t> v;
      for (auto& l : elems) v.push_back(l.i);
      n->ival_(name, IValue(v));
    } else if (all({K::Int, K::Double})) {
      std::vector<double> v;
      for (auto& l : elems) v.push_back(l.kind == K::Int ? static_cast<double>(l.i) : l.d);
      n->ival_(name, IValue(v));
    } else if (all({K::String})) {
      std::vector<std::string> v;
      for (auto& l : elems) v.push_back(l.s);
      n->ival_(name, IValue(v));
    } else if (std::any_of(elems.begin(), elems.end(), [](const Literal& l) { return l.kind == K::Type; })) {
      fail(open, "a list attribute mixes types and values");
    } else {
      std::vector<IValue> values;
      for (auto& l : elems) values.push_back(literalValue(l));
      n->ival_(name, makeList(open, std::move(values)));
    }
  }

  // Identifiers that begin a constant rather than a type. `None` is the value
  // None (the printer writes an attribute holding None that way).
  bool startsValueLiteral(const Token& t) const {
    return t.is('(') || t.isIdent("None") || t.isIdent("True") || t.isIdent("False") || t.isIdent("annotate") ||
           (t.isIdent("torch") && peekAt(1).is('.'));
  }

  Literal parseListElement(Node* n) {
    const Token& t = cur();
    Literal l;
    if (t.kind == Tok::String) {
      l.kind = Literal::Kind::String;
      l.s = parseString(next());
    } else if (t.kind == Tok::Number || t.is('-') || t.isIdent("inf") || t.isIdent("nan")) {
      l = parseNumber();
    } else if (t.is('<')) {
      fail(t, "tensor list placeholders like [<Tensors>] cannot be parsed");
    } else if (t.kind == Tok::Ident && !startsValueLiteral(t)) {
      l.kind = Literal::Kind::Type;
      l.type = parseType();
    } else {
      l.kind = Literal::Kind::Value;
      l.value = parseLiteral(n);
    }
    return l;
  }

  static IValue literalValue(const Literal& l) {
    switch (l.kind) {
      case Literal::Kind::Int: return IValue(l.i);
      case Literal::Kind::Double: return IValue(l.d);
      case Literal::Kind::String: return IValue(l.s);
      default: return l.value;
    }
  }

  Literal parseNumber() {
    Literal l;
    bool negative = accept('-');
    const Token& t = cur();
    if (t.isIdent("inf") || t.isIdent("nan")) {
      next();
      l.kind = Literal::Kind::Double;
      l.d = t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      if (negative) l.d = -l.d;
      return l;
    }
    if (t.kind != Tok::Number) fail(t, "expected a number but found " + describe(t));
    next();
    if (t.text.find_first_of(".eE") == std::string_view::npos) {
      l.kind = Literal::Kind::Int;
      l.i = toInt(t, negative);
      return l;
    }
    l.kind = Literal::Kind::Double;
    std::string digits(t.text);
    char* end = nullptr;
    l.d = std::strtod(digits.c_str(), &end);
    if (negative) l.d = -l.d;
    return l;
  }

  // A constant inside a tuple, dict, nested list or annotate(): None, True
  // and False are values here, not types.
  IValue parseLiteral(Node* n) {
    DepthGuard guard(*this);
    const Token& t = cur();
    if (t.kind == Tok::String) return IValue(parseString(next()));
    if (t.kind == Tok::Number || t.is('-') || t.isIdent("inf") || t.isIdent("nan")) {
      return literalValue(parseNumber());
    }
    if (t.isIdent("None")) {
      next();
      return IValue();
    }
    if (t.isIdent("True") || t.isIdent("False")) {
      next();
      return IValue(t.text == "True");
    }
    if (t.is('(')) {
      next();
      std::vector<IValue> elems;
      if (!accept(')')) {
        do {
          if (cur().is(')')) break;  // `(1,)`
          elems.push_back(parseLiteral(n));
        } while (accept(','));
        expect(')');
      }
      return IValue::tuple(std::move(elems));
    }
    if (t.is('[')) {
      const Token& open = next();
      std::vector<IValue> elems;
      if (!cur().is(']')) {
        do {
          elems.push_back(parseLiteral(n));
        } while (accept(','));
      }
      expect(']');
      if (elems.empty()) fail(open, "an empty list needs its type: annotate(List[int], [])");
      return makeList(open, std::move(elems));
    }
    if (t.is('{')) return parseBraceLiteral(n);
    if (t.isIdent("torch") && peekAt(1).is('.')) {
      next();
      next();
      const Token& what = expectIdent("'device'");
      if (what.text != "device") fail(what, "only torch.device(...) literals can be parsed");
      expect('(');
      const Token& s = cur();
      if (s.kind != Tok::String) fail(s, "expected a device string like \"cpu\"");
      next();
      expect(')');
      try {
        return IValue(Device::parse(parseString(s)));
      } catch (const Error& e) {
        fail(s, e.what());
      }
    }
    if (t.isIdent("annotate")) return parseAnnotate(n);
    if (t.is('<')) fail(t, "tensor placeholders cannot be parsed inside a constant");
    fail(t, "expected a constant but found " + describe(t));
  }

  // annotate(List[int], []), annotate(Dict[str, int],{}): the type in Python's spelling.
  IValue parseAnnotate(Node* n) {
    next();
    const Token& open = expect('(');
    size_t type_start = cur().start;
    int depth = 0;
    while (cur().kind != Tok::End && !(depth == 0 && cur().is(','))) {
      if (cur().is('[') || cur().is('(')) ++depth;
      if (cur().is(']') || cur().is(')')) {
        if (depth == 0) break;
        --depth;
      }
      next();
    }
    size_t type_end = tokens_[pos_ - 1].end;
    TypePtr type;
    try {
      type = parseTypeAnnotation(text_.substr(type_start, type_end - type_start));
    } catch (const Error& e) {
      fail(type_start, type_end, e.what());
    }
    expect(',');
    IValue value;
    if (cur().is('[') && peekAt(1).is(']')) {
      pos_ += 2;
      value = IValue::list(nullptr, {});
    } else if (cur().is('{') && peekAt(1).is('}')) {
      pos_ += 2;
      value = IValue(makeIntrusive<DictObj>(nullptr, nullptr));
    } else {
      value = parseLiteral(n);
    }
    expect(')');
    if (auto list = type->cast<ListType>(); list && value.isList()) {
      value.toListRef().element_type = list->elementType();
    } else if (auto dict = type->cast<DictType>(); dict && value.isDict()) {
      value.toDictRef().key_type = dict->keyType();
      value.toDictRef().value_type = dict->valueType();
    } else if (!value.type()->isSubtypeOf(*type)) {
      fail(open, "the value does not have the annotated type " + type->annotationStr());
    }
    return value;
  }

  // `{1.5}`: a one-element tensor; `{"a": 1}`: a dict.
  IValue parseBraceLiteral(Node* n) {
    const Token& open = next();
    if (cur().is('}')) fail(open, "an empty dict needs its type: annotate(Dict[str, int],{})");
    bool number = cur().kind == Tok::Number || cur().is('-') || cur().isIdent("inf") || cur().isIdent("nan");
    if (number && (peekAt(1).is('}') || (cur().is('-') && peekAt(2).is('}')))) {
      Literal lit = parseNumber();
      expect('}');
      return IValue(scalarTensor(n, lit));
    }
    std::vector<std::pair<IValue, IValue>> items;
    do {
      IValue key = parseLiteral(n);
      expect(':');
      items.emplace_back(std::move(key), parseLiteral(n));
    } while (accept(','));
    expect('}');
    std::vector<IValue> keys, values;
    for (auto& [k, v] : items) {
      keys.push_back(k);
      values.push_back(v);
    }
    auto dict = makeIntrusive<DictObj>(commonType(open, keys), commonType(open, values));
    for (auto& [k, v] : items) {
      try {
        dict->insertOrAssign(k, v);
      } catch (const Error& e) {
        fail(open, e.what());
      }
    }
    return IValue(dict);
  }

  TypePtr commonType(const Token& where, const std::vector<IValue>& values) {
    TypePtr t = unshapedType(values.front().type());
    for (const IValue& v : values) {
      auto unified = unifyTypes(t, unshapedType(v.type()));
      if (!unified) fail(where, "the elements have different types (" + irStr(*t) + " and " + irStr(*v.type()) + ")");
      t = *unified;
    }
    return t;
  }

  IValue makeList(const Token& where, std::vector<IValue> elems) {
    TypePtr elem = commonType(where, elems);
    return IValue::list(std::move(elem), std::move(elems));
  }

  // The dtype of a tensor constant comes from the node's output type when known.
  std::optional<ScalarType> outputDtype(Node* n) const {
    if (n->outputs().size() != 1) return std::nullopt;
    auto t = n->output()->type()->cast<TensorType>();
    return t ? t->scalarType() : std::nullopt;
  }

  Tensor scalarTensor(Node* n, const Literal& lit) {
    ScalarType dtype = outputDtype(n).value_or(lit.kind == Literal::Kind::Int ? ScalarType::Long : ScalarType::Float);
    Tensor t = empty({}, dtype);
    copy_(t, scalarToTensor(lit.kind == Literal::Kind::Int ? Scalar(lit.i) : Scalar(lit.d)));
    return t;
  }

  // `<Tensor>`: a zero-filled tensor of the output's (sized) type; PyTorch
  // fills it with uninitialized memory.
  Tensor tensorForOutput(Node* n, const Token& where) {
    auto t = n->outputs().size() == 1 ? n->output()->type()->cast<TensorType>() : nullptr;
    auto sizes = t ? t->sizes().concrete() : std::nullopt;
    if (!sizes) fail(where, "a <Tensor> constant needs an output type with known sizes, like Float(2, 3)");
    for (int64_t s : *sizes) {
      if (s < 0 || s > (int64_t{1} << 32)) fail(where, "a <Tensor> constant has an unreasonable size");
    }
    auto strides = t->strides().concrete();
    DimVector size_vec(sizes->begin(), sizes->end());
    ScalarType dtype = t->scalarType().value_or(ScalarType::Float);
    Tensor out;
    if (strides && strides->size() == sizes->size()) {
      DimVector stride_vec(strides->begin(), strides->end());
      for (int64_t s : stride_vec) {
        if (s < 0 || s > (int64_t{1} << 32)) fail(where, "a <Tensor> constant has an unreasonable stride");
      }
      out = emptyStrided(size_vec, stride_vec, dtype);
    } else {
      out = empty(size_vec, dtype);
    }
    std::memset(out.storage()->data(), 0, out.storage()->nbytes());
    return out;
  }

  // String literal escapes: C's, \xHH, three octal digits, and the
  // out-of-range "octal" PyTorch 1.13 prints for bytes above 0x7f.
  std::string parseString(const Token& t) const {
    std::string_view body = t.text.substr(1, t.text.size() - 2);
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c != '\\') {
        out += c;
        continue;
      }
      size_t at = t.start + 1 + i;
      if (++i >= body.size()) fail(at, at + 1, "a string cannot end with a backslash");
      char e = body[i];
      switch (e) {
        case '\\':
        case '\'':
        case '"': out += e; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x': {
          int value = 0;
          if (i + 2 >= body.size() || !std::isxdigit(static_cast<unsigned char>(body[i + 1])) ||
              !std::isxdigit(static_cast<unsigned char>(body[i + 2]))) {
            fail(at, at + 2, "expected two hex digits after \\x");
          }
          std::from_chars(body.data() + i + 1, body.data() + i + 3, value, 16);
          out += static_cast<char>(value);
          i += 2;
          break;
        }
        default: {
          // Digits from ')' (-7) to '7'; PyTorch's printer writes each as '0' + d.
          auto digit = [](char d) { return d >= '0' - 7 && d <= '7'; };
          if (i + 2 >= body.size() || !digit(body[i]) || !digit(body[i + 1]) || !digit(body[i + 2])) {
            fail(at, at + 2, std::string("unknown escape sequence '\\") + e + "'");
          }
          int value = (body[i] - '0') * 64 + (body[i + 1] - '0') * 8 + (body[i + 2] - '0');
          if (value < -128 || value > 255) fail(at, at + 4, "octal escape out of range");
          out += static_cast<char>(value);
          i += 2;
        }
      }
    }
    return out;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::shared_ptr<Source> source_;
  std::unordered_map<std::string, Value*>* out_values_;
  std::unordered_map<std::string, std::shared_ptr<ClassType>> classes_;
};

void parseIR(std::string_view text, Graph& graph, std::unordered_map<std::string, Value*>* values) {
  IRParser(text, values).parse(graph);
}

std::shared_ptr<Graph> parseIR(std::string_view text) {
  auto g = std::make_shared<Graph>();
  parseIR(text, *g);
  return g;
}

}  // namespace kiln
