# SPDX-License-Identifier: Apache-2.0
"""Tuning records (portbench.tuning-record/1) applied to manifests whose configurations list
their declared variants (`configs[].variants`, docs/bundle-manifest.md): the variant a record
names becomes the configuration's chosen plan, as the exporters do with --tuning. Shared by
scripts/apply_tuning.py and scripts/agent_export_cache.py."""
import json


class RecordError(Exception):
    pass


def params_key(params):
    return json.dumps(params, sort_keys=True)


def load_choices(path):
    """{(op, params key): variant} of a tuning record file."""
    try:
        rec = json.load(open(path))
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: {e}") from e
    if rec.get("schema") != "portbench.tuning-record/1":
        raise RecordError(f"{path}: schema is {rec.get('schema')!r}, not portbench.tuning-record/1")
    return {(c["op"], params_key(c["params"])): c["variant"] for c in rec.get("choices", [])}


def choose(config, variant, source):
    """Makes `variant` the chosen plan of a manifest configuration (in place); False when it is
    already chosen. RecordError when the configuration does not declare it."""
    if variant == config.get("tuning", {}).get("variant"):
        return False
    v = next((v for v in config.get("variants", []) if v["name"] == variant), None)
    if v is None:
        raise RecordError(f"{params_key(config['params'])} has no variant {variant!r} "
                          f"(variants: {[v['name'] for v in config.get('variants', [])]})")
    config.update(tuning=dict(v["tuning"], variant=variant, tuning_source=source),
                  scratch=v["scratch"], launches=v["launches"])
    return True
