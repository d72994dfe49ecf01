"""Scripting module instances: kiln.script(module) -> ScriptModule.

As torch 1.13's torch/jit/_recursive.py: each module instance gets a
*concrete type* (its Python class, and the names, TorchScript types and kinds
of its parameters, buffers, attributes, constants and submodules, attribute
types inferred from the values unless the class annotates them). Instances
with equal concrete types share one TorchScript class type, whose methods are
compiled once. Submodules are scripted first. The class type is named as
torch names it (`__torch__.<python module>.<Class>`, mangled with
`___torch_mangle_<n>` when one Python class needs several types), and every
module type has the bool attribute `training` (it is in every Module's
__dict__). `forward` and the methods marked @kiln.jit.export are compiled;
the compiler asks for every other method (of the module's class or of a
submodule's) the first time a compiled method uses it (_method_source), so
Python helpers never called from TorchScript are never compiled.

The result is a ScriptModule: a kiln.nn.Module over a kiln._C.ScriptObject,
so parameters(), state_dict(), load_state_dict(), train()/eval() ... behave
as on the eager module. The script object holds the eager module's tensors
themselves (not copies), as torch shares them; other attributes are copied."""
import ast
import inspect
import re
import types
import typing
import warnings
import weakref
from collections import OrderedDict
from collections.abc import MutableMapping

from .. import _C
from .. import _jit
from .._jit_internal import modifier
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential, _ModuleMapping
from .module import Module

# Module.__dict__ entries that are bookkeeping, not model state.
_IGNORED_ATTRIBUTES = {"_parameters", "_buffers", "_non_persistent_buffers_set", "_modules", "_version",
                       "_backward_hooks", "_forward_hooks", "_forward_pre_hooks", "_state_dict_hooks",
                       "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_initializing",
                       "dump_patches"}

_CONSTANT_TYPES = (bool, float, int, str, type(None))


# --- names --------------------------------------------------------------------------------------

def _qualified_name(cls):
    """torch._jit_internal._qualified_name: `__torch__.<module>.<Class>`
    (`__torch__.<Class>` for __main__); kiln's stock modules take torch's names."""
    override = cls.__dict__.get("_jit_override_qualname")
    if override is not None:
        return override
    module_name = cls.__module__
    prefix = "__torch__" if module_name == "__main__" else "__torch__." + module_name
    return prefix + "." + cls.__name__


class _Names:
    """Qualified names in use, mangled as torch's CompilationUnit.mangle does."""

    def __init__(self):
        self.used = set()
        self.mangle_index = 0

    def claim(self, name):
        while name in self.used:
            atoms = name.split(".")
            atoms.insert(len(atoms) - 1, f"___torch_mangle_{self.mangle_index}")
            self.mangle_index += 1
            name = ".".join(atoms)
        self.used.add(name)
        return name


_names = _Names()

# Qualified name of a class type kiln.nn made -> its _ConcreteType, for the
# compiler's questions about the type (_method_source, _explain_missing).
_concrete_types = {}


# --- type annotations -> TorchScript type text -------------------------------------------------

def _is_final(annotation):
    if annotation is typing.Final or typing.get_origin(annotation) is typing.Final:
        return True
    return isinstance(annotation, str) and (annotation == "Final" or annotation.startswith("Final["))


def _annotation_text(annotation):
    """TorchScript annotation text for a Python annotation (typing or str)."""
    if isinstance(annotation, str):
        return annotation
    if annotation is None or annotation is type(None):
        return "NoneType"
    if isinstance(annotation, type) and issubclass(annotation, _C.Tensor):
        return "Tensor"
    if annotation in (int, float, bool, str):
        return annotation.__name__
    if isinstance(annotation, type) and getattr(annotation, "__name__", "") == "Tensor":
        return "Tensor"  # torch.Tensor in shared source
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Final:
        return _annotation_text(args[0]) if args else None
    if origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return f"Optional[{_annotation_text(rest[0])}]"
        return "Union[" + ", ".join(_annotation_text(a) for a in args) + "]"
    names = {list: "List", dict: "Dict", tuple: "Tuple"}
    if origin in names:
        return names[origin] + "[" + ", ".join(_annotation_text(a) for a in args) + "]"
    class_type = getattr(annotation, "class_type", None)  # a script class (kiln.script(cls))
    if class_type is not None and isinstance(class_type, getattr(_C, "ClassType", ())):
        return class_type
    raise RuntimeError(f"unsupported type annotation {annotation!r}")


def _class_annotations(cls):
    """The annotations of cls and its bases below Module (a subclass's win)."""
    merged = {}
    for klass in reversed(cls.__mro__):
        if klass in (object, Module) or not issubclass(klass, Module):
            continue
        merged.update(klass.__dict__.get("__annotations__", {}))
    return merged


def _valid_constant(value, name, owner):
    if isinstance(value, _CONSTANT_TYPES):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(_valid_constant(v, name, owner) for v in value)
    raise TypeError(f"'{type(value).__name__}' object in attribute '{owner}.{name}' is not a valid constant.\n"
                    "Valid constants are:\n1. a nn.ModuleList\n2. a value of type {bool, float, int, str, NoneType}\n"
                    "3. a list or tuple of (2)")


# --- concrete types -----------------------------------------------------------------------------

class _ConcreteType:
    """What one module instance looks like to TorchScript; equal ones share a class type."""

    def __init__(self, py_class, iterable, original_name):
        self.py_class = py_class  # None for a type made elsewhere (wrap_script_object)
        self.iterable = iterable
        self.original_name = original_name
        self.attributes = OrderedDict()  # name -> (type text or ClassType, kind)
        self.constants = OrderedDict()   # name -> value
        self.modules = OrderedDict()     # name -> _ConcreteType
        self.failed = {}                 # name -> why it has no TorchScript type
        self.ignored = ()                # __jit_ignored_attributes__: stay Python
        self.class_type = None
        self.compiled = False

    def key(self):
        def type_key(t):
            return t if isinstance(t, str) else ("class", t.name)
        return (self.py_class, self.iterable,
                tuple((n, type_key(t), k) for n, (t, k) in self.attributes.items()),
                tuple((n, type(v), v) for n, v in self.constants.items()),
                tuple((n, id(c)) for n, c in self.modules.items()),
                tuple(sorted(self.failed)), self.ignored)

    def build(self):
        """Makes the TorchScript class type (attributes, then constants, then
        submodules, in torch's order)."""
        name = _names.claim(_qualified_name(self.py_class))
        ct = _C._new_class_type(name, True, self.iterable)
        _concrete_types[name] = self
        for attr, (type_, kind) in self.attributes.items():
            ct.add_attribute(attr, type_, kind)
        for attr, value in self.constants.items():
            ct.add_constant(attr, value)
        for attr, sub in self.modules.items():
            ct.add_attribute(attr, sub.class_type, "module")
        self.class_type = ct


class _TypeStore:
    def __init__(self):
        self.types = {}  # Python class -> [_ConcreteType]

    def get(self, module):
        if isinstance(module, ScriptModule):
            return module._concrete_type
        concrete = _infer_concrete_type(module)
        known = self.types.setdefault(type(module), [])
        for other in known:
            if other.key() == concrete.key():
                return other
        concrete.build()
        known.append(concrete)
        return concrete

    def forget(self, concrete):
        known = self.types.get(concrete.py_class, [])
        if concrete in known:
            known.remove(concrete)


_type_store = _TypeStore()


def _infer_concrete_type(module, store=None):
    if "_parameters" not in module.__dict__:
        raise RuntimeError(f"'{type(module).__qualname__}' has not been initialized, did you forget to call 'super()'?")
    if isinstance(module, (ModuleDict, ParameterDict)):
        iterable = "dict"
    elif isinstance(module, (ModuleList, Sequential, ParameterList)):
        iterable = "list"
    else:
        iterable = ""
    concrete = _ConcreteType(type(module), iterable, type(module).__name__)
    annotations = _class_annotations(type(module))
    owner = type(module).__name__

    def infer(name, value):
        annotation = annotations.get(name)
        if annotation is not None and not _is_final(annotation):
            try:
                return _annotation_text(annotation)
            except RuntimeError as e:
                raise RuntimeError(f"Error inferring type for {name}: {value!r}: {e}") from None
        if value is None:
            return "NoneType"
        if isinstance(value, _C.ScriptObject):
            return value.type  # an object of a script class: its ClassType
        return _C._type_of(value)

    # Names the user asks TorchScript not to see (torch's __jit_ignored_attributes__).
    ignored = set(getattr(module, "__jit_ignored_attributes__", ()))
    concrete.ignored = tuple(sorted(ignored))
    for name, param in module._parameters.items():
        if name not in ignored:
            concrete.attributes[name] = (infer(name, param) or "Tensor", "parameter")
    for name, buf in module._buffers.items():
        if name not in ignored:
            concrete.attributes[name] = (infer(name, buf) or "Tensor", "buffer")
    for name, sub in module._modules.items():
        if name in ignored:
            continue
        if sub is None:
            # No Optional modules in TorchScript: a None submodule is a None attribute.
            concrete.attributes[name] = ("NoneType", "attribute")
        else:
            concrete.modules[name] = (store or _type_store).get(sub)

    constant_names = list(getattr(module, "__constants__", ()))
    constant_names += [n for n, a in annotations.items() if _is_final(a) and n not in constant_names]
    for name in constant_names:
        if name in concrete.attributes or name in concrete.modules:
            warnings.warn(f"'{name}' was found in ScriptModule constants, but it is a non-constant "
                          f"{concrete.attributes[name][1] if name in concrete.attributes else 'submodule'}. "
                          "Consider removing it.")
            continue
        if not hasattr(module, name):
            warnings.warn(f"'{name}' was found in ScriptModule constants, but was not actually set in __init__. "
                          "Consider removing it.")
            continue
        concrete.constants[name] = _valid_constant(getattr(module, name), name, owner)

    for name, value in module.__dict__.items():
        if name in _IGNORED_ATTRIBUTES or name in ignored or name.startswith("__") or name in concrete.attributes \
                or name in concrete.constants or name in concrete.modules:
            continue
        if isinstance(value, (types.FunctionType, types.MethodType, _C.ScriptFunction)) or callable(value) \
                and not isinstance(value, _C.ScriptObject):
            concrete.failed[name] = (f"(This attribute exists on the Python module, but it is a "
                                     f"{type(value).__name__}; kiln does not script function attributes "
                                     "of modules)")
            continue
        type_ = infer(name, value)
        if type_ is None:
            inferred = "" if name in annotations else " Its type was inferred; try adding a type annotation for " \
                                                      "the attribute."
            concrete.failed[name] = ("(This attribute exists on the Python module, but we failed to convert "
                                     f"Python type: '{type(value).__name__}' to a TorchScript type.{inferred})")
            continue
        concrete.attributes[name] = (type_, "attribute")
    return concrete


# --- methods ------------------------------------------------------------------------------------

def _class_functions(cls):
    """name -> function for the methods of cls and its bases below Module, as
    attribute lookup finds them (subclasses first)."""
    found = {}
    for klass in cls.__mro__:
        if klass in (object, Module):
            break
        for name, value in klass.__dict__.items():
            if name not in found and isinstance(value, types.FunctionType):
                found[name] = value
    return found


def _roots(functions):
    roots = []
    forward = functions.get("forward")
    if forward is not None and modifier(forward) not in ("ignore", "unused"):
        roots.append("forward")
    for name, fn in functions.items():
        if modifier(fn) == "export" and name not in roots:
            roots.append(name)
    return roots


def _stub(source, name, modifier):
    """The def with its signature and a body that raises: how an @unused (or,
    since kiln cannot call Python from TorchScript, an @ignore'd) method
    compiles, as torch compiles @unused ones."""
    tree = ast.parse(source)
    definition = tree.body[0]
    definition.decorator_list = []
    message = f"'{name}' is marked @kiln.jit.{modifier}: kiln cannot run it from TorchScript"
    definition.body = ast.parse(f"raise RuntimeError({message!r})").body
    return ast.unparse(tree) + "\n"


def _function_source(fn, name):
    """(source, file name, first line, free-name lookup) of method `fn`."""
    source, filename, first_line = _jit._function_source(fn)
    marker = modifier(fn)
    if marker in ("ignore", "unused"):
        source = _stub(source, name, marker)
    return source, filename, first_line, _jit._free_names(fn)


def _method_source(class_type, name):
    """The compiler met a call of method `name` of a class type it has not
    compiled: the method's source, or None when the Python class has no such
    method TorchScript may compile. kiln.nn's own methods other than the
    roots (a ModuleDict's items(), a ModuleList's append(), ...) are the
    compiler's sugar or Python; the layers' helpers (_check_input_dim) compile."""
    concrete = _concrete_types.get(class_type.name)
    if concrete is None or concrete.py_class is None:
        return None
    accessor = _property_accessor(concrete.py_class, name)
    if accessor is not None:
        return accessor
    fn = _class_functions(concrete.py_class).get(name)
    if fn is None or fn.__module__ in (__package__ + ".container", __package__ + ".module"):
        return None
    return _function_source(fn, name)


_PROPERTY_METHOD = re.compile(r"__(\w+)_(getter|setter)$")


def _property_accessor(py_class, name):
    """The source of method `__<p>_getter` / `__<p>_setter`: property p's
    fget / fset renamed, as 1.13 compiles a module's properties (those in
    `__jit_unused_properties__` are left out); None when there is none."""
    match = _PROPERTY_METHOD.match(name)
    if match is None:
        return None
    prop_name, kind = match.groups()
    prop = inspect.getattr_static(py_class, prop_name, None)
    if not isinstance(prop, property) or prop_name in getattr(py_class, "__jit_unused_properties__", ()):
        return None
    fn = prop.fget if kind == "getter" else prop.fset
    if fn is None:
        return None
    source, filename, first_line, free_names = _function_source(fn, name)
    source = re.sub(r"\bdef\s+" + re.escape(fn.__name__) + r"\b", "def " + name, source, count=1)
    return source, filename, first_line, free_names


def _explain_missing(class_type, name):
    """Why a module's type lacks `name` though the Python module has it (torch's words), or ""."""
    concrete = _concrete_types.get(class_type.name)
    return "" if concrete is None else concrete.failed.get(name, "")


def _compile_methods(concrete, roots):
    """Compiles `roots` of the concrete type's class; the methods they use
    are compiled as the compiler meets them (it asks _method_source), so
    methods no compiled one reaches are never handed to the compiler: they
    may not be TorchScript at all (Python helpers, f-strings, ...)."""
    functions = _class_functions(concrete.py_class)
    methods = {name: _function_source(functions[name], name) for name in roots
               if not concrete.class_type.has_method(name)}
    if methods:
        try:
            _C._compile_methods(concrete.class_type, methods, list(methods), _method_source, _explain_missing)
        except RuntimeError:
            # The type may hold some of the methods now: the next try makes a new one.
            _type_store.forget(concrete)
            raise
    concrete.compiled = True


# --- instances ----------------------------------------------------------------------------------

def script_module(module):
    """kiln.script(module): the ScriptModule for a kiln.nn.Module instance."""
    if isinstance(module, ScriptModule):
        return module
    if not isinstance(module, Module):
        raise TypeError(f"kiln.script: expected a kiln.nn.Module, got {type(module).__name__}")
    _refuse_hooks(module)
    return _create(module, _type_store.get(module))


def _refuse_hooks(module):
    # torch 1.13 compiles forward hooks into the scripted module; kiln does not yet, and dropping
    # them would change what the module computes.
    for name, sub in module.named_modules():
        if sub.__dict__.get("_forward_pre_hooks") or sub.__dict__.get("_forward_hooks"):
            where = f"submodule '{name}'" if name else "the module"
            raise RuntimeError(f"kiln.script: {where} ({type(sub).__name__}) has forward hooks or pre-hooks, "
                               "which kiln does not compile yet; remove them before scripting "
                               "(kiln.trace runs them)")
        # Full backward hooks are left out of the scripted module, as torch 1.13 leaves them.


def _wrap(obj, concrete, submodules, tensors, non_persistent):
    wrapper_class = {"list": _ScriptModuleList, "dict": _ScriptModuleDict}.get(concrete.iterable, ScriptModule)
    scripted = wrapper_class._construct(obj, concrete, submodules, tensors, non_persistent)
    # Compiled methods are instance attributes, found before Module's (forward, ...).
    for name in concrete.class_type.method_names():
        scripted.__dict__[name] = obj.get_method(name)
    return scripted


def _create(module, concrete, compile_methods=True):
    obj = _C.ScriptObject(concrete.class_type)
    tensors = {}
    for name in concrete.attributes:
        value = getattr(module, name)
        obj.setattr(name, value)
        if isinstance(value, _C.Tensor):
            tensors[name] = value
    submodules = OrderedDict()
    for name, sub_concrete in concrete.modules.items():
        sub = getattr(module, name)
        scripted = sub if isinstance(sub, ScriptModule) else _create(sub, sub_concrete, compile_methods)
        obj.setattr(name, scripted._c)
        submodules[name] = scripted
    if compile_methods and not concrete.compiled:
        _compile_methods(concrete, _roots(_class_functions(concrete.py_class)))
    scripted = _wrap(obj, concrete, submodules, tensors, set(module._non_persistent_buffers_set))
    # Ignored attributes stay Python values on the scripted module, as torch keeps them.
    for name in concrete.ignored:
        if hasattr(module, name):
            object.__setattr__(scripted, name, getattr(module, name))
    # @ignore'd methods stay Python, bound to the scripted module (as torch keeps them).
    for name, fn in _class_functions(type(module)).items():
        if modifier(fn) == "ignore":
            object.__setattr__(scripted, name, types.MethodType(fn, scripted))
    return scripted


# ClassType -> _ConcreteType, for types kiln.nn did not make. Weak values:
# an entry lasts while a wrapped module of the type does (its _concrete_type),
# so a freed module's type, code and frozen constants are freed with it.
_wrapped_types = weakref.WeakValueDictionary()


def wrap_script_object(obj):
    """A ScriptModule over a module object made elsewhere (a traced module,
    a module built in C++), as torch's wrap_cpp_module: its attributes,
    constants, submodules (wrapped too) and compiled methods come from the
    object's class type. There is no eager module: parameters are the
    object's tensors."""
    if not isinstance(obj, _C.ScriptObject) or not obj.type.is_module:
        raise TypeError(f"wrap_script_object: expected a module object (kiln._C.ScriptObject), got {obj!r}")
    class_type = obj.type
    concrete = _wrapped_types.get(class_type)
    if concrete is None:
        concrete = _ConcreteType(None, class_type.iterable, class_type.name.rsplit(".", 1)[-1])
        concrete.class_type = class_type
        concrete.compiled = True
        for name, type_, kind in class_type.attributes():
            if kind != "module":
                concrete.attributes[name] = (type_, kind)
        concrete.constants.update(class_type.constants())
        _wrapped_types[class_type] = concrete
    submodules = OrderedDict()
    for name, _, kind in class_type.attributes():
        if kind == "module":
            submodules[name] = wrap_script_object(obj.getattr(name))
            concrete.modules[name] = submodules[name]._concrete_type
    return _wrap(obj, concrete, submodules, {}, set())


# --- for kiln.trace ------------------------------------------------------------------------------

class _UnsharedTypeStore(_TypeStore):
    """A new type for every module instance (torch's share_types=False):
    tracing adds methods to the types, so they cannot be shared."""

    def get(self, module):
        if isinstance(module, ScriptModule):
            return module._concrete_type
        concrete = _infer_concrete_type(module, self)
        concrete.build()
        return concrete


def script_module_for_trace(module):
    """kiln.trace(module) (kiln/_trace.py): a ScriptModule of new types with no
    methods; the trace adds them (torch's create_script_module with no
    methods to compile). Scripted submodules are kept as they are."""
    if not isinstance(module, Module):
        raise TypeError(f"kiln.trace: expected a kiln.nn.Module, got {type(module).__name__}")
    return _create(module, _UnsharedTypeStore().get(module), compile_methods=False)


# TensorImpl address -> the Python tensor object attributes hand out for it.
# Weak: an entry goes with its object, which holds the tensor (so the
# address is not reused while the entry lives).
_python_tensors = weakref.WeakValueDictionary()


class _Slots(MutableMapping):
    """A live view of a ScriptModule's attributes of one kind (its
    `_parameters` or `_buffers`), so Module's traversals work on it."""

    def __init__(self, owner, kind):
        # Weak: a strong reference would make every ScriptModule a reference
        # cycle, freed (weights included) only when the garbage collector runs.
        self._owner_ref = weakref.ref(owner)
        self._kind = kind

    @property
    def _owner(self):
        owner = self._owner_ref()
        if owner is None:
            raise RuntimeError(f"the scripted module these {self._kind}s belonged to is gone")
        return owner

    def _names(self):
        return [n for n, (_, k) in self._owner._concrete_type.attributes.items() if k == self._kind]

    def __getitem__(self, name):
        if name not in self._names():
            raise KeyError(name)
        return self._owner._get_attribute(name)

    def __setitem__(self, name, value):
        if name not in self._names():
            raise KeyError(f"cannot add '{name}' to a scripted module: its type is fixed")
        self._owner._set_attribute(name, value)

    def __delitem__(self, name):
        raise RuntimeError("cannot delete attributes of a scripted module")

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())


class ScriptModule(Module):
    """A scripted module: kiln.script(module) returns one.

    Attributes read and write the TorchScript object (parameters and buffers
    as tensors shared with the eager module, submodules as ScriptModules,
    constants, other attributes converted to Python); compiled methods are
    callable attributes with `.graph`, `.schema` and `.graph_for(*args)`;
    calling the module runs its compiled forward, and `.graph` is forward's
    graph. parameters(), state_dict(), load_state_dict(), train()/eval(),
    children(), modules() ... are Module's, over the object."""

    @classmethod
    def _construct(cls, obj, concrete, submodules, tensors, non_persistent):
        self = cls.__new__(cls)
        d = self.__dict__
        d["_c"] = obj
        d["_concrete_type"] = concrete
        d["_modules"] = submodules
        d["_tensors"] = tensors  # the Python objects of tensor attributes, so identity is kept
        d["_methods"] = {}
        d["_parameters"] = _Slots(self, "parameter")
        d["_buffers"] = _Slots(self, "buffer")
        d["_non_persistent_buffers_set"] = non_persistent
        return self

    @property
    def original_name(self):
        return self._concrete_type.original_name

    @property
    def graph(self):
        return self.forward.graph

    @property
    def code(self):
        """forward's code, as torch.jit.ScriptModule.code prints it."""
        return self.forward.code

    @property
    def code_with_constants(self):
        """(forward's code, {"c0": value, ...}): the values its CONSTANTS.c<n> name."""
        return self.forward.code_with_constants

    def graph_for(self, *args, **kwargs):
        """forward's optimized graph for these inputs (torch's ScriptModule.graph_for)."""
        return self.forward.graph_for(*args, **kwargs)

    def _get_attribute(self, name):
        value = self._c.getattr(name)
        if isinstance(value, _C.Tensor):
            known = self._tensors.get(name)
            if known is not None and known._same_tensor(value):
                return known
            # One Python object for one tensor, whichever attribute names it
            # (tied weights of a loaded module are one parameter, as in torch).
            shared = _python_tensors.get(value._impl_ptr())
            if shared is not None:
                value = shared
            else:
                _python_tensors[value._impl_ptr()] = value
            self._tensors[name] = value
        return value

    def _set_attribute(self, name, value):
        self._c.setattr(name, value)
        if isinstance(value, _C.Tensor):
            self._tensors[name] = value
        else:
            self._tensors.pop(name, None)

    def __getattr__(self, name):
        # Reached only when normal lookup fails.
        if name.startswith("__") or name in ("_c", "_concrete_type", "_modules", "_tensors", "_methods"):
            raise AttributeError(name)
        concrete = self._concrete_type
        if name in self._modules:
            return self._modules[name]
        if name in concrete.attributes:
            return self._get_attribute(name)
        if name in concrete.constants:
            return concrete.constants[name]
        method = self._methods.get(name)
        if method is not None:
            return method
        if self._c.has_method(name):
            method = self._c.get_method(name)
            self._methods[name] = method
            return method
        why = concrete.failed.get(name, "")
        raise AttributeError(f"'ScriptModule' object has no attribute '{name}'" + (" " + why if why else ""))

    def __setattr__(self, name, value):
        concrete = self._concrete_type
        if name in self._modules:
            if not isinstance(value, ScriptModule):
                raise TypeError(f"cannot assign '{type(value).__name__}' as submodule '{name}' of a scripted module "
                                "(a ScriptModule expected)")
            self._c.setattr(name, value._c)
            self._modules[name] = value
        elif name in concrete.attributes:
            self._set_attribute(name, value)
        elif name in concrete.constants:
            raise AttributeError(f"cannot set '{name}': it is a constant of the scripted module")
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._modules or name in self._concrete_type.attributes:
            raise RuntimeError("cannot delete attributes of a scripted module")
        object.__delattr__(self, name)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def register_forward_pre_hook(self, hook):
        raise RuntimeError("register_forward_pre_hook is not supported on ScriptModules")

    def register_forward_hook(self, hook):
        raise RuntimeError("register_forward_hook is not supported on ScriptModules")

    def register_full_backward_hook(self, hook):
        raise RuntimeError("register_full_backward_hook is not supported on ScriptModules")

    def __dir__(self):
        names = set(object.__dir__(self)) | set(self._concrete_type.attributes) | set(self._modules)
        names |= set(self._concrete_type.constants) | set(self._c.type.method_names())
        return sorted(names)

    def _get_name(self):
        return "ScriptModule"

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def __getstate__(self):
        raise RuntimeError("a ScriptModule cannot be pickled")

    def __deepcopy__(self, memo):
        raise RuntimeError("a ScriptModule cannot be copied; script a copy of the eager module instead")


class _ScriptModuleList(ScriptModule):
    """A scripted ModuleList or Sequential: len(), iteration and indexing as the eager one."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        values = list(self._modules.values())
        if isinstance(idx, slice):
            raise TypeError("slicing a scripted module list is not supported")
        return values[idx]


class _ScriptModuleDict(_ModuleMapping, ScriptModule):
    """A scripted ModuleDict: keys(), items(), values(), [key], len(), `in`."""
