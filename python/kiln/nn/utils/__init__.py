"""kiln.nn.utils: helpers for kiln.nn models (packed sequences: kiln.nn.utils.rnn)."""
from . import rnn  # noqa: F401
