"""Checks of a saved learner state read from a model file that anybody may have written.

The SHA-256 checksum of a model file (modelfile.py) tells a damaged file from a whole one; it is
not keyed, so whoever edits a file can recompute it.  What a file holds is therefore checked before
the compiled loops, which do not bounds-check, ever see it:

1. before any array is read (`check_members`): every array a learner saves is named, with its
   dtype and its shape in terms of the sizes the file declares (the support size n from
   `sv_indptr`, the classes from the header); nothing else is accepted;
2. after reading, before the learner is built (`check_state`): indices in range and strictly
   increasing within each vector, `indptr` starting at 0, never decreasing, ending at the number of
   entries; every float finite; counters and support size consistent; kernel numbers finite.

Each violation is a ValueError whose message names the field; Model.load reports it as
`FILE: invalid model: MESSAGE`.
"""

from __future__ import annotations

import numpy as np

from ..base.core import MAX_INDEX
from ..numerics.kernels import EXPS, MAX_DEGREE
from ..numerics.rng import seed_state

I64, I32, U64, F64 = (np.dtype(t) for t in (np.int64, np.int32, np.uint64, np.float64))
MAX_CLASSES = 1 << 16


def vector_length(members: dict, name: str) -> int:
    """The length a file declares for one of its 1-D arrays."""
    member = members.get(name)
    if member is None or len(member.shape) != 1:
        raise ValueError(f"no array {name!r}, or not a vector")
    return member.shape[0]


def header_int(header: dict, name: str, low: int, high: int) -> int:
    """header[name], an integer in low..high; KeyError when the header has no such field (a file
    of an older layout: Model.load words that)."""
    value = header[name]
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{name} = {value!r} is not an integer in {low}..{high}")
    return value


def widens_to(stored: np.dtype, dtype: np.dtype) -> bool:
    """A model file may store an array of `dtype` in a narrower numeric dtype that holds only values
    of `dtype` (Model.save picks the narrowest that keeps every value exactly): uint8 indices, a
    float64 array of small integers as int8, ..."""
    return stored.kind in "biuf" and np.can_cast(stored, dtype, "safe")


def check_members(algorithm: str, expected: dict, members: dict) -> None:
    """Every declared array is one `expected` names (name -> (shape, dtype); None in a shape: any
    size), with that dtype (or one that `widens_to` it) and shape.  An expected array a file lacks
    is left to the layout defaults (an older file), to the resume state's rebuild or to the
    learner's own refusal."""
    for name, member in members.items():
        if name not in expected:
            raise ValueError(f"array {name!r} is not part of a {algorithm} model")
        shape, dtype = expected[name]
        if (
            not widens_to(member.dtype, dtype)
            or len(member.shape) != len(shape)
            or any(want is not None and want != got for want, got in zip(shape, member.shape))
        ):
            wanted = "×".join("any" if d is None else str(d) for d in shape) or "scalar"
            raise ValueError(
                f"array {name!r} is {member.dtype} of shape {member.shape}; a {algorithm} model "
                f"with these sizes saves {dtype} of shape {wanted}"
            )


def check_csr(prefix: str, indptr: np.ndarray, indices: np.ndarray, n_features: int) -> None:
    """The sparse vectors `prefix`_indptr / `prefix`_indices: what the kernel loops index with."""
    if indptr[0] != 0:
        raise ValueError(f"{prefix}_indptr[0] = {indptr[0]}, must be 0")
    step = np.diff(indptr)
    if (step < 0).any():
        i = int(np.flatnonzero(step < 0)[0]) + 1
        raise ValueError(f"{prefix}_indptr[{i}] = {indptr[i]} is below {prefix}_indptr[{i - 1}] = {indptr[i - 1]}")
    if indptr[-1] != len(indices):
        raise ValueError(f"{prefix}_indptr ends at {indptr[-1]}, not at the {len(indices)} entries of {prefix}_indices")
    outside = (indices < 0) | (indices >= n_features)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"{prefix}_indices[{i}] = {indices[i]} is outside 0..{n_features - 1} (n_features {n_features})"
        )
    increasing = np.diff(indices.astype(np.int64)) > 0
    starts = indptr[1:-1]
    increasing[starts[(starts > 0) & (starts < len(indices))] - 1] = True  # a vector's first entry
    if not increasing.all():
        i = int(np.flatnonzero(~increasing)[0]) + 1
        raise ValueError(
            f"{prefix}_indices[{i}] = {indices[i]} does not increase within its vector (after {indices[i - 1]})"
        )


def check_finite(arrays: dict) -> None:
    for name in sorted(arrays):
        a = arrays[name]
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            i = int(np.flatnonzero(~np.isfinite(a.ravel()))[0])
            raise ValueError(f"{name} holds {a.ravel()[i]} (entry {i}): every number must be finite")


HYPOTHESES = ("online", "running-average", "last", "average", "projected-average")  # model.HYPOTHESES


def check_common(header: dict, arrays: dict, counter_names: tuple) -> None:
    """What every learner's state must satisfy (contract.Learner.state)."""
    for name in ("params", "kernel", "labels", "counters"):
        if name in header and not isinstance(header[name], dict):
            raise ValueError(f"{name} = {header[name]!r} is not a JSON object")
    if type(header["seed"]) is not int:
        raise ValueError(f"seed = {header['seed']!r} is not an integer")
    if header.get("hypothesis", "online") not in HYPOTHESES:
        raise ValueError(f"hypothesis = {header['hypothesis']!r} is none of {', '.join(HYPOTHESES)}")
    n_features = header_int(header, "n_features", 0, MAX_INDEX + 1)  # the largest index + 1
    check_csr("sv", arrays["sv_indptr"], arrays["sv_indices"], n_features)
    check_finite(arrays)
    # more counters than this build knows: a later layout, refused by the learner in its own words
    counters = dict(zip(counter_names, arrays["counters"].tolist()))
    for name, value in counters.items():
        if value < 0:
            raise ValueError(f"counter {name} = {value} is negative")
    for name in ("mistakes", "margin_updates"):
        if counters.get(name, 0) > counters.get("examples", 0):
            raise ValueError(f"counter {name} = {counters[name]} exceeds examples = {counters.get('examples', 0)}")
    kernel = header["kernel"]
    if not isinstance(kernel, dict):
        raise ValueError("kernel is not a description of a kernel")
    for name in ("gamma", "coef0") + (("offset",) if "offset" in kernel else ()):
        if not isinstance(kernel.get(name), (int, float)) or not np.isfinite(kernel[name]):
            raise ValueError(f"kernel {name} = {kernel.get(name)!r} is not a finite number")
    if type(kernel.get("degree")) is not int or not 0 <= kernel["degree"] <= MAX_DEGREE:
        raise ValueError(f"kernel degree = {kernel.get('degree')!r} is not an integer in 0..{MAX_DEGREE}")
    if "exp" in kernel and (kernel["exp"] not in EXPS or kernel.get("kind") != "rbf"):
        raise ValueError(f"kernel exp = {kernel['exp']!r} is not one of {', '.join(EXPS)} of an rbf kernel")
    budget = header["params"].get("budget")
    n = len(arrays["sv_indptr"]) - 1
    # an averaged hypothesis may keep evicted vectors beyond the budget (Model.averaged)
    if (
        isinstance(budget, int)
        and header.get("hypothesis", "online") in ("online", "running-average", "last")
        and n > budget
    ):
        raise ValueError(f"{n} support vectors, more than the budget {budget}")


def check_archive(header: dict, arrays: dict, keep: int, unfolded: str) -> None:
    """A running average's archive of evicted vectors (retired.ARCHIVE_ARRAYS; its arrays' shapes are
    checked with the others by `check_members`): all of its arrays or none, vectors as valid as the
    support vectors, fewer than 2·`keep` of them (a compression leaves fewer), counters that add up;
    `unfolded` (the running sums before the archive was folded into the file's) only beside it."""
    from .retired import ARCHIVE_ARRAYS  # statecheck stays importable without the learner modules

    present = [name for name in ARCHIVE_ARRAYS if name in arrays]
    if not present:
        if unfolded in arrays:
            raise ValueError(f"{unfolded} without the archive of evicted vectors it goes with")
        return
    if len(present) < len(ARCHIVE_ARRAYS):
        raise ValueError(
            f"the archive of evicted vectors lacks {', '.join(sorted(set(ARCHIVE_ARRAYS) - set(present)))}"
        )
    if header.get("hypothesis", "online") != "running-average":
        raise ValueError("an archive of evicted vectors in a model that does not predict with the running average")
    check_csr(
        "retired",
        arrays["retired_indptr"],
        arrays["retired_indices"],
        header_int(header, "n_features", 0, MAX_INDEX + 1),
    )
    rows = len(arrays["retired_indptr"]) - 1
    if not 0 < rows < 2 * keep:
        raise ValueError(f"the archive holds {rows} evicted vectors, not 1 to {2 * keep - 1} (2·max(B, 64) − 1)")
    evicted, compressions = (int(c) for c in arrays["retired_counts"])
    if evicted < rows or compressions < 0 or compressions > evicted:
        raise ValueError(
            f"retired_counts = [{evicted}, {compressions}]: not the evicted vectors (at least the {rows} held) "
            "and the compressions of a run"
        )


def check_sharding(sharding) -> None:
    """A sharded run's checkpoint (model.Model.sharding): shards, --sync-every, positions, streams (and
    Δ, and the passes over each shard, when the run had them)."""
    keys = {"sources", "sync_every", "positions", "streams"}
    if not isinstance(sharding, dict) or set(sharding) - {"divergence", "epochs"} != keys:
        raise ValueError("sharding is not a sharded run's checkpoint")
    divergence = sharding.get("divergence", 1.0)  # present under dynamic averaging only
    if type(divergence) not in (int, float) or not 0 < divergence < float("inf"):
        raise ValueError(f"sharding divergence = {divergence!r} is not a positive number")
    epochs = sharding.get("epochs", 2)  # present when each shard is read more than once only
    if type(epochs) is not int or not 2 <= epochs < 2**31:
        raise ValueError(f"sharding epochs = {epochs!r} is not a whole number of passes above 1")
    k = len(sharding["sources"]) if isinstance(sharding["sources"], list) else -1
    if k < 1 or not all(isinstance(x, str) for x in sharding["sources"]):
        raise ValueError("sharding sources is not a list of inputs")
    if type(sharding["sync_every"]) is not int or not 1 <= sharding["sync_every"] < 2**62:
        raise ValueError(f"sharding sync_every = {sharding['sync_every']!r} is not a positive integer")
    positions, streams = sharding["positions"], sharding["streams"]
    if (
        not isinstance(positions, list)
        or len(positions) != k
        or not all(type(p) is int and 0 <= p < 2**62 for p in positions)
    ):
        raise ValueError("sharding positions are not one count of examples per shard")
    width = len(seed_state(0))
    if (
        not isinstance(streams, list)
        or len(streams) != k
        or not all(
            isinstance(r, list) and len(r) == width and all(type(v) is int and 0 <= v < 2**64 for v in r)
            for r in streams
        )
    ):
        raise ValueError("sharding streams are not one random state per shard")
