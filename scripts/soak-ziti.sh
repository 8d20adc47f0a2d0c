#!/usr/bin/env bash
# The soak over sdk (issue 20 item 3, tests/mesh/ziti_soak.rs): `monky-deployd run` as the service for
# 2,000 heartbeat ticks at a 500 ms interval on its own quickstart network (ports
# $ZITI_CTRL_PORT/$ZITI_ROUTER_PORT + 4), with the controller, the edge router, both, and the
# controller again restarted inside it; every tick's exit, RSS, fds and the controller
# connections (strace) and requests (ZITI_LOG=4) counted. About 25 minutes plus the build, so it is
# not part of scripts/test.sh; needs scripts/services.sh's services, the ziti CLI and strace.
# Writes its figures into docs/PERFORMANCE.md ("The sdk service over 2,000 ticks").
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
command -v strace >/dev/null || { echo "soak-ziti: strace is needed" >&2; exit 1; }
rm -f "$target/soak-ziti.md"
cargo test --test mesh -- --ignored --nocapture ziti_soak::
scripts/splice-md.sh docs/PERFORMANCE.md soak-ziti "$target/soak-ziti.md"
echo "soak-ziti: docs/PERFORMANCE.md updated"
