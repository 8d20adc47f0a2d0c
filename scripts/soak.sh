#!/usr/bin/env bash
# The soak (issue 10): 1,000 heartbeat ticks + 50 applies in loop mode with random loopback
# faults, on real parts (run scripts/services.sh first). About 10 minutes with a debug build, so
# it is not part of scripts/test.sh. Writes its figures into docs/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
rm -f "$target/soak.md"
cargo test --test soak -- --ignored --nocapture
[ -s "$target/soak.md" ] || { echo "soak: no figures written" >&2; exit 1; }
awk -v t="$target/soak.md" '
  /^<!-- soak:begin/ { while ((getline l < t) > 0) print l; skip = 1; next }
  /^<!-- soak:end -->/ { skip = 0; next }
  !skip { print }
' docs/RELIABILITY.md > docs/RELIABILITY.md.new
grep -q '^<!-- soak:end -->' docs/RELIABILITY.md.new || { echo "no soak markers in docs/RELIABILITY.md" >&2; rm -f docs/RELIABILITY.md.new; exit 1; }
mv docs/RELIABILITY.md.new docs/RELIABILITY.md
echo "soak: docs/RELIABILITY.md updated"
