#!/usr/bin/env bash
# Installs PGlite (WASM PostgreSQL), its pgvector extension and the wire-protocol
# socket server under .tools/pglite, for the pgvector index contract tests.
# Safe to run again: it skips what is there. Versions pinned together: the socket
# package names the exact PGlite and extension versions as peers.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$PWD/.tools/pglite"
PGLITE_VERSION=0.5.14
PGVECTOR_VERSION=0.0.15
SOCKET_VERSION=0.2.17
if [ -f "$DIR/node_modules/@electric-sql/pglite-socket/package.json" ] &&
   grep -q "\"version\": \"$SOCKET_VERSION\"" "$DIR/node_modules/@electric-sql/pglite-socket/package.json" &&
   [ -f "$DIR/node_modules/@electric-sql/pglite-pgvector/package.json" ]; then
  exit 0
fi
echo "tools: installing @electric-sql/pglite@$PGLITE_VERSION, pglite-pgvector@$PGVECTOR_VERSION, pglite-socket@$SOCKET_VERSION under .tools/pglite (npm)"
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
  "@electric-sql/pglite@$PGLITE_VERSION" \
  "@electric-sql/pglite-pgvector@$PGVECTOR_VERSION" \
  "@electric-sql/pglite-socket@$SOCKET_VERSION"
