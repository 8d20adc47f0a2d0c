#!/usr/bin/env bash
# What crafted compose files (alias bombs, deep nesting) cost the parser before they are refused:
# wall time and peak RSS, release build. Writes docs/bench/yaml.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release --example yaml_bomb
{
  echo "# Crafted YAML (scripts/bench-yaml.sh, $(date -u +%Y-%m-%d), release build)"
  echo
  ex="${CARGO_TARGET_DIR:-target}/release/examples/yaml_bomb"
  "$ex"
  for i in 0 1 2 3; do "$ex" "$i"; done
} >docs/bench/yaml.md
cat docs/bench/yaml.md
