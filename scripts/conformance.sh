#!/usr/bin/env bash
# Runs the official MCP conformance suite against taskrail:
#   1. the ten tasks-extension scenarios against `serve --tools demo` (these gate CI), and
#   2. the 2026-07-28 requirement set against `serve --tools conformance`, and
#   3. the client leg (`tools_call` on 2026-07-28) with taskrail's own client.
# The harness (with its own Node 22) is installed by the shared runner into
# $CONFORMANCE_HOME (default ~/.cache/mcp-conformance), never into this project.
# Usage: scripts/conformance.sh [--tasks-only]   Exit: 0 when everything passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The workplace's shared folder: beside the checkout, or (a clone made elsewhere, e.g. in a
# temporary folder) at the workplace's own /work/shared.
runner=""
for shared in ${TASKRAIL_SHARED:+"$TASKRAIL_SHARED"} "$root/../shared" /work/shared; do
  [[ -f $shared/scripts/conformance.sh ]] && { runner=$shared/scripts/conformance.sh; break; }
done
[[ -n $runner ]] || {
  echo "conformance: runner not found in \$TASKRAIL_SHARED, $root/../shared or /work/shared" >&2
  exit 1
}
# The fixtures (conformance/) are compiled into .build/ with the tests; they are not in dist/.
[[ -f $root/dist/cli/main.js && -f $root/.build/conformance/tools.js ]] || {
  echo "conformance: build first (npm run pretest)" >&2; exit 1
}

# start_server runs in a command substitution (a subshell), so pids go through a file.
pidfile=$(mktemp)
cleanup() { while read -r pid; do kill "$pid" 2>/dev/null; done <"$pidfile"; rm -f "$pidfile"; }
trap cleanup EXIT

# Starts `serve` on a free port; prints the URL from its ready line.
start_server() {
  local tools=$1 out
  out=$(mktemp)
  node "$root/dist/cli/main.js" serve --port 0 --store memory: --tools "$tools" --log-level warn >"$out" 2>"$out.err" &
  local pid=$!
  echo "$pid" >>"$pidfile"
  for _ in $(seq 1 100); do
    url=$(grep -o 'http://[^ ]*/mcp' "$out" | head -1)
    [[ -n $url ]] && { echo "$url"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "conformance: serve --tools $tools did not start:" >&2; cat "$out.err" >&2
  return 1
}

fail=0
demo=$(start_server demo) || exit 1
echo "== tasks scenarios against $demo"
bash "$runner" "$demo" || fail=1
if [[ ${1:-} != --tasks-only ]]; then
  full=$(start_server conformance) || exit 1
  echo "== 2026-07-28 requirements against $full"
  bash "$runner" "$full" requirements || fail=1
  echo "== client leg: tools_call (2026-07-28) with .build/conformance/client.js"
  home=${CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance}
  if NO_COLOR=1 npm --prefix "$home" exec -- conformance client \
    --command "node $root/.build/conformance/client.js" \
    --scenario tools_call --spec-version 2026-07-28 >"$home/client-leg.log" 2>&1; then
    echo "ok   client tools_call"
  else
    echo "FAIL client tools_call"; tail -20 "$home/client-leg.log"; fail=1
  fi
fi
exit $fail
