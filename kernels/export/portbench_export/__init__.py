# SPDX-License-Identifier: Apache-2.0
"""portbench_export: turns front-end kernels into portbench bundles (manifest.json + cubins).

Shared pieces: suite reading (`suite`), manifest building and writing (`manifest`), the manifest
validator (`schema`), cubin inspection through cuobjdump (`cubin`), tool discovery and versions
(`tools`) and the common command line (`cli`). One module per front end (`cutile_python`,
`triton`, `cuda_cpp`) maps that front end's ABI onto manifest parameters. Nothing here needs a
GPU or libcuda.
"""

SCHEMA = "portbench.bundle/1"


class ExportError(Exception):
    """A failure the command line reports as one line and a nonzero exit."""
