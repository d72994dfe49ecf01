@torch.jit.script
def f(x, n=3, *, scale=None):
    # type: (Tensor, int, Optional[float]) -> List[int]
    '''doc'''
    out: List[int] = []
    i = 0
    while i < n and not x.is_cuda:
        if i % 2 == 0: i += 1; continue
        elif i in [1, 2] or i is not None:
            out.append(i ** -2 // 3)
        else:
            raise ValueError("bad" 'x') from e
        i <<= 1
    for a, (b, *c) in zip(x, y):
        assert a < b <= c, "a"
    with torch.no_grad() as g:
        del d['k']
    return [v * 2 for v in out if v > 0x1F_FF]
