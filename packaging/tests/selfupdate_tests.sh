# shellcheck shell=bash
# Self-update (issue 21) with the real package in a Debian root (sourced by run.sh; uses its
# helpers, $DEB, $DEB_UP and $ARCH). Real: the .deb from section 3, dpkg and the postinst, and
# `monky-deployd update-install` run as root by the installed binary.
# Stand-ins: systemctl (records its calls; no systemd in a chroot); the agent's staging (the files
# src/agent/update.rs writes, written here as the agent's user with its modes); the new agent's
# first tick (ticked.json: there is no tenancy to check in with in the root).

S=$(new_root selfupdate)
SU_UPD=/var/lib/monky-deployd/update
SU_KEEP=/var/lib/monky-deployd-update
SU_PROBATION=10 # the least agent_update_probation_s allows (src/host/config/validate.rs)
SU_KEYS="$WORK/su-keys"
SU_SCTL="$S/var/log/standin/systemctl.log"
# update-install's one restart of every agent unit (the postinst leaves them to it)
SU_RESTART="try-restart monky-deployd.service monky-deployd-run.service monky-deployd-laptop.service"
VERSION_BROKEN="$VERSION+upgradetest2"
VERSION_NEXT="$VERSION+upgradetest3"
DEB_BROKEN="$WORK/debs/monky-deployd_${VERSION_BROKEN}_${ARCH}.deb"
DEB_NEXT="$WORK/debs/monky-deployd_${VERSION_NEXT}_${ARCH}.deb"

mkdir -p "$SU_KEYS" "$S/var/log/standin" "$S/etc/standin"
install -m 0755 "$HERE/standins/systemctl" "$S/usr/local/bin/"
install -m 0644 "$DEB" "$S/tmp/"
openssl genpkey -algorithm ed25519 -out "$SU_KEYS/agent.pem" || fatal "openssl genpkey"
openssl genpkey -algorithm ed25519 -out "$SU_KEYS/other.pem" || fatal "openssl genpkey"

# The recipe of docs/OPERATIONS.md "Signed bundles", over the package's sha256 hex.
su_pub() { openssl pkey -in "$1" -pubout -outform DER | tail -c 32 | base64 -w0; }
su_sha() { sha256sum "$1" | cut -c1-64; }
su_sign() { # KEY-PEM SHA-HEX
  printf %s "$2" >"$SU_KEYS/sha.txt"
  openssl pkeyutl -sign -inkey "$1" -rawin -in "$SU_KEYS/sha.txt" | base64 -w0
}
su_as_agent() { in_root "$S" setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups "$@"; }
# su_put NAME: /tmp/NAME of the root into update/NAME as the agent writes its files there
# (umask 077, a temp name renamed into place).
su_put() {
  chmod 0644 "$S/tmp/$1"
  su_as_agent sh -ec "umask 077; mkdir -p $SU_UPD; cp /tmp/$1 $SU_UPD/.$1.tmp.1; mv $SU_UPD/.$1.tmp.1 $SU_UPD/$1"
}
# shellcheck disable=SC2016 # dpkg-query's own ${...} format
su_installed_is() { expect_eq "dpkg-query" "$(chroot "$S" dpkg-query -W -f='${Status} ${Version}' monky-deployd)" "install ok installed $1"; }
su_has_text() { grep -qF -- "$2" "$1" || { printf '%s lacks [%s]:\n' "$1" "$2"; cat "$1"; return 1; }; }
# config.yaml and bao.token: path, mode, owner (the root's names) and content
su_state() {
  in_root "$S" stat -c '%n %a %U %G' /etc/monky-deployd/config.yaml /var/lib/monky-deployd/bao.token
  in_root "$S" sha256sum /etc/monky-deployd/config.yaml /var/lib/monky-deployd/bao.token
}
su_kept() { expect_eq "config.yaml + bao.token" "$(su_state)" "$(cat "$WORK/su-state0")"; }
# update/result.json: the outcome the unit leaves for the agent to report (0600, the agent's)
su_result_has() { stat_is "$S" "$SU_UPD/result.json" "600 monky-deployd monky-deployd" && su_has_text "$S$SU_UPD/result.json" "$1"; }
# The agent takes result.json once (agent::update::take_unit_outcome).
su_take_result() { rm -f "$S$SU_UPD/result.json"; }
su_nothing_staged() {
  local left
  left=$(cd "$S$SU_UPD" && find . -maxdepth 1 \( -name staged.json -o -name '*.deb' \))
  expect_eq "staged files left in update/" "$left" "" &&
    { [ ! -e "$S$SU_KEEP/probation.json" ] || { echo "probation.json left"; return 1; }; }
}

# su_stage DEB VERSION KEY-PEM [SIGNED-SHA]: what agent::update::stage leaves in update/: the
# package (written as .incoming.deb, renamed), then staged.json; both 0600 and the agent's.
# The offered sha256 is the package's; SIGNED-SHA (default: the same) is what KEY-PEM signs.
su_stage() {
  local deb=$1 v=$2 sha name sig
  sha=$(su_sha "$deb")
  sig=$(su_sign "$3" "${4:-$sha}") || return 1
  name="monky-deployd_${v}_${ARCH}.deb"
  install -m 0644 "$deb" "$S/tmp/stage.deb"
  su_as_agent sh -ec "umask 077; mkdir -p $SU_UPD; cp /tmp/stage.deb $SU_UPD/.incoming.deb; mv $SU_UPD/.incoming.deb $SU_UPD/$name"
  cat >"$S/tmp/staged.json" <<EOF
{
  "version": "$v",
  "sha256": "$sha",
  "from_version": "$VERSION",
  "arch": "$ARCH",
  "package": "$name",
  "staged_at": $(date +%s),
  "signatures": [
    {
      "key_id": "agent-test",
      "alg": "ed25519",
      "sig": "$sig"
    }
  ]
}
EOF
  su_put staged.json
}
# su_tick VERSION: stands in for the new agent's first counted tick, written as
# agent::update::mark_ticked writes it.
su_tick() {
  printf '{"version":"%s","at":%s}' "$1" "$(date +%s)" >"$S/tmp/ticked.json"
  su_put ticked.json
}
# su_install: the update unit's ExecStart in the root, polling ticked.json every second. Output
# in $WORK/su-install.out, seconds taken in $WORK/su-install.s.
su_install() {
  local t0 rc=0
  t0=$(date +%s)
  in_root "$S" /usr/bin/monky-deployd update-install --poll-s 1 >"$WORK/su-install.out" 2>&1 || rc=$?
  echo "$(($(date +%s) - t0))" >"$WORK/su-install.s"
  cat "$WORK/su-install.out"
  return "$rc"
}
# su_wait_restart: until the unit restarted the agent (the stand-in logged it), at most 120 s.
su_wait_restart() {
  local _
  for _ in $(seq 1 240); do
    grep -qxF "$SU_RESTART" "$SU_SCTL" && return 0
    sleep 0.5
  done
  echo "no try-restart within 120s"
  return 1
}
# su_update_and_tick VERSION: update-install, and the new agent's tick once it was restarted.
# The package's binary is the same build as $DEB and calls itself $VERSION; the stand-in writes
# the package's version, as a build of that version would.
su_update_and_tick() {
  local pid rc=0
  su_install &
  pid=$!
  if su_wait_restart; then su_tick "$1"; else rc=1; fi
  wait "$pid" || rc=$?
  return "$rc"
}
# su_update_broken: update-install of a package whose binary exits 1. While the unit waits, that
# binary runs a tick as the agent, as the restarted unit would: it fails and writes no tick.
su_update_broken() {
  local pid rc=0 tick_rc=0
  su_install &
  pid=$!
  if su_wait_restart; then
    su_as_agent /usr/bin/monky-deployd run --once || tick_rc=$?
    echo "the new binary's tick: rc=$tick_rc"
    [ "$tick_rc" -eq 1 ] || rc=1
  else
    rc=1
  fi
  wait "$pid" || rc=$?
  return "$rc"
}
# su_repack SRC-DEB VERSION OUT [broken]: the real package under another version (dpkg-deb);
# `broken`: its /usr/bin/monky-deployd only exits 1.
su_repack() {
  local d="$WORK/su-repack-$2"
  rm -rf "$d"
  dpkg-deb -R "$1" "$d"
  sed -i "s/^Version: .*/Version: $2/" "$d/DEBIAN/control"
  if [ "${4:-}" = broken ]; then
    printf '#!/bin/sh\nexit 1\n' >"$d/usr/bin/monky-deployd"
    chmod 0755 "$d/usr/bin/monky-deployd"
  fi
  if [ -f "$d/DEBIAN/md5sums" ]; then
    (cd "$d" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$d/DEBIAN/md5sums"
  fi
  dpkg-deb --root-owner-group -Zgzip -b "$d" "$3" >/dev/null
  expect_eq "version of $3" "$(dpkg-deb -f "$3" Version)" "$2"
}
su_kept_packages_are() { # FILE-NAME...: keep_dir/packages holds exactly these, 0600 root; both dirs 0700 root
  local want
  want=$(printf '%s 600 root\n' "$@" | LC_ALL=C sort)
  expect_eq "kept packages" "$(cd "$S$SU_KEEP/packages" && stat -c '%n %a %U' -- * | LC_ALL=C sort)" "$want" &&
    expect_eq "keep dirs" "$(stat -c '%a %U' "$S$SU_KEEP" "$S$SU_KEEP/packages")" "$(printf '700 root\n700 root')"
}

# ---- the box: the real package, self-update on, the running package kept -----------------------
check "dpkg -i the real $VERSION package into a fresh root" in_root "$S" dpkg -i "/tmp/$(basename "$DEB")"
check "no systemd in the root (the postinst calls no systemctl)" test ! -e "$S/run/systemd/system"
cat >"$S/etc/monky-deployd/config.yaml" <<EOF
env_id: env-qa-02
site: cbs
agent_signing_keys:
  agent-test: "$(su_pub "$SU_KEYS/agent.pem")"
agent_update_probation_s: $SU_PROBATION
EOF
# bao.ca_file's default must exist for the config to load
printf -- '-----BEGIN CERTIFICATE-----\nstand-in openbao CA\n-----END CERTIFICATE-----\n' >"$S/etc/monky-deployd/openbao-ca.pem"
chroot "$S" chown root:monky-deployd /etc/monky-deployd/config.yaml /etc/monky-deployd/openbao-ca.pem
chmod 0640 "$S/etc/monky-deployd/config.yaml" "$S/etc/monky-deployd/openbao-ca.pem"
printf 's.selfupdatetoken00000000000' >"$S/var/lib/monky-deployd/bao.token"
chroot "$S" chown monky-deployd:monky-deployd /var/lib/monky-deployd/bao.token
chmod 0600 "$S/var/lib/monky-deployd/bao.token"
su_state >"$WORK/su-state0" || fatal "cannot read config.yaml and bao.token in $S"
check "the agent accepts the config with the test's agent_signing_keys (status --json)" agent_status_is "$S" env-qa-02 sdk
check "keep the running package as OPERATIONS.md says (install -D -m 0600 -t …/packages/)" \
  in_root "$S" install -D -m 0600 -t "$SU_KEEP/packages/" "/tmp/$(basename "$DEB")"

# ---- (a) the real upgrade: installed, the agent restarted, its tick ends the probation ---------
: >"$SU_SCTL"
su_stage "$DEB_UP" "$UPGRADE_VERSION" "$SU_KEYS/agent.pem" || fatal "staging $UPGRADE_VERSION"
check "staged as the agent stages it: package and staged.json 0600 monky-deployd, update/ 0700" \
  expect_eq "modes" "$(chroot "$S" stat -c '%a %U' "$SU_UPD" "$SU_UPD/staged.json" "$SU_UPD/$(basename "$DEB_UP")")" \
  "$(printf '700 monky-deployd\n600 monky-deployd\n600 monky-deployd')"
check "update-install of $UPGRADE_VERSION exits 0 after the new agent's tick" su_update_and_tick "$UPGRADE_VERSION"
check "... it says AGENT_UPDATED: $VERSION → $UPGRADE_VERSION" \
  su_has_text "$WORK/su-install.out" "update-install: AGENT_UPDATED: $VERSION → $UPGRADE_VERSION"
check "... dpkg-query: $UPGRADE_VERSION installed" su_installed_is "$UPGRADE_VERSION"
check "... the systemctl stand-in saw one call: $SU_RESTART" \
  expect_eq "systemctl calls" "$(cat "$SU_SCTL")" "$SU_RESTART"
check "... config.yaml and bao.token unchanged (content, mode, owner)" su_kept
check "... result.json for the agent says AGENT_UPDATED" su_result_has "\"note\": \"AGENT_UPDATED: $VERSION → $UPGRADE_VERSION\""
check "... nothing left staged, no probation open" su_nothing_staged
check "... both packages kept for a revert" su_kept_packages_are "$(basename "$DEB")" "$(basename "$DEB_UP")"
su_take_result

# ---- (b) a next version that never ticks: reverted when the probation runs out -----------------
check "repack the real $UPGRADE_VERSION package as $VERSION_BROKEN, its binary only exits 1" \
  su_repack "$DEB_UP" "$VERSION_BROKEN" "$DEB_BROKEN" broken
: >"$SU_SCTL"
su_stage "$DEB_BROKEN" "$VERSION_BROKEN" "$SU_KEYS/agent.pem" || fatal "staging $VERSION_BROKEN"
# ticked.json from (a), by $UPGRADE_VERSION, is still there: it does not count for this version
check "update-install of $VERSION_BROKEN exits 0; the new binary's tick fails" su_update_broken
check "... it says AGENT_REVERTED: $VERSION_BROKEN → $UPGRADE_VERSION (no tick within ${SU_PROBATION}s)" \
  su_has_text "$WORK/su-install.out" "update-install: AGENT_REVERTED: $VERSION_BROKEN → $UPGRADE_VERSION (no tick within ${SU_PROBATION}s)"
check "... reverted when the probation ran out: ${SU_PROBATION}-$((SU_PROBATION + 20))s in all" bash -c "
  s=\$(cat '$WORK/su-install.s'); echo \"took \${s}s\"; [ \"\$s\" -ge $SU_PROBATION ] && [ \"\$s\" -le $((SU_PROBATION + 20)) ]"
check "... dpkg-query: $UPGRADE_VERSION again" su_installed_is "$UPGRADE_VERSION"
check "... the real binary is back" bash -c "chroot '$S' /usr/bin/monky-deployd version | grep -qF 'monky-deployd $VERSION ('"
check "... try-restart after the install and again after the revert" \
  expect_eq "systemctl calls" "$(cat "$SU_SCTL")" "$(printf '%s\n%s' "$SU_RESTART" "$SU_RESTART")"
check "... config.yaml and bao.token unchanged (content, mode, owner)" su_kept
check "... result.json says AGENT_REVERTED" su_result_has "\"note\": \"AGENT_REVERTED: $VERSION_BROKEN → $UPGRADE_VERSION (no tick within ${SU_PROBATION}s)\""
check "... result.json names the reverted version (not staged again)" su_result_has "\"reverted\": \"$VERSION_BROKEN\""
check "... nothing left staged, no probation open" su_nothing_staged
su_take_result

# ---- (c) packages other than the signed ones: refused, nothing installed -----------------------
check "repack the real $UPGRADE_VERSION package as $VERSION_NEXT" su_repack "$DEB_UP" "$VERSION_NEXT" "$DEB_NEXT"
# su_refused WHY: update-install exits 1; the version stays, nothing restarts, nothing is kept,
# and result.json says AGENT_UPDATE_FAILED: WHY and marks the offer refused.
su_refused() {
  local rc=0
  : >"$SU_SCTL"
  su_install || rc=$?
  expect_eq "update-install rc" "$rc" 1 && su_installed_is "$UPGRADE_VERSION" &&
    expect_eq "systemctl calls" "$(cat "$SU_SCTL")" "" &&
    su_result_has "\"note\": \"AGENT_UPDATE_FAILED: $1" && su_result_has '"refused": [' &&
    { [ ! -e "$S$SU_KEEP/packages/$(basename "$DEB_NEXT")" ] || { echo "$DEB_NEXT was kept"; return 1; }; } &&
    su_nothing_staged
}
su_stage "$DEB_NEXT" "$VERSION_NEXT" "$SU_KEYS/other.pem" || fatal "staging $VERSION_NEXT"
check "signed by a key the box does not hold: refused, still $UPGRADE_VERSION" \
  su_refused "signature: no valid signature by a configured key"
su_take_result
# signed right; then the staged bytes are swapped (the agent's user owns update/)
su_stage "$DEB_NEXT" "$VERSION_NEXT" "$SU_KEYS/agent.pem" || fatal "staging $VERSION_NEXT"
install -m 0644 "$DEB_BROKEN" "$S/tmp/swap.deb"
su_as_agent cp /tmp/swap.deb "$SU_UPD/$(basename "$DEB_NEXT")"
check "signed right, bytes swapped after signing: refused, still $UPGRADE_VERSION" su_refused "sha256 mismatch"
su_take_result
# swapped bytes with their own sha256 offered, the signature still over the signed package's
su_stage "$DEB_BROKEN" "$VERSION_NEXT" "$SU_KEYS/agent.pem" "$(su_sha "$DEB_NEXT")" || fatal "staging $VERSION_NEXT"
check "swapped bytes and staged.json's sha256 rewritten to match: refused, still $UPGRADE_VERSION" \
  su_refused "signature: no valid signature by a configured key"
su_take_result
check "after the refusals: config.yaml and bao.token unchanged (content, mode, owner)" su_kept
