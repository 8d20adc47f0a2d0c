#!/usr/bin/env bash
# Peak memory of a diagnostics (`collect`) tick on a busy box (issue 31), against a heartbeat's.
# Sets up the box with the real dockerd and monky-test-stack: a bundle of C busybox services
# (default 30), each printing L lines of W bytes (default 40 × 100,000: 4 MB) and then idling;
# applies it; then runs heartbeat ticks and collect ticks (SIGUSR1 to the stack makes its
# check-in answers carry `collect`), each `run --once` under a tiny C spawner. Two figures per
# tick: the agent's own peak (`getrusage(RUSAGE_SELF)`, its debug `tick cost` line) and wait4's
# max RSS (the largest of the agent and the children it waited for: a collect runs
# `docker compose version`). Writes docs/bench/collect.md.
#
# Usage: scripts/bench-collect.sh [ROUNDS, default 3]
#   C=30 L=40 W=100000        the box
#   BASE_BIN=path             also measure another agent binary (e.g. a build of main);
#                             BASE_LABEL names it
# The agent is the debug build (`--no-default-features`): no release build on shared machines.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-3}"
C="${C:-30}" L="${L:-40}" W="${W:-100000}"
BASE_BIN="${BASE_BIN:-}"
BASE_LABEL="${BASE_LABEL:-other binary}"
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
bash scripts/provision.sh >/dev/null
bash scripts/services.sh >/dev/null
cargo build -q --no-default-features --bin monky-deployd
cargo build -q -p monky-test-tenancy --bin monky-test-stack
T="${CARGO_TARGET_DIR:-target}"
BIN="$T/debug/monky-deployd"
DIR=$(mktemp -d /tmp/monky-bench-collect.XXXXXX)
ENVB="cbench-$$"
cleanup() {
  kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true
  docker compose -p "monky-$ENVB" down -v -t 1 >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT

cat >"$DIR/spawn.c" <<'EOF'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  struct rusage ru; int st;
  pid_t p = fork();
  if (p == 0) { execvp(argv[1], argv + 1); _exit(127); }
  if (p < 0 || wait4(p, &st, 0, &ru) < 0) return 125;
  fprintf(stderr, "SPAWN %d %ld\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), ru.ru_maxrss);
  return 0;
}
EOF
cc -O2 -o "$DIR/spawn" "$DIR/spawn.c"

mkdir -p "$DIR/bundle"
{
  echo "services:"
  for i in $(seq 1 "$C"); do
    cat <<EOF
  s$i:
    image: 127.0.0.1:5001/monky/busybox:1
    init: true
    command: ["sh", "-c", "l=\$\$(head -c $W /dev/zero | tr '\\\\0' x); i=0; while [ \$\$i -lt $L ]; do echo \"\$\$l \$\$i\"; i=\$\$((i+1)); done; exec sleep 86400"]
EOF
  done
} >"$DIR/bundle/compose.yaml"
echo '{"serial": 1, "need_bytes": 1048576, "agent": {"allow_privileged": false, "allow_rollback": false}}' >"$DIR/bundle/bundle.json"
echo 'X=1' >"$DIR/bundle/env.template"
echo '{"entries": []}' >"$DIR/bundle/secrets.manifest.json"

"$T/debug/monky-test-stack" --dir "$DIR" --bundle "$DIR/bundle" --env "$ENVB" \
  --config-extra "diagnostics_min_interval_s: 0
healthy_timeout_s: 120" >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/pid"
for _ in $(seq 1 150); do grep -qs "monky-test-stack ready" "$DIR/stack.log" && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log" >&2; exit 1; }

one() { # label bin kind → appends "label kind self_kib wait4_kib" to rss.txt
  MONKY_LOG=monky=debug "$DIR/spawn" "$2" --config "$DIR/config.yaml" run --once 2>"$DIR/tick.err" >/dev/null || true
  local line rc rss own; line=$(grep '^SPAWN ' "$DIR/tick.err" | tail -1)
  read -r _ rc rss <<<"$line"
  [ "$rc" = 0 ] || { echo "bench-collect: $1 $3 tick exited $rc:" >&2; tail -20 "$DIR/tick.err" >&2; exit 1; }
  own=$(grep -o 'max rss [0-9]* KiB' "$DIR/tick.err" | tail -1 | awk '{print $3}')
  echo "$1 $3 ${own:-0} $rss" >>"$DIR/rss.txt"
}
: >"$DIR/rss.txt"
one agent "$BIN" apply
# every container has printed its lines
want=$((L * (W + 3)))
for _ in $(seq 1 300); do
  short=0
  for c in $(docker ps -q --filter "label=com.docker.compose.project=monky-$ENVB"); do
    [ "$(docker logs "$c" 2>&1 | wc -c)" -ge "$want" ] || { short=1; break; }
  done
  [ "$short" = 0 ] && break
  sleep 1
done
[ "$short" = 0 ] || { echo "bench-collect: the containers did not print their lines" >&2; exit 1; }
offered=$(for c in $(docker ps -q --filter "label=com.docker.compose.project=monky-$ENVB"); do docker logs --tail 200 "$c" 2>&1 | wc -c; done | awk '{s += $1} END {print s}')

AGENTS=("agent|$BIN")
[ -n "$BASE_BIN" ] && AGENTS+=("base|$BASE_BIN")
: >"$DIR/rss.txt"
for _ in $(seq 1 "$ROUNDS"); do
  for a in "${AGENTS[@]}"; do
    one "${a%%|*}" "${a#*|}" heartbeat
    n=$( { cat "$DIR/diagnostics.jsonl" 2>/dev/null || true; } | wc -l)
    kill -USR1 "$(cat "$DIR/pid")"; sleep 0.3
    one "${a%%|*}" "${a#*|}" collect
    for _ in $(seq 1 20); do [ "$( { cat "$DIR/diagnostics.jsonl" 2>/dev/null || true; } | wc -l)" -gt "$n" ] && break; sleep 0.25; done
    [ "$(wc -l <"$DIR/diagnostics.jsonl")" -gt "$n" ] || { echo "bench-collect: ${a%%|*}: no bundle arrived" >&2; exit 1; }
    tail -1 "$DIR/diagnostics.jsonl" | wc -c >>"$DIR/bundle-bytes-${a%%|*}.txt"
  done
done

mkdir -p docs/bench
python3 - "$DIR/rss.txt" "$ROUNDS" "$C" "$L" "$W" "$offered" "$BIN" "$BASE_BIN" "$BASE_LABEL" "$DIR" >docs/bench/collect.md <<'PY'
import os, platform, statistics, subprocess, sys, time
rss, rounds, c, l, w, offered, rbin, base, base_label, d = sys.argv[1:]
rows, waited = {}, {}
for line in open(rss):
    who, kind, own, w4 = line.split()
    rows.setdefault((who, kind), []).append(int(own))
    waited.setdefault((who, kind), []).append(int(w4))
def ver(b):
    return subprocess.run([b, "version"], capture_output=True, text=True).stdout.strip() or "?"
def git():
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
names = {"agent": f"this build, `{ver(rbin)}` (debug)", "base": f"{base_label}, `{ver(base)}`" if base else ""}
print("# Peak RSS of a diagnostics tick on a busy box (scripts/bench-collect.sh)")
print()
print(f"Generated by `scripts/bench-collect.sh {rounds}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
      f"{os.cpu_count()} cores, kernel {platform.release()}, git {git()}.")
print()
print(f"{c} busybox containers, each printed {l} lines of {int(w):,} bytes; the engine's last 200 log entries of")
print(f"all of them (what a collect asks for) are {int(offered):,} bytes. Each tick is `run --once` against")
print("monky-test-stack; a collect tick is a heartbeat whose check-in answer carries `collect`. The agent's")
print("own peak is `getrusage(RUSAGE_SELF)` (its `tick cost` line); wait4's is the largest of the agent and")
print("the children it waited for (a collect runs `docker compose version`).")
print()
print("| agent | tick | agent's own max RSS KiB, median (min–max) | wait4 max RSS KiB, median | bundle bytes sent |")
print("|---|---|---|---|---|")
for who in ("agent", "base"):
    for kind in ("heartbeat", "collect"):
        v = rows.get((who, kind))
        if not v:
            continue
        b = ""
        if kind == "collect":
            sizes = [int(x) for x in open(os.path.join(d, f"bundle-bytes-{who}.txt"))]
            b = f"{max(sizes):,}"
        w4 = statistics.median(waited[(who, kind)])
        print(f"| {names[who]} | {kind} | {statistics.median(v):.0f} ({min(v)}–{max(v)}) | {w4:.0f} | {b} |")
hb = statistics.median(rows[("agent", "heartbeat")])
co = statistics.median(rows[("agent", "collect")])
print()
print(f"**This build: a collect tick's own peak is {co / hb:.1f}× a heartbeat's.**")
PY
cat docs/bench/collect.md
