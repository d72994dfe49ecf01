"""The resampling functions that torch.nn.functional writes in Python
(interpolate and its deprecated upsample forms, unfold and fold), with torch
1.13's signatures and errors, in TorchScript: kiln.script compiles calls to
them as prim::CallFunction, as torch.jit.script does. `size` and
`scale_factor` take a number or a list, as torch's overloads do."""
import math
from typing import List, Optional, Tuple, Union

import kiln


def _size_list(value: Optional[Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]]], n: int) -> Optional[List[int]]:
    # A number stands for every spatial dim; tuples (module constants) become lists.
    if value is None:
        return None
    if not kiln.jit.is_scripting():
        return [value] * n if isinstance(value, int) else list(value)
    out: List[int] = []
    if isinstance(value, int):
        out = [value for _ in range(n)]
    elif isinstance(value, Tuple[int]):
        out = [value[0]]
    elif isinstance(value, Tuple[int, int]):
        out = [value[0], value[1]]
    elif isinstance(value, Tuple[int, int, int]):
        out = [value[0], value[1], value[2]]
    else:
        out = value
    return out


def _scale_list(value: Optional[Union[float, List[float], Tuple[float], Tuple[float, float], Tuple[float, float, float]]], n: int) -> Optional[List[float]]:
    if value is None:
        return None
    if not kiln.jit.is_scripting():
        return [float(value)] * n if isinstance(value, (int, float)) else [float(v) for v in value]
    out: List[float] = []
    if isinstance(value, float):
        out = [value for _ in range(n)]
    elif isinstance(value, Tuple[float]):
        out = [value[0]]
    elif isinstance(value, Tuple[float, float]):
        out = [value[0], value[1]]
    elif isinstance(value, Tuple[float, float, float]):
        out = [value[0], value[1], value[2]]
    else:
        out = value
    return out


def _pair(value: Union[int, List[int], Tuple[int, int]]) -> List[int]:
    if not kiln.jit.is_scripting():
        return [value, value] if isinstance(value, int) else list(value)
    if isinstance(value, int):
        return [value, value]
    elif isinstance(value, Tuple[int, int]):
        return [value[0], value[1]]
    else:
        return value


def interpolate(input, size: Optional[Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]]] = None, scale_factor: Optional[Union[float, List[float], Tuple[float], Tuple[float, float], Tuple[float, float, float]]] = None, mode: str = "nearest",
                align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None,
                antialias: bool = False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    else:
        if align_corners is None:
            align_corners = False
    dim = input.dim() - 2
    output_size: Optional[List[int]] = None
    scale_factors: Optional[List[float]] = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        sizes = _size_list(size, dim)
        assert sizes is not None
        if not isinstance(size, int):  # a list or tuple must name every spatial dim
            if len(sizes) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got "
                                 "input with spatial dimensions of " + str(list(input.shape[2:])) + " and output size of "
                                 + str(sizes) + ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "output size in (o1, o2, ...,oK) format.")
        output_size = sizes
    elif scale_factor is not None:
        factors = _scale_list(scale_factor, dim)
        assert factors is not None
        if not isinstance(scale_factor, float):
            if len(factors) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but "
                                 "got input with spatial dimensions of " + str(list(input.shape[2:])) + " and "
                                 "scale_factor of shape " + str(factors) + ". Please provide input tensor in "
                                 "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        scale_factors = factors
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        assert scale_factors is not None
        recomputed = scale_factors
        output_size = [int(math.floor(float(input.size(i + 2)) * recomputed[i])) for i in range(dim)]
        scale_factors = None

    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")

    if input.dim() == 3 and mode == "nearest":
        return kiln.upsample_nearest1d(input, output_size, scale_factors)
    if input.dim() == 4 and mode == "nearest":
        return kiln.upsample_nearest2d(input, output_size, scale_factors)
    if input.dim() == 5 and mode == "nearest":
        return kiln.upsample_nearest3d(input, output_size, scale_factors)
    if input.dim() == 3 and mode == "nearest-exact":
        return kiln.nn.functional._upsample_nearest_exact1d(input, output_size, scale_factors)
    if input.dim() == 4 and mode == "nearest-exact":
        return kiln.nn.functional._upsample_nearest_exact2d(input, output_size, scale_factors)
    if input.dim() == 5 and mode == "nearest-exact":
        return kiln.nn.functional._upsample_nearest_exact3d(input, output_size, scale_factors)
    if input.dim() == 3 and mode == "area":
        assert output_size is not None
        return kiln.adaptive_avg_pool1d(input, output_size)
    if input.dim() == 4 and mode == "area":
        assert output_size is not None
        return kiln.adaptive_avg_pool2d(input, output_size)
    if input.dim() == 5 and mode == "area":
        assert output_size is not None
        return kiln.adaptive_avg_pool3d(input, output_size)
    if input.dim() == 3 and mode == "linear":
        assert align_corners is not None
        return kiln.upsample_linear1d(input, output_size, align_corners, scale_factors)
    if input.dim() == 4 and mode == "bilinear":
        assert align_corners is not None
        if antialias:
            return kiln.nn.functional._upsample_bilinear2d_aa(input, output_size, align_corners, scale_factors)
        return kiln.upsample_bilinear2d(input, output_size, align_corners, scale_factors)
    if input.dim() == 5 and mode == "trilinear":
        assert align_corners is not None
        return kiln.upsample_trilinear3d(input, output_size, align_corners, scale_factors)
    if input.dim() == 4 and mode == "bicubic":
        assert align_corners is not None
        if antialias:
            return kiln.nn.functional._upsample_bicubic2d_aa(input, output_size, align_corners, scale_factors)
        return kiln.upsample_bicubic2d(input, output_size, align_corners, scale_factors)

    if input.dim() == 3 and mode == "bilinear":
        raise NotImplementedError("Got 3D input, but bilinear mode needs 4D input")
    if input.dim() == 3 and mode == "trilinear":
        raise NotImplementedError("Got 3D input, but trilinear mode needs 5D input")
    if input.dim() == 4 and mode == "linear":
        raise NotImplementedError("Got 4D input, but linear mode needs 3D input")
    if input.dim() == 4 and mode == "trilinear":
        raise NotImplementedError("Got 4D input, but trilinear mode needs 5D input")
    if input.dim() == 5 and mode == "linear":
        raise NotImplementedError("Got 5D input, but linear mode needs 3D input")
    if input.dim() == 5 and mode == "bilinear":
        raise NotImplementedError("Got 5D input, but bilinear mode needs 4D input")
    raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got " + str(input.dim())
                              + "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                              "nearest-exact (got " + mode + ")")


def upsample(input, size: Optional[Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]]] = None, scale_factor: Optional[Union[float, List[float], Tuple[float], Tuple[float, float], Tuple[float, float, float]]] = None, mode: str = "nearest",
             align_corners: Optional[bool] = None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size: Optional[Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]]] = None, scale_factor: Optional[Union[float, List[float], Tuple[float], Tuple[float, float], Tuple[float, float, float]]] = None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size: Optional[Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]]] = None, scale_factor: Optional[Union[float, List[float], Tuple[float], Tuple[float, float], Tuple[float, float, float]]] = None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def unfold(input, kernel_size: Union[int, List[int], Tuple[int, int]], dilation: Union[int, List[int], Tuple[int, int]] = 1,
           padding: Union[int, List[int], Tuple[int, int]] = 0, stride: Union[int, List[int], Tuple[int, int]] = 1):
    return kiln.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size: Union[int, List[int], Tuple[int, int]], kernel_size: Union[int, List[int], Tuple[int, int]],
         dilation: Union[int, List[int], Tuple[int, int]] = 1, padding: Union[int, List[int], Tuple[int, int]] = 0,
         stride: Union[int, List[int], Tuple[int, int]] = 1):
    return kiln.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                       _pair(stride))


__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "unfold", "fold"]
