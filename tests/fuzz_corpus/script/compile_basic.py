# The graph of one function, as torch 1.13 prints `f.graph`.

def f(x, y: int):
    return x * y + 1


# With a function named, its graph alone.
