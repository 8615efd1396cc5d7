#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Refreshes the generated parts of docs/agent.md from the binary (routing diagram and table,
stage output schemas) and the example job: scripts/gen_agent_docs.py PORTBENCH [TEMPLATE].
The unit test AgentRouting.DocsDrawTheTable fails while they differ."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
binary = sys.argv[1]
doc = ROOT / "docs" / "agent.md"
text = Path(sys.argv[2]).read_text() if len(sys.argv) > 2 else doc.read_text()


def run(*args):
    return subprocess.run([binary, "agent", *args], check=True, capture_output=True, text=True).stdout


parts = {"@MERMAID@": run("routes"), "@TABLE@": run("routes", "--format", "md"), "@SCHEMAS@": run("schemas"),
         "@EXAMPLE@": (ROOT / "configs" / "agent" / "example-coding-agent.json").read_text()}
if len(sys.argv) > 2:
    for k, v in parts.items():
        text = text.replace(k, v)
else:
    text = re.sub(r"```mermaid\n.*?```", lambda m: "```mermaid\n" + parts["@MERMAID@"] + "```", text, flags=re.S)
    text = re.sub(r"\| stage \| verdict \| fail_class \|.*?\n\n\| stage \| cap \(runs\) \|.*?\n\n",
                  lambda m: parts["@TABLE@"] + "\n", text, flags=re.S)
    text = re.sub(r"### analyze\n.*?(?=## Routing and caps)", lambda m: parts["@SCHEMAS@"] + "\n", text, flags=re.S)
doc.write_text(text)
