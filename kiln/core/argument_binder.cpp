#include "kiln/core/argument_binder.h"

namespace kiln {

std::optional<std::string> matchTypeVariables(const TypePtr& formal, const TypePtr& actual, TypeEnv& env) {
  if (!formal->hasFreeVariables()) return std::nullopt;
  auto mismatch = [&] { return "cannot match " + irStr(*formal) + " to " + irStr(*actual); };
  if (auto var = formal->cast<VarType>()) {
    auto it = env.find(var->name());
    if (it == env.end()) {
      env[var->name()] = actual;
      return std::nullopt;
    }
    if (auto unified = unifyTypes(it->second, actual)) {
      it->second = *unified;
      return std::nullopt;
    }
    return "Type variable '" + var->name() + "' previously matched to type " + it->second->annotationStr() +
           " is matched to type " + actual->annotationStr();
  }
  if (auto list = formal->cast<ListType>()) {
    if (auto actual_list = actual->cast<ListType>()) {
      return matchTypeVariables(list->elementType(), actual_list->elementType(), env);
    }
    return mismatch();
  }
  if (auto tuple = formal->cast<TupleType>()) {
    auto actual_tuple = actual->cast<TupleType>();
    if (!actual_tuple || actual_tuple->elements().size() != tuple->elements().size()) return mismatch();
    for (size_t i = 0; i < tuple->elements().size(); ++i) {
      if (auto why = matchTypeVariables(tuple->elements()[i], actual_tuple->elements()[i], env)) return why;
    }
    return std::nullopt;
  }
  if (auto optional = formal->cast<OptionalType>()) {
    if (auto actual_optional = actual->cast<OptionalType>()) {
      return matchTypeVariables(optional->elementType(), actual_optional->elementType(), env);
    }
    // None fits Optional[T] without telling what T is.
    if (actual->kind() == TypeKind::None) return std::nullopt;
    return matchTypeVariables(optional->elementType(), actual, env);
  }
  if (auto dict = formal->cast<DictType>()) {
    auto actual_dict = actual->cast<DictType>();
    if (!actual_dict) return mismatch();
    if (auto why = matchTypeVariables(dict->keyType(), actual_dict->keyType(), env)) return why;
    return matchTypeVariables(dict->valueType(), actual_dict->valueType(), env);
  }
  if (formal->kind() == TypeKind::Future || formal->kind() == TypeKind::RRef) {
    if (actual->kind() != formal->kind()) return mismatch();
    return matchTypeVariables(formal->containedTypes()[0], actual->containedTypes()[0], env);
  }
  return mismatch();
}

TypePtr evalTypeVariables(const TypePtr& type, const TypeEnv& env) {
  if (!type->hasFreeVariables()) return type;
  if (auto var = type->cast<VarType>()) {
    auto it = env.find(var->name());
    return it == env.end() ? nullptr : it->second;
  }
  std::vector<TypePtr> contained = type->containedTypes();
  for (TypePtr& t : contained) {
    t = evalTypeVariables(t, env);
    if (!t) return nullptr;
  }
  return type->withContained(std::move(contained));
}

namespace {

BindFailure failure(BindFailure::Kind kind, std::string name, std::string message) {
  BindFailure f;
  f.kind = kind;
  f.name = std::move(name);
  f.message = std::move(message);
  return f;
}

}  // namespace

BindResult bindArguments(const FunctionSchema& schema, const CallShape& shape, ConversionPolicy& policy, TypeEnv& env) {
  BindResult result;
  BoundArguments bound;
  std::vector<bool> used_keyword(shape.keywords.size(), false);
  bool self_pending = shape.has_self;
  size_t used_positional = 0;
  const auto& params = schema.arguments();
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument& param = params[i];
    ParamSource source;
    if (param.name == "self" && self_pending) {
      source.kind = ParamSource::Kind::Self;
      self_pending = false;
    } else if (!param.kwarg_only && used_positional < shape.num_positional) {
      if (policy.packsPositionals(schema, i, used_positional)) {
        source.kind = ParamSource::Kind::Packed;
        source.index = used_positional;
        source.end = shape.num_positional;
        used_positional = shape.num_positional;
      } else {
        source.kind = ParamSource::Kind::Positional;
        source.index = used_positional++;
      }
    } else if (auto k = [&]() -> std::optional<size_t> {
                 for (size_t k = 0; k < shape.keywords.size(); ++k) {
                   if (shape.keywords[k] == param.name) return k;
                 }
                 return std::nullopt;
               }()) {
      if (used_keyword[*k]) {
        result.failure = failure(BindFailure::Kind::ParamNamedTwice, param.name,
                                 "Argument " + param.name + " specified twice in schema, submit a bug report!\n");
        return result;
      }
      used_keyword[*k] = true;
      source.kind = ParamSource::Kind::Keyword;
      source.index = *k;
    } else if (param.default_value) {
      source.kind = ParamSource::Kind::Default;
    } else {
      result.failure = failure(BindFailure::Kind::Missing, param.name, "Argument " + param.name + " not provided.\n");
      return result;
    }
    if (auto why = policy.convert(param, source, env)) {
      result.failure = failure(BindFailure::Kind::Conversion, param.name, std::move(*why));
      return result;
    }
    bound.params.push_back(source);
  }
  if (self_pending) {
    result.failure = failure(BindFailure::Kind::SelfUnused, "self", "Provided self argument not used in schema.\n");
    return result;
  }
  if (schema.isVararg()) {
    for (; used_positional < shape.num_positional; ++used_positional) bound.varargs.push_back(used_positional);
  }
  if (used_positional < shape.num_positional) {
    result.failure = failure(BindFailure::Kind::TooManyPositional, "",
                             "Expected at most " + std::to_string(used_positional) + " arguments but found " +
                                 std::to_string(shape.num_positional) + " positional arguments.\n");
    result.failure.used = used_positional;
    result.failure.given = shape.num_positional;
    return result;
  }
  for (size_t k = 0; k < shape.keywords.size(); ++k) {
    if (used_keyword[k]) continue;
    const std::string& name = shape.keywords[k];
    if (!schema.argumentIndex(name)) {
      result.failure = failure(BindFailure::Kind::UnknownKeyword, name, "Keyword argument " + name + " unknown.\n");
    } else {
      result.failure =
          failure(BindFailure::Kind::KeywordTwice, name, "Keyword argument " + name + " specified twice.\n");
    }
    return result;
  }
  result.bound = std::move(bound);
  return result;
}

}  // namespace kiln
