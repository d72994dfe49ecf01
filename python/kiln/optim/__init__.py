"""kiln.optim: optimizers with torch.optim 1.13's interface, update formulas
and state_dict format (SGD, Adam, AdamW; lr_scheduler.StepLR).

Steps run under kiln.no_grad with in-place tensor ops, in the order torch's
single-tensor implementations use, so that float32 results agree with
torch's bit for bit."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from . import lr_scheduler  # noqa: F401
