"""Compiling and running TorchScript: kiln.compile, kiln.script,
kiln.function_from_graph, kiln.CompilationUnit and the ScriptFunction objects
they make (kiln._C.ScriptFunction); script classes (kiln.script on a Python
class: kiln.ScriptClass, whose objects are kiln._C.ScriptObject)."""
import enum
import inspect
import linecache
import re
import sys
import textwrap
import types

from . import _C
from ._jit_internal import modifier, overloads, stub_source
from .nn.module import Module

ScriptFunction = _C.ScriptFunction
ScriptObject = _C.ScriptObject
ScriptMethod = _C.ScriptMethod


def function_from_graph(name, graph):
    """A callable running `graph` (a kiln.Graph, e.g. from kiln.parse_ir).

    Arguments may be kiln tensors, numpy arrays, Python scalars, lists,
    tuples, dicts and None; tensors come back as kiln.Tensor."""
    return _C.function_from_graph(name, graph)


class CompilationUnit:
    """A namespace of functions, as torch.jit.CompilationUnit: compiled from
    TorchScript source (`CompilationUnit(source)`, or kiln.compile), or built
    from graphs with create_function. Its functions are attributes
    (`cu.f(x)`); iterating gives them in definition order. Calls between them
    (prim::CallFunction of a prim::Constant[name="g"]) resolve here."""

    def __init__(self, source=None, filename="<string>"):
        if source is None:
            self._cu = _C.CompilationUnit()
        else:
            self._cu = _C._compile(source, filename)

    def create_function(self, name, graph):
        """Adds a function made of `graph` (a kiln.Graph) and returns it."""
        return self._cu.create_function(name, graph)

    def find_function(self, name):
        return self._cu.find_function(name)

    @property
    def functions(self):
        """The ScriptFunctions, in definition order."""
        return [self._cu.find_function(name) for name in self._cu.function_names()]

    def __iter__(self):
        return iter(self.functions)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._cu.function_names()))

    def __getattr__(self, name):
        # Only reached when normal lookup fails; `_cu` itself must not recurse.
        if name.startswith("__") or name == "_cu":
            raise AttributeError(name)
        f = self._cu.find_function(name)
        if f is None:
            raise AttributeError(f"'CompilationUnit' has no attribute '{name}'")
        return f


def compile(source, filename="<string>"):  # noqa: A001  (kiln.compile, as the issue names it)
    """Compiles TorchScript source (defs; `import` lines accepted) and
    returns a CompilationUnit whose functions are attributes:

        cu = kiln.compile("def f(x: Tensor) -> Tensor:\\n    return x * 2\\n")
        cu.f(kiln.ones(2)), cu.f.graph, cu.f.schema

    `filename` names the source in errors and tracebacks. Invalid programs
    raise RuntimeError with TorchScript's message."""
    return CompilationUnit(source, filename)


_DEF_LINE = re.compile(r"(async\s+)?def\s")

# The value kiln.script caches on a function while compiling it: finding it
# again means the function calls itself.
_COMPILING = object()


def _last_line(code):
    """The last source line `code` (and the functions defined in it) covers."""
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=code.co_firstlineno)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max(last, _last_line(const))
    return last


def _function_lines(fn):
    """(lines of fn's source, decorators included, and the file line of the
    first). The code object knows where the function ends, which is much
    cheaper than inspect.getsourcelines tokenizing the file to find out."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if hasattr(code, "co_positions") and lines:
        return lines[code.co_firstlineno - 1:_last_line(code)], code.co_firstlineno
    return inspect.getsourcelines(fn)


def _function_source(fn):
    """(source of the def alone, file name, file line of its first line)."""
    try:
        lines, first_line = _function_lines(fn)
    except (OSError, TypeError) as e:
        raise RuntimeError(f"kiln.script: cannot get the source of {fn.__qualname__}: {e}") from None
    lines = textwrap.dedent("".join(lines)).splitlines(keepends=True)
    # Decorators (`@kiln.script`) precede the def line; TorchScript ignores them.
    for skipped, line in enumerate(lines):
        if _DEF_LINE.match(line):
            break
    else:
        raise RuntimeError(f"kiln.script: {fn.__qualname__} is not a def (lambdas are not supported)")
    return "".join(lines[skipped:]), fn.__code__.co_filename, first_line + skipped


def _annotation_names(fn):
    """The names in fn's annotations that stand for types, mapped to the
    objects Python evaluated them to (`x: tensor_t` with tensor_t =
    torch.Tensor gives {"tensor_t": torch.Tensor}; `List[device_t]` gives
    device_t too): 1.13 resolves annotations through these captures, which
    are neither fn's closure nor its globals when the alias is a local of
    the function defining fn."""
    import ast
    import typing
    annotations = getattr(fn, "__annotations__", None)
    if not annotations:
        return {}
    try:
        definition = ast.parse(_function_source(fn)[0]).body[0]
    except (RuntimeError, SyntaxError, IndexError):
        return {}
    found = {}

    def match(node, value):
        if isinstance(node, ast.Name):
            found.setdefault(node.id, value)
        elif isinstance(node, ast.Subscript):
            args = typing.get_args(value)
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if typing.get_origin(value) is typing.Union and len(items) == 1 and len(args) == 2 and type(None) in args:
                args = tuple(a for a in args if a is not type(None))  # Optional[T]
            if len(items) == len(args):
                for item, arg in zip(items, args):
                    match(item, arg)

    arguments = definition.args
    for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
        if arg.annotation is not None and arg.arg in annotations and not isinstance(annotations[arg.arg], str):
            match(arg.annotation, annotations[arg.arg])
    if definition.returns is not None and "return" in annotations and not isinstance(annotations["return"], str):
        match(definition.returns, annotations["return"])
    return found


def _attribute_path(value, dotted):
    """`value.a.b` for dotted "a.b", or None when an attribute is missing."""
    for part in dotted.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            return None
    return value


def _free_names(fn):
    """A lookup for the names `fn` does not define: its closure, then its globals."""
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a cell not yet assigned
            pass

    def lookup(name):
        head, _, rest = name.partition(".")
        if rest:
            # `some_module.Type` (an annotation, or an attribute of a Python module).
            if head in closure:
                value = _attribute_path(closure[head], rest)
            elif head in fn.__globals__:
                value = _attribute_path(fn.__globals__[head], rest)
            else:
                return None
            if value is None:
                return None
        elif name in closure:
            value = closure[name]
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        elif name == fn.__name__:
            return ()  # a decorated function calling itself: its name is bound only afterwards
        else:
            return None
        if isinstance(value, types.FunctionType):
            if value.__dict__.get("__kiln_script__") is _COMPILING:
                return ()
            value = _script_overloads(value) if _has_overloads(value) else script(value)
        elif _is_interface(value):
            value = _script_interface(value)
        elif isinstance(value, ScriptClass):
            value = value.class_type
        elif _is_named_tuple(value):
            value = _script_named_tuple(value)
        elif _is_enum(value):
            value = _script_enum(value)
        elif _is_script_class_candidate(value):
            value = script(value).class_type
        return (value,)

    return lookup


def _method_free_names(fn):
    """_free_names of a method of a class, then the names of its annotations
    (_annotation_names): 1.13 resolves those for class methods only."""
    lookup = _free_names(fn)
    captures = None

    def with_captures(name):
        nonlocal captures
        found = lookup(name)
        if found is not None or "." in name:
            return found
        if captures is None:
            captures = _annotation_names(fn)
        return _class_free_names_value(captures[name]) if name in captures else None

    return with_captures


def _qualified_name(obj):
    """TorchScript's name for a Python class: `__torch__.<module>.<name>`
    (`__torch__.<name>` for classes of __main__)."""
    module = obj.__module__
    if module is None or module == "__main__":
        return f"__torch__.{obj.__name__}"
    return f"__torch__.{module}.{obj.__name__}"


def _is_script_class_candidate(value):
    """A user class that names in script code may mean as a script class:
    defined in Python source, not a module, an exception or a builtin."""
    if not isinstance(value, type) or value.__module__ in ("builtins", "typing"):
        return False
    if issubclass(value, BaseException) or value.__module__.startswith(("kiln", "torch", "numpy")):
        return False
    if "__kiln_script_class__" in value.__dict__:
        return True
    if issubclass(value, Module):
        return False
    # A class whose __init__ is inherited is one too (kiln.script refuses it, as torch).
    return any(isinstance(c.__dict__.get("__init__"), types.FunctionType) for c in value.__mro__[:-1])


class ScriptClass:
    """A Python class compiled as a TorchScript class (what kiln.script(cls)
    returns). Calling it constructs a kiln.ScriptObject and runs the compiled
    __init__; the object's attributes and methods are the compiled ones.
    Script functions that name the class (through their globals or closure)
    construct and use it in TorchScript."""

    def __init__(self, cls, class_type):
        self.__wrapped__ = cls
        self.class_type = class_type
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__module__ = cls.__module__
        self.__doc__ = cls.__doc__

    @property
    def qualified_name(self):
        return self.class_type.name

    def __call__(self, *args, **kwargs):
        obj = _C.ScriptObject(self.class_type)
        obj.get_method("__init__")(*args, **kwargs)
        return obj

    def __repr__(self):
        return f"<kiln.ScriptClass {self.class_type.name}>"


_CLASS_LINE = re.compile(r"class\s")


def _class_source(cls):
    """(source of the class statement alone, file name, file line of its first line)."""
    try:
        lines, first_line = inspect.getsourcelines(cls)
        filename = inspect.getsourcefile(cls) or "<unknown>"
    except (OSError, TypeError) as e:
        raise RuntimeError(f"kiln.script: cannot get the source of class {cls.__qualname__}: {e}") from None
    lines = textwrap.dedent("".join(lines)).splitlines(keepends=True)
    for skipped, line in enumerate(lines):
        if _CLASS_LINE.match(line):
            break
    else:
        raise RuntimeError(f"kiln.script: no class statement in the source of {cls.__qualname__}")
    return "".join(lines[skipped:]), filename, first_line + skipped


def _class_free_names(cls):
    """A lookup for the names a class's methods do not define: the globals
    of the module defining it (its methods' closures first)."""
    functions = [f for f in cls.__dict__.values() if isinstance(f, types.FunctionType)]
    lookups = [_method_free_names(f) for f in functions]
    module_globals = vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {}

    def lookup(name):
        if name == cls.__name__:
            return None  # the class itself: the compiler knows it
        for one in lookups:
            found = one(name)
            if found is not None:
                return found
        head, _, rest = name.partition(".")
        if rest and head in module_globals:
            value = _attribute_path(module_globals[head], rest)
            if value is not None:
                return _class_free_names_value(value)
        if name in module_globals:
            value = module_globals[name]
            if isinstance(value, types.FunctionType):
                return (_script_overloads(value) if _has_overloads(value) else script(value),)
            return _class_free_names_value(value)
        return None

    return lookup


def _is_named_tuple(value):
    """A `class P(NamedTuple)` (or typing.NamedTuple("P", ...)) of the user."""
    return (isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
            and "__annotations__" in value.__dict__)


def _script_named_tuple(cls):
    """The TorchScript named tuple type of a NamedTuple class, compiled from
    its source once (kept as `cls.__kiln_named_tuple__`)."""
    cached = cls.__dict__.get("__kiln_named_tuple__")
    if cached is not None:
        return cached
    lookup = _class_free_names(cls)
    try:
        source, filename, first_line = _class_source(cls)
        if not re.match(rf"class\s+{re.escape(cls.__name__)}\b", source):
            raise RuntimeError("the source found is another class's")
    except RuntimeError:
        # `NamedTuple("P", [("x", int)])` has no class statement: 1.13 reads
        # the fields off the class, and so does kiln.
        source, filename, first_line, lookup = _named_tuple_source(cls, lookup)
    compiled = _C._compile_named_tuple(source, filename, first_line, lookup, _qualified_name(cls))
    cls.__kiln_named_tuple__ = compiled
    return compiled


def _type_text(annotation, names=None):
    """TorchScript annotation text for a Python annotation object (a typing
    form, a builtin type, torch.Tensor, torch.device, a forward reference).
    Any other object (a class) gets a made-up name, recorded in `names` (the
    lookup resolves it); None when `names` is None and one is needed."""
    import typing
    if isinstance(annotation, str):
        return annotation
    if annotation is None or annotation is type(None):
        return "None"
    if annotation in (int, float, bool, str, complex):
        return annotation.__name__
    if isinstance(annotation, type) and annotation.__name__ == "Tensor" and \
            annotation.__module__.split(".")[0] in ("torch", "kiln"):
        return "Tensor"
    if isinstance(annotation, type) and annotation.__name__ == "device" and annotation.__module__ == "torch":
        return "torch.device"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    forms = {list: "List", dict: "Dict", tuple: "Tuple", typing.Union: "Union"}
    if origin is tuple and annotation is not typing.Tuple and (not args or args == ((),)):
        return "Tuple[()]"
    if origin in forms and args:
        if origin is typing.Union and len(args) == 2 and type(None) in args:
            inner = _type_text(args[0] if args[1] is type(None) else args[1], names)
            return None if inner is None else f"Optional[{inner}]"
        inner = [_type_text(a, names) for a in args]
        if None in inner:
            return None
        return f"{forms[origin]}[{', '.join(inner)}]"
    if names is None or not isinstance(annotation, type):
        return None
    name = f"__kiln_type{len(names)}"
    names[name] = annotation
    return name


def _named_tuple_source(cls, lookup):
    """(source, filename, first line, lookup) of a NamedTuple class made
    without a class statement: its fields and defaults written out."""
    names = {}
    lines = [f"class {cls.__name__}(NamedTuple):\n"]
    defaults = getattr(cls, "_field_defaults", {})
    for field_name in cls._fields:
        text = _type_text(cls.__annotations__.get(field_name, "Tensor"), names)
        default = f" = {defaults[field_name]!r}" if field_name in defaults else ""
        lines.append(f"    {field_name}: {text}{default}\n")

    def with_names(name):
        return _class_free_names_value(names[name]) if name in names else lookup(name)

    return "".join(lines), f"<NamedTuple {cls.__qualname__}>", 1, with_names


def _is_interface(value):
    """A class decorated @kiln.jit.interface or @torch.jit.interface."""
    return isinstance(value, type) and bool(value.__dict__.get("__kiln_interface__") or
                                            value.__dict__.get("__torch_script_interface__"))


def _script_interface(cls):
    """The interface type of an interface class: the methods its defs
    declare. Made once (kept as `cls.__kiln_interface_type__`)."""
    cached = cls.__dict__.get("__kiln_interface_type__")
    if cached is not None:
        return cached
    # A module interface subclasses nn.Module (kiln's or torch's) directly.
    bases = [b for b in cls.__mro__[1:] if b is not object]
    is_module = len(bases) == 1 and bases[0].__name__ == "Module"
    source, filename, first_line = _class_source(cls)
    compiled = _C._compile_interface(_drop_class_assigns(source), filename, first_line, _class_free_names(cls),
                                     _qualified_name(cls), is_module)
    type.__setattr__(cls, "__kiln_interface_type__", compiled)
    return compiled


def _class_free_names_value(value):
    """What a lookup gives for a class named in script code (see _class_free_names)."""
    if _is_interface(value):
        return (_script_interface(value),)
    if isinstance(value, ScriptClass):
        return (value.class_type,)
    if _is_named_tuple(value):
        return (_script_named_tuple(value),)
    if _is_enum(value):
        return (_script_enum(value),)
    if _is_script_class_candidate(value):
        return (script(value).class_type,)
    return (value,)


def _is_enum(value):
    return isinstance(value, type) and issubclass(value, enum.Enum) and value is not enum.Enum


_ENUM_SOURCE = """class {name}:
    def __init__(self, name: str, value: {value_type}):
        self.name = name
        self.value = value

    def __eq__(self, other: {name}) -> bool:
        return self.name == other.name

    def __ne__(self, other: {name}) -> bool:
        return self.name != other.name
"""


def _script_enum(cls):
    """An Enum class for script code (kiln._C.EnumClass): a script class with
    `name` and `value` whose objects are its members. Made once (kept as
    `cls.__kiln_enum__`)."""
    cached = cls.__dict__.get("__kiln_enum__")
    if cached is not None:
        return cached
    members = [(m.name, m.value) for m in cls]
    kinds = {type(value) for _, value in members}
    if len(kinds) != 1 or next(iter(kinds)) not in (int, float, str):
        raise RuntimeError(f"Cannot create Enum {cls.__qualname__}: its values must all be int, all float or all str "
                           f"(found {', '.join(sorted(k.__name__ for k in kinds))})")
    source = _ENUM_SOURCE.format(name=cls.__name__, value_type=next(iter(kinds)).__name__)
    class_type = _C._compile_class(source, f"<enum {cls.__qualname__}>", 1, None, _qualified_name(cls))
    compiled = _C._enum_class(class_type, members, cls)
    type.__setattr__(cls, "__kiln_enum__", compiled)
    return compiled


def _check_class(cls):
    """TorchScript 1.13's refusals of classes it cannot compile, in its words."""
    if issubclass(cls, Module):
        raise RuntimeError(f"Type '{cls}' cannot be compiled since it inherits from nn.Module, pass an instance instead")
    if len(cls.mro()) > 2:
        raise RuntimeError("TorchScript classes does not support inheritance yet. "
                           "Please directly inherit from 'object'.")


def _stub_marked_methods(cls, source):
    """The class source with the bodies of its @unused and @ignore'd
    methods (kiln.jit's or torch.jit's markers) replaced by a raise."""
    import ast
    for node in ast.parse(source).body[0].body:
        if isinstance(node, ast.FunctionDef):
            marker = modifier(cls.__dict__.get(node.name))
            if marker in ("unused", "ignore"):
                source = stub_source(source, node.name, marker, method=True, definition=node)
    return source


def _drop_class_assigns(source):
    """The class source with its body's assignments (`x = 3`, `x: float = 0.0`)
    replaced by `pass`, keeping every line where it was: 1.13 compiles a
    Python class holding them and ignores them (its attributes are the ones
    __init__ sets). Bare annotations (`x: float`) stay."""
    import ast
    definition = ast.parse(source).body[0]
    lines = source.splitlines(keepends=True)
    for node in definition.body:
        if isinstance(node, ast.Assign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
            indent = " " * node.col_offset
            lines[node.lineno - 1] = f"{indent}pass\n"
            for i in range(node.lineno, node.end_lineno):
                lines[i] = "\n"
    return "".join(lines)


# The methods 1.13 writes TorchScript for in a @dataclass (the ones the
# dataclasses module generates have no source), when the class body does not
# define them itself.
_DATACLASS_METHODS = ("__init__", "__repr__", "__hash__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")


def _is_optional(annotation):
    import typing
    return typing.get_origin(annotation) is typing.Union and type(None) in typing.get_args(annotation)


def _dataclass_init(cls):
    """The __init__ of a dataclass as 1.13 compiles it: CPython's generated
    signature (InitVar[T] parameters typed T), each init field assigned to
    self, then `self.__post_init__(<the InitVars>)` when the class has one."""
    import dataclasses
    import inspect as _inspect
    fields = dataclasses.fields(cls)
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        raise NotImplementedError("Default factory initializers are not supported in TorchScript dataclasses")
    signature = _inspect.signature(cls.__init__)
    init_vars = []
    parameters = []
    for name, parameter in signature.parameters.items():
        if isinstance(parameter.annotation, dataclasses.InitVar):
            init_vars.append(name)
            parameter = parameter.replace(annotation=parameter.annotation.type)
        parameters.append(parameter)
    signature = signature.replace(parameters=parameters)
    body = [f"self.{f.name} = {f.name}" for f in fields if f.init and f.name not in init_vars]
    if hasattr(cls, "__post_init__"):
        body.append(f"self.__post_init__({', '.join(init_vars)})")
    return str(signature), body


def _dataclass_comparison(cls, allow_eq, none_raises, tests):
    """The body of a generated comparison: field by field (the `compare`
    ones), `tests` deciding on the pair (val1, val2); Optional fields are
    compared only when both are set (None against a value: unequal, or a
    TypeError for an ordering)."""
    import dataclasses
    body = []
    for f in dataclasses.fields(cls):
        if not f.compare:
            continue
        body += [f"val1 = self.{f.name}", f"val2 = other.{f.name}"]
        if _is_optional(f.type):
            otherwise = f"raise TypeError('Cannot compare {cls.__name__} with None')" if none_raises else "return False"
            body += ["if val1 is not None and val2 is not None:"] + ["    " + t for t in tests]
            body += ["elif (val1 is None) != (val2 is None):", "    " + otherwise]
        else:
            body += tests
    body.append(f"return {allow_eq}")
    return f"(self, other: {cls.__name__}) -> bool", body


def _dataclass_method(cls, name):
    """(signature, body lines) of the dataclass method `name` as 1.13 writes it."""
    if name == "__init__":
        return _dataclass_init(cls)
    if name == "__repr__":
        import dataclasses
        shown = ", ".join(f"{f.name}=self.{f.name}" for f in dataclasses.fields(cls) if f.repr)
        return "(self) -> str", [f"return '{cls.__name__}({shown})'"]
    if name == "__hash__":
        return "(self) -> int", ["raise NotImplementedError('__hash__ is not supported for dataclasses in TorchScript')"]
    if name in ("__eq__", "__ne__"):
        converse = "!=" if name == "__eq__" else "=="
        return _dataclass_comparison(cls, True, False, [f"if val1 {converse} val2:", "    return False"])
    op = "<" if name in ("__lt__", "__le__") else ">"
    return _dataclass_comparison(cls, name in ("__le__", "__ge__"), True,
                                 [f"if val1 {op} val2:", "    return True", f"elif val2 {op} val1:", "    return False"])


def _add_dataclass_methods(cls, source):
    """A @dataclass's source with the methods the dataclasses module
    generated (those 1.13 synthesizes, when the class body does not define
    them) written out after its body, as 1.13 compiles dataclasses."""
    import ast
    definition = ast.parse(source).body[0]
    defined = {node.name for node in definition.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    indent = " " * definition.body[0].col_offset
    added = []
    for name in _DATACLASS_METHODS:
        if name in defined or not isinstance(cls.__dict__.get(name), types.FunctionType):
            continue
        signature, body = _dataclass_method(cls, name)
        added.append(f"{indent}def {name}{signature}:\n")
        added += [f"{indent}    {line}\n" for line in body or ["pass"]]
    if not added:
        return source
    return source.rstrip("\n") + "\n" + "".join(added)


def _script_class(cls):
    import dataclasses
    cached = cls.__dict__.get("__kiln_script_class__")
    if cached is _COMPILING:
        raise RuntimeError(f"kiln.script: class {cls.__qualname__} refers to itself while it is being compiled")
    if cached is not None:
        return cached
    _check_class(cls)
    source, filename, first_line = _class_source(cls)
    source = _drop_class_assigns(_stub_marked_methods(cls, source))
    if dataclasses.is_dataclass(cls):
        source = _add_dataclass_methods(cls, source)
    cls.__kiln_script_class__ = _COMPILING
    try:
        class_type = _C._compile_class(source, filename, first_line, _class_free_names(cls), _qualified_name(cls))
    except BaseException:
        del cls.__kiln_script_class__
        raise
    compiled = ScriptClass(cls, class_type)
    cls.__kiln_script_class__ = compiled
    return compiled


class _Overloaded:
    """An overloaded function for script code: `__kiln_overloads__` are the
    ScriptFunctions, one per declaration; the resolver makes calls pick one."""

    def __init__(self, functions):
        self.__kiln_overloads__ = functions


def _torch_overload_schemas(fn):
    """The schemas of the torch.jit._overload declarations of `fn`, or None
    (torch not loaded, or no declarations). torch compiles them: its
    overload machinery checks each declaration against the implementation
    and works out which of the implementation's defaults each one takes
    (those valid for its types)."""
    internal = sys.modules.get("torch._jit_internal")
    torch_script = sys.modules.get("torch.jit._script")
    if internal is None or torch_script is None or not isinstance(fn, types.FunctionType):
        return None
    try:
        pending = internal._get_fn_overloads(internal._qualified_name(fn))
        if not pending and not torch_script._try_get_jit_cached_overloads(fn):
            return None
        compiled = torch_script._get_overloads(fn)
    except Exception:  # torch's own errors: kiln compiles the function as it is
        return None
    return [f.schema for f in compiled] if compiled else None


def _schema_signature(name, schema):
    """`def name(params) -> return` for a torch FunctionSchema; None when a
    default has no source form."""
    def annotation(t):
        text = t.annotation_str
        return "None" if text == "NoneType" else text

    params = []
    for a in schema.arguments:
        param = f"{a.name}: {annotation(a.type)}"
        if a.has_default_value():
            value = a.default_value
            if not (value is None or isinstance(value, (bool, int, float, str, list, tuple))):
                return None
            param += f" = {value!r}"
        params.append(param)
    returns = [annotation(r.type) for r in schema.returns]
    signature = f"def {name}({', '.join(params)})"
    if len(returns) == 1:
        signature += f" -> {returns[0]}"
    return signature


def _has_overloads(fn):
    return bool(overloads(fn)) or _torch_overload_schemas(fn) is not None


class _NTuple:
    """torch.nn.modules.utils's _single, _pair, _triple and _quadruple as
    script code sees them: 1.13 compiles `_pair(x)` to a list of x repeated
    (a list argument as it is), not the Python function."""

    def __init__(self, fn, n):
        self.__wrapped__ = fn
        self.__kiln_ntuple__ = n

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)


_NTUPLES = {"_single": 1, "_pair": 2, "_triple": 3, "_quadruple": 4}


def _script_overloads(impl):
    """The implementation `impl` compiled once per kiln.jit._overload
    declaration: the declaration's signature with impl's body (lines kept
    where they are, so errors point into the file). Kept as
    `impl.__kiln_overloaded__`."""
    import ast
    cached = impl.__dict__.get("__kiln_overloaded__")
    if cached is not None:
        return cached
    source, filename, first_line = _function_source(impl)
    definition = ast.parse(source).body[0]
    lines = source.splitlines(keepends=True)
    body_line = definition.body[0].lineno
    if body_line == 1:
        raise RuntimeError(f"kiln.script: the implementation of overloaded {impl.__qualname__} "
                           "must have its body below the def line")
    signatures = []
    for declaration in overloads(impl) or ():
        declared = ast.parse(_function_source(declaration)[0], type_comments=True).body[0]
        signature = f"def {impl.__name__}({ast.unparse(declared.args)})"
        if declared.returns is not None:
            signature += f" -> {ast.unparse(declared.returns)}"
        if declared.type_comment:
            signature += f":  # type: {declared.type_comment}"
        signatures.append(signature)
    if not signatures:
        for schema in _torch_overload_schemas(impl) or ():
            signature = _schema_signature(impl.__name__, schema)
            if signature is None:
                raise RuntimeError(f"kiln.script: a default of overloaded {impl.__qualname__} has no source form")
            signatures.append(signature)
    functions = []
    for signature in signatures:
        header = signature if "  # type: " in signature else signature + ":"
        overload_source = "".join([header + "\n"] + ["\n"] * (body_line - 2) + lines[body_line - 1:])
        cu = _C._compile(overload_source, filename, first_line, _free_names(impl), impl.__name__)
        functions.append(cu.find_function(impl.__name__))
    compiled = _Overloaded(functions)
    impl.__kiln_overloaded__ = compiled
    return compiled


def script(fn):
    """Compiles a Python function as TorchScript from its source and returns
    a ScriptFunction (callable; `.graph`, `.schema`, `.name`). On a class,
    compiles it as a TorchScript class and returns a kiln.ScriptClass
    (calling it makes script objects). kiln.script (kiln.jit.script) is this
    and, for kiln.nn.Module instances, kiln.nn._script.script_module.

    Names the function does not define are looked up in its closure, then
    its globals: ScriptFunctions are called; plain Python functions are
    compiled too (once: the result is kept as `fn.__kiln_script__`); the
    modules torch, math and kiln (and aliases such as `F` for
    torch.nn.functional) give their builtins; None, bool, int, float, str and
    tuples of these are constants. Python's builtins need no lookup. Errors
    are RuntimeError with TorchScript's message, pointing at the file and
    line of the function."""
    if isinstance(fn, (ScriptFunction, ScriptClass, _NTuple)):
        return fn
    if getattr(fn, "__module__", None) == "torch.nn.modules.utils" and getattr(fn, "__name__", None) in _NTUPLES:
        return _NTuple(fn, _NTUPLES[fn.__name__])
    if isinstance(fn, type):
        if issubclass(fn, enum.Enum):
            return fn  # as torch: script code uses enums without scripting
        if _is_named_tuple(fn):
            return fn
        return _script_class(fn)
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"kiln.script expects a Python function, class or kiln.nn.Module, got {type(fn).__name__}")
    cached = fn.__dict__.get("__kiln_script__")
    if cached is not None and cached is not _COMPILING:
        return cached
    if _has_overloads(fn):
        raise RuntimeError(f"Function {_qualified_name(fn)} cannot be directly compiled because it is overloaded. "
                           "It must be used in a context of a function where its inputs can determine which "
                           "overload to call.")
    source, filename, first_line = _function_source(fn)
    marker = modifier(fn)
    if marker in ("unused", "ignore"):
        source = stub_source(source, fn.__name__, marker)
    fn.__kiln_script__ = _COMPILING
    try:
        cu = _C._compile(source, filename, first_line, _free_names(fn), fn.__name__)
    except BaseException:
        del fn.__kiln_script__
        raise
    # find_function keeps the unit alive as long as the function.
    compiled = cu.find_function(fn.__name__)
    fn.__kiln_script__ = compiled
    return compiled
