#!/usr/bin/env bash
# Installs the official Node openai client, at the version package-lock.json
# pins, into testdata/node/node_modules (git-ignored) for
# the completions and responses tests, and @openai/agents-realtime, whose
# browser bundle cmd/voxgate's TestAgentsRealtimeInChromium loads. Under
# CI=true a missing node or npm is a failure; elsewhere the test skips and
# says why.
set -euo pipefail
cd "$(dirname "$0")/../testdata/node"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "node-openai: node and npm are required under CI" >&2
    exit 1
  fi
  echo "node-openai: node or npm not found; the Node client test will skip" >&2
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
