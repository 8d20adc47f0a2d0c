#!/usr/bin/env bash
# The fast tier: every unit test of the library and the property tests (src/props/), against
# fakes. Builds no C (no SDK: --no-default-features) and needs no dockerd, OpenBao or network;
# only Rust. scripts/test.sh runs it first, before provisioning. Extra arguments go to the test
# harness (a name filter, --nocapture).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
exec cargo test --no-default-features --lib -p monky-deployd -p monky-base -p monky-wire -p monky-boundary \
  -p monky-guard -p monky-host -p monky-agent -p monky-cli -- "$@"
