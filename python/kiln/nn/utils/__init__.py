"""kiln.nn.utils: helpers for kiln.nn models (packed sequences: kiln.nn.utils.rnn;
gradient clipping: clip_grad_norm_, clip_grad_value_)."""
from . import rnn  # noqa: F401
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_  # noqa: F401
