#!/usr/bin/env bash
# The soak (issue 10): 1,000 heartbeat ticks + 50 applies in loop mode with random loopback
# faults, on real parts (run scripts/services.sh first). About 10 minutes with a debug build, so
# it is not part of scripts/test.sh. Writes its figures into docs/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
rm -f "$target/soak.md"
cargo test --test real -- --ignored --nocapture soak::
scripts/splice-md.sh docs/RELIABILITY.md soak "$target/soak.md"
echo "soak: docs/RELIABILITY.md updated"
