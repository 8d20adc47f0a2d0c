#!/usr/bin/env bash
# Replace the generated block of DOC between `<!-- NAME:begin…` and `<!-- NAME:end -->` (both
# lines included) with FRAGMENT, which carries its own markers.
#   scripts/splice-md.sh DOC NAME FRAGMENT
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 DOC NAME FRAGMENT" >&2; exit 2; }
doc=$1 name=$2 frag=$3
[ -s "$frag" ] || { echo "splice-md: no figures in $frag" >&2; exit 1; }
grep -q "^<!-- $name:end -->" "$doc" || { echo "splice-md: no $name markers in $doc" >&2; exit 1; }
awk -v t="$frag" -v b="<!-- $name:begin" -v e="<!-- $name:end -->" '
  index($0, b) == 1 { while ((getline l < t) > 0) print l; skip = 1; next }
  $0 == e { skip = 0; next }
  !skip { print }
' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
