# SPDX-License-Identifier: Apache-2.0
"""python -m portbench_export.tilegym --suite S --out bundles/tilegym [--target F] [--tuning F]"""
import os

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")   # compiling needs no GPU; prove it

from functools import partial  # noqa: E402

from ..cli import Frontend, main  # noqa: E402
from ..cutile_common import toolchain  # noqa: E402
from .frontend import FRONTEND, Session  # noqa: E402
from .operators import OPERATORS  # noqa: E402
from .package import PIN  # noqa: E402


def frontend_def(session: Session) -> Frontend:
    ops = {name: partial(session.export, op) for name, op in OPERATORS.items()}
    return Frontend(FRONTEND, ops, lambda: {**toolchain(), "tilegym": PIN.split("==")[1]},
                    takes_tuning=True, start=session.start)


if __name__ == "__main__":
    raise SystemExit(main(frontend_def(Session())))
