"""Which PyTorch 1.13 tensor-operator overloads kiln lacks, and which kiln
schemas differ from torch's text.

For every aten:: name kiln registers at least one overload of (plus the
names in EXTRA_NAMES), lists torch's overloads of that name that kiln does
not register, leaving out the ones kiln has no use for:

- named-tensor (Dimname) overloads: kiln has no named tensors;
- complex, quantized and sparse overloads: kiln has none of these (a
  sparse overload is one named so, or one of SPARSE_ONLY, the tensor
  overloads that only sparse layouts implement);
- TorchScript's scalar, list and string overloads, which mention no Tensor
  (aten::add.int, aten::len.t, ...), and its dict overloads
  (aten::len.Dict_Tensor): the scalar/list/dict/string operator files own
  those.

Then checks that every kiln schema with a torch counterpart (same name and
overload) prints exactly as torch's does, and lists kiln schemas torch has not.

Run: PYTHONPATH=python /usr/bin/python3 tools/schema_coverage.py [--quiet]
Exit status 1 when a kiln schema differs from torch's.
"""
import re
import sys

import torch

import kiln

# Names kiln must provide although it may not register any overload yet.
EXTRA_NAMES = ("aten::tensor", "aten::as_tensor", "aten::len")

# Tensor overloads whose names do not say sparse but that only sparse
# tensors implement (a dense tensor raises).
SPARSE_ONLY = frozenset({
    "aten::values", "aten::indices", "aten::_values", "aten::_indices",
    "aten::crow_indices", "aten::col_indices", "aten::ccol_indices", "aten::row_indices",
    "aten::coalesce", "aten::is_coalesced", "aten::_coalesced_", "aten::_nnz",
    "aten::sparse_dim", "aten::dense_dim",
})

_TENSOR_TYPE = re.compile(r"\bTensor\b")


def _name(schema_text):
    """'aten::add.Tensor' of a schema's text."""
    return schema_text.split("(", 1)[0]


def _base(full_name):
    return full_name.split(".", 1)[0]


def _full_name(schema):
    """'aten::add.Tensor' of a torch schema object."""
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def _mentions_tensor(schema):
    types = [a.type for a in schema.arguments] + [r.type for r in schema.returns]
    return any(_TENSOR_TYPE.search(str(t)) for t in types)


def exclusion_reason(schema):
    """Why kiln leaves a torch overload out, or None when it should have it."""
    overload = schema.overload_name
    text = str(schema)
    if re.search("name", overload, re.IGNORECASE):
        return "named tensors (Dimname)"
    if "complex" in overload or "complex" in text.split("->")[0]:
        return "complex"
    if "quantized" in overload or "quantized" in schema.name:
        return "quantized"
    if "sparse" in overload or _full_name(schema) in SPARSE_ONLY:
        return "sparse"
    if not _mentions_tensor(schema):
        return "TorchScript scalar/list/str op (no Tensor)"
    if "Dict(" in text:
        return "TorchScript dict op"
    return None


def torch_schemas():
    """{'aten::add.Tensor': schema} for every torch operator."""
    out = {}
    for schema in torch._C._jit_get_all_schemas():
        out.setdefault(_full_name(schema), schema)
    return out


def kiln_schemas():
    """{'aten::add.Tensor': text} for every kiln operator."""
    return {_name(text): text for text in kiln._C._schemas()}


def coverage():
    """(missing, excluded, mismatched, kiln_only):
    missing: [torch schema text] kiln should register but does not;
    excluded: {reason: count} of torch overloads left out on purpose;
    mismatched: [(kiln text, torch text)] of overloads whose text differs;
    kiln_only: [kiln text] of schemas torch does not have, outside kiln's own
    kiln:: namespace (the operators its optimizations introduce, as torch's
    passes introduce prim:: and mkldnn:: ones)."""
    torch_ops = torch_schemas()
    kiln_ops = kiln_schemas()
    names = {_base(n) for n in kiln_ops if n.startswith("aten::")} | set(EXTRA_NAMES)
    missing, excluded = [], {}
    for full, schema in sorted(torch_ops.items()):
        if _base(full) not in names or full in kiln_ops:
            continue
        reason = exclusion_reason(schema)
        if reason:
            excluded[reason] = excluded.get(reason, 0) + 1
        else:
            missing.append(str(schema))
    mismatched, kiln_only = [], []
    for full, text in sorted(kiln_ops.items()):
        if full not in torch_ops:
            if not full.startswith("kiln::"):
                kiln_only.append(text)
        elif str(torch_ops[full]) != text:
            mismatched.append((text, str(torch_ops[full])))
    return missing, excluded, mismatched, kiln_only


def main(argv):
    quiet = "--quiet" in argv
    missing, excluded, mismatched, kiln_only = coverage()
    if not quiet:
        print(f"== torch 1.13 overloads kiln lacks ({len(missing)}) ==")
        for text in missing:
            print("  " + text)
        print(f"== kiln schemas that differ from torch's ({len(mismatched)}) ==")
        for k, t in mismatched:
            print("  kiln:  " + k)
            print("  torch: " + t)
        print(f"== kiln schemas torch does not have ({len(kiln_only)}) ==")
        for text in kiln_only:
            print("  " + text)
        print("== left out on purpose ==")
        for reason, count in sorted(excluded.items()):
            print(f"  {count:4d}  {reason}")
    print(f"missing: {len(missing)}  mismatched: {len(mismatched)}  kiln-only: {len(kiln_only)}  "
          f"excluded: {sum(excluded.values())}")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
