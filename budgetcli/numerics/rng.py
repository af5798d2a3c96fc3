"""Random numbers inside the compiled loops: splitmix64 (Steele, Lea, Flood 2014) on a one-word
state array, so the state is saved in the model and a resumed run draws the same sequence."""

from __future__ import annotations

import numpy as np

from ._jit import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)


def seed_state(seed: int) -> np.ndarray:
    """The one-word state for a user's --seed."""
    return np.array([np.uint64(seed % 2**64) ^ GOLDEN], np.uint64)


@njit(cache=True)
def next_u64(state):
    """The next 64-bit output; advances state[0]."""
    state[0] += GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def randbelow(state, n):
    """A uniform integer in [0, n), by rejection so that no value is favoured."""
    un = np.uint64(n)
    limit = np.uint64(0xFFFFFFFFFFFFFFFF) - (np.uint64(0xFFFFFFFFFFFFFFFF) % un)
    while True:
        r = next_u64(state)
        if r < limit:
            return np.int64(r % un)


@njit(cache=True)
def unit(state):
    """A uniform float in [0, 1): the top 53 bits of the next output, times 2⁻⁵³."""
    return np.float64(next_u64(state) >> np.uint64(11)) * 2.0**-53
