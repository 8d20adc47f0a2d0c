#!/usr/bin/env bash
# The heartbeat's memory (issue 43 §7): peak resident size (VmHWM, from wait4's ru_maxrss) and CPU
# of `run --once` (transport system, action none) against the local stack (monky-test-stack: real
# OpenBao, test tenancy; the demo bundle applied once first), N ticks; then where the resident set
# sits, by mapping: one more tick runs with a preloaded shim that copies /proc/self/status and
# /proc/self/smaps when the agent leaves (it leaves through _exit, which the shim wraps).
# Writes bench/results/heartbeat-memory.txt.
#
# Usage: bench/heartbeat-memory.sh [N, default 30]
#   BIN=path         the agent to measure (default: a release build of this tree)
#   BASE_BIN=path    also measure another binary in the same run (before/after), interleaved
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-30}"
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
bash scripts/provision.sh >/dev/null
bash scripts/services.sh >/dev/null
T="${CARGO_TARGET_DIR:-target}"
if [ -z "${BIN:-}" ]; then
  cargo build -q --release --bin monky-deployd
  BIN="$T/release/monky-deployd"
fi
cargo build -q -p monky-test-tenancy --bin monky-test-stack
BASE_BIN="${BASE_BIN:-}"
DIR=$(mktemp -d /tmp/monky-bench-mem.XXXXXX)
ENVB="membench-$$"
WEBPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() {
  kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true
  docker compose -p "monky-$ENVB" down -v >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT

# fork + exec + wait4 from a process a few hundred KiB large: the child's high-water mark is its own
cat >"$DIR/spawn.c" <<'C'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  struct rusage ru; int st;
  pid_t p = fork();
  if (p == 0) { execvp(argv[1], argv + 1); _exit(127); }
  if (p < 0 || wait4(p, &st, 0, &ru) < 0) return 125;
  fprintf(stderr, "SPAWN %d %ld %ld\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
          ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec,
          ru.ru_maxrss);
  return 0;
}
C
cc -O2 -o "$DIR/spawn" "$DIR/spawn.c"
# the shim: the agent leaves by _exit (no atexit handlers), so _exit is where it looks
cat >"$DIR/dump.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
static void cp(const char *src, FILE *o) {
  char b[4096]; size_t n; FILE *f = fopen(src, "r");
  if (!f) return;
  while ((n = fread(b, 1, sizeof b, f)) > 0) fwrite(b, 1, n, o);
  fclose(f);
}
void _exit(int code) {
  const char *p = getenv("MEM_DUMP");
  FILE *o = p ? fopen(p, "w") : NULL;
  if (o) { cp("/proc/self/status", o); fputs("=====\n", o); cp("/proc/self/smaps", o); fclose(o); }
  syscall(SYS_exit_group, code);
  __builtin_unreachable();
}
C
cc -shared -fPIC -O2 -o "$DIR/dump.so" "$DIR/dump.c"

mkdir -p "$DIR/bundle"; cp docs/demo-bundle/* "$DIR/bundle/"
sed -i "s#monky/data/demo-01/#monky/data/$ENVB/#" "$DIR/bundle/secrets.manifest.json"
sed -i "s#127.0.0.1:18080:8080#127.0.0.1:$WEBPORT:8080#" "$DIR/bundle/compose.yaml"
"$T/debug/monky-test-stack" --dir "$DIR" --bundle "$DIR/bundle" --env "$ENVB" >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/pid"
for _ in $(seq 1 150); do grep -q "monky-test-stack ready" "$DIR/stack.log" && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log" >&2; exit 1; }
# a fresh copy of each binary (a file the linker just wrote sits in the page cache in other folios)
cp "$BIN" "$DIR/agent"
"$DIR/agent" --config "$DIR/config.yaml" run --once 2>"$DIR/apply.log" || { cat "$DIR/apply.log" >&2; exit 1; }
AGENTS=(agent)
if [ -n "$BASE_BIN" ]; then
  cp "$BASE_BIN" "$DIR/base"
  cp -a "$DIR/state" "$DIR/state-base"
  sed "s#^state_dir: .*#state_dir: $DIR/state-base#" "$DIR/config.yaml" >"$DIR/base.yaml"
  AGENTS+=(base)
fi
# written back before any tick: a page the copy left dirty in the page cache counts as dirty in smaps
sync
cfg() { if [ "$1" = base ]; then echo "$DIR/base.yaml"; else echo "$DIR/config.yaml"; fi; }
one() { # agent → appends "agent cpu_us maxrss_kib" to ticks.txt
  "$DIR/spawn" "$DIR/$1" --config "$(cfg "$1")" run --once 2>"$DIR/tick.err" >/dev/null || true
  local rc cpu rss
  read -r _ rc cpu rss <<<"$(grep '^SPAWN ' "$DIR/tick.err" | tail -1)"
  [ "$rc" = 0 ] || { echo "heartbeat-memory: $1's tick exited $rc:" >&2; cat "$DIR/tick.err" >&2; exit 1; }
  echo "$1 $cpu $rss" >>"$DIR/ticks.txt"
}
for a in "${AGENTS[@]}"; do one "$a"; one "$a"; done # warm the page cache
: >"$DIR/ticks.txt"
for _ in $(seq 1 "$N"); do for a in "${AGENTS[@]}"; do one "$a"; done; done
for a in "${AGENTS[@]}"; do
  MEM_DUMP="$DIR/$a.smaps" LD_PRELOAD="$DIR/dump.so" "$DIR/$a" --config "$(cfg "$a")" run --once 2>/dev/null
done

mkdir -p bench/results
python3 - "$DIR" "$N" "${AGENTS[@]}" >bench/results/heartbeat-memory.txt <<'PY'
import collections, os, re, statistics, subprocess, sys, time
d, n, agents = sys.argv[1], sys.argv[2], sys.argv[3:]
ticks = collections.defaultdict(list)
for line in open(f"{d}/ticks.txt"):
    a, cpu, rss = line.split()
    ticks[a].append((int(cpu) / 1000, int(rss)))
def ver(p):
    return subprocess.run([p, "version"], capture_output=True, text=True).stdout.strip()
print(f"bench/heartbeat-memory.sh {n} on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
      f"{os.cpu_count()} cores, kernel {os.uname().release}")
print("heartbeat = run --once, transport system, action none, local stack; VmHWM = wait4 ru_maxrss")
for a in agents:
    v = ticks[a]
    rss = [r for _, r in v]; cpu = [c for c, _ in v]
    print()
    print(f"{a}: {ver(f'{d}/{a}')}, {os.path.getsize(f'{d}/{a}')} bytes")
    print(f"  VmHWM KiB median {statistics.median(rss):.0f} (min {min(rss)}, max {max(rss)}); "
          f"CPU ms median {statistics.median(cpu):.2f} (min {min(cpu):.2f}, max {max(cpu):.2f})")
    status, smaps = open(f"{d}/{a}.smaps").read().split("=====\n", 1)
    field = lambda k: re.search(rf"^{k}:\s+(\d+)", status, re.M).group(1)
    print(f"  one tick, at its _exit: VmHWM {field('VmHWM')} KiB = file-backed {field('RssFile')} "
          f"+ anonymous {field('RssAnon')} (+ shmem {field('RssShmem')})")
    agg = collections.Counter(); cur = None
    for line in smaps.splitlines():
        m = re.match(r"^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \d+\s*(.*)$", line)
        if m:
            path = m.group(2) or "[anonymous]"
            name = "the agent binary" if path.endswith(f"/{a}") else os.path.basename(path) or path
            cur = f"{name} {m.group(1)}"
            continue
        m = re.match(r"^(Rss|Private_Dirty):\s+(\d+) kB", line)
        if m and cur:
            agg[(cur, m.group(1))] += int(m.group(2))
    rows = sorted({k for k, _ in agg}, key=lambda k: -agg[(k, "Rss")])
    for k in rows:
        if agg[(k, "Rss")] >= 16:
            print(f"    {k:36s} resident {agg[(k, 'Rss')]:6d} KiB, of it private dirty {agg[(k, 'Private_Dirty')]:5d}")
PY
cat bench/results/heartbeat-memory.txt
