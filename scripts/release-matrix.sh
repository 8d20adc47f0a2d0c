#!/usr/bin/env bash
# Before a release: the whole test command plus the full compose matrix — the one_compose!
# scenarios (tests/common/mod.rs) on compose v1 and v2 too, which the everyday command runs on
# v5 only. About 20 minutes more than scripts/test.sh on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
MONKY_RELEASE_MATRIX=1 exec ./scripts/test.sh
