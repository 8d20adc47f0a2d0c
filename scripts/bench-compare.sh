#!/usr/bin/env bash
# Heartbeat cost of two agent binaries in ONE run (before/after a change): the same local stack
# (monky-test-stack: real OpenBao + the test tenancy, system transport, the demo bundle), one apply
# by the first binary, then N heartbeat ticks of each, alternating, so both meet the same machine
# load. Process wall, CPU and peak RSS come from wait4() (every thread of the process).
# Usage: scripts/bench-compare.sh BEFORE_BIN AFTER_BIN [N, default 20]  → a Markdown table on stdout
set -euo pipefail
cd "$(dirname "$0")/.."
A=$(realpath "$1") B=$(realpath "$2") N="${3:-20}"
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
bash scripts/services.sh >/dev/null
cargo build -q -p monky-test-tenancy --bin monky-test-stack
T="${CARGO_TARGET_DIR:-target}"
DIR=$(mktemp -d /tmp/monky-bench-cmp.XXXXXX)
cleanup() { kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true; docker compose -p monky-cmp-01 down -v >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
# both run from fresh copies: a binary the linker just wrote sits in the page cache in smaller
# folios (more page faults: ≈ 1 ms a heartbeat dearer in place, docs/PERFORMANCE.md)
cp "$A" "$DIR/before"; cp "$B" "$DIR/after"
mkdir -p "$DIR/bundle"; cp docs/demo-bundle/* "$DIR/bundle/"
sed -i 's#monky/data/demo-01/#monky/data/cmp-01/#' "$DIR/bundle/secrets.manifest.json"
sed -i 's#127.0.0.1:18080:8080#127.0.0.1:18083:8080#' "$DIR/bundle/compose.yaml"
"$T/debug/monky-test-stack" --dir "$DIR" --bundle "$DIR/bundle" --env cmp-01 >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/pid"
for _ in $(seq 1 100); do grep -q "monky-test-stack ready" "$DIR/stack.log" && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log" >&2; exit 1; }
python3 - "$DIR/before" "$DIR/after" "$DIR/config.yaml" "$N" "$A" "$B" <<'PY'
import os, subprocess, sys, time, statistics as st
a, b, cfg, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
label = {a: sys.argv[5], b: sys.argv[6]}
def tick(binary):
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "--config", cfg, "run", "--once"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"tick by {binary} failed:\n{err.decode(errors='replace')}")
    return ((time.monotonic() - t0) * 1000, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss / 1024)
tick(a)  # the apply
tick(a); tick(b)  # warm both
res = {a: [], b: []}
for _ in range(n):
    for x in (a, b):
        res[x].append(tick(x))
def col(x, i): return [r[i] for r in res[x]]
print(f"| binary | heartbeat process wall | CPU | peak RSS |")
print("|---|---|---|---|")
for name, x in (("before", a), ("after", b)):
    w, c, r = col(x, 0), col(x, 1), col(x, 2)
    print(f"| {name} | {st.median(w):.0f} ms ({min(w):.0f}–{max(w):.0f}) | {st.median(c):.0f} ms ({min(c):.0f}–{max(c):.0f}) | {st.median(r):.1f} MiB |")
print(f"\n{n} alternating heartbeat ticks each (action none), median (min–max), same stack and run; before = `{label[a]}`, after = `{label[b]}`.")
PY
