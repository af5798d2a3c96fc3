"""The shards of a run: paths, globs (one shard per match) and fsspec URLs, read where they are.

A name is a pattern or a URL only when no file has that exact name: `day[1].txt` is that file when
it exists, and a pattern (matching `day1.txt`) only when it does not.  What a pattern matched is
listed in the run's summary (`pattern_notes`)."""

from __future__ import annotations

import glob as glob_
import os

from ...base.core import DataError
from ...io.libsvm import LibsvmReader


def is_url(source: str) -> bool:
    """True for an fsspec URL (`s3://…`, `memory://…`); a file of that exact name is a file."""
    return "://" in source and not os.path.lexists(source)


def is_pattern(source: str) -> bool:
    """True for a glob pattern (`*`, `?`, `[`) that is no file's exact name."""
    return glob_.has_magic(source) and not os.path.lexists(source)


def expand(inputs) -> list[tuple[str, list[str]]]:
    """(input as given, the shards it names) for each input, in order: itself for a path or URL, one
    per match (sorted) for a pattern.  ValueError for a pattern that matches nothing."""
    out = []
    for given in inputs:
        if not is_pattern(given):  # an exact name wins over a pattern
            out.append((given, [given]))
            continue
        if is_url(given):
            import fsspec

            fs, path = fsspec.core.url_to_fs(given)
            found = [fs.unstrip_protocol(p) for p in sorted(fs.glob(path))]
        else:
            found = sorted(glob_.glob(given))
        if not found:
            raise ValueError(f"{given}: no input matches")
        out.append((given, found))
    return out


def shard_sources(inputs) -> list[str]:
    """The shards the inputs name, in order (see `expand`)."""
    return [source for _, found in expand(inputs) for source in found]


def pattern_notes(expansions: list[tuple[str, list[str]]]) -> list[str]:
    """A line for each pattern among `expand`'s inputs, naming the shards it matched, for the summary."""
    return [
        f"{given} matched {len(found)} {'shard' if len(found) == 1 else 'shards'}: {', '.join(found)}"
        for given, found in expansions
        if found != [given]
    ]


def open_shard(source: str, block_lines: int, skip_bad_lines: bool):
    """A LibsvmReader of one shard (a path or an fsspec URL, compression inferred from its name);
    errors name the shard as given."""
    if not is_url(source):
        return LibsvmReader(source, block_lines=block_lines, skip_bad_lines=skip_bad_lines)
    try:
        import fsspec
    except ImportError:
        raise DataError(source, 0, None, "reading a URL needs fsspec: pip install 'budgetlearn[dask]'") from None
    try:
        f = fsspec.open(source, "rb", compression="infer").open()
    except (OSError, ValueError) as exc:
        raise DataError(source, 0, None, f"cannot open: {exc}") from None
    reader = LibsvmReader(f, block_lines=block_lines, skip_bad_lines=skip_bad_lines)
    reader.source_name = source
    reader.close = f.close  # the reader does not own a file object it was given
    return reader
