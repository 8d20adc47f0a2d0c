#!/usr/bin/env bash
# packaging/tests/run.sh — machine checks for everything under packaging/ and ansible/:
#   lint (shellcheck); systemd-analyze verify + security scoring of the units; the .deb (cargo-deb,
#   from the binary the tests already built) installed with dpkg into a debootstrapped Debian root;
#   self-update (update-install) with the real package in such a root; install.sh run inside such
#   a root with stand-ins for systemctl, the downloads and apt;
#   ansible-lint and ansible-playbook --syntax-check on the role.
# Installs what it needs first (provision.sh: pinned, cached under $MONKY_CACHE).
# Prints `N passed, M failed` last; exits non-zero when anything failed.
#
# Environment:
#   MONKY_CACHE                 cache dir (default /var/cache/monky-deployd-dev)
#   CARGO_TARGET_DIR            where the debug binary is (default <repo>/target)
#   MONKY_PACKAGING_NO_BUILD=1  do not run `cargo build`: the binary must already exist
#   MONKY_PACKAGING_KEEP=1      keep the work dir (printed at the end) for inspection
# shellcheck disable=SC2317 # helper functions are called through check()
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

# Mounts made for the test roots (/proc, /dev) die with this private mount namespace.
if [ -z "${MONKY_PACKAGING_UNSHARED:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "packaging/tests/run.sh must run as root (debootstrap, chroot, dpkg)" >&2; exit 1; }
  export MONKY_PACKAGING_UNSHARED=1
  exec unshare --mount --propagation private -- "$BASH" "${BASH_SOURCE[0]}" "$@"
fi

# shellcheck source=packaging/tests/provision.sh
. "$HERE/provision.sh"

START=$(date +%s)
PASS=0
FAIL=0
WORK=$(mktemp -d /tmp/monky-packaging.XXXXXX)
LOG="$WORK/checks.log"
FINISHED=0
cleanup() {
  local rc=$?
  if [ "$FINISHED" -eq 0 ]; then
    # set -e stopped the script outside a check: count it, and still print the tally.
    echo "packaging tests: stopped early (rc=$rc) at an unchecked step; see above" >&2
    printf '%s passed, %s failed\n' "$PASS" "$((FAIL + 1))"
  fi
  # unmount anything left under the work dir, deepest first
  awk -v w="$WORK" '$2 ~ "^"w {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  if [ -n "${MONKY_PACKAGING_KEEP:-}" ]; then echo "work dir kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

TALLY_NAME="packaging tests"
# shellcheck source=packaging/tests/tally.sh
. "$HERE/tally.sh"
# A fatal setup step: stop here, but still print the closing tally.
fatal() { echo "packaging tests: setup failed: $*" >&2; FAIL=$((FAIL + 1)); finish; }

# ---- helpers used by checks -------------------------------------------------------------------
# expect_grep FILE PATTERN (extended regex, whole file)
expect_grep() { grep -Eq -- "$2" "$1" || { printf '%s does not match /%s/:\n' "$1" "$2"; cat "$1"; return 1; }; }
expect_no_grep() { if grep -Eq -- "$2" "$1"; then printf '%s unexpectedly matches /%s/:\n' "$1" "$2"; grep -E -- "$2" "$1"; return 1; fi; }
# in ROOT CMD...: run inside a test root
in_root() { local r=$1; shift; chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
# stat_is ROOT PATH "MODE OWNER GROUP" (names resolved by the root's own passwd/group)
stat_is() { expect_eq "stat $2" "$(in_root "$1" stat -c '%a %U %G' "$2")" "$3"; }
# acl_has ROOT PATH ENTRY
acl_has() {
  local acl
  acl=$(in_root "$1" getfacl -cp "$2")
  printf '%s\n' "$acl" | grep -qx -- "$3" || { printf 'ACL of %s lacks %s:\n%s\n' "$2" "$3" "$acl"; return 1; }
}
# agent_status_is ROOT ENV TRANSPORT: `monky-deployd status --json` run as monky-deployd inside
# the root parses the config there and reports that env and transport.
agent_status_is() {
  local out
  out=$(in_root "$1" setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups \
        /usr/bin/monky-deployd status --json 2>&1) || { echo "status failed:"; printf '%s\n' "$out"; return 1; }
  if printf '%s\n' "$out" | grep -q "\"env_id\": \"$2\"" && printf '%s\n' "$out" | grep -q "\"transport\": \"$3\""; then
    return 0
  fi
  printf 'status --json lacks env %s / transport %s:\n%s\n' "$2" "$3" "$out"
  return 1
}
file_is() { expect_eq "content of $2" "$(cat "$1$2")" "$3"; }

# new_root NAME: a fresh Debian root from the cached tarball, with /proc and /dev mounted.
new_root() {
  local r="$WORK/$1"
  mkdir -p "$r"
  tar -C "$r" --numeric-owner -xzf "$(debian_tarball)"
  mount -t proc proc "$r/proc"
  mount --rbind /dev "$r/dev"
  mount --make-rslave "$r/dev"
  printf '%s' "$r"
}

# snapshot ROOT: mode, owner, size, hash and ACL of everything install.sh may touch.
snapshot() {
  local r=$1
  (
    cd "$r"
    find etc/monky-deployd var/lib/monky-deployd opt etc/default etc/docker etc/systemd/system \
         etc/apt/sources.list.d usr/share/keyrings usr/bin/monky-deployd srv/docker-data \
         etc/passwd etc/group var/lib/dpkg/status -printf '%p %m %u %g %s\n' 2>/dev/null | sort || true
    find etc/monky-deployd opt etc/default etc/docker etc/systemd/system -type f -exec sha256sum {} + 2>/dev/null | sort || true
    getfacl -Rcpn opt 2>/dev/null || true
  )
}

# ---- 0. provisioning --------------------------------------------------------------------------
section "provisioning (cached under $CACHE)"
# Not `provision_all || …`: that would switch off set -e inside it. A failure stops the run here,
# and the EXIT trap still prints the tally.
provision_all
export PATH="$ANSIBLE_VENV/bin:$PATH"

TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
# The package carries the release binary, as a real release does (one release build per run; a
# no-op when the cached target dir already has it). The vendored OpenZiti SDK is linked into it.
BIN="$TARGET_DIR/release/monky-deployd"
if [ -z "${MONKY_PACKAGING_NO_BUILD:-}" ]; then
  t_rel=$(date +%s)
  (cd "$REPO" && cargo build --quiet --release --bin monky-deployd) || fatal "cargo build --release --bin monky-deployd"
  echo "release build: $(( $(date +%s) - t_rel ))s"
fi
[ -x "$BIN" ] || fatal "$BIN does not exist: build it first (cargo build --release --bin monky-deployd)"
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -n1)
[ -n "$VERSION" ] || fatal "no version in Cargo.toml"
UPGRADE_VERSION="$VERSION+upgradetest1"

# ---- 1. shellcheck ----------------------------------------------------------------------------
section "shellcheck"
check "unit_sandbox.py compiles" /usr/bin/python3 -m py_compile "$REPO/packaging/tests/unit_sandbox.py"
check "notify_probe.py compiles" /usr/bin/python3 -m py_compile "$REPO/packaging/tests/notify_probe.py"
for f in packaging/install.sh packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm \
         packaging/tests/run.sh packaging/tests/provision.sh packaging/tests/standins/systemctl \
         packaging/tests/standins/curl packaging/tests/standins/apt-get packaging/tests/standins/docker \
         packaging/tests/install_tests.sh \
         packaging/tests/sandbox_tests.sh packaging/tests/ansible_tests.sh packaging/tests/selfupdate_tests.sh; do
  check "shellcheck $f" shellcheck -x -P "$REPO" "$REPO/$f"
done
check "install.sh and maintainer scripts are executable" \
  test -x "$REPO/packaging/install.sh" -a -x "$REPO/packaging/debian/postinst" -a -x "$REPO/packaging/debian/prerm" -a -x "$REPO/packaging/debian/postrm"

# ---- 2. systemd units -------------------------------------------------------------------------
section "systemd units"
UNITS=(monky-deployd.service monky-deployd.timer monky-deployd-laptop.service monky-deployd-proxy.service monky-deployd-run.service monky-deployd-update.service monky-deployd-update.path)
# the instance templates (docs/OPERATIONS.md, "Several environments on one box"); verified as
# instance "qa" (systemd-analyze loads a template only through an instance name)
TEMPLATES=(monky-deployd@.service monky-deployd@.timer monky-deployd-run@.service monky-deployd-laptop@.service monky-deployd-proxy@.service)
# verify needs every referenced unit and executable under one root: the host's units, ours, the
# real binary, and a stand-in for the ziti CLI (not part of this package).
VR="$WORK/verify-root"
mkdir -p "$VR/usr/lib/systemd/system" "$VR/usr/bin" "$VR/etc"
cp -a /usr/lib/systemd/system/. "$VR/usr/lib/systemd/system/"
cp "$REPO"/packaging/systemd/* "$VR/usr/lib/systemd/system/"
install -m 0755 "$BIN" "$VR/usr/bin/monky-deployd"
printf '#!/bin/sh\n' >"$VR/usr/bin/ziti"; chmod 0755 "$VR/usr/bin/ziti"
verify_clean() { # ROOT UNIT: clean = exit 0 and not one line of output
  local out rc=0
  out=$(systemd-analyze verify --root="$1" "$2" 2>&1) || rc=$?
  [ "$rc" -eq 0 ] && [ -z "$out" ] && return 0
  printf 'rc=%s\n%s\n' "$rc" "$out"; return 1
}
for u in "${UNITS[@]}"; do check "systemd-analyze verify $u" verify_clean "$VR" "$u"; done
for u in "${TEMPLATES[@]}"; do check "systemd-analyze verify ${u/@./@qa.}" verify_clean "$VR" "${u/@./@qa.}"; done
# The checker itself must be able to fail: a misspelt directive and a missing binary are caught.
cp "$REPO/packaging/systemd/monky-deployd.service" "$VR/usr/lib/systemd/system/monky-selftest.service"
sed -i 's/^ProtectHome=yes/ProtectHme=yes/; s#^ExecStart=/usr/bin/monky-deployd#ExecStart=/usr/bin/monky-missing#' \
  "$VR/usr/lib/systemd/system/monky-selftest.service"
check "verify rejects a broken copy of the unit (checker self-test)" \
  bash -c "! systemd-analyze verify --root='$VR' monky-selftest.service >/dev/null 2>&1 && systemd-analyze verify --root='$VR' monky-selftest.service 2>&1 | grep -q ProtectHme"
rm -f "$VR/usr/lib/systemd/system/monky-selftest.service"

exposure() { # UNIT-FILE -> the overall exposure number
  systemd-analyze security --offline=true --no-pager "$1" 2>/dev/null \
    | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
exposure_at_most() { # UNIT-FILE LIMIT
  local e
  e=$(exposure "$1")
  [ -n "$e" ] || { echo "no exposure score for $1"; return 1; }
  echo "exposure of $(basename "$1"): $e (limit $2)"
  awk -v e="$e" -v l="$2" 'BEGIN { exit !(e <= l) }'
}
for u in monky-deployd.service monky-deployd-laptop.service monky-deployd-proxy.service monky-deployd-update.service; do
  check "systemd-analyze security $u <= 2.0" exposure_at_most "$REPO/packaging/systemd/$u" 2.0
done
# the service holds the identity key and tokens for weeks: the issue's bar is 1.5
check "systemd-analyze security monky-deployd-run.service <= 1.5" exposure_at_most "$REPO/packaging/systemd/monky-deployd-run.service" 1.5
# the same sandbox as the oneshot: every hardening line of monky-deployd.service is in the service
same_hardening() {
  local line lacking=0
  while IFS= read -r line; do
    grep -qxF -- "$line" "$REPO/packaging/systemd/monky-deployd-run.service" || { echo "run service lacks: $line"; lacking=1; }
  done < <(sed -n '/^User=/,/^DevicePolicy=/p' "$REPO/packaging/systemd/monky-deployd.service" | grep -Ev '^(#|$)')
  return "$lacking"
}
check "run service: every sandbox line of the oneshot unit" same_hardening
AGENT_EXPOSURE=$(exposure "$REPO/packaging/systemd/monky-deployd.service")
grep -Ev '^(ProtectSystem|ProtectHome|PrivateTmp|NoNewPrivileges|CapabilityBoundingSet|SystemCallFilter|MemoryDenyWriteExecute|RestrictAddressFamilies|PrivateDevices|ProtectKernel.*|RestrictNamespaces|PrivateUsers)=' \
  "$REPO/packaging/systemd/monky-deployd.service" >"$WORK/weak.service"
check "security scoring tells a weakened unit apart (checker self-test)" \
  bash -c "! awk -v e=\"\$(systemd-analyze security --offline=true --no-pager '$WORK/weak.service' 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')\" 'BEGIN { exit !(e != \"\" && e <= 2.0) }'"

unit_has() { # UNIT LINE...
  local u="$REPO/packaging/systemd/$1" l
  shift
  for l in "$@"; do grep -qxF -- "$l" "$u" || { echo "$1 lacks: $l"; return 1; }; done
}
check "agent unit: oneshot tick as monky-deployd + docker, 75 is success, umask 077" \
  unit_has monky-deployd.service 'Type=oneshot' 'ExecStart=/usr/bin/monky-deployd run --once' \
  'SuccessExitStatus=75' 'User=monky-deployd' 'SupplementaryGroups=docker' 'UMask=0077' \
  'ProtectSystem=strict' 'ReadWritePaths=/etc/monky-deployd' 'StateDirectory=monky-deployd' 'CapabilityBoundingSet=' \
  'MemoryDenyWriteExecute=yes' 'MemoryMax=256M' 'TasksMax=64'
check "laptop unit: runs the loop, restarts on failure, never on 78" \
  unit_has monky-deployd-laptop.service 'ExecStart=/usr/bin/monky-deployd run' 'RestartPreventExitStatus=78' \
  'Restart=on-failure' 'User=monky-deployd' \
  'MemoryMax=256M' 'TasksMax=64'
check "run service: Type=notify, watchdog above the tick budget, restarts on failure, never on 78, no swap" \
  unit_has monky-deployd-run.service 'Type=notify' 'NotifyAccess=main' 'ExecStart=/usr/bin/monky-deployd run' \
  'WatchdogSec=20min' 'TimeoutStartSec=20min' 'Restart=on-failure' 'RestartPreventExitStatus=78' \
  'ExecReload=/usr/bin/monky-deployd reload --pid '"\$MAINPID" 'MemorySwapMax=0' 'MemoryMax=256M' 'TasksMax=64' \
  'Conflicts=monky-deployd.timer monky-deployd.service monky-deployd-laptop.service' 'WantedBy=multi-user.target'
watchdog_above_budget() {
  local wd budget
  wd=$(sed -n 's/^WatchdogSec=//p' "$REPO/packaging/systemd/monky-deployd-run.service")
  wd=$(systemd-analyze timespan "$wd" | sed -n 's/^ *μs: //p')
  budget=$(sed -n 's/^pub const DEFAULT_TICK_BUDGET_S: u64 = \([0-9]*\);/\1/p' "$REPO/src/host/config.rs")
  echo "WatchdogSec ${wd} us, tick_budget_s ${budget} s"
  [ -n "$wd" ] && [ -n "$budget" ] && [ "$wd" -gt $((budget * 1000000)) ]
}
check "run service: WatchdogSec above the default tick budget" watchdog_above_budget
check "timer and laptop loop conflict with the run service" bash -c "
  grep -qx 'Conflicts=monky-deployd-laptop.service monky-deployd-run.service' '$REPO/packaging/systemd/monky-deployd.timer' &&
  grep -qx 'Conflicts=monky-deployd.timer monky-deployd.service monky-deployd-run.service' '$REPO/packaging/systemd/monky-deployd-laptop.service'"
# the loop exits 75 only when it could not start: that must restart it, not count as success
check "laptop unit: 75 is not a success (the unit comes back)" \
  bash -c "! grep -qx 'SuccessExitStatus=75' '$REPO/packaging/systemd/monky-deployd-laptop.service'"
# shellcheck disable=SC2016 # the unit's own ${...} syntax, not a shell expansion
check "proxy unit: ziti tunnel proxy as user ziti on the two loopback ports" \
  unit_has monky-deployd-proxy.service 'User=ziti' \
  'ExecStart=/usr/bin/ziti tunnel proxy -i ${MONKY_ZITI_IDENTITY} monky.tenancy.deploy:18443 openbao:18200'
check "timer: every minute with a randomized per-host delay" \
  unit_has monky-deployd.timer 'OnCalendar=minutely' 'RandomizedDelaySec=50s' 'FixedRandomDelay=yes' 'Unit=monky-deployd.service'
check "timer calendar expression parses" systemd-analyze calendar minutely
for u in monky-deployd@.service monky-deployd-run@.service monky-deployd-laptop@.service monky-deployd-proxy@.service; do
  check "systemd-analyze security $u <= 1.5" exposure_at_most "$REPO/packaging/systemd/$u" 1.5
done
# as_template LINE: a line of an unnamed unit as its template twin must carry it (the instance's
# config dir, state dir, HOME, units and --instance flag)
as_template() {
  sed -e 's#^ConditionPathExists=/etc/monky-deployd/config.yaml$#ConditionPathExists=/etc/monky-deployd/%i/config.yaml#' \
      -e 's#^StateDirectory=monky-deployd$#StateDirectory=monky-deployd/%i#' \
      -e 's#^ReadWritePaths=/etc/monky-deployd$#ReadWritePaths=/etc/monky-deployd/%i#' \
      -e 's#^Environment=HOME=/var/lib/monky-deployd$#Environment=HOME=/var/lib/monky-deployd/%i#' \
      -e 's#^\(ExecStart\|ExecReload\)=/usr/bin/monky-deployd #\1=/usr/bin/monky-deployd --instance %i #' \
      -e 's#^EnvironmentFile=/etc/default/monky-deployd-proxy$#EnvironmentFile=/etc/default/monky-deployd-proxy-%i#' \
      -e 's#\bmonky-deployd\(-run\|-laptop\|-proxy\)\?\.\(service\|timer\)\b#monky-deployd\1@%i.\2#g'
}
# same_as_twin TEMPLATE TWIN: every setting of the unnamed twin, mapped, is in the template (only
# Description, and the proxy's ExecStart with its per-instance ports, differ); services add LimitCORE=0
same_as_twin() {
  local t="$REPO/packaging/systemd/$1" line want lacking=0
  while IFS= read -r line; do
    want=$(printf '%s\n' "$line" | as_template)
    grep -qxF -- "$want" "$t" || { echo "$1 lacks: $want"; lacking=1; }
  done < <(grep -Ev '^(#|$|Description=|ExecStart=/usr/bin/ziti )' "$REPO/packaging/systemd/$2")
  case $1 in *.service) grep -qx 'LimitCORE=0' "$t" || { echo "$1 lacks LimitCORE=0"; lacking=1; } ;; esac
  return "$lacking"
}
for pair in monky-deployd@.service:monky-deployd.service monky-deployd@.timer:monky-deployd.timer \
            monky-deployd-run@.service:monky-deployd-run.service monky-deployd-laptop@.service:monky-deployd-laptop.service \
            monky-deployd-proxy@.service:monky-deployd-proxy.service; do
  check "${pair%%:*}: every setting of ${pair#*:} with the instance's paths" same_as_twin "${pair%%:*}" "${pair#*:}"
done
# the checker can fail: a template that writes the whole /etc/monky-deployd is caught
sed 's#^ReadWritePaths=/etc/monky-deployd/%i$#ReadWritePaths=/etc/monky-deployd#' "$REPO/packaging/systemd/monky-deployd@.service" >"$WORK/wide@.service"
check "a template writable beyond its instance is told apart (checker self-test)" \
  bash -c "$(declare -f as_template same_as_twin); REPO='$WORK/selftest'; mkdir -p \$REPO/packaging/systemd; cp '$WORK/wide@.service' \$REPO/packaging/systemd/monky-deployd@.service; cp '$REPO/packaging/systemd/monky-deployd.service' \$REPO/packaging/systemd/; ! same_as_twin monky-deployd@.service monky-deployd.service"
# shellcheck disable=SC2016 # the unit's own ${...} syntax, not a shell expansion
check "proxy template: the instance's identity and ports from its environment file" \
  unit_has monky-deployd-proxy@.service 'User=ziti' 'EnvironmentFile=/etc/default/monky-deployd-proxy-%i' \
  'ExecStart=/usr/bin/ziti tunnel proxy -i ${MONKY_ZITI_IDENTITY} monky.tenancy.deploy:${MONKY_TENANCY_PROXY_PORT} openbao:${MONKY_BAO_PROXY_PORT}'
check "instance timer, run and laptop units conflict with their own instance's twins only" bash -c "
  grep -qx 'Conflicts=monky-deployd-laptop@%i.service monky-deployd-run@%i.service' '$REPO/packaging/systemd/monky-deployd@.timer' &&
  grep -qx 'Conflicts=monky-deployd@%i.timer monky-deployd@%i.service monky-deployd-laptop@%i.service' '$REPO/packaging/systemd/monky-deployd-run@.service' &&
  grep -qx 'Conflicts=monky-deployd@%i.timer monky-deployd@%i.service monky-deployd-run@%i.service' '$REPO/packaging/systemd/monky-deployd-laptop@.service' &&
  grep -qx 'Unit=monky-deployd@%i.service' '$REPO/packaging/systemd/monky-deployd@.timer'"

# ---- 3. the .deb ------------------------------------------------------------------------------
section ".deb (cargo-deb $CARGO_DEB_VERSION, --no-build, release profile)"
DEBS="$WORK/debs"
mkdir -p "$DEBS/$VERSION" "$DEBS/$UPGRADE_VERSION"
build_deb() { # OUTDIR [extra args]
  local out=$1
  shift
  (cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" "$CARGO_DEB" --no-build --fast -q -p monky-deployd -o "$out" "$@")
}
check "cargo deb builds the package from the release binary" build_deb "$DEBS/$VERSION"
check "cargo deb builds an upgrade (same binary, version $UPGRADE_VERSION)" build_deb "$DEBS/$UPGRADE_VERSION" --deb-version "$UPGRADE_VERSION"
ARCH=$(dpkg --print-architecture)
DEB="$DEBS/$VERSION/monky-deployd_${VERSION}_${ARCH}.deb"
DEB_UP="$DEBS/$UPGRADE_VERSION/monky-deployd_${UPGRADE_VERSION}_${ARCH}.deb"
if [ ! -s "$DEB" ] || [ ! -s "$DEB_UP" ]; then fatal "no .deb at $DEB / $DEB_UP"; fi
dpkg-deb -c "$DEB" >"$WORK/deb-contents"
check "deb metadata: name, version, arch, depends" bash -c "
  [ \"\$(dpkg-deb -f '$DEB' Package)\" = monky-deployd ] && [ \"\$(dpkg-deb -f '$DEB' Version)\" = '$VERSION' ] &&
  [ \"\$(dpkg-deb -f '$DEB' Architecture)\" = '$ARCH' ] && dpkg-deb -f '$DEB' Depends | grep -q passwd"
check "deb carries postinst, prerm and postrm" bash -c "dpkg-deb -I '$DEB' | grep -q ' postinst' && dpkg-deb -I '$DEB' | grep -q ' prerm' && dpkg-deb -I '$DEB' | grep -q ' postrm'"
deb_has() { # MODE PATH
  grep -Eq "^$1 0/0 +[0-9]+ [^ ]+ [^ ]+ \./$2\$" "$WORK/deb-contents" || { echo "missing $1 $2 in:"; cat "$WORK/deb-contents"; return 1; }
}
check "deb: binary 0755" deb_has -rwxr-xr-x usr/bin/monky-deployd
for u in "${UNITS[@]}" "${TEMPLATES[@]}"; do check "deb: unit $u 0644" deb_has -rw-r--r-- "usr/lib/systemd/system/$u"; done
check "deb: one self-contained binary, no libziti.so" bash -c "! grep -q libziti '$WORK/deb-contents'"
# every shared library the binary needs is from the C library's family: the SDK is inside it
only_libc_family() {
  local libs
  ldd "$1" || return 1
  libs=$(ldd "$1" | awk '{print $1}' | grep -Ev '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(c|m|gcc_s|pthread|dl|rt)\.so\.[0-9]+)$' || true)
  [ -z "$libs" ] || { echo "unexpected: $libs"; return 1; }
}
names_its_sdk() { local out; out=$(env -i "$1" version) && echo "$out" && echo "$out" | grep -q 'ziti sdk: 1.18.2'; }
check "release binary links the OpenZiti SDK statically: ldd shows only libc-family libraries" only_libc_family "$BIN"
check "release binary runs from target/release with no environment and names its SDK" names_its_sdk "$BIN"
# The test hooks (cargo feature test-hooks, on only under `cargo test`) are not in what ships:
# `version` does not list them, and no MONKY_DEPLOYD_TEST_* name (TEST_POLICY=off would turn
# the boundary off) is in the binary, so no environment can reach one.
no_test_hooks() {
  local out
  out=$(env -i MONKY_DEPLOYD_TEST_POLICY=off "$1" version) || return 1
  case $out in *test-hooks*) echo "version lists test hooks: $out"; return 1 ;; esac
  if grep -aoE 'MONKY_DEPLOYD_TEST_[A-Z_]+' "$1" | sort -u | grep .; then echo "^ hook names in $1"; return 1; fi
}
check "release binary has no test hooks (version, and no MONKY_DEPLOYD_TEST_ name inside)" no_test_hooks "$BIN"
# The hidden flags of a test build (src/main.rs, feature test-hooks) are unknown to the release:
# clap refuses each by name (exit 2) before anything runs.
no_test_flags() {
  local args out rc flag
  for args in "--etc-dir /tmp version" "update-install --dpkg /bin/true" \
    "update-install --dpkg-query /bin/true" "update-install --systemctl /bin/true"; do
    rc=0
    # shellcheck disable=SC2086 # the words are the arguments
    out=$(env -i "$1" $args 2>&1) || rc=$?
    flag=${args#update-install }
    flag=${flag%% *}
    if [ "$rc" -ne 2 ] || ! echo "$out" | grep -qF "unexpected argument '$flag'"; then
      echo "$flag: exit $rc: $out"
      return 1
    fi
  done
}
check "release binary has no test flags (--etc-dir, update-install --dpkg/--dpkg-query/--systemctl)" no_test_flags "$BIN"
check "deb: config example and docs" bash -c "grep -q 'usr/share/doc/monky-deployd/config.example.yaml' '$WORK/deb-contents' && grep -q 'usr/share/doc/monky-deployd/OPERATIONS.md' '$WORK/deb-contents'"
check "deb ships nothing under /etc or /var (config and token are never package files)" \
  bash -c "! grep -Eq ' \./(etc|var)/.' '$WORK/deb-contents'"

# ---- 4. dpkg into a Debian root -----------------------------------------------------------------
section "dpkg -i into a debootstrapped $(debian_suite) root"
R=$(new_root deb-root)
cp "$DEB" "$DEB_UP" "$R/tmp/"
DEBN=$(basename "$DEB")
DEBN_UP=$(basename "$DEB_UP")
check "dpkg -i succeeds in a minimal Debian root" in_root "$R" dpkg -i "/tmp/$DEBN"
check "package is installed at $VERSION" bash -c "[ \"\$(chroot '$R' dpkg-query -W -f='\${Status} \${Version}' monky-deployd)\" = 'install ok installed $VERSION' ]"
check "binary /usr/bin/monky-deployd 0755 root" stat_is "$R" /usr/bin/monky-deployd "755 root root"
for u in "${UNITS[@]}" "${TEMPLATES[@]}"; do check "unit $u 0644 root" stat_is "$R" "/usr/lib/systemd/system/$u" "644 root root"; done
check "the installed binary reports the embedded SDK in the root" bash -c "chroot '$R' /usr/bin/monky-deployd version | grep -q 'ziti sdk: 1.18.2'"
check "monky-deployd version runs in the Debian root" bash -c "out=\$(chroot '$R' /usr/bin/monky-deployd version) && echo \"\$out\" && echo \"\$out\" | grep -qF '$VERSION'"
check "user monky-deployd: system uid, home = state dir, no login shell" bash -c "
  IFS=: read -r name _ uid _ _ home shell < <(chroot '$R' getent passwd monky-deployd) &&
  echo \"\$name \$uid \$home \$shell\" && [ \"\$uid\" -lt 1000 ] && [ \"\$home\" = /var/lib/monky-deployd ] && [ \"\$shell\" = /usr/sbin/nologin ]"
check "user monky-deployd is in the docker group" bash -c "chroot '$R' id -nG monky-deployd | tr ' ' '\n' | grep -qx docker"
check "/etc/monky-deployd root:monky-deployd 1770" stat_is "$R" /etc/monky-deployd "1770 root monky-deployd"
check "/var/lib/monky-deployd monky-deployd 0700" stat_is "$R" /var/lib/monky-deployd "700 monky-deployd monky-deployd"
check "the agent user can read the binary's version as itself" in_root "$R" setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups /usr/bin/monky-deployd version
# The operator's config and the agent's token, then a reinstall and an upgrade.
printf 'env_id: env-qa-02\nsite: cbs\n# operator edit\n' >"$R/etc/monky-deployd/config.yaml"
chroot "$R" chown root:monky-deployd /etc/monky-deployd/config.yaml
chmod 0640 "$R/etc/monky-deployd/config.yaml"
printf 's.operatortoken0000000000000' >"$R/var/lib/monky-deployd/bao.token"
chroot "$R" chown monky-deployd:monky-deployd /var/lib/monky-deployd/bao.token
chmod 0600 "$R/var/lib/monky-deployd/bao.token"
keep_before=$(cd "$R" && stat -c '%n %a %U %G' etc/monky-deployd/config.yaml var/lib/monky-deployd/bao.token && sha256sum etc/monky-deployd/config.yaml var/lib/monky-deployd/bao.token)
kept() { local now; now=$(cd "$R" && stat -c '%n %a %U %G' etc/monky-deployd/config.yaml var/lib/monky-deployd/bao.token && sha256sum etc/monky-deployd/config.yaml var/lib/monky-deployd/bao.token); expect_eq "config+token" "$now" "$keep_before"; }
check "dpkg -i of the same version again (reinstall) succeeds" in_root "$R" dpkg -i "/tmp/$DEBN"
check "reinstall leaves config.yaml and bao.token alone" kept
check "dpkg -i of a newer version (upgrade) succeeds" in_root "$R" dpkg -i "/tmp/$DEBN_UP"
check "upgrade leaves config.yaml and bao.token alone" kept
check "upgrade re-asserts directory modes" bash -c "[ \"\$(chroot '$R' stat -c '%a %U %G' /etc/monky-deployd /var/lib/monky-deployd)\" = \"\$(printf '1770 root monky-deployd\n700 monky-deployd monky-deployd')\" ]"
check "package now at $UPGRADE_VERSION" bash -c "[ \"\$(chroot '$R' dpkg-query -W -f='\${Version}' monky-deployd)\" = '$UPGRADE_VERSION' ]"
# The installed units against the installed binary: verify inside the Debian root itself.
cp -an /usr/lib/systemd/system/. "$R/usr/lib/systemd/system/"
printf '#!/bin/sh\n' >"$R/usr/bin/ziti"; chmod 0755 "$R/usr/bin/ziti"
for u in "${UNITS[@]}"; do check "systemd-analyze verify $u as installed in the root" verify_clean "$R" "$u"; done
for u in "${TEMPLATES[@]}"; do check "systemd-analyze verify ${u/@./@qa.} as installed in the root" verify_clean "$R" "${u/@./@qa.}"; done
check "dpkg --remove keeps config and token" bash -c "chroot '$R' dpkg --remove monky-deployd >/dev/null && [ -f '$R/etc/monky-deployd/config.yaml' ] && [ -f '$R/var/lib/monky-deployd/bao.token' ] && [ ! -e '$R/usr/bin/monky-deployd' ]"
check "dpkg --purge (retire) deletes config, token and state; the user stays" bash -c "chroot '$R' dpkg --purge monky-deployd >/dev/null && [ ! -e '$R/etc/monky-deployd' ] && [ ! -e '$R/var/lib/monky-deployd' ] && chroot '$R' getent passwd monky-deployd >/dev/null"

# ---- 5. self-update with the real package in a Debian root -------------------------------------
section "self-update with the real package in a Debian root (update-install; stand-ins: systemctl, the agent's staging and tick)"
# shellcheck source=packaging/tests/selfupdate_tests.sh
. "$HERE/selfupdate_tests.sh"

# ---- 6. install.sh inside a Debian root -------------------------------------------------------
section "install.sh in a Debian root (stand-ins: systemctl, curl downloads, apt-get)"
# shellcheck source=packaging/tests/install_tests.sh
. "$HERE/install_tests.sh"

# ---- 7. the agent under its unit's sandbox ------------------------------------------------------
section "the agent under monky-deployd.service's sandbox (seccomp, MDWE, read-only root; no systemd)"
# shellcheck source=packaging/tests/sandbox_tests.sh
. "$HERE/sandbox_tests.sh"

# ---- 8. ansible -------------------------------------------------------------------------------
section "ansible role"
# shellcheck source=packaging/tests/ansible_tests.sh
. "$HERE/ansible_tests.sh"

echo "agent unit exposure: $AGENT_EXPOSURE"
finish
