#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Stands in for a coding agent's command line in the test of scripts/agent_translate.py:
appends the prompt it was given to WORKDIR/agent-prompts.txt and exits with FAKE_AGENT_EXIT."""
import os
import sys

prompt = open(sys.argv[1]).read()
with open(os.path.join(os.environ["PORTBENCH_AGENT_WORKDIR"], "agent-prompts.txt"), "a") as f:
    f.write(prompt + "\n----\n")
sys.exit(int(os.environ.get("FAKE_AGENT_EXIT", "0")))
