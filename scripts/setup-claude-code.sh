#!/usr/bin/env bash
# Installs the real Claude Code host, pinned in .hosts/claude-code/package.json, for the tests in
# test/hosts/claude-code (outside the project's node_modules). Idempotent; exits non-zero when
# the binary cannot be installed (the tests then skip with the reason).
set -euo pipefail
cd "$(dirname "$0")/../.hosts/claude-code"
want=$(node -p "require('./package.json').dependencies['@anthropic-ai/claude-code']")
bin=node_modules/@anthropic-ai/claude-code-linux-x64/claude
if [[ -x "$bin" ]] && [[ "$("$bin" --version 2>/dev/null)" == "$want"* ]]; then exit 0; fi
# The wrapper's postinstall only links the native binary, which the tests run directly; npm
# warns that the package wants Node 22, the native binary does not care.
npm install --no-audit --no-fund --ignore-scripts --engine-strict=false --loglevel=error >&2
[[ -x "$bin" ]] && "$bin" --version >/dev/null
