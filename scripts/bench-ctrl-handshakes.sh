#!/usr/bin/env bash
# Controller TLS connections per fresh-process heartbeat tick over `sdk` (issue 20), on a real
# quickstart network (scripts/ziti-net.sh) against the local stack (real OpenBao + test tenancy),
# as scripts/bench-ziti.sh sets it up. For each agent binary given (default: this tree's release
# build), one warm-up tick, then N ticks for wall/CPU/RSS (wait4) and N more under
# `strace -f -e trace=connect` counting connect(2) calls to the controller's port and the edge
# router's port (strace slows the process, so those ticks are not timed). Every tick must exit 0.
# Writes docs/bench/ctrl-handshakes.md. BENCH_CTRL_LOGS=DIR keeps every tick's output and strace
# there (with ZITI_LOG=4 the SDK's own log shows which requests share a connection).
#   scripts/bench-ctrl-handshakes.sh [N=10] [LABEL=BINARY ...]   (LABEL without spaces)
# e.g. scripts/bench-ctrl-handshakes.sh 10 1.18.2=/tmp/monky-deployd-1.18.2 patched=target/release/monky-deployd
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-10}"
shift || true
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
export MONKY_ZITI_DIR="${MONKY_ZITI_DIR:-$PWD/target/ziti-net}"
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
command -v strace >/dev/null || { echo "bench-ctrl-handshakes: strace is needed" >&2; exit 1; }
bash scripts/services.sh >/dev/null
net() { bash scripts/ziti-net.sh "$1" "$MONKY_ZITI_DIR" "${@:2}"; }
net start >/dev/null
read -r CTRL_PORT ROUTER_PORT <"$MONKY_ZITI_DIR/ports"

BINS=("$@")
if [ ${#BINS[@]} -eq 0 ]; then
  cargo build -q --release --bin monky-deployd
  BINS=("this-tree=$TARGET/release/monky-deployd")
fi
cargo build -q -p monky-test-tenancy --bin monky-test-stack
DIR=$(mktemp -d /tmp/monky-bench-ctrl.XXXXXX)
cleanup() {
  for p in "$DIR"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
  rm -rf "$DIR"
}
trap cleanup EXIT

mkdir -p "$DIR/bundle"; cp docs/demo-bundle/* "$DIR/bundle/"
sed -i 's#monky/data/demo-01/#monky/data/zctrl-01/#' "$DIR/bundle/secrets.manifest.json"
sed -i 's#127.0.0.1:18080:8080#127.0.0.1:18083:8080#' "$DIR/bundle/compose.yaml"
"$TARGET/debug/monky-test-stack" --dir "$DIR/stack" --bundle "$DIR/bundle" --env zctrl-01 >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/stack.pid"
for _ in $(seq 1 150); do grep -q "monky-test-stack ready" "$DIR/stack.log" && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log" >&2; exit 1; }
CFG="$DIR/stack/config.yaml"
read -r TPORT BPORT < <(python3 - "$CFG" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
tp = re.search(r"^tenancy:\n  host: .*\n  port: (\d+)", t, re.M).group(1)
bp = re.search(r"^bao:\n  host: .*\n  port: (\d+)", t, re.M).group(1)
print(tp, bp)
PY
)
TS="zctrl-tenancy-$$" BS="zctrl-openbao-$$"
net service "$TS" 127.0.0.1 "$TPORT"
net service "$BS" 127.0.0.1 "$BPORT"
net identity "zctrl-box-$$" "$DIR/id.json" "$TS" "$BS"
python3 - "$CFG" "$DIR/id.json" "$TS" "$BS" >"$DIR/sdk.yaml" <<'PY'
import sys
cfg, ident, ts, bs = sys.argv[1:]
s = open(cfg).read()
s = s.replace("transport: system\n", f"transport: sdk\nidentity: {ident}\n")
s = s.replace("tenancy:\n", f"tenancy:\n  service: {ts}\n", 1)
s = s.replace("bao:\n", f"bao:\n  service: {bs}\n", 1)
print(s, end="")
PY

# tick BIN [strace-out] → "wall_ms cpu_ms max_rss_kib" (one run --once; exit 0 or the bench fails)
tick() {
  python3 - "$1" "$DIR/sdk.yaml" "${2:-}" "$CFG" <<'PY'
import os, subprocess, sys, time
b, cfg, trace, plain = sys.argv[1:]
cmd = [b, "--config", cfg, "run", "--once"]
if trace:
    cmd = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", trace] + cmd
r, w = os.pipe()
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=w, stderr=w)
os.close(w)
out = b""
while chunk := os.read(r, 65536):
    out += chunk
_, status, ru = os.wait4(p.pid, 0)
wall = (time.monotonic() - t0) * 1000
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"bench-ctrl-handshakes: tick with {b} failed:\n{out.decode(errors='replace')}")
if os.environ.get("BENCH_CTRL_LOGS"):  # keep the tick's output (with ZITI_LOG=…: the SDK's log)
    n = len(os.listdir(os.environ["BENCH_CTRL_LOGS"]))
    open(os.path.join(os.environ["BENCH_CTRL_LOGS"], f"tick.{n}.log"), "wb").write(out)
print(f"{wall:.0f} {(ru.ru_utime + ru.ru_stime) * 1000:.0f} {ru.ru_maxrss}")
PY
}
# connects to a port in an strace file (connect(2) calls, completed or EINPROGRESS)
connects() { grep -c "sin_port=htons($2)" "$1" || true; }

tick "$(cut -d= -f2- <<<"${BINS[0]}")" >/dev/null   # the apply, on the first binary
for spec in "${BINS[@]}"; do
  label=${spec%%=*} bin=${spec#*=}
  [ -x "$bin" ] || { echo "bench-ctrl-handshakes: no binary $bin" >&2; exit 1; }
  tick "$bin" >/dev/null   # warm-up
  for i in $(seq 1 "$N"); do
    echo "$label time $(tick "$bin")" >>"$DIR/rows.txt"
    tick "$bin" "$DIR/trace.$i" >/dev/null
    [ -z "${BENCH_CTRL_LOGS:-}" ] || cp "$DIR/trace.$i" "$BENCH_CTRL_LOGS/trace.$label.$i"
    echo "$label conn $(connects "$DIR/trace.$i" "$CTRL_PORT") $(connects "$DIR/trace.$i" "$ROUTER_PORT")" >>"$DIR/rows.txt"
  done
  "$bin" version | head -1 >"$DIR/version.$label" 2>&1 || true
done

mkdir -p docs/bench
python3 - "$DIR" "$N" "$(nproc)" "$(net ziti version 2>/dev/null || true)" "${BINS[@]}" >docs/bench/ctrl-handshakes.md <<'PY'
import sys, statistics as st, datetime, os
d, n, cores, zv, *bins = sys.argv[1:]
rows = [l.split() for l in open(os.path.join(d, "rows.txt"))]
print(f"# Controller TLS connections per fresh-process sdk tick (scripts/bench-ctrl-handshakes.sh, {datetime.date.today()}, {cores} cores)\n")
print(f"Quickstart controller + edge router {zv.strip()} on 127.0.0.1; `run --once` heartbeat (action none) "
      f"against the local stack over `sdk`; {n} ticks per binary for time, {n} more under strace for the "
      "connect(2) counts. Median (min–max).\n")
print("| SDK build | controller connections | edge-router connections | process wall | process CPU | peak RSS |")
print("|---|---|---|---|---|---|")
for spec in bins:
    label = spec.split("=", 1)[0]
    t = [list(map(int, r[2:])) for r in rows if r[0] == label and r[1] == "time"]
    c = [list(map(int, r[2:])) for r in rows if r[0] == label and r[1] == "conn"]
    mm = lambda xs, u="": f"{st.median(xs):g}{u} ({min(xs)}–{max(xs)})"
    rss = [x[2] / 1024 for x in t]
    print(f"| {label} | {mm([x[0] for x in c])} | {mm([x[1] for x in c])} | {mm([x[0] for x in t], ' ms')} | "
          f"{mm([x[1] for x in t], ' ms')} | {st.median(rss):.1f} MiB |")
PY
cat docs/bench/ctrl-handshakes.md
