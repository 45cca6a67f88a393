#!/usr/bin/env bash
# Installs the TypeScript client's dev dependencies (typescript, esbuild) at
# the versions package-lock.json pins into clients/typescript/node_modules
# (git-ignored), builds the package (ESM, CJS, declarations), runs its Node
# unit tests and prints its minified, gzipped size. cmd/voxgate's
# TestTypeScriptClient then runs test/live against a gateway. Under CI=true
# a missing node or npm is a failure; elsewhere the tests skip and say why.
set -euo pipefail
cd "$(dirname "$0")/../clients/typescript"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "client-ts: node and npm are required under CI" >&2
    exit 1
  fi
  echo "client-ts: node or npm not found; the TypeScript client's tests will skip" >&2
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
rm -rf dist
npm run --silent build
node --test test/unit/
echo "client-ts: size $(npm run --silent size)"
