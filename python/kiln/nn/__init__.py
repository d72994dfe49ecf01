"""kiln.nn: neural-network building blocks (modules arrive with the module system)."""
from . import functional  # noqa: F401
