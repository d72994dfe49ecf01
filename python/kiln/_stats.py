"""The Python signatures torch.functional gives operators whose schema
arguments it spells differently: cdist's compute_mode is a string there."""
from ._functions import op

_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 and x2 (torch.cdist)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return op("cdist")(x1, x2, p, _CDIST_MODES[compute_mode])
