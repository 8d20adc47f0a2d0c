#!/usr/bin/env bash
# The data snapshot's copy (host::snapshot::take) beside `cp -a` of the same tree on the same disk,
# in the same run (issue 42): 1 GiB in 10,000 files and 1 GiB in one file, each measured twice,
# alternating. Writes bench/results/snapshot.txt. Run as root (owners are kept). WORK= a scratch
# directory on the disk to measure (default /var/tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK="${WORK:-/var/tmp}/monky-snapbench.$$"
mkdir -p "$WORK" bench/results
trap 'rm -rf "$WORK"' EXIT
cargo build --release --no-default-features --example snapshot_bench >/dev/null
BIN="${CARGO_TARGET_DIR:-target}/release/examples/snapshot_bench"
mkdir -p "$WORK/many" "$WORK/one"
for i in $(seq 0 99); do
  mkdir -p "$WORK/many/d$i"
  for j in $(seq 0 99); do head -c 107374 /dev/urandom >"$WORK/many/d$i/f$j"; done
done
head -c $((1 << 30)) /dev/urandom >"$WORK/one/big"
sync
out=bench/results/snapshot.txt
{
  echo "# host::snapshot::take vs cp -a, $(date -u +%FT%TZ), $(uname -r), $(df -T "$WORK" | awk 'NR==2{print $2}') at $WORK"
  for shape in many one; do
    for round in 1 2; do
      rm -rf "$WORK/cp" "$WORK/snap"; sync
      t0=$(date +%s.%N); cp -a "$WORK/$shape" "$WORK/cp"; sync; t1=$(date +%s.%N)
      ours=$("$BIN" take "$WORK/$shape" "$WORK/snap" | awk '{print $1}')
      echo "$shape round $round: cp -a $(echo "$t1 - $t0" | bc) s, take ${ours} s (take syncs itself)"
    done
  done
} | tee "$out"
