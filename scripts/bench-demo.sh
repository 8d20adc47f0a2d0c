#!/usr/bin/env bash
# What a first build costs the demo (issue 22: scripts/demo.sh under five minutes on a fresh
# machine): the demo's two binaries built into an empty target dir as demo.sh builds them now
# (profile `demo`, no Ziti SDK, one cargo run), and as it built them before 0.4 (profile `dev`
# with the vendored SDK, two cargo runs) into another. Wall time depends on what else runs; CPU
# seconds (user + sys) do not, so both are written, with the load average. Crate downloads are
# not measured (the registry cache is kept). Writes docs/bench/demo.md.
# Usage: scripts/bench-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
T=$(mktemp -d /tmp/monky-bench-demo.XXXXXX)
trap 'rm -rf "$T"' EXIT
measure() { # label, cargo args…
  local label=$1 dir=$2 load0 wall user sys
  shift 2
  load0=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -o "$T/.time" -f '%e %U %S' env CARGO_TARGET_DIR="$T/$dir" cargo build "$@" \
    >/dev/null 2>"$T/.err" || { cat "$T/.err" >&2; exit 1; }
  read -r wall user sys <"$T/.time"
  awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v a="$load0" -v b="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "| %s | %.0f s | %.0f s | %s → %s |\n", l, w, u + s, a, b }'
}
rows=$(
  measure "now: \`--profile demo --no-default-features\`, both binaries in one run" now \
    --profile demo --no-default-features -p monky-deployd -p monky-test-tenancy \
    --bin monky-deployd --bin monky-test-stack
  measure "before 0.4: \`dev\` with the vendored SDK, the agent …" before --bin monky-deployd
  measure "… then the test stack" before -p monky-test-tenancy --bin monky-test-stack
)
cat >docs/bench/demo.md <<EOF
# The demo's first build (scripts/bench-demo.sh, $(date -u +%Y-%m-%d), $(nproc) cores)

| build | wall | CPU (user + sys) | load average (1 min) before → after |
|---|---|---|---|
$rows

CPU ÷ $(nproc) is the least wall time an idle $(nproc)-core machine can take (the crate graph
is not perfectly parallel); the wall column means that only when the load stayed near 0.
EOF
cat docs/bench/demo.md
