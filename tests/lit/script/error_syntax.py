# RUN: not %kiln graph %s 2>&1 | FileCheck %s
# Malformed source fails in the parser, with the file and the line.

def f(x):
    return x +

# CHECK: kiln: error:
# CHECK: error_syntax.py
# CHECK: return x +
# CHECK: <--- HERE
