#!/usr/bin/env bash
# The two ziti-sys build modes the test suite does not use (it builds the default, vendored one):
#   1. ZITI_SDK_DIR: a prebuilt SDK prefix (assembled here from the vendored build's own static
#      archives and headers, as a packager's would look) links, and its library answers;
#   2. --no-default-features: no SDK, with the warning, and the crate says so;
#   and ZITI_NO_VENDOR=1 without ZITI_SDK_DIR is refused with an error naming both.
# Uses a target dir of its own (cached), so the main build is never disturbed.
set -euo pipefail
cd "$(dirname "$0")/.."
main_target="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TARGET_DIR="${MONKY_SDK_MODES_TARGET:-${MONKY_CACHE:-/var/cache/monky-deployd-dev}/target-sdk-modes}"
fail() { echo "check-sdk-modes: $*" >&2; exit 1; }

# the vendored build's archives, from the main target dir (the test suite built them); the newest
# first, so a stale build of an older vendor/ tree is never the one packaged
out=""
while IFS= read -r d; do
  if [ -f "$d/sdk_info.rs" ] && grep -q '"vendored"' "$d/sdk_info.rs" && [ -f "$d/libuv/lib/libuv.a" ]; then out=$d; break; fi
done < <(find "$main_target"/debug/build -path '*/ziti-sys-*/out/*/libziti.a' -printf '%T@ %p\n' 2>/dev/null |
  sort -rn | sed -E 's#^[^ ]+ (.*/ziti-sys-[^/]+/out)/.*#\1#')
[ -n "$out" ] || fail "no vendored ziti-sys build under $main_target (run cargo build first)"
prefix=$(mktemp -d /tmp/ziti-prefix.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
mkdir -p "$prefix/lib" "$prefix/include"
cp -r vendor/ziti-sdk-c/includes/ziti "$prefix/include/"
for a in libziti.a libtlsuv.a libllhttp.a libstc.a; do
  f=$(find "$out" -name "$a" | head -1); [ -n "$f" ] || fail "$a not in $out"; cp "$f" "$prefix/lib/"
done
cp "$out/libuv/lib/libuv.a" "$prefix/lib/"

echo "== prebuilt SDK (ZITI_SDK_DIR=$prefix)"
log=$(ZITI_SDK_DIR="$prefix" cargo test -q -p ziti-sys 2>&1) || { echo "$log"; fail "ziti-sys against a prebuilt SDK"; }
# the SDK-linked tests (version, error codes, tlsuv's connector symbols): at least two must run
grep -qE "test result: ok\. ([2-9]|[1-9][0-9]+) passed" <<<"$log" || { echo "$log"; fail "prebuilt SDK: its tests did not run"; }
echo "== no SDK (--no-default-features)"
log=$(cargo test -p ziti-sys --no-default-features 2>&1) || { echo "$log"; fail "no-SDK build"; }
grep -q "building WITHOUT an OpenZiti SDK" <<<"$log" || fail "no cargo:warning for the no-SDK build"
grep -q "no_sdk_build_says_so ... ok" <<<"$log" || fail "no-SDK test did not run"
echo "== ZITI_NO_VENDOR=1 without ZITI_SDK_DIR"
if log=$(ZITI_NO_VENDOR=1 cargo build -p ziti-sys 2>&1); then fail "ZITI_NO_VENDOR=1 alone built"; fi
grep -q "ZITI_NO_VENDOR=1 but ZITI_SDK_DIR is not set" <<<"$log" || { echo "$log"; fail "unclear error"; }
echo "check-sdk-modes: 3 passed, 0 failed"
