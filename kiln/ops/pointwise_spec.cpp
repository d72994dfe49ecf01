// The shared part of pointwise descriptions: argument roles, the checks
// that several ops use, and the pieces of kernel C++ that specs' emit
// functions write with.
#include "kiln/ops/pointwise_spec.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "kiln/core/function_schema.h"
#include "kiln/core/operator.h"
#include "kiln/ir/graph.h"

namespace kiln {
namespace pointwise {

namespace {

template <typename T>
std::pair<double, double> limitsOf() {
  return {static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max())};
}

// kiln's checkedScalarTo<T>: whether the number `v` converts to `t` without overflow.
bool constantFits(const IValue& v, ScalarType t) {
  std::pair<double, double> bounds;
  switch (t) {
    case ScalarType::Byte: bounds = limitsOf<uint8_t>(); break;
    case ScalarType::Char: bounds = limitsOf<int8_t>(); break;
    case ScalarType::Short: bounds = limitsOf<int16_t>(); break;
    case ScalarType::Int: bounds = limitsOf<int32_t>(); break;
    case ScalarType::Long: bounds = limitsOf<int64_t>(); break;
    case ScalarType::Float: bounds = limitsOf<float>(); break;
    default: return true;  // bool takes anything, double holds every number
  }
  if (v.isDouble()) {
    const double d = v.toDouble();
    if (std::isinf(d) || std::isnan(d)) return isFloatingType(t);
    return d >= bounds.first && d <= bounds.second;
  }
  if (!v.isInt() || !isIntegralType(t, false) || t == ScalarType::Long) return true;
  const int64_t i = v.toInt();
  if (t == ScalarType::Byte) {
    // Unsigned: the magnitude must fit, whatever the sign.
    const uint64_t magnitude = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
    return magnitude <= static_cast<uint64_t>(bounds.second);
  }
  return static_cast<double>(i) >= bounds.first && static_cast<double>(i) <= bounds.second;
}

}  // namespace

bool numberFits(const ValueType& s, ScalarType t, const char* what, std::string* why) {
  if (s.isNone() || t == ScalarType::Bool || s.dtype == ScalarType::Bool) return true;
  bool fits;
  if (s.constant) {
    fits = constantFits(*s.constant, t);
  } else {
    fits = s.dtype == ScalarType::Double ? t == ScalarType::Double : (t == ScalarType::Long || isFloatingType(t));
  }
  return fits || refuse(why, std::string(what) + " may not fit " + std::string(scalarTypeName(t)) + ", which raises");
}

size_t OpTyping::index(const char* name) const {
  const auto i = node->maybeSchema()->argumentIndex(name);
  KILN_INTERNAL_ASSERT(i && *i < args.size(), "fuser op table names no argument ", name);
  return *i;
}

const ValueType* OpTyping::find(const char* name) const {
  const auto i = node->maybeSchema()->argumentIndex(name);
  return i && *i < args.size() ? &args[*i] : nullptr;
}

bool refuse(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return false;
}

ArgRole argRole(const Argument& arg, TypeRule rule) {
  const TypeKind kind = arg.type->kind();
  const bool is_tensor = kind == TypeKind::Tensor ||
                         (kind == TypeKind::Optional && arg.type->containedTypes()[0]->kind() == TypeKind::Tensor);
  if (arg.name == "condition") return ArgRole::Condition;
  if (rule == TypeRule::Cast) {
    if (arg.name == "other") return ArgRole::DtypeSource;
    return arg.name == "self" ? ArgRole::Operand : ArgRole::Constant;
  }
  if (is_tensor) return ArgRole::Operand;
  if (arg.type_text.rfind("Scalar", 0) == 0 && arg.type_text != "ScalarType" && arg.type_text != "ScalarType?") {
    const bool is_param = arg.name == "alpha" || arg.name == "value" || arg.name == "weight";
    return is_param ? ArgRole::Param : ArgRole::Operand;
  }
  return ArgRole::Constant;
}

ArgRole argRole(const Argument& arg, const PointwiseSpec& spec) {
  for (const std::string& p : spec.params)
    if (arg.name == p) return ArgRole::Param;
  return argRole(arg, spec.rule);
}

bool isKernelDtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
    case ScalarType::Float:
    case ScalarType::Double: return true;
    default: return false;
  }
}

const char* cppType(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Byte: return "uint8_t";
    case ScalarType::Char: return "int8_t";
    case ScalarType::Short: return "int16_t";
    case ScalarType::Int: return "int32_t";
    case ScalarType::Long: return "int64_t";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    default: KILN_INTERNAL_ASSERT(false, "no kernel type for ", t);
  }
  return "";
}

std::string castExpr(const std::string& v, ScalarType from, ScalarType to) {
  if (from == to) return v;
  const std::string type = cppType(to);
  // From bool as a select: GCC does not vectorize a conversion of a C++ bool.
  if (from == ScalarType::Bool) return "(" + v + " ? (" + type + ")1 : (" + type + ")0)";
  return "(" + type + ")" + v;
}

std::string cppLiteral(double v) {
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  // The shortest decimal that reads back as v, so the source stays readable.
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string text = buf;
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return v < 0 ? "(" + text + ")" : text;
}

std::string cppLiteral(const IValue& v) {
  if (v.isBool()) return v.toBool() ? "true" : "false";
  if (v.isDouble()) return cppLiteral(v.toDouble());
  KILN_INTERNAL_ASSERT(v.isInt(), "not a number constant: ", v);
  const int64_t i = v.toInt();
  if (i == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
  char buf[32];
  std::snprintf(buf, sizeof buf, i < 0 ? "(%" PRId64 "LL)" : "%" PRId64 "LL", i);
  return buf;
}

}  // namespace pointwise

std::shared_ptr<const PointwiseSpec> elementwiseFromCpp(pointwise::TypeRule rule, pointwise::DtypeSet dtypes,
                                                        std::string_view cpp,
                                                        std::initializer_list<std::string_view> argument_names) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string expr;
  for (size_t i = 0; i < cpp.size();) {
    if (!is_word(cpp[i])) {
      expr += cpp[i++];
      continue;
    }
    // A whole word: a number (1.5e-3f), or an identifier that may be an argument.
    size_t end = i + 1;
    const bool number = std::isdigit(static_cast<unsigned char>(cpp[i])) || cpp[i] == '.';
    while (end < cpp.size() &&
           (is_word(cpp[end]) || (number && (cpp[end] == '.' || ((cpp[end] == '-' || cpp[end] == '+') &&
                                                                 (cpp[end - 1] == 'e' || cpp[end - 1] == 'E')))))) {
      ++end;
    }
    const std::string_view word = cpp.substr(i, end - i);
    bool is_argument = !number && word == "T";
    for (std::string_view name : argument_names) is_argument = is_argument || (!number && word == name);
    if (is_argument) expr += '$';
    expr += word;
    i = end;
  }
  return std::make_shared<const PointwiseSpec>(PointwiseSpec{rule, dtypes, std::move(expr), nullptr, nullptr, {}});
}

std::shared_ptr<const PointwiseSpec> elementwiseFromCpp(pointwise::TypeRule rule, pointwise::DtypeSet dtypes,
                                                        std::string_view cpp, std::string_view params) {
  std::vector<std::string> names;
  std::string word;
  for (char c : params) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else if (!word.empty()) {
      names.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) names.push_back(std::move(word));
  std::vector<std::string_view> argument_names = {"self"};
  for (const std::string& n : names) argument_names.push_back(n);
  std::string expr = elementwiseFromCpp(rule, dtypes, cpp, {})->expr;
  // Every word that names an argument becomes `$name`; parameters are read
  // converted to the compute type, as the eager kernel reads them.
  std::string out;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < expr.size();) {
    if (!is_word(expr[i]) || (i > 0 && (is_word(expr[i - 1]) || expr[i - 1] == '$' || expr[i - 1] == '.'))) {
      out += expr[i++];
      continue;
    }
    size_t end = i;
    while (end < expr.size() && is_word(expr[end])) ++end;
    const std::string_view w(expr.data() + i, end - i);
    if (w == "self") {
      out += "$self";
    } else if (std::find(names.begin(), names.end(), w) != names.end()) {
      out += "(($T)$" + std::string(w) + ")";
    } else {
      out += w;
    }
    i = end;
  }
  // The eager kernel raises where a constant parameter overflows the
  // compute type. (A runtime float is taken as fitting: refusing it would
  // keep every activation with a runtime parameter out of kernels.)
  auto check = [](const pointwise::OpTyping& t, std::string* why) {
    for (const std::string& p : t.op->params) {
      const pointwise::ValueType& v = t.arg(p.c_str());
      if (v.constant && !pointwise::numberFits(v, t.compute, p.c_str(), why)) return false;
    }
    return true;
  };
  auto spec = std::make_shared<PointwiseSpec>(PointwiseSpec{rule, dtypes, std::move(out), check, nullptr, {}});
  spec->params = std::move(names);
  return spec;
}

const PointwiseSpec* pointwiseSpecOf(const Node* n) {
  if (!n->maybeSchema()) return nullptr;
  const auto op = n->maybeOperator();
  return op ? op->description().pointwise.get() : nullptr;
}

}  // namespace kiln
