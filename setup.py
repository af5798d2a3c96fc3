"""Builds the optional extension of compiled loops, `budgetcli._loops` (budgetcli/aot_build.py), when
the package is installed.  Everything else is declared in pyproject.toml.  The build never fails for
want of it: without a C compiler (or with BUDGETLEARN_NO_AOT=1 set at install) the package installs
without the extension and its loops are compiled just in time, as `budgetlearn --version` then says."""

import contextlib
import os
import sys
import time

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildLoops(build_ext):
    def build_extension(self, ext):
        outdir = os.path.dirname(self.get_ext_fullpath(ext.name))
        os.makedirs(outdir, exist_ok=True)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from budgetcli import aot_build

        if os.environ.get("BUDGETLEARN_NO_AOT", "0") not in ("", "0"):
            print("budgetlearn: BUDGETLEARN_NO_AOT is set: the loops will be compiled just in time", file=sys.stderr)
            aot_build.write_record(outdir, {"skipped": "BUDGETLEARN_NO_AOT was set at install"})
            return
        started = time.perf_counter()
        try:
            aot_build.build(outdir)
        except Exception as exc:  # no compiler, no pycc, a full disk, ...: the JIT remains, and --version says why
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            print(
                f"budgetlearn: the compiled loops were not built ({reason}); the JIT will compile them", file=sys.stderr
            )
            with contextlib.suppress(OSError):
                aot_build.write_record(outdir, {"failed": reason})
            return
        print(f"budgetlearn: compiled loops built in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    def get_outputs(self):  # the record beside the extension is installed with it
        outputs = super().get_outputs()
        return outputs + [os.path.join(os.path.dirname(p), "_loops.json") for p in outputs if "_loops" in p]


setup(ext_modules=[Extension("budgetcli._loops", sources=[])], cmdclass={"build_ext": BuildLoops})
