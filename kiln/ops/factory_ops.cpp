// aten:: registrations of the tensor factories, random ops and dtype
// conversions, with PyTorch 1.13's schemas. Factories take PyTorch's
// dtype/layout/device/pin_memory keywords; kiln makes strided CPU tensors, so
// other layouts and devices are errors. memory_format is accepted and
// results are always contiguous.
#include "kiln/core/op_registration.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/random.h"

namespace kiln {
namespace {

using namespace pointwise;

using OptDtype = std::optional<ScalarType>;
using OptInt = std::optional<int64_t>;
using OptBool = std::optional<bool>;

// A device argument: None, a Device (in graphs) or its name (from Python).
void checkDevice(const char* op, const IValue& device) {
  if (device.isNone()) return;
  const bool cpu =
      device.isDevice() ? device.toDevice().isCpu() : device.isString() && device.toStringRef().rfind("cpu", 0) == 0;
  KILN_CHECK(cpu, op, ": kiln only supports the cpu device, got ", device);
}

// PyTorch's Layout numbering: 0 is torch.strided.
void checkOptions(const char* op, OptInt layout, const IValue& device, OptBool pin_memory) {
  KILN_CHECK(!layout || *layout == 0, op, ": kiln only supports the strided layout, got layout ", *layout);
  checkDevice(op, device);
  KILN_CHECK(!pin_memory.value_or(false), op, ": pin_memory needs a CUDA device; kiln runs on the CPU only");
}

// aten::to in a fused kernel: only plain dtype conversions (no layout,
// device or memory format).
std::string emitCast(const OpTyping& t) { return castExpr(t.expr("self"), t.compute, t.result); }

bool checkTo(const OpTyping& t, std::string* why) {
  for (const char* name : {"layout", "device", "pin_memory", "memory_format"}) {
    const ValueType* arg = t.find(name);
    if (arg && !arg->isNone()) return refuse(why, std::string("aten::to with a ") + name + " argument");
  }
  return true;
}

const auto conversion = elementwise(TypeRule::Cast, DtypeSet::All, nullptr, checkTo, emitCast);

void checkGenerator(const char* op, const IValue& generator) {
  KILN_CHECK(generator.isNone(), op, ": kiln has no Generator objects; seed the default one with kiln.manual_seed");
}

// Factories of a shape: zeros, ones, empty, rand, randn.
template <typename Make>
auto sizedFactory(const char* name, Make make) {
  return [name, make](IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
    checkOptions(name, layout, device, pin_memory);
    return make(size, dtype.value_or(defaultFloatType()));
  };
}

// The `_like` factories: self's shape, self's dtype unless one is given.
template <typename Make>
auto likeFactory(const char* name, Make make) {
  return [name, make](const Tensor& self, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory,
                      OptInt memory_format) {
    checkOptions(name, layout, device, pin_memory);
    return make(self.sizes(), dtype.value_or(self.dtype()));
  };
}

// `.out` of the `_like` factories: they refill `out` in self's shape.
template <typename Fill>
auto likeOut(Fill fill) {
  return [fill](const Tensor& self, OptInt memory_format, Tensor out) {
    resizeOutput(out, self.sizes());
    fill(out);
    return out;
  };
}

// `.out` of a shape factory.
template <typename Fill>
auto sizedOut(Fill fill) {
  return [fill](IntArrayRef size, Tensor out) {
    resizeOutput(out, size);
    fill(out);
    return out;
  };
}

// `.out` of the `new_` factories: self only lends its dtype, which out= replaces.
template <typename Fill>
auto newOut(Fill fill) {
  return [fill](const Tensor&, IntArrayRef size, Tensor out) { return sizedOut(fill)(size, out); };
}

Tensor emptyOf(IntArrayRef size, ScalarType dtype) { return empty(size, dtype); }
Tensor zerosOf(IntArrayRef size, ScalarType dtype) { return zeros(size, dtype); }
Tensor onesOf(IntArrayRef size, ScalarType dtype) { return ones(size, dtype); }
void fillZeros(Tensor& t) { zero_(t); }
void fillOnes(Tensor& t) { fill_(t, Scalar(int64_t{1})); }
void fillUniform(Tensor& t) { uniform_(t, 0, 1); }
void fillNormal(Tensor& t) { normal_(t, 0, 1); }

Tensor arangeOp(const Scalar& start, const Scalar& end, const Scalar& step, OptDtype dtype, OptInt layout,
                const IValue& device, OptBool pin_memory) {
  checkOptions("arange", layout, device, pin_memory);
  return arange(start, end, step, dtype.value_or(arangeDtype(start, end, step)));
}

Tensor randintOp(int64_t low, int64_t high, IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device,
                 OptBool pin_memory) {
  checkOptions("randint", layout, device, pin_memory);
  return randint(low, high, size, dtype.value_or(ScalarType::Long));
}

Tensor randpermOp(int64_t n, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
  checkOptions("randperm", layout, device, pin_memory);
  return randperm(n, dtype.value_or(ScalarType::Long));
}

Tensor& randintOut(int64_t low, int64_t high, IntArrayRef size, Tensor& out) {
  resizeOutput(out, size);
  return random_(out, low, high);
}

Tensor& randpermOut(int64_t n, Tensor& out) {
  Tensor perm = randperm(n, out.dtype());
  resizeOutput(out, perm.sizes());
  return copy_(out, perm);
}

// torch.tensor / torch.as_tensor in TorchScript: the value's own dtype (int64,
// the default float dtype or bool), then converted to `dtype` when one is given.
Tensor withOptions(const char* op, Tensor t, OptDtype dtype, const IValue& device, bool requires_grad = false) {
  checkDevice(op, device);
  if (dtype) t = to(t, *dtype);
  KILN_CHECK(!requires_grad || isFloatingType(t.dtype()) || isComplexType(t.dtype()),
             "Only Tensors of floating point and complex dtype can require gradients");
  t.impl()->setRequiresGrad(requires_grad);
  return t;
}

// The innermost element type of a (nested) list.
TypePtr leafType(const IValue& list) {
  TypePtr type = list.toListRef().element_type;
  while (const auto* inner = type->cast<ListType>()) type = inner->elementType();
  return type;
}

// A nested list's shape, read along its first elements, as PyTorch does.
DimVector listSizes(const IValue& list) {
  DimVector sizes;
  const IValue* seq = &list;
  while (true) {
    const auto& elems = seq->toListRef().elements;
    sizes.push_back(static_cast<int64_t>(elems.size()));
    if (elems.empty() || !elems[0].isList()) return sizes;
    seq = &elems[0];
  }
}

// Writes the leaves of `seq` (the list at depth `dim`) in row-major order,
// checking that every sublist has the length the first one had.
template <typename T, typename Get>
void storeLeaves(const IValue& seq, IntArrayRef sizes, size_t dim, T*& out, const Get& get) {
  const auto& elems = seq.toListRef().elements;
  KILN_CHECK(static_cast<int64_t>(elems.size()) == sizes[dim], "Expected sequence of length ", sizes[dim], " at dim ",
             dim, " (got ", elems.size(), ")");
  for (const IValue& e : elems) {
    if (dim + 1 < sizes.size()) {
      storeLeaves(e, sizes, dim + 1, out, get);
    } else {
      *out++ = static_cast<T>(get(e));
    }
  }
}

template <typename T, typename Get>
Tensor tensorOfLeaves(const IValue& data, IntArrayRef sizes, ScalarType dtype, const Get& get) {
  Tensor t = empty(sizes, dtype);
  T* out = static_cast<T*>(t.rawData());
  storeLeaves(data, sizes, 0, out, get);
  return t;
}

// aten::tensor / aten::as_tensor.list: a tensor of a (nested) list of ints,
// floats or bools, shaped like the list.
Tensor tensorFromList(const IValue& data) {
  const TypePtr leaf = leafType(data);
  const DimVector sizes = listSizes(data);
  switch (leaf->kind()) {
    case TypeKind::Int:
      return tensorOfLeaves<int64_t>(data, sizes, ScalarType::Long, [](const IValue& v) { return v.toInt(); });
    case TypeKind::Float:  // the default float dtype, float32
      return tensorOfLeaves<float>(data, sizes, ScalarType::Float, [](const IValue& v) { return v.toDouble(); });
    case TypeKind::Bool:
      return tensorOfLeaves<bool>(data, sizes, ScalarType::Bool, [](const IValue& v) { return v.toBool(); });
    case TypeKind::Complex:  // the default complex dtype, complex64
      return tensorOfLeaves<std::complex<float>>(data, sizes, ScalarType::ComplexFloat, [](const IValue& v) {
        const std::complex<double> z = v.toComplexDouble();
        return std::complex<float>(static_cast<float>(z.real()), static_cast<float>(z.imag()));
      });
    default: {
      const bool empty_tensor_list = leaf->kind() == TypeKind::Tensor && sizes.size() == 1 && sizes[0] == 0;
      KILN_ERROR("Input must be of ints, floats, or bools, got ", leaf->str(),
                 empty_tensor_list ? "\nEmpty lists default to List[Tensor]. Add a variable annotation to the "
                                     "assignment to create an empty list of another type (torch.jit.annotate(List[T, "
                                     "[]]) where T is the type of elements in the list for Python 2)"
                                   : "");
    }
  }
}

// Tensor.to: `self` itself when nothing changes and no copy is asked for.
Tensor convert(const Tensor& self, std::optional<ScalarType> dtype, bool copy) {
  return to(self, dtype.value_or(self.dtype()), copy);
}

KILN_REGISTER_OPS(
    // Filled tensors.
    op("aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       sizedFactory("zeros", zerosOf))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", sizedOut(fillZeros))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       sizedFactory("ones", onesOf))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", sizedOut(fillOnes))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](IntArrayRef size, const Scalar& fill_value, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("full", layout, device, pin_memory);
         return full(size, fill_value, dtype.value_or(fullDtype(fill_value)));
       })
        .shape(shapes::full)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)",
       [](IntArrayRef size, const Scalar& fill_value, Tensor out) {
         resizeOutput(out, size);
         return fill_(out, fill_value);
       })
        .shape(shapes::full)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       [](IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory,
          OptInt memory_format) {
         checkOptions("empty", layout, device, pin_memory);
         return empty(size, dtype.value_or(defaultFloatType()));
       })
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       [](IntArrayRef size, OptInt memory_format, Tensor out) {
         resizeOutput(out, size);
         return out;
       })
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::empty_strided.out(SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> Tensor(a!)",
       [](IntArrayRef size, IntArrayRef stride, Tensor out) {
         // Like PyTorch's generated out= form: the functional op's checks (and allocation),
         // then out takes the size with its own (contiguous) strides.
         emptyStrided(size, stride, out.dtype());
         resizeOutput(out, size);
         return out;
       })
        .shape(shapes::emptyStrided)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](IntArrayRef size, IntArrayRef stride, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("empty_strided", layout, device, pin_memory);
         return emptyStrided(size, stride, dtype.value_or(defaultFloatType()));
       })
        .shape(shapes::emptyStrided)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       [](const Scalar& s, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
         checkOptions("scalar_tensor", layout, device, pin_memory);
         return full({}, s, dtype.value_or(defaultFloatType()));
       })
        .shape(shapes::scalarTensor)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& s, Tensor out) {
         resizeOutput(out, {});
         return fill_(out, s);
       })
        .shape(shapes::scalarTensor)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),

    // Shaped like another tensor.
    op("aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       likeFactory("zeros_like", zerosOf))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::zeros_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       likeOut(fillZeros))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       likeFactory("ones_like", onesOf))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::ones_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       likeOut(fillOnes))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       likeFactory("empty_like", emptyOf))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::empty_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       likeOut([](Tensor&) {}))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       [](const Tensor& self, const Scalar& fill_value, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory, OptInt memory_format) {
         checkOptions("full_like", layout, device, pin_memory);
         return full(self.sizes(), fill_value, dtype.value_or(self.dtype()));
       })
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& fill_value, OptInt memory_format, Tensor out) {
         resizeOutput(out, self.sizes());
         return fill_(out, fill_value);
       })
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Tensor& self, IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("new_zeros", layout, device, pin_memory);
         return zeros(size, dtype.value_or(self.dtype()));
       })
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Tensor& self, IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("new_ones", layout, device, pin_memory);
         return ones(size, dtype.value_or(self.dtype()));
       })
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Tensor& self, IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("new_empty", layout, device, pin_memory);
         return empty(size, dtype.value_or(self.dtype()));
       })
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, "
       "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Tensor& self, IntArrayRef size, const Scalar& fill_value, OptDtype dtype, OptInt layout,
          const IValue& device, OptBool pin_memory) {
         checkOptions("new_full", layout, device, pin_memory);
         return full(size, fill_value, dtype.value_or(self.dtype()));
       })
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_zeros.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", newOut(fillZeros))
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_ones.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", newOut(fillOnes))
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Tensor& self, IntArrayRef size, IntArrayRef stride, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("new_empty_strided", layout, device, pin_memory);
         return emptyStrided(size, stride, dtype.value_or(self.dtype()));
       })
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_empty_strided.out(Tensor self, SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor&, IntArrayRef size, IntArrayRef stride, Tensor out) {
         // As empty_strided.out: the functional op's checks, then out resized (contiguous).
         emptyStrided(size, stride, out.dtype());
         resizeOutput(out, size);
         return out;
       })
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_empty.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", newOut([](Tensor&) {}))
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::new_full.out(Tensor self, SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor&, IntArrayRef size, const Scalar& fill_value, Tensor out) {
         resizeOutput(out, size);
         return fill_(out, fill_value);
       })
        .shape(shapes::newFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),

    // In-place fills.
    op("aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
       [](Tensor self, const Scalar& value) { return fill_(self, value); })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: FillBackward2"}),
    op("aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
       [](Tensor self, const Tensor& value) { return fill_(self, value); })
        .derivative({"self: torch.zeros_like(grad)", "value: grad.sum()", "grad_fn: FillBackward3"}),
    op("aten::zero_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return zero_(self); })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: ZeroBackward0"}),

    // Ranges and identity.
    op("aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       [](const Scalar& end, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
         return arangeOp(Scalar(int64_t{0}), end, Scalar(int64_t{1}), dtype, layout, device, pin_memory);
       })
        .shape(shapes::arange)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Scalar& start, const Scalar& end, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) { return arangeOp(start, end, Scalar(int64_t{1}), dtype, layout, device, pin_memory); })
        .shape(shapes::arange)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
       "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       arangeOp)
        .shape(shapes::arange)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& start, const Scalar& end, const Scalar& step, Tensor out) {
         return arangeOut(start, end, step, out);
       })
        .shape(shapes::arange)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& end, Tensor out) { return arangeOut(Scalar(int64_t{0}), end, Scalar(int64_t{1}), out); })
        .shape(shapes::arange)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](const Scalar& start, const Scalar& end, int64_t steps, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkOptions("linspace", layout, device, pin_memory);
         return linspace(start, end, steps, dtype.value_or(defaultFloatType()));
       })
        .shape(shapes::linspace)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& start, const Scalar& end, int64_t steps, Tensor out) {
         return linspaceOut(start, end, steps, out);
       })
        .shape(shapes::linspace)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::eye(int n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       [](int64_t n, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
         checkOptions("eye", layout, device, pin_memory);
         return eye(n, n, dtype.value_or(defaultFloatType()));
       })
        .shape(shapes::eye)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::eye.m(int n, int m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       [](int64_t n, int64_t m, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
         checkOptions("eye", layout, device, pin_memory);
         return eye(n, m, dtype.value_or(defaultFloatType()));
       })
        .shape(shapes::eye)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::eye.out(int n, *, Tensor(a!) out) -> Tensor(a!)", [](int64_t n, Tensor out) { return eyeOut(n, n, out); })
        .shape(shapes::eye)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::eye.m_out(int n, int m, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t n, int64_t m, Tensor out) { return eyeOut(n, m, out); })
        .shape(shapes::eye)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory), );

KILN_REGISTER_OPS(
    // Random tensors, drawn from the default generator.
    op("aten::manual_seed(int seed) -> ()", [](int64_t seed) { manualSeed(static_cast<uint64_t>(seed)); }),
    op("aten::rand(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       sizedFactory("rand", rand))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::rand.generator(int[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](IntArrayRef size, const IValue& generator, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkGenerator("rand", generator);
         return sizedFactory("rand", rand)(size, dtype, layout, device, pin_memory);
       })
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::rand.out(int[] size, *, Tensor(a!) out) -> Tensor(a!)", sizedOut(fillUniform))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::rand.generator_out(int[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)",
       [](IntArrayRef size, const IValue& generator, Tensor out) {
         checkGenerator("rand", generator);
         return sizedOut(fillUniform)(size, out);
       })
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randn(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       sizedFactory("randn", randn))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randn.generator(int[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](IntArrayRef size, const IValue& generator, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkGenerator("randn", generator);
         return sizedFactory("randn", randn)(size, dtype, layout, device, pin_memory);
       })
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randn.out(int[] size, *, Tensor(a!) out) -> Tensor(a!)", sizedOut(fillNormal))
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randn.generator_out(int[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)",
       [](IntArrayRef size, const IValue& generator, Tensor out) {
         checkGenerator("randn", generator);
         return sizedOut(fillNormal)(size, out);
       })
        .shape(shapes::floatFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint(int high, int[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       [](int64_t high, IntArrayRef size, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
         return randintOp(0, high, size, dtype, layout, device, pin_memory);
       })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.generator(int high, int[] size, *, Generator? generator, ScalarType? dtype=4, "
       "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       [](int64_t high, IntArrayRef size, const IValue& generator, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory) {
         checkGenerator("randint", generator);
         return randintOp(0, high, size, dtype, layout, device, pin_memory);
       })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.low(int low, int high, int[] size, *, ScalarType? dtype=4, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       randintOp)
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.low_generator(int low, int high, int[] size, *, Generator? generator, ScalarType? dtype=4, "
       "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       [](int64_t low, int64_t high, IntArrayRef size, const IValue& generator, OptDtype dtype, OptInt layout,
          const IValue& device, OptBool pin_memory) {
         checkGenerator("randint", generator);
         return randintOp(low, high, size, dtype, layout, device, pin_memory);
       })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.out(int high, int[] size, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t high, IntArrayRef size, Tensor out) { return randintOut(0, high, size, out); })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.generator_out(int high, int[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t high, IntArrayRef size, const IValue& generator, Tensor out) {
         checkGenerator("randint", generator);
         return randintOut(0, high, size, out);
       })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.low_out(int low, int high, int[] size, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t low, int64_t high, IntArrayRef size, Tensor out) { return randintOut(low, high, size, out); })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint.low_generator_out(int low, int high, int[] size, *, Generator? generator, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](int64_t low, int64_t high, IntArrayRef size, const IValue& generator, Tensor out) {
         checkGenerator("randint", generator);
         return randintOut(low, high, size, out);
       })
        .shape(shapes::longFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randperm(int n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None) -> Tensor",
       randpermOp)
        .shape(shapes::randperm)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randperm.generator(int n, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       [](int64_t n, const IValue& generator, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory) {
         checkGenerator("randperm", generator);
         return randpermOp(n, dtype, layout, device, pin_memory);
       })
        .shape(shapes::randperm)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randperm.out(int n, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t n, Tensor out) { return randpermOut(n, out); })
        .shape(shapes::randperm)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randperm.generator_out(int n, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t n, const IValue& generator, Tensor out) {
         checkGenerator("randperm", generator);
         return randpermOut(n, out);
       })
        .shape(shapes::randperm)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       likeFactory("rand_like", rand))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::rand_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       likeOut(fillUniform))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       likeFactory("randn_like", randn))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randn_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       likeOut(fillNormal))
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint_like(Tensor self, int high, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       [](const Tensor& self, int64_t high, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory,
          OptInt memory_format) {
         return randintOp(0, high, self.sizes(), dtype.value_or(self.dtype()), layout, device, pin_memory);
       })
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint_like.low_dtype(Tensor self, int low, int high, *, ScalarType? dtype=None, "
       "Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       [](const Tensor& self, int64_t low, int64_t high, OptDtype dtype, OptInt layout, const IValue& device,
          OptBool pin_memory, OptInt memory_format) {
         return randintOp(low, high, self.sizes(), dtype.value_or(self.dtype()), layout, device, pin_memory);
       })
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint_like.out(Tensor self, int high, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, int64_t high, OptInt memory_format, Tensor out) {
         return randintOut(0, high, self.sizes(), out);
       })
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::randint_like.low_dtype_out(Tensor self, int low, int high, *, MemoryFormat? memory_format=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t low, int64_t high, OptInt memory_format, Tensor out) {
         return randintOut(low, high, self.sizes(), out);
       })
        .shape(shapes::likeFactory)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> Tensor(a!)",
       [](Tensor self, double from, double to, const IValue& generator) {
         checkGenerator("uniform_", generator);
         return uniform_(self, from, to);
       })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: UniformBackward0"}),
    op("aten::normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor(a!)",
       [](Tensor self, double mean, double std, const IValue& generator) {
         checkGenerator("normal_", generator);
         return normal_(self, mean, std);
       })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: NormalBackward0"}),
    op("aten::random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)",
       [](Tensor self, int64_t from, OptInt to, const IValue& generator) {
         checkGenerator("random_", generator);
         return random_(self, from, to);
       })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: RandomBackward0"}),
    op("aten::random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)",
       [](Tensor self, int64_t to, const IValue& generator) {
         checkGenerator("random_", generator);
         return random_(self, 0, to);
       })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: RandomBackward1"}),
    op("aten::random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)", [](Tensor self,
                                                                                        const IValue& generator) {
      checkGenerator("random_", generator);
      return random_(self);
    }).derivative({"self: torch.zeros_like(grad)", "grad_fn: RandomBackward2"}), );

KILN_REGISTER_OPS(
    // Tensors of TorchScript values.
    op("aten::tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> "
       "Tensor",
       [](double t, OptDtype dtype, const IValue& device, bool requires_grad) {
         return withOptions("tensor", full({}, t, defaultFloatType()), dtype, device, requires_grad);
       })
        .shape(shapes::tensorFromData),
    op("aten::tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
       [](int64_t t, OptDtype dtype, const IValue& device, bool requires_grad) {
         return withOptions("tensor", full({}, t, ScalarType::Long), dtype, device, requires_grad);
       })
        .shape(shapes::tensorFromData),
    op("aten::tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> "
       "Tensor",
       [](bool t, OptDtype dtype, const IValue& device, bool requires_grad) {
         return withOptions("tensor", full({}, t, ScalarType::Bool), dtype, device, requires_grad);
       })
        .shape(shapes::tensorFromData),
    op("aten::tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
       [](const IValue& data, OptDtype dtype, const IValue& device, bool requires_grad) {
         return withOptions("tensor", tensorFromList(data), dtype, device, requires_grad);
       })
        .shape(shapes::tensorFromData),
    op("aten::as_tensor.float(float t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
       [](double t, OptDtype dtype, const IValue& device) {
         return withOptions("as_tensor", full({}, t, defaultFloatType()), dtype, device);
       })
        .shape(shapes::tensorFromData),
    op("aten::as_tensor.int(int t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
       [](int64_t t, OptDtype dtype, const IValue& device) {
         return withOptions("as_tensor", full({}, t, ScalarType::Long), dtype, device);
       })
        .shape(shapes::tensorFromData),
    op("aten::as_tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
       [](bool t, OptDtype dtype, const IValue& device) {
         return withOptions("as_tensor", full({}, t, ScalarType::Bool), dtype, device);
       })
        .shape(shapes::tensorFromData),
    // `data` itself when it already has the dtype (and, unlike tensor(), keeps its requires_grad).
    op("aten::as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a)",
       [](const Tensor& data, OptDtype dtype, const IValue& device) {
         checkDevice("as_tensor", device);
         return to(data, dtype.value_or(data.dtype()));
       })
        .shape(shapes::tensorFromData)
        .derivative({"data: grad", "grad_fn: ToCopyBackward0"}),
    op("aten::as_tensor.list(t[] data, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
       [](const IValue& data, OptDtype dtype, const IValue& device) {
         return withOptions("as_tensor", tensorFromList(data), dtype, device);
       })
        .shape(shapes::tensorFromData),

    // Conversions.
    op("aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
       "MemoryFormat? memory_format=None) -> Tensor(a)",
       [](const Tensor& self, ScalarType dtype, bool non_blocking, bool copy, OptInt memory_format) {
         return convert(self, dtype, copy);
       })
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"})
        .shape(shapes::to)
        .pointwise(conversion)
        .traits(OpTrait::OnlySelfRequiresGrad),
    op("aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
       "MemoryFormat? memory_format=None) -> Tensor(a)",
       [](const Tensor& self, const Tensor& other, bool non_blocking, bool copy, OptInt memory_format) {
         return convert(self, other.dtype(), copy);
       })
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"})
        .shape(shapes::to)
        .pointwise(conversion)
        .traits(OpTrait::OnlySelfRequiresGrad),
    op("aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> "
       "Tensor(a)",
       [](const Tensor& self, OptDtype dtype, OptInt layout, const IValue& device, OptBool pin_memory,
          bool non_blocking, bool copy, OptInt memory_format) {
         checkOptions("to", layout, device, pin_memory);
         return convert(self, dtype, copy);
       })
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"})
        .shape(shapes::to)
        .pointwise(conversion)
        .traits(OpTrait::OnlySelfRequiresGrad),
    op("aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, "
       "MemoryFormat? memory_format=None) -> Tensor(a)",
       [](const Tensor& self, const IValue& device, ScalarType dtype, bool non_blocking, bool copy,
          OptInt memory_format) {
         checkDevice("to", device);
         return convert(self, dtype, copy);
       })
        .shape(shapes::to)
        .traits(OpTrait::OnlySelfRequiresGrad)
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"}),
    op("aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, "
       "bool copy=False) -> Tensor(b|a)",
       [](const Tensor& self, const IValue& device, OptDtype dtype, bool non_blocking, bool copy) {
         checkDevice("to", device);
         return convert(self, dtype, copy);
       })
        .shape(shapes::to)
        .traits(OpTrait::OnlySelfRequiresGrad)
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"}),
    op("aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> "
       "Tensor(b|a)",
       [](const Tensor& self, OptDtype dtype, bool non_blocking, bool copy) { return convert(self, dtype, copy); })
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"})
        .shape(shapes::to)
        .pointwise(conversion)
        .traits(OpTrait::OnlySelfRequiresGrad),
    op("aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)",
       [](const Tensor& self, bool non_blocking, bool copy) { return convert(self, std::nullopt, copy); })
        .shape(shapes::to)
        .traits(OpTrait::OnlySelfRequiresGrad)
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"}),
    op("aten::type_as(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return to(self, other.dtype()); })
        .shape(shapes::typeAs)
        .pointwise(elementwise(TypeRule::Cast, DtypeSet::All, nullptr, nullptr, emitCast))
        .fold(folds::typeAsSameType)
        .traits(OpTrait::OnlySelfRequiresGrad)
        .derivative({"self: grad", "grad_fn: ToCopyBackward0"}), );

}  // namespace
}  // namespace kiln
