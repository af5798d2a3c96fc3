"""The shards of a run: paths, globs (one shard per match) and fsspec URLs, read where they are."""

from __future__ import annotations

import glob as glob_

from ..core import DataError
from ..io.libsvm import LibsvmReader


def shard_sources(inputs) -> list[str]:
    """The shards the inputs name, in order: a path or URL each, a glob one per match (sorted).
    ValueError for a glob that matches nothing."""
    out = []
    for given in inputs:
        if not glob_.has_magic(given):
            out.append(given)
            continue
        if "://" in given:
            import fsspec

            fs, path = fsspec.core.url_to_fs(given)
            found = [fs.unstrip_protocol(p) for p in sorted(fs.glob(path))]
        else:
            found = sorted(glob_.glob(given))
        if not found:
            raise ValueError(f"{given}: no input matches")
        out += found
    return out


def open_shard(source: str, block_lines: int, skip_bad_lines: bool):
    """A LibsvmReader of one shard (a path or an fsspec URL, compression inferred from its name);
    errors name the shard as given."""
    if "://" not in source:
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
