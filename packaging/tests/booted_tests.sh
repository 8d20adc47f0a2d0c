#!/usr/bin/env bash
# packaging/tests/booted_tests.sh — the package under a real systemd: a Debian 12 root
# (debootstrapped from Debian's packages, cached as a tarball under $MONKY_CACHE) booted with
# systemd-nspawn, the host's docker socket and /var/lib/docker (read-only) bound in, the docker
# group's gid matched, the .deb (cargo-deb, from the release binary) installed with dpkg and
# configured against a test stack on the host's loopback (monky-test-stack: real OpenBao + the
# test tenancy; the container shares the host's network). Nothing here is a stand-in: systemd
# starts the units, journald takes their output, dpkg runs the maintainer scripts.
#
# Checks (asserting on `systemctl show` fields, `journalctl -o json` and what tenancy recorded):
# the timer starts the oneshot, which applies, and a heartbeat follows; exit 75 counts as
# success; the sandbox refuses a write outside the state dir; journal priorities; the metrics
# drop-in; `systemd-analyze security`; stop during an apply; the run service reaches READY, feeds
# its watchdog and is restarted when wedged (SIGSTOP); reload with a good and a bad config; the
# update path unit installs a newer package and reverts one that never ticks; two instances
# installed with install.sh --instance, an upgrade restarting both, --remove --instance of one
# leaving the other running, and dpkg --remove stopping every instance.
# Prints `N passed, M failed` last; exits non-zero when anything failed.
#
# Environment:
#   MONKY_CACHE             cache dir (default /var/cache/monky-deployd-dev)
#   CARGO_TARGET_DIR        where the binaries are (default <repo>/target)
#   MONKY_BOOTED_PROFILE    release (default: the packaged binary) | debug (faster edit loop)
#   MONKY_BOOTED_KEEP=1     keep the work dir and leave the container running (printed at the end)
#   CARGO_DEB               the cargo-deb binary (default: $MONKY_CACHE/bin/cargo-deb, provisioned)
# shellcheck disable=SC2317,SC2016 # check functions are called through check(); ${…} of dpkg-query and env.template are literal
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "booted_tests.sh must run as root (debootstrap, systemd-nspawn)" >&2; exit 1; }
CARGO_DEB_GIVEN="${CARGO_DEB:-}"
# shellcheck source=packaging/tests/provision.sh
. "$HERE/provision.sh"

START=$(date +%s)
PASS=0
FAIL=0
FINISHED=0
T="${CARGO_TARGET_DIR:-$REPO/target}"
PROFILE="${MONKY_BOOTED_PROFILE:-release}"
WORK=$(mktemp -d /tmp/monky-booted.XXXXXX)
ROOT="$WORK/root"
LOG="$WORK/checks.log"
NSPAWN_PID=""
STACK_PID=""
MACHINE="monky-booted-$$"
ENV_ID=booted-01
PROJECT="monky-$ENV_ID"
APP_PORT=18391

cleanup() {
  local rc=$?
  if [ "$FINISHED" -eq 0 ]; then
    echo "booted tests: stopped early (rc=$rc) at an unchecked step; see above" >&2
    printf '%s passed, %s failed\n' "$PASS" "$((FAIL + 1))"
  fi
  if [ -n "${MONKY_BOOTED_KEEP:-}" ]; then
    echo "work dir kept: $WORK (container leader pid $(leader 2>/dev/null || echo -))" >&2
    return
  fi
  if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
    in_c systemctl stop monky-deployd-run.service monky-deployd.timer monky-deployd.service >/dev/null 2>&1 || true
    kill -TERM "$NSPAWN_PID" 2>/dev/null || true # nspawn turns it into a clean poweroff
    for _ in $(seq 1 50); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$NSPAWN_PID" 2>/dev/null || true
  fi
  [ -z "$STACK_PID" ] || kill "$STACK_PID" 2>/dev/null || true
  docker compose -p "$PROJECT" down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

TALLY_NAME="booted tests"
# shellcheck source=packaging/tests/tally.sh
. "$HERE/tally.sh"
fatal() {
  echo "booted tests: setup failed: $*" >&2
  if [ -n "$NSPAWN_PID" ] && [ -n "$(leader 2>/dev/null)" ]; then
    in_c journalctl --no-pager -n 40 >&2 2>/dev/null || true
  fi
  FAIL=$((FAIL + 1))
  finish
}

# ---- the container ------------------------------------------------------------------------------
# The container's PID 1 (systemd), a child of systemd-nspawn.
leader() { pgrep -P "$NSPAWN_PID" -x systemd | head -n1; }
# in_c CMD…: run CMD inside the booted container (all its namespaces, a clean environment).
in_c() {
  nsenter -t "$LEADER" -a -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 SYSTEMD_PAGER= "$@"
}
prop() { in_c systemctl show -P "$2" "$1"; } # UNIT PROPERTY
# wait_until SECONDS CMD…: poll CMD every 0.5 s.
wait_until() {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 2; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  "$@"
}
unit_inactive() { [ "$(prop "$1" ActiveState)" != activating ] && [ "$(prop "$1" ActiveState)" != active ] && [ "$(prop "$1" ActiveState)" != deactivating ]; }
# journal_json UNIT [INVOCATION]: that unit's journal as JSON lines (one invocation's, if given).
journal_json() {
  # what journald has read from the unit's stream but not yet written is written first: under
  # load a query right after the unit ended could miss the agent's last lines
  in_c journalctl --sync >/dev/null 2>&1 || true
  # -u adds a disjunction of matches: an invocation id next to it would not narrow them all
  if [ -n "${2:-}" ]; then in_c journalctl --no-pager -o json _SYSTEMD_INVOCATION_ID="$2"
  else in_c journalctl --no-pager -o json -u "$1"; fi
}
# messages UNIT INVOCATION: "PRIORITY MESSAGE" per line of that invocation, the agent's own only.
messages() {
  journal_json "$1" "$2" | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e.get("_COMM") != "monky-deployd" and e.get("SYSLOG_IDENTIFIER") != "monky-deployd":
        continue
    m = e.get("MESSAGE")
    if isinstance(m, list): m = bytes(m).decode("utf-8", "replace")
    print(e.get("PRIORITY"), m)'
}
config_put() { # TEXT on stdin → /etc/monky-deployd/config.yaml (0640 root:monky-deployd)
  cat >"$ROOT/etc/monky-deployd/config.yaml.new"
  in_c sh -ec 'chown root:monky-deployd /etc/monky-deployd/config.yaml.new; chmod 0640 /etc/monky-deployd/config.yaml.new; mv /etc/monky-deployd/config.yaml.new /etc/monky-deployd/config.yaml'
}
# start_tick: one run of the oneshot (what the timer starts), waited for; prints its invocation id.
start_tick() {
  in_c systemctl start monky-deployd.service >/dev/null 2>&1 || true
  prop monky-deployd.service InvocationID
}
stack_reports() { cat "$WORK/stack/reports.jsonl" 2>/dev/null || true; }
# publish SERIAL COMPOSE-BODY: a new render of the bundle, taken up by the stack (SIGHUP).
publish() {
  local serial=$1
  cat >"$WORK/bundle/compose.yaml"
  printf '{"serial": %s, "need_bytes": 1048576, "agent": {"allow_privileged": false, "allow_rollback": false}}\n' \
    "$serial" >"$WORK/bundle/bundle.json"
  local before
  before=$(grep -c 'reloaded sha=' "$WORK/stack.log" || true)
  kill -HUP "$STACK_PID"
  wait_until 20 sh -c "[ \$(grep -c 'reloaded sha=' '$WORK/stack.log') -gt $before ]"
}

good_compose() {
  cat <<EOF
services:
  web:
    image: 127.0.0.1:5001/monky/busybox:1
    init: true
    ports: ["127.0.0.1:$APP_PORT:8080"]
    environment:
      API_KEY: \${API_KEY}
      RENDER: "$1"
    command: ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www"]
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/"]
      interval: 1s
      timeout: 2s
      retries: 10
EOF
}
# never healthy: the tick waits (healthy_timeout_s) until it is stopped
slow_compose() {
  cat <<EOF
services:
  web:
    image: 127.0.0.1:5001/monky/busybox:1
    init: true
    environment:
      API_KEY: \${API_KEY}
    command: ["sh", "-c", "exec sleep 3600"]
    healthcheck:
      test: ["CMD", "false"]
      interval: 1s
      timeout: 1s
      retries: 1000
EOF
}

# ---- provisioning -----------------------------------------------------------------------------
section "provisioning (cached under $CACHE)"
BOOT_INCLUDE="systemd,systemd-sysv,dbus,ca-certificates,acl,procps,util-linux"
BOOT_TARBALL="$CACHE/debian-bookworm-booted-${BOOT_INCLUDE//,/-}.tar.gz"
provision_booted() {
  local -a missing=() p
  for p in systemd-container debootstrap acl openssl python3; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    plog "apt: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null; apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  fi
  [ -s "$BOOT_TARBALL" ] && return 0
  local tmp mirror
  mirror=$(debian_mirror)
  plog "debootstrap bookworm (minbase + $BOOT_INCLUDE) from $mirror -> $BOOT_TARBALL (about 2 min, once)"
  tmp=$(mktemp -d "$CACHE/debootstrap-booted.XXXXXX")
  debootstrap --variant=minbase --include="$BOOT_INCLUDE" bookworm "$tmp/root" "$mirror" >"$tmp/log" 2>&1 \
    || { tail -n 30 "$tmp/log" >&2; rm -rf "$tmp"; return 1; }
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*
  tar -C "$tmp/root" --numeric-owner -czf "$tmp/root.tar.gz" .
  mv "$tmp/root.tar.gz" "$BOOT_TARBALL"
  rm -rf "$tmp"
}
mkdir -p "$CACHE"
exec 8>"$CACHE/.booted-provision.lock"
flock 8
provision_booted || fatal "provisioning the booted root"
if [ -n "$CARGO_DEB_GIVEN" ]; then
  CARGO_DEB=$CARGO_DEB_GIVEN
else
  provision_cargo_deb || fatal "cargo-deb"
fi
exec 8>&-
COMPOSE_BIN="$CACHE/bin/docker-compose-v2"
[ -x "$COMPOSE_BIN" ] || fatal "$COMPOSE_BIN missing (scripts/provision.sh installs it)"
docker info >/dev/null 2>&1 || fatal "dockerd is not answering (scripts/services.sh starts it)"
curl -fsS --max-time 3 http://127.0.0.1:5001/v2/monky/busybox/tags/list >/dev/null \
  || fatal "the open registry on 127.0.0.1:5001 has no monky/busybox (scripts/services.sh)"

section "binaries ($PROFILE) and the .deb"
cargo_flags=()
[ "$PROFILE" = release ] && cargo_flags=(--release)
BIN="$T/$PROFILE/monky-deployd"
[ -x "$BIN" ] || (cd "$REPO" && cargo build --quiet "${cargo_flags[@]}" --bin monky-deployd) || fatal "cargo build monky-deployd"
(cd "$REPO" && cargo build --quiet -p monky-test-tenancy --bin monky-test-stack) || fatal "cargo build monky-test-stack"
STACK_BIN="$T/debug/monky-test-stack"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -n1)
ARCH=$(dpkg --print-architecture)
mkdir -p "$WORK/debs"
deb_profile=release
[ "$PROFILE" = debug ] && deb_profile=dev
(cd "$REPO" && "$CARGO_DEB" --no-build --no-strip --profile "$deb_profile" -p monky-deployd -o "$WORK/debs/base.deb" >"$WORK/cargo-deb.log" 2>&1) \
  || { cat "$WORK/cargo-deb.log" >&2; fatal "cargo deb"; }
DEB="$WORK/debs/base.deb"
# repack DEB VERSION OUT [BROKEN]: the same package under another version; BROKEN replaces the
# binary with one that exits 1 at once (a release that never ticks).
repack() {
  local d="$WORK/repack.$2"
  rm -rf "$d"
  dpkg-deb -R "$1" "$d"
  sed -i "s/^Version: .*/Version: $2/" "$d/DEBIAN/control"
  if [ -n "${4:-}" ]; then printf '#!/bin/sh\necho "broken build" >&2\nexit 1\n' >"$d/usr/bin/monky-deployd"; fi
  dpkg-deb --root-owner-group -b "$d" "$3" >/dev/null
  rm -rf "$d"
}
# the newer package: a Debian revision of the same upstream version, so the binary (which calls
# itself $VERSION) counts for its probation
V_GOOD="$VERSION-1"
V_BROKEN="$VERSION-2"
repack "$DEB" "$V_GOOD" "$WORK/debs/good.deb"
repack "$DEB" "$V_BROKEN" "$WORK/debs/broken.deb" broken

section "test stack on loopback (OpenBao + the test tenancy)"
mkdir -p "$WORK/bundle" "$WORK/stack"
good_compose 1 >"$WORK/bundle/compose.yaml"
printf 'API_KEY=${API_KEY}\n' >"$WORK/bundle/env.template"
printf '{"entries": [{"var": "API_KEY", "path": "monky/data/%s/see/api_key", "version": 1}]}\n' "$ENV_ID" >"$WORK/bundle/secrets.manifest.json"
printf '{"serial": 1, "need_bytes": 1048576, "agent": {"allow_privileged": false, "allow_rollback": false}}\n' >"$WORK/bundle/bundle.json"
export MONKY_BAO_BIN="${MONKY_BAO_BIN:-$CACHE/bin/bao}"
"$STACK_BIN" --dir "$WORK/stack" --bundle "$WORK/bundle" --env "$ENV_ID" --compose-cmd plugin >"$WORK/stack.log" 2>&1 &
STACK_PID=$!
wait_until 60 grep -q "monky-test-stack ready" "$WORK/stack.log" || { cat "$WORK/stack.log" >&2; fatal "the test stack did not start"; }
docker compose -p "$PROJECT" down -v --remove-orphans >/dev/null 2>&1 || true

section "boot Debian 12 (systemd-nspawn)"
mkdir -p "$ROOT"
tar -C "$ROOT" --numeric-owner -xzf "$BOOT_TARBALL"
DOCKER_GID=$(stat -c %g /run/docker.sock)
chroot "$ROOT" groupadd -g "$DOCKER_GID" docker
mkdir -p "$ROOT/usr/libexec/docker/cli-plugins" "$ROOT/var/lib/docker" "$ROOT/share"
touch "$ROOT/usr/bin/docker" "$ROOT/usr/libexec/docker/cli-plugins/docker-compose"
# no console getty, no networking of its own (the host's network is shared)
ln -sf /dev/null "$ROOT/etc/systemd/system/console-getty.service"
ln -sf /dev/null "$ROOT/etc/systemd/system/getty@tty1.service"
systemd-nspawn -q -D "$ROOT" -b --register=no --keep-unit -M "$MACHINE" --console=passive \
  --bind=/run/docker.sock:/run/docker.sock --bind-ro=/var/lib/docker \
  --bind-ro="$(command -v docker)":/usr/bin/docker \
  --bind-ro="$COMPOSE_BIN":/usr/libexec/docker/cli-plugins/docker-compose \
  --bind="$WORK/debs":/share >"$WORK/nspawn.log" 2>&1 &
NSPAWN_PID=$!
wait_until 30 leader >/dev/null || { cat "$WORK/nspawn.log" >&2; fatal "the container did not start"; }
LEADER=$(leader)
booted() { case "$(in_c systemctl is-system-running 2>/dev/null)" in running|degraded) return 0 ;; *) return 1 ;; esac; }
wait_until 60 booted || { cat "$WORK/nspawn.log" >&2; fatal "systemd did not finish booting"; }
printf 'booted in %ss: %s, %s\n' "$(($(date +%s) - START))" "$(in_c systemctl is-system-running || true)" "$(in_c systemctl --version | head -n1)"

check "the boot has no failed units" sh -c "[ -z \"\$(nsenter -t $LEADER -a systemctl --failed --no-legend --plain)\" ] || nsenter -t $LEADER -a systemctl --failed --no-legend --plain"

section "install the package with dpkg and configure it against the stack"
in_c dpkg -i /share/base.deb >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fatal "dpkg -i"; }
check "dpkg -i installs $VERSION" expect_eq "dpkg-query" "$(in_c dpkg-query -W -f='${Status} ${Version}' monky-deployd)" "install ok installed $VERSION"
check "the agent's user is in the host's docker group (gid $DOCKER_GID)" sh -c "nsenter -t $LEADER -a id -G monky-deployd | tr ' ' '\n' | grep -qx $DOCKER_GID"
# the running package kept for revert, as install.sh does
in_c install -d -m 0700 /var/lib/monky-deployd-update/packages
in_c install -m 0600 /share/base.deb "/var/lib/monky-deployd-update/packages/monky-deployd_${VERSION}_${ARCH}.deb"
# keys for self-update
openssl genpkey -algorithm ed25519 -out "$WORK/agent.pem" 2>/dev/null || fatal "openssl genpkey"
AGENT_PUB=$(openssl pkey -in "$WORK/agent.pem" -pubout -outform DER | tail -c 32 | base64 -w0)
TPORT=$(sed -n 's/^MONKY_TENANCY_ADDR=.*:\([0-9]*\)$/\1/p' "$WORK/stack/stack.env")
BPORT=$(sed -n 's/^MONKY_BAO_ADDR=.*:\([0-9]*\)$/\1/p' "$WORK/stack/stack.env")
{ [ -n "$TPORT" ] && [ -n "$BPORT" ]; } || fatal "no tenancy/OpenBao address in stack.env"
# base_config [TENANCY-PORT] [STATE-DIR]: the box's config.yaml
base_config() {
  cat <<EOF
env_id: $ENV_ID
site: local
transport: system
tenancy:
  host: 127.0.0.1
  port: ${1:-$TPORT}
  scheme: http
  timeout_s: 5
bao:
  host: 127.0.0.1
  port: $BPORT
  scheme: http
  ca_file: ""
state_dir: ${2:-/var/lib/monky-deployd}
bootstrap_path: /etc/monky-deployd/bootstrap.jwt
compose_cmd: plugin
healthy_timeout_s: 120
settle_s: 0
# the least allowed: the run service raises its watchdog to tick_budget_s + 120 s (the wedge
# check below then shortens it the way the agent would, by a notify message)
tick_budget_s: 60
agent_signing_keys:
  agent-test: "$AGENT_PUB"
agent_update_probation_s: 10
# outside the engine's default pools, which it hands out in turn: a fixed subnet inside them
# meets whichever network got that block last ("Pool overlaps")
network_pools: ["10.241.0.0/16"]
EOF
}
base_config | config_put
install -m 0600 "$WORK/stack/bootstrap.jwt" "$ROOT/etc/monky-deployd/bootstrap.jwt"
in_c chown monky-deployd:monky-deployd /etc/monky-deployd/bootstrap.jwt

# ---- timer → oneshot ----------------------------------------------------------------------------
section "timer → oneshot: an apply, then a heartbeat"
# The shipped timer fires once a minute at this machine's fixed offset; a drop-in makes it fire
# every 5 s so the test does not wait a minute. The unit it starts is the shipped one.
mkdir -p "$ROOT/etc/systemd/system/monky-deployd.timer.d"
printf '[Timer]\nOnCalendar=\nOnCalendar=*:*:0/5\nRandomizedDelaySec=0\nAccuracySec=1s\n' \
  >"$ROOT/etc/systemd/system/monky-deployd.timer.d/fast.conf"
in_c systemctl daemon-reload
in_c systemctl enable --now monky-deployd.timer >/dev/null 2>&1 || fatal "systemctl enable --now monky-deployd.timer"
ran_once() { [ "$(prop monky-deployd.service ExecMainExitTimestampMonotonic)" != 0 ] && unit_inactive monky-deployd.service; }
timer_applied() {
  wait_until 90 ran_once || { echo "the timer did not start monky-deployd.service within 90 s"; return 1; }
  expect_eq "Result" "$(prop monky-deployd.service Result)" success &&
    expect_eq "ExecMainStatus" "$(prop monky-deployd.service ExecMainStatus)" 0 &&
    expect_eq "timer Triggers" "$(prop monky-deployd.timer Triggers)" monky-deployd.service &&
    { wait_until 10 grep -q '"result":"applied"' "$WORK/stack/reports.jsonl" || { echo "tenancy has no applied report:"; stack_reports; return 1; }; } &&
    { [ "$(docker ps -q --filter "label=com.docker.compose.project=$PROJECT" --filter health=healthy | wc -l)" = 1 ] || { echo "no healthy container of $PROJECT"; docker ps -a; return 1; }; }
}
check "the timer starts the oneshot, which applies (Result=success, status 0, applied report, healthy container)" timer_applied
FIRST_INV=$(prop monky-deployd.service InvocationID)
heartbeat_follows() {
  local inv
  wait_until 30 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl show -P InvocationID monky-deployd.service)\" != '$FIRST_INV' ]" \
    || { echo "no second run within 30 s"; return 1; }
  wait_until 30 unit_inactive monky-deployd.service
  inv=$(prop monky-deployd.service InvocationID)
  expect_eq "Result" "$(prop monky-deployd.service Result)" success &&
    expect_eq "ExecMainStatus" "$(prop monky-deployd.service ExecMainStatus)" 0 &&
    { messages monky-deployd.service "$inv" | grep -q 'action=none' ||
      { echo "the second run's journal shows no heartbeat:"; messages monky-deployd.service "$inv"; return 1; }; }
}
check "a heartbeat follows (the next run changes nothing and ends 0)" heartbeat_follows
# The timer stays active (now firing never), so the service stays loaded between the runs
# below: systemd unloads an inactive unit nothing references, and `systemctl show` of an
# unloaded unit answers defaults (ExecMainStatus=0), which would hide the exit status checked.
printf '[Timer]\nOnCalendar=\nOnCalendar=2099-01-01\n' >"$ROOT/etc/systemd/system/monky-deployd.timer.d/fast.conf"
in_c systemctl daemon-reload
INFO_INV=$FIRST_INV
# exited (not unloaded, not killed) with STATUS: CLD_EXITED is ExecMainCode 1
exited_with() {
  expect_eq "ExecMainCode" "$(prop monky-deployd.service ExecMainCode)" 1 &&
    expect_eq "ExecMainStatus" "$(prop monky-deployd.service ExecMainStatus)" "$1"
}

section "exit codes, the sandbox, the journal"
base_config 1 | config_put # tenancy unreachable: a temporary failure
exit75_success() {
  local inv
  inv=$(start_tick)
  exited_with 75 || { messages monky-deployd.service "$inv"; return 1; }
  expect_eq "Result" "$(prop monky-deployd.service Result)" success &&
    expect_eq "ActiveState" "$(prop monky-deployd.service ActiveState)" inactive &&
    { ! in_c systemctl is-failed -q monky-deployd.service || { echo "unit is failed"; return 1; }; }
}
check "exit 75 (tenancy unreachable) counts as success: inactive, not failed" exit75_success
WARN_INV=$(prop monky-deployd.service InvocationID)

# A state dir the agent owns, outside the unit's writable paths: the write must fail because of
# the sandbox (ProtectSystem=strict), and the same write outside the sandbox must work.
in_c install -d -m 0700 -o monky-deployd -g monky-deployd /opt/monky-outside
base_config "$TPORT" /opt/monky-outside | config_put
sandbox_holds() {
  in_c setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups touch /opt/monky-outside/probe \
    || { echo "outside the sandbox the agent's user cannot write its own dir: the check proves nothing"; return 1; }
  in_c rm -f /opt/monky-outside/probe
  local inv
  inv=$(start_tick)
  expect_eq "Result" "$(prop monky-deployd.service Result)" exit-code || return 1
  wait_until 10 sh -c "nsenter -t $LEADER -a journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID=$inv | grep -q 'Read-only file system'" ||
    { echo "the refusal does not name the read-only file system:"; messages monky-deployd.service "$inv"; return 1; }
  [ -z "$(ls -A "$ROOT/opt/monky-outside")" ] || { echo "the agent wrote outside its state dir:"; ls -la "$ROOT/opt/monky-outside"; return 1; }
}
check "the sandbox holds: a state dir outside ReadWritePaths is refused (EROFS), nothing written" sandbox_holds
ERR_INV=$(prop monky-deployd.service InvocationID)
base_config | config_put

# journal priorities: ERROR → 3, WARN → 4, INFO → 6 (`journalctl -p warning` is what OPERATIONS.md
# tells operators to read)
priorities() {
  local e w i
  e=$(messages monky-deployd.service "$ERR_INV" | grep -c '^3 ' || true)
  w=$(messages monky-deployd.service "$WARN_INV" | grep -Ec '^(3|4) ' || true)
  i=$(messages monky-deployd.service "$INFO_INV" | grep -c '^6 ' || true)
  [ "$e" -ge 1 ] && [ "$w" -ge 1 ] && [ "$i" -ge 1 ] && return 0
  echo "errors at priority 3: $e, warnings/errors of the exit-75 run at 3/4: $w, info lines at 6: $i"
  messages monky-deployd.service "$ERR_INV"
  messages monky-deployd.service "$WARN_INV"
  return 1
}
check "journal priorities: the agent's ERROR lines are priority 3, WARN 4, INFO 6" priorities
p_err_shows() {
  local out
  out=$(in_c journalctl --no-pager -p err _SYSTEMD_INVOCATION_ID="$ERR_INV" -o cat)
  printf '%s\n' "$out" | grep -q 'Read-only file system' || { echo "journalctl -p err shows:"; printf '%s\n' "$out"; return 1; }
  out=$(in_c journalctl --no-pager -p err _SYSTEMD_INVOCATION_ID="$INFO_INV" -o cat)
  ! printf '%s\n' "$out" | grep -q . || { echo "a good tick has lines at -p err:"; printf '%s\n' "$out"; return 1; }
}
check "journalctl -p err shows the sandbox refusal and nothing of a good tick" p_err_shows

section "systemd-analyze security (inside the booted system)"
security_score() {
  local u s
  for u in monky-deployd.service monky-deployd-run.service monky-deployd-laptop.service; do
    s=$(in_c systemd-analyze security --no-pager "$u" 2>&1 | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    [ -n "$s" ] || { echo "$u: no score"; return 1; }
    echo "$u: $s"
    python3 -c "import sys; sys.exit(0 if float('$s') <= 2.0 else 1)" || { echo "$u: exposure $s > 2.0"; return 1; }
  done
}
check "systemd-analyze security: every agent unit scores 2.0 or less" security_score

section "metrics drop-in"
METRICS_DIR=/var/lib/node_exporter/textfile_collector
metrics_dropin() { # TEMPLATE: the role's metrics.conf.j2 rendered for $METRICS_DIR
  mkdir -p "$ROOT/etc/systemd/system/monky-deployd.service.d"
  sed -e "s#{{ monky_deployd_metrics_textfile | dirname }}#$METRICS_DIR#" -e 's/{{ ansible_managed }}/managed by the test/' \
    "$1" >"$ROOT/etc/systemd/system/monky-deployd.service.d/metrics.conf"
  in_c systemctl daemon-reload
}
{ base_config; echo "metrics_textfile: $METRICS_DIR/monky-deployd.prom"; } | config_put
in_c rm -rf /var/lib/node_exporter
# what the ReadWritePaths "-" guards against: without it a missing directory fails the unit
# before the agent runs (the drop-in 0.4 shipped)
printf '[Service]\nReadWritePaths=%s\n' "$METRICS_DIR" >"$WORK/metrics-no-dash.j2"
metrics_without_dash_fails() {
  metrics_dropin "$WORK/metrics-no-dash.j2"
  start_tick >/dev/null
  expect_eq "ExecMainStatus (0.4's drop-in, directory missing)" "$(prop monky-deployd.service ExecMainStatus)" 226
}
check "control: without the '-' a missing textfile directory fails the unit (226/NAMESPACE)" metrics_without_dash_fails
metrics_missing_dir_ticks() {
  metrics_dropin "$REPO/ansible/roles/monky_deployd/templates/metrics.conf.j2"
  grep -q "ReadWritePaths=-$METRICS_DIR" "$ROOT/etc/systemd/system/monky-deployd.service.d/metrics.conf" || return 1
  start_tick >/dev/null
  expect_eq "Result" "$(prop monky-deployd.service Result)" success && exited_with 0
}
check "the role's drop-in: a missing textfile directory does not stop the tick" metrics_missing_dir_ticks
metrics_written() {
  # the directory as install.sh / the role make it: 0755 root, the agent writes through an ACL
  in_c install -d -m 0755 -o root -g root "$METRICS_DIR"
  in_c setfacl -m u:monky-deployd:rwx "$METRICS_DIR"
  start_tick >/dev/null
  expect_eq "Result" "$(prop monky-deployd.service Result)" success && exited_with 0 &&
    expect_eq "textfile" "$(in_c stat -c '%a %U' "$METRICS_DIR/monky-deployd.prom" 2>&1)" "644 monky-deployd" &&
    grep -q '^monky_deployd_info' "$ROOT$METRICS_DIR/monky-deployd.prom"
}
check "the role's drop-in + the directory made as install.sh does: the textfile is written 0644" metrics_written
rm -rf "$ROOT/etc/systemd/system/monky-deployd.service.d"
in_c systemctl daemon-reload
base_config | config_put

section "stop during an apply"
slow_compose | publish 2 || fatal "publishing render 2"
in_c systemctl start --no-block monky-deployd.service
waiting_for_health() { docker ps -q --filter "label=com.docker.compose.project=$PROJECT" --filter health=starting | grep -q . || docker ps -q --filter "label=com.docker.compose.project=$PROJECT" --filter health=unhealthy | grep -q .; }
stop_mid_apply() {
  wait_until 60 waiting_for_health || { echo "the apply never reached its health wait"; docker ps -a; return 1; }
  expect_eq "ActiveState mid-apply" "$(prop monky-deployd.service ActiveState)" activating || return 1
  in_c systemctl stop monky-deployd.service 2>/dev/null
  exited_with 75 || { messages monky-deployd.service "$(prop monky-deployd.service InvocationID)"; return 1; }
  expect_eq "ExecMainStatus" "$(prop monky-deployd.service ExecMainStatus)" 75 &&
    expect_eq "Result" "$(prop monky-deployd.service Result)" success &&
    { wait_until 10 sh -c "tail -n 1 '$WORK/stack/reports.jsonl' | grep -q INTERRUPTED" ||
      { echo "last report is not INTERRUPTED:"; stack_reports | tail -n 1; return 1; }; }
}
check "stop during an apply: exit 75, Result=success, INTERRUPTED reported" stop_mid_apply
good_compose 3 | publish 3 || fatal "publishing render 3"
converges_after_stop() {
  start_tick >/dev/null
  expect_eq "Result" "$(prop monky-deployd.service Result)" success && exited_with 0 &&
    curl -fsS --max-time 3 "http://127.0.0.1:$APP_PORT/" >/dev/null
}
check "the next tick after the stop converges to the next render" converges_after_stop

section "the box's address space, judged inside the unit's sandbox"
# The unit mounts /proc with ProcSubset=pid: the route table must still be read (and, if it
# cannot be, every subnet refused). A route inside the box's pool stands for one the host has.
net_compose() { # NETWORK SUBNET
  good_compose "net $1" | sed -e '/^    healthcheck:/i\    networks: ['"$1"']'
  printf 'networks:\n  %s:\n    ipam:\n      config:\n        - subnet: %s\n' "$1" "$2"
}
HOSTROUTE=10.241.251.0/24
subnet_from_pool_applies() {
  net_compose pool_net 10.241.250.0/24 | publish 4 || return 1
  start_tick >/dev/null
  exited_with 0 || { messages monky-deployd.service "$(prop monky-deployd.service InvocationID)" | tail -n 5; return 1; }
  docker network inspect "${PROJECT}_pool_net" --format '{{range .IPAM.Config}}{{.Subnet}}{{end}}' | grep -qx 10.241.250.0/24
}
check "a bundle's own subnet from the box's pool applies under the unit" subnet_from_pool_applies
route_overlap_refused() {
  ip route add "$HOSTROUTE" dev lo
  net_compose route_net 10.241.251.0/25 | publish 5 || { ip route del "$HOSTROUTE" dev lo; return 1; }
  local inv rc=0
  inv=$(start_tick)
  ip route get 10.241.251.10 | grep -q ' dev lo ' || { echo "the host's route moved:"; ip route get 10.241.251.10; rc=1; }
  ip route del "$HOSTROUTE" dev lo
  [ "$rc" -eq 0 ] || return 1
  messages monky-deployd.service "$inv" | grep -q 'NETWORK_REFUSED: .*10.241.251.0/25 .*route of the host via lo' ||
    { echo "no NETWORK_REFUSED naming the host's route:"; messages monky-deployd.service "$inv" | tail -n 5; return 1; }
  ! docker network inspect "${PROJECT}_route_net" >/dev/null 2>&1 || { echo "the network was created"; return 1; }
}
check "a subnet over a host route is refused under the unit (the route stays on lo)" route_overlap_refused
good_compose 6 | publish 6 || fatal "publishing render 6"
start_tick >/dev/null
exited_with 0 || fatal "render 6 did not converge"

# ---- the run service -------------------------------------------------------------------------------
in_c systemctl disable --now monky-deployd.timer >/dev/null 2>&1
rm -rf "$ROOT/etc/systemd/system/monky-deployd.timer.d"
section "the run service (Type=notify): READY, watchdog, reload"
# The shipped WatchdogSec (20 min) would make a wedge test wait 20 min: a drop-in shortens it.
mkdir -p "$ROOT/etc/systemd/system/monky-deployd-run.service.d"
printf '[Service]\nWatchdogSec=6s\n' >"$ROOT/etc/systemd/system/monky-deployd-run.service.d/fast.conf"
in_c systemctl daemon-reload
run_ready() {
  in_c systemctl start monky-deployd-run.service || { echo "systemctl start failed"; return 1; }
  # Type=notify: start returns once READY=1 came (after the first tick)
  expect_eq "ActiveState" "$(prop monky-deployd-run.service ActiveState)" active &&
    expect_eq "SubState" "$(prop monky-deployd-run.service SubState)" running
}
check "the run service reaches READY (start returns active/running)" run_ready
watchdog_armed() {
  # 6 s in the drop-in is below tick_budget_s + 120: the agent raises it and says so
  expect_eq "WatchdogUSec" "$(prop monky-deployd-run.service WatchdogUSec)" 3min &&
    { [ "$(prop monky-deployd-run.service WatchdogTimestampMonotonic)" != 0 ] || { echo "never fed"; return 1; }; } &&
    { in_c journalctl --no-pager -u monky-deployd-run.service -o cat | grep -q 'raised to 180 s' || { echo "no word of the raise"; return 1; }; }
}
check "its watchdog is armed above the tick budget (6 s raised to 180 s) and fed" watchdog_armed
reload_good() {
  local pid
  pid=$(prop monky-deployd-run.service MainPID)
  { base_config; echo "retry_backoff_max_s: 600"; } | config_put
  local wd
  wd=$(prop monky-deployd-run.service WatchdogTimestampMonotonic)
  in_c systemctl reload monky-deployd-run.service || { echo "systemctl reload failed on a good config"; return 1; }
  # the reload ticks at once, and every tick feeds the watchdog
  wait_until 30 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl show -P WatchdogTimestampMonotonic monky-deployd-run.service)\" -gt $wd ]" ||
    { echo "the watchdog was not fed after the reload's tick"; return 1; }
  expect_eq "MainPID" "$(prop monky-deployd-run.service MainPID)" "$pid" &&
    expect_eq "ActiveState" "$(prop monky-deployd-run.service ActiveState)" active
}
check "reload with a good config: systemctl reload exits 0, same process, the watchdog fed by its tick" reload_good
reload_bad() {
  local pid rc=0
  pid=$(prop monky-deployd-run.service MainPID)
  { base_config; echo "interval_s: banana"; } | config_put
  in_c systemctl reload monky-deployd-run.service || rc=$?
  base_config | config_put
  [ "$rc" -ne 0 ] || { echo "systemctl reload exited 0 on a config the service refuses"; return 1; }
  expect_eq "MainPID" "$(prop monky-deployd-run.service MainPID)" "$pid" &&
    expect_eq "ActiveState" "$(prop monky-deployd-run.service ActiveState)" active &&
    { in_c journalctl --no-pager -u monky-deployd-run.service -o cat | grep -q 'interval_s' || { echo "the refusal does not name the key"; return 1; }; }
}
check "reload with a bad config: systemctl reload fails naming the key; the service keeps running" reload_bad

section "self-update: the update path unit (real dpkg, real restart, real ticks)"
in_c systemctl enable --now monky-deployd-update.path >/dev/null 2>&1 || fatal "enable monky-deployd-update.path"
# stage DEB VERSION: what the agent's staging leaves in update/ (agent::update::stage), as the
# agent's user: the package, then staged.json naming it with a signature over its sha256 hex
stage() {
  local deb=$1 v=$2 sha sig name
  sha=$(sha256sum "$deb" | cut -c1-64)
  printf %s "$sha" >"$WORK/sha.txt"
  sig=$(openssl pkeyutl -sign -inkey "$WORK/agent.pem" -rawin -in "$WORK/sha.txt" | base64 -w0)
  name="monky-deployd_${v}_${ARCH}.deb"
  cat >"$WORK/debs/staged.json" <<EOF
{"version": "$v", "sha256": "$sha", "from_version": "$(in_c dpkg-query -W -f='${Version}' monky-deployd)",
 "arch": "$ARCH", "package": "$name", "staged_at": $(date +%s),
 "signatures": [{"key_id": "agent-test", "alg": "ed25519", "sig": "$sig"}]}
EOF
  in_c setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups sh -ec "umask 077; mkdir -p /var/lib/monky-deployd/update
    cp /share/$(basename "$deb") /var/lib/monky-deployd/update/.incoming.deb
    mv /var/lib/monky-deployd/update/.incoming.deb /var/lib/monky-deployd/update/$name
    cp /share/staged.json /var/lib/monky-deployd/update/.staged.json.tmp
    mv /var/lib/monky-deployd/update/.staged.json.tmp /var/lib/monky-deployd/update/staged.json"
}
installed() { in_c dpkg-query -W -f='${Version}' monky-deployd; }
# the unit's outcome is in result.json (the agent takes it away on its next tick: read it early)
update_done() {
  grep -q 'AGENT_' "$ROOT/var/lib/monky-deployd/update/result.json" 2>/dev/null &&
    [ ! -e "$ROOT/var/lib/monky-deployd/update/staged.json" ] && [ ! -e "$ROOT/var/lib/monky-deployd-update/probation.json" ] &&
    unit_inactive monky-deployd-update.service
}
update_installs() {
  in_c rm -f /var/lib/monky-deployd/update/result.json
  stage "$WORK/debs/good.deb" "$V_GOOD"
  wait_until 120 update_done || { echo "the update unit did not finish within 120 s"; in_c journalctl --no-pager -u monky-deployd-update.service -o cat | tail -n 20; return 1; }
  expect_eq "installed" "$(installed)" "$V_GOOD" &&
    { grep -q AGENT_UPDATED "$ROOT/var/lib/monky-deployd/update/result.json" ||
      { echo "result.json:"; cat "$ROOT/var/lib/monky-deployd/update/result.json"; in_c journalctl --no-pager -u monky-deployd-update.service -o cat | tail -n 20; return 1; }; } &&
    expect_eq "run service" "$(prop monky-deployd-run.service ActiveState)" active || return 1
  # the new agent's first tick after its restart counted: it did not find the tick lock still
  # held by the installer (0.4 held it across dpkg and the postinst's restart, so that tick was
  # skipped and the next one came up to a minute later — past a short probation)
  local inv
  inv=$(prop monky-deployd-run.service InvocationID)
  messages monky-deployd-run.service "$inv" | grep -m1 -E 'checkin:|another tick holds' | grep -q 'checkin:' ||
    { echo "the new agent's first tick did not check in:"; messages monky-deployd-run.service "$inv" | head -n 8; return 1; }
}
check "the path unit installs a newer package; its agent's first tick counts, within a 10 s probation (AGENT_UPDATED)" update_installs
update_reverts() {
  # The test's packages share one upstream version (the binary calls itself $VERSION), so a tick
  # of the still-running old agent would count for the broken one's probation: the run service
  # is stopped first (a timer box), and started again once the package is back.
  in_c systemctl stop monky-deployd-run.service
  in_c rm -f /var/lib/monky-deployd/update/result.json /var/lib/monky-deployd/update/ticked.json
  stage "$WORK/debs/broken.deb" "$V_BROKEN"
  wait_until 150 update_done || { echo "the update unit did not finish within 150 s"; in_c journalctl --no-pager -u monky-deployd-update.service -o cat | tail -n 20; return 1; }
  expect_eq "installed" "$(installed)" "$V_GOOD" &&
    { grep -q AGENT_REVERTED "$ROOT/var/lib/monky-deployd/update/result.json" ||
      { echo "result.json:"; cat "$ROOT/var/lib/monky-deployd/update/result.json" 2>&1; return 1; }; } &&
    in_c systemctl start monky-deployd-run.service &&
    expect_eq "run service after the revert" "$(prop monky-deployd-run.service ActiveState)" active
}
check "a package whose agent never ticks is reverted (AGENT_REVERTED), the service runs again" update_reverts

section "a wedged run service (killed by its watchdog)"
# The agent's own raise (180 s, checked above) is what it sends; waiting it out would be three
# idle minutes. Once the agent is stopped, the test sends systemd the same message the agent
# would (WATCHDOG_USEC, as the main process: root may speak for a pid) with 5 s: systemd's
# watchdog, not the test, is what then kills and restarts the wedged agent.
wedged_restarted() {
  local pid n
  pid=$(prop monky-deployd-run.service MainPID)
  n=$(prop monky-deployd-run.service NRestarts)
  [ "$pid" -gt 1 ] || { echo "the run service has no main process (MainPID=$pid)"; return 1; }
  in_c kill -STOP "$pid"
  in_c env NOTIFY_SOCKET=/run/systemd/notify systemd-notify --pid="$pid" WATCHDOG_USEC=5000000 ||
    { echo "systemd-notify WATCHDOG_USEC for $pid failed"; return 1; }
  expect_eq "WatchdogUSec after the override" "$(prop monky-deployd-run.service WatchdogUSec)" 5s || return 1
  wait_until 30 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl show -P NRestarts monky-deployd-run.service)\" -gt $n ]" ||
    { echo "no restart within 30 s of SIGSTOP and a 5 s watchdog"; return 1; }
  wait_until 30 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl show -P ActiveState monky-deployd-run.service)\" = active ]" || return 1
  [ "$(prop monky-deployd-run.service MainPID)" != "$pid" ] || { echo "same MainPID"; return 1; }
  in_c journalctl --no-pager -u monky-deployd-run.service -o cat | grep -q 'Watchdog timeout' ||
    { echo "the journal does not say the watchdog fired"; return 1; }
}
check "a wedged agent (SIGSTOP) is killed by its watchdog and restarted" wedged_restarted
in_c systemctl stop monky-deployd-run.service >/dev/null 2>&1 || true

section "several environments on one box: install.sh --instance a and b, an upgrade, --remove --instance a"
# Real: systemd, dpkg and the maintainer scripts, install.sh, the template units. Stand-ins for
# what has no mirror or network here: apt-get (the tunneler package, an empty one), a unit for
# that tunneler, the ziti CLI (a shell that holds on: the proxy units stay up, their command line
# shows the instance's identity and ports), and each instance's Ziti identity. The agents' ticks
# reach no proxy (nothing listens on the ports): temporary failures, not errors.
in_c mkdir -p /var/log/standin
install -m 0755 "$HERE/standins/apt-get" "$ROOT/usr/local/bin/apt-get"
in_c apt-get install -y ziti-edge-tunnel >/dev/null
printf '[Service]\nExecStart=/opt/openziti/bin/ziti-edge-tunnel\n' >"$ROOT/etc/systemd/system/ziti-edge-tunnel.service"
printf '#!/bin/sh\nsleep infinity\n' >"$ROOT/usr/bin/ziti"
chmod 0755 "$ROOT/usr/bin/ziti"
in_c install -d -m 0700 /opt/openziti/etc/identities
for i in a b; do
  printf '{"ztAPI":"https://ctrl.test:1280","id":{"cert":"pem:stand-in","key":"pem:stand-in"}}\n' \
    >"$ROOT/opt/openziti/etc/identities/monky-host.booted-$i.json"
  chmod 0600 "$ROOT/opt/openziti/etc/identities/monky-host.booted-$i.json"
done
install -m 0755 "$REPO/packaging/install.sh" "$ROOT/root/install.sh"
in_c systemctl daemon-reload
repack "$DEB" "$VERSION-3" "$WORK/debs/newer.deb"
INSTALLED_NOW=$(installed)
cp "$WORK/debs/good.deb" "$WORK/debs/current.deb"
[ "$INSTALLED_NOW" = "$V_GOOD" ] || repack "$DEB" "$INSTALLED_NOW" "$WORK/debs/current.deb"
# install_instance NAME: one more environment, as the operator runs it (the installed package)
install_instance() {
  in_c bash /root/install.sh --instance "$1" --env "booted-$1" --site local --transport proxy --mode service \
    --deb /share/current.deb >"$WORK/install-$1.out" 2>&1 || { tail -n 20 "$WORK/install-$1.out"; return 1; }
}
# needs the agent's --instance flag: install.sh's last step starts the instance's service
check "install.sh --instance a exits 0 (its service started)" install_instance a
check "install.sh --instance b exits 0 (its service started)" install_instance b
active() { expect_eq "$1 ActiveState" "$(prop "$1" ActiveState)" active; }
proxies_up() {
  local i want ports
  for i in a b; do
    active "monky-deployd-proxy@$i.service" || return 1
    if [ "$i" = a ]; then ports="18444 18201"; else ports="18445 18202"; fi
    want="-i /opt/openziti/etc/identities/monky-host.booted-$i.json monky.tenancy.deploy:${ports% *} openbao:${ports#* }"
    in_c sh -c "tr '\\0' ' ' </proc/\$(systemctl show -P MainPID monky-deployd-proxy@$i.service)/cmdline" | grep -qF -- "$want" ||
      { echo "proxy@$i runs: $(in_c sh -c "tr '\\0' ' ' </proc/\$(systemctl show -P MainPID monky-deployd-proxy@$i.service)/cmdline")"; echo "want: $want"; return 1; }
  done
}
check "both instances' ziti proxies run as user ziti with their own identity and ports (18444/18201, 18445/18202)" proxies_up
instance_paths() {
  local i
  for i in a b; do
    expect_eq "StateDirectory of run@$i" "$(prop "monky-deployd-run@$i.service" StateDirectory)" "monky-deployd/$i" &&
      { prop "monky-deployd-run@$i.service" ReadWritePaths | tr ' ' '\n' | grep -qx "/etc/monky-deployd/$i" || { echo "run@$i ReadWritePaths: $(prop "monky-deployd-run@$i.service" ReadWritePaths)"; return 1; }; } &&
      { prop "monky-deployd-run@$i.service" ExecStart | grep -q "argv\[\]=/usr/bin/monky-deployd --instance $i run ;" || { prop "monky-deployd-run@$i.service" ExecStart; return 1; }; } &&
      expect_eq "UnitFileState of run@$i" "$(prop "monky-deployd-run@$i.service" UnitFileState)" enabled &&
      expect_eq "state dir of $i" "$(in_c stat -c '%a %U' "/var/lib/monky-deployd/$i")" "700 monky-deployd" &&
      expect_eq "config of $i" "$(in_c stat -c '%a %U %G' "/etc/monky-deployd/$i/config.yaml")" "640 root monky-deployd" || return 1
  done
}
check "the instances' units carry their %i paths (state dir, writable config dir, --instance, enabled)" instance_paths
# needs the agent's --instance flag
services_up() { active monky-deployd-run@a.service && active monky-deployd-run@b.service; }
check "both instances' services are active (READY after their first tick)" services_up

section "several environments: a .deb upgrade restarts every instance's long-running units"
main_pids() { local u; for u in monky-deployd-proxy@a monky-deployd-proxy@b monky-deployd-run@a monky-deployd-run@b; do printf '%s=%s ' "$u" "$(prop "$u.service" MainPID)"; done; }
PIDS_BEFORE=$(main_pids)
in_c dpkg -i /share/newer.deb >"$WORK/dpkg-newer.log" 2>&1 || { cat "$WORK/dpkg-newer.log" >&2; fatal "dpkg -i newer.deb"; }
restarted() { # UNIT: active again with another main process
  local before
  before=$(printf '%s\n' "$PIDS_BEFORE" | tr ' ' '\n' | sed -n "s/^$1=//p")
  wait_until 30 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl show -P ActiveState $1.service)\" = active ]" || { echo "$1 is $(prop "$1.service" ActiveState)"; return 1; }
  [ "${before:-0}" -gt 0 ] || { echo "$1 had no main process before the upgrade"; return 1; }
  [ "$(prop "$1.service" MainPID)" != "$before" ] || { echo "$1 kept its process $before"; return 1; }
}
proxies_restarted() { restarted monky-deployd-proxy@a && restarted monky-deployd-proxy@b; }
check "upgrade: both instances' ziti proxies restarted" proxies_restarted
# needs the agent's --instance flag
services_restarted() { restarted monky-deployd-run@a && restarted monky-deployd-run@b; }
check "upgrade: both instances' services restarted" services_restarted
check "upgrade: the stopped default service stays stopped (try-restart starts nothing)" \
  expect_eq "monky-deployd-run.service" "$(prop monky-deployd-run.service ActiveState)" inactive

section "several environments: install.sh --remove --instance a leaves b running"
B_PIDS=$(prop monky-deployd-proxy@b.service MainPID)/$(prop monky-deployd-run@b.service MainPID)
remove_a() { in_c bash /root/install.sh --remove --instance a >"$WORK/remove-a.out" 2>&1 || { cat "$WORK/remove-a.out"; return 1; }; }
check "install.sh --remove --instance a exits 0" remove_a
a_gone() {
  local u
  for u in monky-deployd-run@a.service monky-deployd-proxy@a.service monky-deployd@a.timer; do
    unit_inactive "$u" || { echo "$u is $(prop "$u" ActiveState)"; return 1; }
    case "$(prop "$u" UnitFileState)" in enabled*) echo "$u is still enabled"; return 1 ;; esac
  done
  if [ ! -f "$ROOT/etc/monky-deployd/a/config.yaml" ] || [ ! -d "$ROOT/var/lib/monky-deployd/a" ]; then
    echo "a's config or state is gone without --purge"; return 1
  fi
}
check "a: its units stopped and disabled, its config and state kept" a_gone
b_untouched() {
  active monky-deployd-proxy@b.service &&
    expect_eq "b's main processes" "$(prop monky-deployd-proxy@b.service MainPID)/$(prop monky-deployd-run@b.service MainPID)" "$B_PIDS" &&
    expect_eq "UnitFileState of run@b" "$(prop monky-deployd-run@b.service UnitFileState)" enabled
}
check "b: still running, the same processes, still enabled" b_untouched

section "several environments: dpkg --remove stops every instance"
in_c dpkg --remove monky-deployd >"$WORK/dpkg-remove.log" 2>&1 || { cat "$WORK/dpkg-remove.log" >&2; fatal "dpkg --remove"; }
all_stopped() {
  local u
  for u in monky-deployd-run@b.service monky-deployd-proxy@b.service; do
    unit_inactive "$u" || { echo "$u is $(prop "$u" ActiveState)"; return 1; }
  done
  if find "$ROOT/etc/systemd/system" -path '*.wants/*' -name 'monky-deployd*@*' | grep .; then echo "^ still enabled"; return 1; fi
}
check "prerm: b's service and proxy stopped, no instance unit left enabled" all_stopped
finish
