"""Cache hints for the numba kernels: a software prefetch, which changes no result.

Why: the light rows of ``R = D W`` (terms in a few documents each) read, for every entry, a row of W at a
random place of an N x K array that does not fit in the cache; each such row is a wait on memory of about
the same length as the multiply-adds that use it. Asking for the row of an entry a few entries ahead lets
the memory work while the current entry is added.
"""

from __future__ import annotations

from llvmlite import binding as _llvm
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

# LLVM mangles the intrinsic by its pointer type: typed pointers (LLVM < 15) "p0i8", opaque ones "p0"
_PREFETCH = "llvm.prefetch.p0" if _llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"


@intrinsic
def _prefetch_line(typingctx, arr, row, line):
    """Hint the CPU to bring the 64-byte line ``line`` of row ``row`` of the C-ordered 2-D ``arr`` into the
    cache (``llvm.prefetch``: read, high locality, data). A hint only: no result changes and no address
    faults, inside the array or not."""
    sig = types.void(arr, row, line)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i64, i32 = ir.IntType(64), ir.IntType(32)
        stride = cgutils.unpack_tuple(builder, ary.strides, signature.args[0].ndim)[0]
        r = context.cast(builder, args[1], signature.args[1], types.int64)
        c = context.cast(builder, args[2], signature.args[2], types.int64)
        off = builder.add(builder.mul(r, stride), builder.mul(c, ir.Constant(i64, 64)))
        ptr = builder.inttoptr(builder.add(builder.ptrtoint(ary.data, i64), off), ir.IntType(8).as_pointer())
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def prefetch_row(B, j):
    """Hint the CPU to fetch row ``j`` of the C-ordered 2-D array ``B`` (every 64-byte line it touches)."""
    lines = (B.shape[1] * B.itemsize + 63) // 64 + 1  # a row may straddle one line more than its size
    for line in range(lines):
        _prefetch_line(B, j, line)

