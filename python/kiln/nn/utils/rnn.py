"""kiln.nn.utils.rnn: packed sequences, as torch.nn.utils.rnn.

A PackedSequence holds the steps of several sequences of different lengths
time-major in one tensor (`data`), with the number of sequences still running
at each step (`batch_sizes`) and, when the batch was sorted by length, the
permutation that sorted it. kiln's LSTM, GRU and RNN layers take one as input
(eagerly; scripted kiln.nn layers take padded tensors)."""
from collections import namedtuple

from ... import _C
from ... import _functions
from ..._dtype import int64
from ..._factories import tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "invert_permutation"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise ValueError("PackedSequence: batch_sizes is required (make one with pack_padded_sequence)")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    output = _functions.op("empty_like")(permutation)
    output.scatter_(0, permutation, _functions.op("arange")(0, permutation.numel()))
    return output


def _lengths_tensor(lengths):
    """The lengths as an int64 tensor (torch takes a tensor or a list)."""
    if isinstance(lengths, _C.Tensor):
        return lengths.to(int64)
    return tensor([int(n) for n in lengths], dtype=int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch ([T, B, *] or, with batch_first, [B, T, *]) of
    sequences of the given lengths. With enforce_sorted the lengths must be
    in decreasing order; otherwise the batch is sorted here and the
    permutation kept in the result."""
    lengths = _lengths_tensor(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = _functions.op("sort")(lengths, -1, True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _functions.op("_pack_padded_sequence")(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch and the lengths of a PackedSequence, in the order
    the sequences were packed from."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded_output, lengths = _functions.op("_pad_packed_sequence")(sequence.data, sequence.batch_sizes, batch_first,
                                                                    padding_value, max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded_output.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices]
    return padded_output, lengths
