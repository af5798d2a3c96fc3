"""Threads inside compiled code: the few atomic operations they share work by, and the Python threads that
run them (`Workers`).  Used by the Projectron's opt-in `--threads N` (projection.py's threaded products).

A compiled function called from a Python thread runs without the GIL (`njit(nogil=True)`; the build at
install releases it for those entries too, aot_build.py), so N − 1 workers started by `Workers` compute
beside the main thread while it runs its loop.  They share an int64 `control` array, each field on a cache
line of its own (`field`): the main thread posts a job (its fields, then a new generation with a
release store), every thread claims the job's blocks one at a time (a compare-and-swap on a word that
holds the generation and the next block, so that a late thread can never claim a block of the next job),
and counts each block done (an atomic add), which the main thread waits for (an acquire load) before it
reads what the blocks wrote.  A worker waiting for a job spins a little, then gives its core away
(sched_yield) at each look, so that on a busy machine it takes no time from other work.

The operations are LLVM's atomic instructions on an element of an int64 array (`_jit.intrinsic`: LLVM IR
of our own, compiled at install as just in time), and `sched_yield` from the C library: POSIX only
(`available`).
"""

from __future__ import annotations

import os
import threading
import time

from ._jit import njit, intrinsic  # noqa: I001  (aot_build finds compiled modules by "_jit import njit")

FIELD = 8  # int64s in a cache line: control's fields are FIELD apart
GENERATION, KIND, SIZE, CLAIM, DONE, READY = (FIELD * k for k in range(6))
CONTROL = 6 * FIELD  # the length of a control array
STOP = -1  # the generation that tells the workers to return
CLAIM_BITS = 16  # CLAIM = generation << CLAIM_BITS | the next block to claim
SPINS = 2000  # looks at the generation before a waiting thread starts to give its core away


def available() -> bool:
    """Threads here need POSIX's sched_yield."""
    return os.name == "posix"


def _pointer(context, builder, array_type, array, index):
    from numba.core import cgutils

    made = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, made, [index])


@intrinsic
def load_acquire(typingctx, array, index):
    """array[index] (int64), read with acquire order: what was written before the release store that wrote
    this value is seen after it."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_pointer(context, builder, signature.args[0], *args), "acquire", 8)

    return types.int64(array, types.intp), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """array[index] = value (int64), written with release order."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store_atomic(args[2], where, "release", 8)
        return context.get_dummy_value()

    return types.void(array, types.intp, types.int64), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """array[index] += value atomically (acquire and release); the value before."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.atomic_rmw("add", where, args[2], "acq_rel")

    return types.int64(array, types.intp, types.int64), codegen


@intrinsic
def compare_exchange(typingctx, array, index, expected, value):
    """array[index] = value if it holds `expected`, atomically (acquire and release); True if it did."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.extract_value(builder.cmpxchg(where, args[2], args[3], "acq_rel", "acquire"), 1)

    return types.boolean(array, types.intp, types.int64, types.int64), codegen


@intrinsic
def give_way(typingctx):
    """sched_yield(): let another runnable thread have this core."""
    from llvmlite import ir
    from numba.core import cgutils, types

    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
        builder.call(function, [])
        return context.get_dummy_value()

    return types.void(), codegen


@njit(cache=True)
def next_generation(control, seen):
    """control's generation once it is not `seen` (spinning, then giving the core away at each look)."""
    spins = 0
    while True:
        now = load_acquire(control, GENERATION)
        if now != seen:
            return now
        spins += 1
        if spins > SPINS:
            give_way()


@njit(cache=True)
def claim(control, generation, blocks):
    """The next block of job `generation` for this thread, or −1 when none is left (or the job is over)."""
    while True:
        word = load_acquire(control, CLAIM)
        block = word & ((1 << CLAIM_BITS) - 1)
        if word >> CLAIM_BITS != generation or block >= blocks:
            return -1
        if compare_exchange(control, CLAIM, word, word + 1):
            return block


@njit(cache=True)
def post(control, kind, size):
    """Post a job (the main thread, its workers waiting): its kind and size, then its generation."""
    generation = control[GENERATION] + 1
    control[KIND] = kind
    control[SIZE] = size
    store_release(control, DONE, 0)
    store_release(control, CLAIM, generation << CLAIM_BITS)
    store_release(control, GENERATION, generation)
    return generation


@njit(cache=True)
def wait_done(control, blocks):
    """Wait until the posted job's blocks are all done (the main thread, after doing its own share)."""
    spins = 0
    while load_acquire(control, DONE) < blocks:
        spins += 1
        if spins > SPINS:
            give_way()


class Workers:
    """`count` Python threads each running target(*args, control), for the length of a `with` block: they
    are started and seen ready (inside the compiled target, without the GIL) before the block runs, and
    told to return (generation STOP) and joined after it, however it ends."""

    def __init__(self, count: int, target, args: tuple, control):
        self.count, self.target, self.args, self.control = count, target, args, control
        self.threads: list[threading.Thread] = []

    def __enter__(self):
        self.control[:] = 0
        try:
            for _ in range(self.count):
                thread = threading.Thread(target=self.target, args=(*self.args, self.control), daemon=True)
                thread.start()
                self.threads.append(thread)
            while self.control[READY] < self.count:  # the first call of the JIT path compiles the target
                if not all(t.is_alive() for t in self.threads):
                    raise RuntimeError("a worker thread ended before it was ready")
                time.sleep(1e-4)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info):
        self.control[GENERATION] = STOP
        for thread in self.threads:
            thread.join()
        self.threads = []
