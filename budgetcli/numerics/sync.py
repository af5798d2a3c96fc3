"""Threads inside compiled code: the few atomic operations they share work by, and the Python threads that
run them (`Workers`).  Used by the Projectron's opt-in `--threads N` (projection.py's threaded products).

A compiled function called from a Python thread runs without the GIL (`njit(nogil=True)`; the build at
install releases it for those entries too, aot_build.py), so N − 1 workers started by `Workers` compute
beside the main thread while it runs its loop.  They share an int64 `control` array, each field on a cache
line of its own (`FIELD`): the main thread posts a job (its fields, then a new generation), every thread
claims the job's blocks one at a time (a compare-and-swap on a word that holds the generation and the next
block, so that a late thread can never claim a block of the next job), and counts each block done (an
atomic add), which the main thread waits for before it reads what the blocks wrote.

A worker waiting for a job looks at the generation a few thousand times (jobs follow each other within
microseconds), then sleeps: on Linux in the kernel (a futex on the generation's low 32 bits, woken by the
next post, with a timeout as a safety net), elsewhere giving its core away (sched_yield) at each look.
Spinning on a busy machine would take the core from the thread it waits for.

The operations are LLVM's atomic instructions (sequentially consistent) on an element of an int64 array
(`_jit.intrinsic`: LLVM IR of our own, compiled at install as just in time), and `sched_yield` and
`syscall` from the C library: POSIX only (`available`).
"""

from __future__ import annotations

import os
import platform
import sys
import threading
import time

from ._jit import njit, intrinsic  # noqa: I001  (aot_build finds compiled modules by "_jit import njit")

FIELD = 8  # int64s in a cache line: control's fields are FIELD apart
GENERATION, KIND, SIZE, CLAIM, READY, SLEEPERS, FUTEX, TIMEOUT, DONE = (FIELD * k for k in range(9))
MAX_BLOCKS = 64  # DONE[b] = generation << THREAD_BITS | the thread that did block b of that job
CONTROL = DONE + MAX_BLOCKS  # the length of a control array; TIMEOUT is a struct timespec (s, ns)
STOP = -1  # the generation that tells the workers to return
CLAIM_BITS = 16  # CLAIM = generation << CLAIM_BITS | the next block to claim
THREAD_BITS = 8  # threads 0 (the main one) .. 255 (spec.MAX_THREADS = 256)
SPINS = 4000  # looks at the generation before a waiting thread sleeps
SLEEP_NS = 2_000_000  # a sleeping worker looks again at least this often (a lost wake-up costs no more)
FUTEX_WAIT, FUTEX_WAKE = 128, 129  # FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE
SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98, "ppc64le": 221}


def available() -> bool:
    """Threads here need POSIX's sched_yield."""
    return os.name == "posix"


def futex_number() -> int:
    """Linux's futex system call number on this machine, or 0 (sleep by sched_yield instead): the futex
    waits on the generation's low 32 bits, the first four bytes of the int64 on a little-endian machine."""
    if not sys.platform.startswith("linux") or sys.byteorder != "little":
        return 0
    return SYS_FUTEX.get(platform.machine().lower(), 0)


def _pointer(context, builder, array_type, array, index):
    from numba.core import cgutils

    made = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, made, [index])


@intrinsic
def load(typingctx, array, index):
    """array[index] (int64), an atomic read."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_pointer(context, builder, signature.args[0], *args), "seq_cst", 8)

    return types.int64(array, types.intp), codegen


@intrinsic
def store(typingctx, array, index, value):
    """array[index] = value (int64), an atomic write."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store_atomic(args[2], where, "seq_cst", 8)
        return context.get_dummy_value()

    return types.void(array, types.intp, types.int64), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """array[index] += value atomically; the value before."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.atomic_rmw("add", where, args[2], "seq_cst")

    return types.int64(array, types.intp, types.int64), codegen


@intrinsic
def compare_exchange(typingctx, array, index, expected, value):
    """array[index] = value if it holds `expected`, atomically; True if it did."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.extract_value(builder.cmpxchg(where, args[2], args[3], "seq_cst", "seq_cst"), 1)

    return types.boolean(array, types.intp, types.int64, types.int64), codegen


@intrinsic
def futex(typingctx, array, index, operation, value):
    """syscall(array[FUTEX], &array[index], operation, value, &array[TIMEOUT], 0, 0): Linux's futex on the
    low 32 bits of array[index] (`futex_number`), every argument passed as the long syscall() reads."""
    from llvmlite import ir
    from numba.core import cgutils, types

    def codegen(context, builder, signature, args):
        array_type, (control, index, operation, value) = signature.args[0], args
        long = ir.IntType(64)

        def address(at):
            return builder.ptrtoint(_pointer(context, builder, array_type, control, at), long)

        number = builder.load(_pointer(context, builder, array_type, control, context.get_constant(types.intp, FUTEX)))
        timeout = address(context.get_constant(types.intp, TIMEOUT))
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(long, [long], var_arg=True), "syscall"
        )
        zero = ir.Constant(long, 0)
        builder.call(function, [number, address(index), operation, value, timeout, zero, zero])
        return context.get_dummy_value()

    return types.void(array, types.intp, types.int64, types.int64), codegen


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
    """control's generation once it is not `seen`: looked at SPINS times, then asleep until a post wakes
    this thread (a futex; without one, giving the core away at each look)."""
    for _ in range(SPINS):
        now = load(control, GENERATION)
        if now != seen:
            return now
    while True:
        if control[FUTEX] == 0:
            give_way()
        else:
            fetch_add(control, SLEEPERS, 1)  # before the look inside the futex: a post after it wakes us
            futex(control, GENERATION, FUTEX_WAIT, seen & 0xFFFFFFFF)
            fetch_add(control, SLEEPERS, -1)
        now = load(control, GENERATION)
        if now != seen:
            return now


@njit(cache=True)
def claim(control, generation, blocks):
    """The next block of job `generation` for this thread, or −1 when none is left (or the job is over)."""
    while True:
        word = load(control, CLAIM)
        block = word & ((1 << CLAIM_BITS) - 1)
        if word >> CLAIM_BITS != generation or block >= blocks:
            return -1
        if compare_exchange(control, CLAIM, word, word + 1):
            return block


@njit(cache=True)
def publish(control, generation):
    """Set the generation and wake the workers asleep (the futex's own check makes a wake-up lost between
    a worker's count of sleepers and its sleep impossible)."""
    store(control, GENERATION, generation)
    if control[FUTEX] != 0 and load(control, SLEEPERS) > 0:
        futex(control, GENERATION, FUTEX_WAKE, 1 << 30)


@njit(cache=True)
def post(control, kind, size):
    """Post a job (the main thread): its kind and size, then its generation; the generation."""
    generation = control[GENERATION] + 1
    control[KIND] = kind
    control[SIZE] = size
    store(control, CLAIM, generation << CLAIM_BITS)
    publish(control, generation)
    return generation


@njit(cache=True)
def stop(control):
    """Tell the workers to return (`Workers`, from Python)."""
    publish(control, STOP)


class Workers:
    """`count` Python threads each running target(*args, i, control), i = 1 .. count, for the length of a
    `with` block: they are started and seen ready (inside the compiled target, without the GIL) before
    the block runs, and told to return (generation STOP) and joined after it, however it ends."""

    def __init__(self, count: int, target, args: tuple, control):
        self.count, self.target, self.args, self.control = count, target, args, control
        self.threads: list[threading.Thread] = []

    def __enter__(self):
        self.control[:] = 0
        self.control[FUTEX] = futex_number()
        self.control[TIMEOUT + 1] = SLEEP_NS
        try:
            for i in range(1, self.count + 1):
                thread = threading.Thread(target=self.target, args=(*self.args, i, self.control), daemon=True)
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
        stop(self.control)
        for thread in self.threads:
            thread.join()
        self.threads = []
