#!/usr/bin/env bash
# Controller TLS connections per fresh-process heartbeat tick over `sdk` (issue 20), on a real
# quickstart network (scripts/ziti-net.sh) against the local stack (real OpenBao + test tenancy),
# as scripts/bench-ziti.sh sets it up. For each agent binary given (default: this tree's release
# build), one warm-up tick, then N ticks for wall/CPU/RSS (wait4) and N more under
# `strace -f -e trace=connect` counting connect(2) calls to the controller's port and the edge
# router's port (strace slows the process, so those ticks are not timed), and the quickstart
# process's CPU over the timed ticks (the controller's side). Every tick must exit 0.
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

# CPU (ms) the quickstart process (controller and edge router in one) has used so far
# BENCH_CTRL_LOOP_S=S: also run the long-lived loop (`run`, interval_s 5) for S seconds under
# strace, sampling every 0.5 s its established controller connections (ss), open fds and RSS.
loop_run() { # label bin
  sed 's/^interval_s: .*/interval_s: 5/' "$DIR/sdk.yaml" >"$DIR/loop.yaml"
  grep -q '^interval_s: 5' "$DIR/loop.yaml" || echo "interval_s: 5" >>"$DIR/loop.yaml"
  MONKY_LOG=monky=debug strace -f -qq -e trace=connect -o "$DIR/loop.trace" \
    "$2" --config "$DIR/loop.yaml" run >"$DIR/loop.log" 2>&1 &
  local sp=$! pid="" est=0 max=0 fd0="" fd1="" rss0="" rss1="" end=$((SECONDS + BENCH_CTRL_LOOP_S))
  for _ in $(seq 50); do pid=$(pgrep -P "$sp" || true); [ -n "$pid" ] && break; sleep 0.1; done
  [ -n "$pid" ] || { echo "bench-ctrl-handshakes: loop did not start" >&2; exit 1; }
  while [ $SECONDS -lt $end ]; do
    est=$(ss -tnpH state established "( dport = :$CTRL_PORT )" | grep -c "pid=$pid," || true)
    [ "$est" -gt "$max" ] && max=$est
    fd1=$(find "/proc/$pid/fd" -mindepth 1 2>/dev/null | wc -l); [ -n "$fd0" ] || fd0=$fd1
    rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"); [ -n "$rss0" ] || rss0=$rss1
    sleep 0.5
  done
  kill "$pid"; wait "$sp" || true
  local ticks
  ticks=$(grep -c "tick cost:" "$DIR/loop.log" || true)
  echo "$1 loop $BENCH_CTRL_LOOP_S $ticks $(connects "$DIR/loop.trace" "$CTRL_PORT") $max $fd0 $fd1 $(connects "$DIR/loop.trace" "$ROUTER_PORT") $rss0 $rss1" >>"$DIR/rows.txt"
  [ -z "${BENCH_CTRL_LOGS:-}" ] || cp "$DIR/loop.log" "$DIR/loop.trace" "$BENCH_CTRL_LOGS/"
}

QS_PID=$(cat "$MONKY_ZITI_DIR/pid")
qs_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($14 + $15) * 1000 / hz }' "/proc/$QS_PID/stat"; }
now_ms() { date +%s%3N; }

tick "$(cut -d= -f2- <<<"${BINS[0]}")" >/dev/null   # the apply, on the first binary
# the quickstart's own background CPU rate, to subtract from what the ticks cost it
sleep 2; c0=$(qs_cpu); t0=$(now_ms); sleep 10; IDLE="$(( $(qs_cpu) - c0 )) $(( $(now_ms) - t0 ))"
for spec in "${BINS[@]}"; do
  label=${spec%%=*} bin=${spec#*=}
  [ -x "$bin" ] || { echo "bench-ctrl-handshakes: no binary $bin" >&2; exit 1; }
  tick "$bin" >/dev/null   # warm-up
  c0=$(qs_cpu); t0=$(now_ms)
  for i in $(seq 1 "$N"); do
    echo "$label time $(tick "$bin")" >>"$DIR/rows.txt"
  done
  echo "$label qs $(( $(qs_cpu) - c0 )) $(( $(now_ms) - t0 ))" >>"$DIR/rows.txt"
  for i in $(seq 1 "$N"); do
    tick "$bin" "$DIR/trace.$i" >/dev/null
    [ -z "${BENCH_CTRL_LOGS:-}" ] || cp "$DIR/trace.$i" "$BENCH_CTRL_LOGS/trace.$label.$i"
    echo "$label conn $(connects "$DIR/trace.$i" "$CTRL_PORT") $(connects "$DIR/trace.$i" "$ROUTER_PORT")" >>"$DIR/rows.txt"
  done
  "$bin" version | head -1 >"$DIR/version.$label" 2>&1 || true
  [ "${BENCH_CTRL_LOOP_S:-0}" -gt 0 ] && loop_run "$label" "$bin"
done

mkdir -p docs/bench
python3 - "$DIR" "$N" "$(nproc)" "$(net ziti version 2>/dev/null || true)" "$IDLE" "${BINS[@]}" >docs/bench/ctrl-handshakes.md <<'PY'
import sys, statistics as st, datetime, os
d, n, cores, zv, idle, *bins = sys.argv[1:]
idle_cpu, idle_ms = map(int, idle.split())
rows = [l.split() for l in open(os.path.join(d, "rows.txt"))]
print(f"# Controller TLS connections per fresh-process sdk tick (scripts/bench-ctrl-handshakes.sh, {datetime.date.today()}, {cores} cores)\n")
print(f"Quickstart controller + edge router {zv.strip()} on 127.0.0.1; `run --once` heartbeat (action none) "
      f"against the local stack over `sdk`; {n} ticks per binary for time, {n} more under strace for the "
      "connect(2) counts. Median (min–max).\n")
print("| SDK build | controller connections | edge-router connections | process wall | process CPU | peak RSS | quickstart CPU per tick |")
print("|---|---|---|---|---|---|---|")
for spec in bins:
    label = spec.split("=", 1)[0]
    t = [list(map(int, r[2:])) for r in rows if r[0] == label and r[1] == "time"]
    c = [list(map(int, r[2:])) for r in rows if r[0] == label and r[1] == "conn"]
    mm = lambda xs, u="": f"{st.median(xs):g}{u} ({min(xs)}–{max(xs)})"
    rss = [x[2] / 1024 for x in t]
    q = [list(map(int, r[2:])) for r in rows if r[0] == label and r[1] == "qs"][0]
    qs = (q[0] - idle_cpu * q[1] / idle_ms) / int(n)
    print(f"| {label} | {mm([x[0] for x in c])} | {mm([x[1] for x in c])} | {mm([x[0] for x in t], ' ms')} | "
          f"{mm([x[1] for x in t], ' ms')} | {st.median(rss):.1f} MiB | {qs:.0f} ms |")
loops = [r for r in rows if r[1] == "loop"]
if loops:
    print()
    print("Long-lived loop (`run`, interval_s 5, under strace), one context for all its ticks:\n")
    print("| SDK build | seconds | ticks | controller connections (all) | most at once | open fds first → last | RSS first → last | edge-router connections |")
    print("|---|---|---|---|---|---|---|---|")
    for r in loops:
        print(f"| {r[0]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} → {r[7]} | "
              f"{int(r[9]) / 1024:.1f} → {int(r[10]) / 1024:.1f} MiB | {r[8]} |")
print()
print("Quickstart CPU per tick: what the controller + edge-router process (one process in the "
      "quickstart) used during the timed ticks, less its idle rate measured over "
      f"{idle_ms / 1000:.0f} s before ({idle_cpu} ms CPU), divided by the ticks: the server side of "
      "each tick, handshakes included (clock-tick resolution, so ±10 ms / N).")
PY
cat docs/bench/ctrl-handshakes.md
