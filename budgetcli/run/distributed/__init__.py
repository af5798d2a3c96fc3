"""One model from many shards: iterative parameter mixing with budget compression.

The protocol (McDonald, Hall, Mann, "Distributed training strategies for the structured
perceptron", NAACL 2010, §3 iterative parameter mixing) with the kernel expansions of this package:

- A shard is one input: a path or an fsspec URL (`memory://`, `s3://`, ... when its back-end is
  installed), read in place by the worker that owns it; a glob names one shard per match, in sorted
  order (only when no file has that exact name: `day[1].txt` is the file of that name if there is
  one); a shard is read more than once, so stdin, a pipe or a FIFO cannot be one.  Shard w gets its
  own learner (`Shard`), kept between synchronisations, and its own random stream (seeded by (seed,
  w)); all shards share the kernel, fixed from shard 0's first block as `train` fixes it from its
  input's.
- Each round every shard learns its next `sync_every` examples (fewer at its end), then the driver
  mixes: f = Σ_w (n_w/n) f_w, n_w the examples shard w learned in the round, n their sum (the
  weights of McDonald et al.'s mixing proportional to the data each worker saw).  For kernel
  expansions this is the union of the support sets with coefficients weighted by the shares;
  identical support vectors (the same indices and values, as every vector broadcast at an earlier
  synchronisation is) become one, their coefficients added.  Counters are the sums of the shards':
  the last mixed model's plus every shard's count since it.  The averaged hypothesis is the average,
  over every example any shard learned, of the hypothesis that shard then had: its running sum is
  the last mix's plus what every shard added to it since (`mix`; tested against the protocol
  simulated with weight vectors).  Learners that evict keep no sums for what they evicted: theirs
  is the shares' mix of the shards' averages (and `train --average` refuses them).
- Multiclass learners mix the same way, a coefficient row per vector and a column per class: the
  merged label map lists every shard's classes in the order the shards met them (shard 0's first),
  and each shard's columns are put in that order before the weighted sum (`mix`, `merged_labels`).
  Their lazy scale is folded in (the mix has scale 1), and the running sums of the average restart
  at T times the mixed average.  mc-projectron++ keeps a support set per class (a mistake stores x
  once in class y and once in the rival's, §5 of the Projectron paper), so a vector is merged only
  with the same vector of the same class (`Mixing.row_classes`); each class's members are the
  union's vectors of that class and its inverse is rebuilt (`with_row_classes`).
- Budget compression: a learner with a `budget` parameter gets back to B support vectors by keeping
  the B with the largest |α| (multiclass: the largest row norm; ties to the earlier one) and
  projecting the others onto them by a ridge least-squares solve in the RKHS (`gram.onto_kept`):
  Ahpatron's halving projection θ = (K₂ + ηI)⁻¹K₂₁α₁ (Liao et al., AAAI 2024, eq. 9) with its default
  η = 0.0005 (times the mean k(x, x)), the Projectron's projection (Orabona, Keshet, Caputo, JMLR 2009,
  eq. 7) made well-posed.  Without the ridge (η at round-off level) the kept vectors of a mix are
  nearly dependent and the solve gives coefficients in the thousands, after which a Perceptron step
  no longer moves f: rbp -B 50 on 3 shards of 1,000 projectron-gaussians examples reached 50%
  accuracy, 85% with η (the one-process run: 85%; removal of the smallest |α|: 71%).  One rule for
  every mixable learner but budgeted Pegasos, which brings the union back to B by its own maintenance,
  one vector at a time (merging, removal or projection: Wang, Crammer, Vucetic, ICML 2010, §4;
  `BudgetedPegasos.compress_to`), after which the B points' coefficients are fitted to the whole mix
  by the same ridge projection (`refit`): the projection onto the B largest rows lost 16 points on
  letter at B = 100 with merging (60.3% against 75.7% for one process, 3 shards).  The Projectron and
  Projectron++ have no budget: their union is brought back by their own rule (`compress_to_span`),
  each vector kept only when it lies farther than η from the span of the ones kept before it.
- The resume state (Gram matrices, inverses: `rebuilt`) is not mixed: a mixed model leaves it stale
  and a shard rebuilds it from the support set before it learns again, as for a compact model file.
  (The serial backend rebuilds it once for all its shards, which would each compute the same.)
  Scalars are made afresh by the learner's `mix_scalars` (from the shards') or `after_mix` (from the
  mixed model).
- The mixed model is sent back to every shard, which keeps its own random stream and reading position.
- With `epochs` E (`train --epochs`), every shard reads its input E times over, as one process reads
  a file again for each pass, and the mixing goes on across the passes (McDonald et al. run iterative
  parameter mixing for several epochs); reading positions count examples over the passes.
- Dynamic averaging (Kamp, Boley, Keren, Schuster, Sharfman, "Communication-efficient distributed
  online prediction by dynamic model synchronization", ECML PKDD 2014; with kernels: Kamp, Bothe,
  Boley, Mock, ECML PKDD 2016): every `sync_every` examples each shard sends only its drift
  ‖f_w − r‖² from the last mixed model r (`Shard.divergence`, by kernel sums over both support sets),
  and the shards are mixed as above only when one exceeds Δ (`divergence`); the end of the stream
  mixes always.  Kamp et al. first try to resolve a violation by averaging a growing subset of the
  shards (their "balancing"); here a violation mixes every shard: more bytes per violation than
  balancing, never a different kind of model, and the figures of bench/shards.py count what this
  protocol sends.  r = 0 before the first mix.
- A shard whose worker is lost (its process killed, its machine gone) is started again on a live
  worker from what the driver holds: the last mixed model, the shard's random stream as its last
  report left it, and its reading position (the examples it had learned, skipped again on reading).
  It then learns its round again, so the model is the one a run without the fault writes (`ShardPool`).
- A checkpoint (`on_checkpoint`) is the mixed model with what continuing needs (`Model.sharding`: the
  shards, `sync_every`, each shard's reading position and random stream); resuming it over the same
  shards starts each where it was, so the run ends with the model of one never interrupted.

So the model depends only on the data, the shard order, the seed, `sync_every` and Δ: the serial backend
(every shard in this process, one after the other) and the dask backend (one dask actor per shard)
give byte-identical model files.  Which learners can be mixed is declared by each algorithm
(`contract.Learner.mixing`, mixing.py).
"""

from __future__ import annotations

from ...model.spec import BACKENDS
from .protocol import train
from .sources import shard_sources

__all__ = ["BACKENDS", "shard_sources", "train"]
