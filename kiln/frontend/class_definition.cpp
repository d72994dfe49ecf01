#include "kiln/frontend/class_definition.h"

#include "kiln/frontend/error_report.h"

namespace kiln {

namespace {

// `NamedTuple` or `typing.NamedTuple` (`object` likewise).
bool namesBase(const Expr& base, const std::string& name) {
  std::string text = base.range().text();
  return text == name || text == "typing." + name;
}

}  // namespace

ClassKind classKind(const ClassDef& def) {
  ClassKind kind = ClassKind::Class;
  for (Expr base : def.bases()) {
    if (namesBase(base, "object")) continue;
    if (namesBase(base, "NamedTuple")) {
      kind = ClassKind::NamedTuple;
      continue;
    }
    if (base.range().text() == "Enum" || base.range().text() == "enum.Enum") {
      throwSourceError(base.range(), "Enum classes are not supported in TorchScript source; define the Enum in Python");
    }
    throwSourceError(base.range(),
                     "TorchScript classes does not support inheritance yet. Please directly inherit from 'object'.");
  }
  if (def.bases().size() > 1) {
    throwSourceError(def.bases().range(),
                     "TorchScript classes does not support inheritance yet. Please directly inherit from 'object'.");
  }
  return kind;
}

std::vector<NamedTupleField> namedTupleFields(const ClassDef& def) {
  std::vector<NamedTupleField> fields;
  for (Stmt stmt : def.body()) {
    if (stmt.kind() == TK_PASS) continue;
    if (stmt.kind() == TK_EXPR_STMT && ExprStmt(stmt.tree()).expr().kind() == TK_STRINGLITERAL) continue;
    if (stmt.kind() == TK_DEF) throwSourceError(stmt.range(), "NamedTuple classes cannot have methods in TorchScript");
    if (stmt.kind() != TK_ASSIGN) throwSourceError(stmt.range(), "expected a field `name: Type` of the NamedTuple");
    Assign assign(stmt.tree());
    if (assign.lhsList().size() != 1 || assign.lhsList()[0].kind() != TK_VAR || !assign.type().present()) {
      throwSourceError(stmt.range(), "expected a field `name: Type` of the NamedTuple");
    }
    NamedTupleField field{Var(assign.lhsList()[0].tree()).name().name(), assign.type().get(), std::nullopt};
    if (assign.rhs().present()) {
      field.default_value = assign.rhs().get();
    } else if (!fields.empty() && fields.back().default_value) {
      throwSourceError(stmt.range(), "Non-default namedtuple field '" + field.name + "' follows default field '" +
                                         fields.back().name + "'");
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

namespace {

bool hasDecorator(const Def& def, const std::string& name) {
  for (Expr decorator : def.decorators()) {
    if (decorator.range().text() == name) return true;
  }
  return false;
}

}  // namespace

bool isStaticMethod(const Def& def) { return hasDecorator(def, "staticmethod"); }

bool isClassMethod(const Def& def) { return hasDecorator(def, "classmethod"); }

bool isIgnoredClassStatement(const Stmt& stmt) {
  switch (stmt.kind()) {
    case TK_PASS: return true;
    case TK_EXPR_STMT: return ExprStmt(stmt.tree()).expr().kind() == TK_STRINGLITERAL;
    case TK_ASSIGN: {
      Assign assign(stmt.tree());
      return assign.type().present() && !assign.rhs().present() && assign.lhsList().size() == 1 &&
             assign.lhsList()[0].kind() == TK_VAR;
    }
    default: return false;
  }
}

}  // namespace kiln
