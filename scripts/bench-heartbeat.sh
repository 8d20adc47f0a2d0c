#!/usr/bin/env bash
# Measures one heartbeat tick (`run --once`, transport system, action none) of the release Rust
# agent against a stdlib-Python tick of the seed's design (bench/python-agent/monky_deployd.py),
# both against the same local stack (monky-test-stack: real OpenBao + test tenancy, plain HTTP,
# the demo bundle applied once by the Rust agent first), N ticks each, interleaved (the order
# alternates every round), in ONE run.
#
# Per tick: CPU = user + system of the process and every child it waited for (wait4 rusage),
# wall = fork to reap, max RSS = the process's peak (from a tiny C spawner, so the parent's own
# resident set does not leak into the child's high-water mark the way a fork from Python does).
# Every tick must exit 0 and send the same check-in and report (see docs/PERFORMANCE.md).
# Python runs twice: listing the containers by the Engine API as the Rust agent does, and the
# seed's way, `docker compose ps` (MONKY_PY_LIST=compose-ps; the CLI's CPU is the tick's too).
# Writes docs/bench/heartbeat.md and prints the ratios Python CPU / Rust CPU (medians).
#
# Usage: scripts/bench-heartbeat.sh [N, default 30]
#   PYTHON=/usr/bin/python3   the interpreter of the Python tick (run directly, as a unit would)
#   PYTHON_ALSO=python3       also measure this one (default: `python3` on PATH when it is
#                             another file, e.g. a pyenv shim; empty = no second Python row)
#   BASE_BIN=path             also measure another agent binary (e.g. a build of main: the
#                             before/after of a change in one run); BASE_LABEL names it
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-30}"
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
PYTHON="${PYTHON:-/usr/bin/python3}"
if [ -z "${PYTHON_ALSO+x}" ]; then
  PYTHON_ALSO=$(command -v python3 || true)
  [ "$(readlink -f "$PYTHON_ALSO" 2>/dev/null)" = "$(readlink -f "$PYTHON")" ] && PYTHON_ALSO=""
fi
BASE_BIN="${BASE_BIN:-}"
BASE_LABEL="${BASE_LABEL:-other binary}"
bash scripts/provision.sh >/dev/null
bash scripts/services.sh >/dev/null
cargo build -q --release --bin monky-deployd
cargo build -q -p monky-test-tenancy --bin monky-test-stack
T="${CARGO_TARGET_DIR:-target}"
BIN="$T/release/monky-deployd"
# The instance row reads its peers' configs from a directory of the bench's own, which only a
# test build can be pointed at (`--etc-dir` is a test seam, absent from what ships): the same
# release profile with the test-hooks feature, whose hooks are one getenv at a named step.
cargo build -q --release --features test-hooks --bin monky-deployd --target-dir "$T/hooks"
HOOKS_BIN="$T/hooks/release/monky-deployd"
DIR=$(mktemp -d /tmp/monky-bench-hb.XXXXXX)
ENVB="hbench-$$"
WEBPORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() {
  kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true
  docker compose -p "monky-$ENVB" down -v >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT

# the spawner: fork + exec + wait4 from a process a few hundred KiB large
cat >"$DIR/spawn.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
  struct timespec a, b; struct rusage ru; int st; int k = 1;
  while (k < argc && strchr(argv[k], '=')) putenv(argv[k++]); /* VAR=value before the command */
  clock_gettime(CLOCK_MONOTONIC, &a);
  pid_t p = fork();
  if (p == 0) { execvp(argv[k], argv + k); _exit(127); }
  if (p < 0 || wait4(p, &st, 0, &ru) < 0) return 125;
  clock_gettime(CLOCK_MONOTONIC, &b);
  fprintf(stderr, "SPAWN %d %ld %ld %ld %ld\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
          ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec, ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec,
          ru.ru_maxrss, (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000);
  return 0;
}
C
cc -O2 -o "$DIR/spawn" "$DIR/spawn.c"

mkdir -p "$DIR/bundle"; cp docs/demo-bundle/* "$DIR/bundle/"
sed -i "s#monky/data/demo-01/#monky/data/$ENVB/#" "$DIR/bundle/secrets.manifest.json"
sed -i "s#127.0.0.1:18080:8080#127.0.0.1:$WEBPORT:8080#" "$DIR/bundle/compose.yaml"
"$T/debug/monky-test-stack" --dir "$DIR" --bundle "$DIR/bundle" --env "$ENVB" >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/pid"
for _ in $(seq 1 150); do grep -q "monky-test-stack ready" "$DIR/stack.log" && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log" >&2; exit 1; }

# the apply (bootstrap grant → token, bundle, compose up) by the Rust agent; then every agent
# gets its own copy of the converged state dir (same token, same release), its own lock
"$BIN" --config "$DIR/config.yaml" run --once 2>"$DIR/apply.log" || { cat "$DIR/apply.log" >&2; exit 1; }
variant() { # name → config path with its own state dir
  cp -a "$DIR/state" "$DIR/state-$1"
  sed "s#^state_dir: .*#state_dir: $DIR/state-$1#" "$DIR/config.yaml" >"$DIR/$1.yaml"
  echo "$DIR/$1.yaml"
}
"$PYTHON" -m compileall -q bench/python-agent # as an installed package is: byte-compiled once
export PYTHONPATH="$PWD/bench/python-agent"
# every agent binary runs from a fresh copy: a file the linker just wrote sits in the page cache
# in smaller folios than a copied or installed one (≈ 50 more page faults a tick here), which
# made the same binary ≈ 1 ms dearer in place than copied
cp "$BIN" "$DIR/monky-deployd"
AGENTS=("rust|$DIR/monky-deployd --config $(variant rust) run --once")
# the same binary as instance `b` of three on one box: it reads the other two's configs every
# tick (their ports are reserved, their env/state/grant must differ), so its cost is measured too
mkdir -p "$DIR/etc/a" "$DIR/etc/b" "$DIR/etc/c"
cp "$(variant instance)" "$DIR/etc/b/config.yaml"
for o in a c; do
  sed -e "s#^env_id: .*#env_id: bench-peer-$o#" -e "s#^state_dir: .*#state_dir: $DIR/state-peer-$o#" \
    -e "s#^bootstrap_path: .*#bootstrap_path: $DIR/etc/$o/bootstrap.jwt#" \
    -e "s#^metrics_textfile: .*#metrics_textfile: \"\"#" "$DIR/config.yaml" >"$DIR/etc/$o/config.yaml"
done
cp "$HOOKS_BIN" "$DIR/monky-deployd-hooks"
AGENTS+=("instance|$DIR/monky-deployd-hooks --etc-dir $DIR/etc --instance b run --once")
AGENTS+=("python|$PYTHON -m monky_deployd --config $(variant python) run --once")
AGENTS+=("python-seed|MONKY_PY_LIST=compose-ps $PYTHON -m monky_deployd --config $(variant python-seed) run --once")
[ -n "$PYTHON_ALSO" ] && AGENTS+=("python-also|$PYTHON_ALSO -m monky_deployd --config $(variant python-also) run --once")
if [ -n "$BASE_BIN" ]; then
  cp "$BASE_BIN" "$DIR/monky-deployd-base"
  AGENTS+=("base|$DIR/monky-deployd-base --config $(variant base) run --once")
fi

one() { # name cmd... → appends "name exit cpu_us rss_kib wall_us" to ticks.txt
  local name=$1; shift
  "$DIR/spawn" "$@" 2>"$DIR/tick.err" >/dev/null || true
  local line; line=$(grep '^SPAWN ' "$DIR/tick.err" | tail -1)
  read -r _ rc ut st rss wall <<<"$line"
  if [ "$rc" != 0 ]; then echo "bench-heartbeat: $name tick exited $rc:" >&2; cat "$DIR/tick.err" >&2; exit 1; fi
  echo "$name $rc $((ut + st)) $rss $wall" >>"$DIR/ticks.txt"
}
for a in "${AGENTS[@]}"; do for _ in 1 2; do one "${a%%|*}" ${a#*|}; done; done # warm caches
: >"$DIR/ticks.txt"
for i in $(seq 1 "$N"); do
  if [ $((i % 2)) = 1 ]; then order=("${AGENTS[@]}"); else order=(); for ((k = ${#AGENTS[@]} - 1; k >= 0; k--)); do order+=("${AGENTS[$k]}"); done; fi
  for a in "${order[@]}"; do one "${a%%|*}" ${a#*|}; done
done
# every tick checked in and reported (the stack appends its request log every 250 ms)
sleep 1
want=$((1 + ${#AGENTS[@]} * (N + 2)))
for k in checkin report; do
  got=$(grep -c "POST /v1/agent/$k 2" "$DIR/requests.log" || true)
  [ "$got" = "$want" ] || { echo "bench-heartbeat: tenancy saw $got ${k}s, expected $want" >&2; exit 1; }
done

mkdir -p docs/bench
"$PYTHON" - "$DIR/ticks.txt" "$N" "$BIN" "$PYTHON" "$PYTHON_ALSO" "$BASE_BIN" "$BASE_LABEL" >docs/bench/heartbeat.md <<'PY'
import os, platform, statistics, subprocess, sys, time
ticks, n, rbin, py, py_also, base, base_label = sys.argv[1:]
compose = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True).stdout.strip()
rows = {}
for line in open(ticks):
    name, rc, cpu, rss, wall = line.split()
    rows.setdefault(name, []).append((int(cpu) / 1000, int(rss), int(wall) / 1000))
def ver(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip() or "?"
    except OSError:
        return "?"
def stat(vals, fmt):
    return f"{fmt(statistics.median(vals))} ({fmt(min(vals))}–{fmt(max(vals))})"
label = {
    "rust": f"Rust `{ver([rbin, 'version'])}`",
    "python": f"Python tick, `{py}` ({ver([py, '-c', 'import sys; print(sys.version.split()[0])'])}), Engine API list",
    "python-seed": f"Python tick, `{py}`, the seed's `docker compose ps` list (compose {compose})",
    "python-also": f"Python tick, `{py_also}` ({os.path.realpath(py_also) if py_also else ''})",
    "instance": f"Rust, the same binary as instance `b` of three on the box (`--instance b`)",
    "base": f"Rust, {base_label}: `{ver([base, 'version']) if base else ''}`",
}
med = {k: statistics.median(c for c, _, _ in v) for k, v in rows.items()}
print(f"# System heartbeat: Rust agent vs a stdlib-Python tick (scripts/bench-heartbeat.sh)")
print()
print(f"Generated by `scripts/bench-heartbeat.sh {n}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
      f"{os.cpu_count()} cores, kernel {platform.release()}, git {ver(['git', 'rev-parse', '--short', 'HEAD'])}.")
print()
print("Local stack (monky-test-stack: real OpenBao, test tenancy), transport `system`, plain HTTP; demo bundle")
print("applied once by the Rust agent, then every agent ticks its own copy of that state. A tick: config,")
print("lock, state.json, bao.token, 3 Engine API requests (list + 2 inspects), check-in, report, state saved.")
print(f"{n} ticks per agent, interleaved. CPU = user + system (wait4 rusage of the process, children included).")
print()
print("| agent | CPU ms, median (min–max) | wall ms, median (min–max) | max RSS KiB, median (min–max) |")
print("|---|---|---|---|")
for k in ("rust", "instance", "base", "python", "python-seed", "python-also"):
    if k in rows:
        v = rows[k]
        print(f"| {label[k]} | {stat([c for c, _, _ in v], lambda x: f'{x:.2f}')} | "
              f"{stat([w for _, _, w in v], lambda x: f'{x:.1f}')} | {stat([r for _, r, _ in v], lambda x: f'{x:.0f}')} |")
print()
print(f"**Python CPU / Rust CPU (medians): {med['python'] / med['rust']:.1f}× with the Engine API list; "
      f"{med['python-seed'] / med['rust']:.1f}× with the seed's `docker compose ps`**"
      + (f" (Engine API list with `{py_also}`: {med['python-also'] / med['rust']:.1f}×)" if "python-also" in med else "")
      + (f"; against the Rust {base_label}: {med['python'] / med['base']:.1f}×" if "base" in med else "") + ".")
print()
print("Python runs as an installed package would (`python -m monky_deployd`, byte-compiled once); the Rust")
print("binary is the release build. Both send the same requests (docs/PERFORMANCE.md, \"System heartbeat")
print("against a stdlib-Python tick\"); the seed's variant lists the containers with the compose CLI instead")
print("of the Engine API list request (the CLI's CPU counts: it is a child the tick waits for), as the seed did.")
PY
cat docs/bench/heartbeat.md
echo "tenancy saw every tick's check-in and report: $want each"
