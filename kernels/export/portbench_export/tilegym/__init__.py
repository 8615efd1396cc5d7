# SPDX-License-Identifier: Apache-2.0
"""tilegym exporter: `python -m portbench_export.tilegym --suite S --out bundles/tilegym
[--target F] [--tuning F]`.

NVIDIA's upstream TileGym kernels (the pinned PyPI package tilegym==1.5.1, imported, never
copied) as portbench's reference front end. Each configuration runs tilegym's own host wrapper
under stand-ins (a metadata-only torch, tilegym.backend, tilegym.autotune), records its
ct.launch calls (the launch plan) and its autotune candidates, rebuilds the signature cuTile's
JIT would specialise each launch to, and exports those kernels ahead of time for the target."""

from .operators import OPERATORS  # noqa: F401
