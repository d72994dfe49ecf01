# Loops and branches become prim::Loop and prim::If with SSA block arguments
# (no prim::Store/Load left after the frontend).

def f(n: int) -> int:
    s = 0
    for i in range(n):
        if i % 2 == 0:
            s += i
        else:
            s -= 1
    while s > 10:
        s = s // 2
    return s

