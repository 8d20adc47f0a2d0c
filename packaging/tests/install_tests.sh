# shellcheck shell=bash
# install.sh, run for real inside a fresh Debian root (sourced by run.sh; uses its helpers).
# Real: dpkg, useradd (the package's postinst), setfacl, chown/chmod, the agent binary.
# Stand-ins (packaging/tests/standins): systemctl (no systemd in a chroot), curl (the release
# download and the OpenZiti key: no network) and apt-get (installs empty packages of the asked name).

ENV_ID=env-qa-02
IDENT="/opt/openziti/etc/identities/monky-host.$ENV_ID.json"
GRANT_JWT="eyJhbGciOiJFUzI1NiJ9.eyJlbnZfaWQiOiJlbnYtcWEtMDIifQ.c2lnbmF0dXJl"

# prepare_root NAME: a fresh root with the stand-ins, the release fixtures and the kit's files.
prepare_root() {
  local r
  r=$(new_root "$1")
  install -m 0755 "$HERE/standins/systemctl" "$HERE/standins/curl" "$HERE/standins/apt-get" "$r/usr/local/bin/"
  install -m 0755 "$REPO/packaging/install.sh" "$r/root/install.sh"
  mkdir -p "$r/var/log/standin" "$r/etc/standin" "$r/srv/release/$VERSION" "$r/srv/release/$UPGRADE_VERSION"
  cp "$DEB" "$r/srv/release/$VERSION/"
  (cd "$r/srv/release/$VERSION" && sha256sum "$(basename "$DEB")" >"$(basename "$DEB").sha256")
  cp "$DEB_UP" "$r/srv/release/$UPGRADE_VERSION/"
  printf '%s\n' '-----BEGIN PGP PUBLIC KEY BLOCK-----' 'stand-in' '-----END PGP PUBLIC KEY BLOCK-----' >"$r/srv/release/openziti.asc"
  printf '%s\n' "$GRANT_JWT" >"$r/root/bootstrap.jwt"
  printf -- '-----BEGIN CERTIFICATE-----\nstand-in openbao CA\n-----END CERTIFICATE-----\n' >"$r/root/openbao-ca.pem"
  printf '%s' "$r"
}
# an identity enrolled earlier (by the tunneler or a previous run), as the tunneler leaves it
place_identity() {
  mkdir -p "$1/opt/openziti/etc/identities"
  chmod 0700 "$1/opt/openziti/etc/identities"
  printf '{"ztAPI":"https://ctrl.test:1280","id":{"cert":"pem:stand-in","key":"pem:stand-in"}}\n' >"$1$IDENT"
  chmod 0600 "$1$IDENT"
}
# run_install ROOT ARGS...: install.sh inside the root; output in $WORK/install.out
run_install() {
  local r=$1
  shift
  : >"$r/var/log/standin/systemctl.log"; : >"$r/var/log/standin/curl.log"; : >"$r/var/log/standin/apt-get.log"
  in_root "$r" MONKY_DEPLOYD_BASE_URL=https://releases.test bash /root/install.sh "$@" >"$WORK/install.out" 2>&1 ||
    { local rc=$?; tail -n 30 "$WORK/install.out"; return "$rc"; }
}
# run_install_stdin ROOT FILE ARGS...: the same, with FILE (inside the root) on stdin
run_install_stdin() {
  local r=$1 f=$2
  shift 2
  : >"$r/var/log/standin/systemctl.log"; : >"$r/var/log/standin/curl.log"; : >"$r/var/log/standin/apt-get.log"
  in_root "$r" MONKY_DEPLOYD_BASE_URL=https://releases.test bash /root/install.sh "$@" <"$r$f" >"$WORK/install.out" 2>&1
}
unchanged_since() { # ROOT SNAPSHOT-FILE
  snapshot "$1" >"$WORK/snap.now"
  diff "$2" "$WORK/snap.now"
}
expect_rc() { # RC CMD...
  local rc=0
  "${@:2}" || rc=$?
  [ "$rc" -eq "$1" ] || { echo "rc=$rc, want $1"; cat "$WORK/install.out"; return 1; }
}
expect_fail_with() { # PATTERN CMD...: the command fails and says PATTERN (on its output or install.out)
  local out rc=0
  : >"$WORK/install.out"
  out=$("${@:2}" 2>&1) || rc=$?
  out="$out
$(cat "$WORK/install.out")"
  [ "$rc" -ne 0 ] || { echo "expected a failure, got rc=0"; printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out" | grep -Eq -- "$1" || { echo "rc=$rc but the output lacks /$1/:"; printf '%s\n' "$out"; return 1; }
}

# ---- A: a VM with transport sdk, everything from the kit -----------------------------------------
A=$(prepare_root install-a)
place_identity "$A"
A_ARGS=(--env "$ENV_ID" --site cbs --token kit-download-token --bootstrap-file /root/bootstrap.jwt
        --bao-ca /root/openbao-ca.pem --docker-data-root /srv/docker-data)
check "install.sh (sdk, fresh box) exits 0" run_install "$A" "${A_ARGS[@]}"
cp "$WORK/install.out" "$WORK/install-a1.out"
check "downloaded the pinned .deb and its .sha256 with the kit's token" bash -c "
  grep -qx 'https://releases.test/$VERSION/$(basename "$DEB") token=kit-download-token' '$A/var/log/standin/curl.log' &&
  grep -qx 'https://releases.test/$VERSION/$(basename "$DEB").sha256 token=kit-download-token' '$A/var/log/standin/curl.log' || { cat '$A/var/log/standin/curl.log'; exit 1; }"
check "installed docker.io and ziti-edge-tunnel through apt" bash -c "
  grep -q 'install .*docker.io' '$A/var/log/standin/apt-get.log' && grep -q 'install .*ziti-edge-tunnel' '$A/var/log/standin/apt-get.log' || { cat '$A/var/log/standin/apt-get.log'; exit 1; }"
check "package installed at $VERSION" bash -c "[ \"\$(chroot '$A' dpkg-query -W -f='\${Status} \${Version}' monky-deployd)\" = 'install ok installed $VERSION' ]"
check "config.yaml root:monky-deployd 0640" stat_is "$A" /etc/monky-deployd/config.yaml "640 root monky-deployd"
KEPT=/var/lib/monky-deployd-update/packages/$(basename "$DEB")
check "the installed package is kept for self-update's revert (root 0600 in a 0700 dir, same bytes)" bash -c "
  [ \"\$(chroot '$A' stat -c '%a %U %G' /var/lib/monky-deployd-update/packages '$KEPT')\" = \"\$(printf '700 root root\n600 root root')\" ] &&
  cmp -s '$DEB' '$A$KEPT'"
check "config.yaml says what the flags said" bash -c "
  f='$A/etc/monky-deployd/config.yaml'
  grep -qx 'env_id: $ENV_ID' \$f && grep -qx 'site: cbs' \$f && grep -qx 'transport: sdk' \$f &&
  grep -qx 'identity: $IDENT' \$f && grep -qx '  host: tenancy.cbs.tikali.net' \$f &&
  grep -qx '  host: bao.cbs.tikali.net' \$f && grep -qx '  ca_file: /etc/monky-deployd/openbao-ca.pem' \$f &&
  grep -qx 'laptop_mode: false' \$f && grep -qx 'state_dir: /var/lib/monky-deployd' \$f || { cat \$f; exit 1; }"
check "config.yaml holds no secret (token, grant)" bash -c "! grep -Eq 'kit-download-token|$GRANT_JWT' '$A/etc/monky-deployd/config.yaml'"
check "openbao-ca.pem root:monky-deployd 0640, same bytes" bash -c "
  [ \"\$(chroot '$A' stat -c '%a %U %G' /etc/monky-deployd/openbao-ca.pem)\" = '640 root monky-deployd' ] &&
  cmp '$A/root/openbao-ca.pem' '$A/etc/monky-deployd/openbao-ca.pem'"
check "bootstrap.jwt monky-deployd 0600" stat_is "$A" /etc/monky-deployd/bootstrap.jwt "600 monky-deployd monky-deployd"
check "bootstrap.jwt holds the grant" file_is "$A" /etc/monky-deployd/bootstrap.jwt "$GRANT_JWT"
check "/etc/monky-deployd root:monky-deployd 1770" stat_is "$A" /etc/monky-deployd "1770 root monky-deployd"
check "/var/lib/monky-deployd monky-deployd 0700" stat_is "$A" /var/lib/monky-deployd "700 monky-deployd monky-deployd"
check "identity stays root-owned 0600 base mode" bash -c "[ \"\$(chroot '$A' stat -c '%U %G' '$IDENT')\" = 'root root' ] && chroot '$A' getfacl -cp '$IDENT' | grep -qx 'group::---' && chroot '$A' getfacl -cp '$IDENT' | grep -qx 'other::---'"
check "identity ACL: user:monky-deployd:r--" acl_has "$A" "$IDENT" "user:monky-deployd:r--"
check "identity dir ACL: user:monky-deployd:--x" acl_has "$A" /opt/openziti/etc/identities "user:monky-deployd:--x"
check "no ACL for user ziti with transport sdk" bash -c "! chroot '$A' getfacl -cp '$IDENT' | grep -q '^user:ziti:'"
check "the agent user can read the identity and the config, not the grant's neighbours' secrets" bash -c "
  chroot '$A' setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups cat '$IDENT' /etc/monky-deployd/config.yaml /etc/monky-deployd/bootstrap.jwt >/dev/null"
check "the agent user may delete the grant but not config.yaml (sticky directory)" bash -c "
  cp -a '$A/etc/monky-deployd/bootstrap.jwt' '$WORK/grant.keep'
  chroot '$A' setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups rm -f /etc/monky-deployd/bootstrap.jwt || exit 1
  if chroot '$A' setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups rm -f /etc/monky-deployd/config.yaml 2>/dev/null; then echo 'config.yaml was deletable'; exit 1; fi
  [ -f '$A/etc/monky-deployd/config.yaml' ] && cp -a '$WORK/grant.keep' '$A/etc/monky-deployd/bootstrap.jwt'"
check "the agent, as its own user, reads install.sh's config (status --json)" agent_status_is "$A" "$ENV_ID" sdk
check "tunneler switched to run-host (drop-in 0644 root)" bash -c "
  [ \"\$(chroot '$A' stat -c '%a %U %G' /etc/systemd/system/ziti-edge-tunnel.service.d/run-host.conf)\" = '644 root root' ] &&
  grep -q 'ziti-edge-tunnel run-host ' '$A/etc/systemd/system/ziti-edge-tunnel.service.d/run-host.conf'"
check "OpenZiti apt source and key written 0644" bash -c "
  [ \"\$(chroot '$A' stat -c '%a %U' /usr/share/keyrings/openziti.asc /etc/apt/sources.list.d/openziti-release.list)\" = \"\$(printf '644 root\n644 root')\" ] &&
  grep -q 'signed-by=/usr/share/keyrings/openziti.asc' '$A/etc/apt/sources.list.d/openziti-release.list'"
check "docker data-root configured (/srv/docker-data 0711, daemon.json 0644)" bash -c "
  [ \"\$(chroot '$A' stat -c '%a %U' /srv/docker-data /etc/docker/daemon.json)\" = \"\$(printf '711 root\n644 root')\" ] &&
  grep -q '\"data-root\": \"/srv/docker-data\"' '$A/etc/docker/daemon.json'"
check "systemd (sdk: service mode by default): docker and tunneler restarted, proxy, timer and laptop off, the service (re)started" bash -c "
  l='$A/var/log/standin/systemctl.log'
  grep -qx 'restart docker.service' \$l && grep -qx 'restart ziti-edge-tunnel.service' \$l &&
  grep -qx 'disable --now monky-deployd-proxy.service' \$l &&
  grep -qx 'disable --now monky-deployd.timer monky-deployd-laptop.service' \$l &&
  grep -qx 'enable monky-deployd-run.service' \$l && [ \"\$(tail -n1 \$l)\" = 'restart monky-deployd-run.service' ] &&
  ! grep -q 'enable --now monky-deployd.timer' \$l && ! grep -q 'start monky-deployd.service' \$l || { cat \$l; exit 1; }"
check "no proxy environment file with transport sdk" test ! -e "$A/etc/default/monky-deployd-proxy"
if [ -e "$A/etc/monky-deployd/config.yaml" ]; then
  snapshot "$A" >"$WORK/snap-a1"
fi

# A again, same flags: nothing changes, nothing is downloaded or installed.
DPKG_LOG_LINES=$(wc -l <"$A/var/log/dpkg.log")
check "install.sh again with the same flags exits 0" run_install "$A" "${A_ARGS[@]}"
cp "$WORK/install.out" "$WORK/install-a2.out"
check "second run changes no file, owner, mode or ACL" unchanged_since "$A" "$WORK/snap-a1"
check "second run downloads nothing and installs nothing" bash -c "[ ! -s '$A/var/log/standin/curl.log' ] && ! grep -q install '$A/var/log/standin/apt-get.log' && [ \"\$(wc -l <'$A/var/log/dpkg.log')\" = '$DPKG_LOG_LINES' ]"
check "second run says so" grep -q 'nothing to change' "$WORK/install-a2.out"
check "second run still restarts the service (new binary or config taken up)" grep -qx 'restart monky-deployd-run.service' "$A/var/log/standin/systemctl.log"

# --dry-run with a different site: it says what it would change and changes nothing.
check "--dry-run exits 0" run_install "$A" "${A_ARGS[@]/cbs/lab}" --dry-run
cp "$WORK/install.out" "$WORK/install-a3.out"
check "--dry-run names the config change" grep -q 'would write /etc/monky-deployd/config.yaml' "$WORK/install-a3.out"
check "--dry-run changes nothing" unchanged_since "$A" "$WORK/snap-a1"
check "--dry-run starts nothing" bash -c "! grep -Eq '^(start|restart|enable)' '$A/var/log/standin/systemctl.log'"

# An upgrade whose checksum does not match is refused; the installed package stays.
printf '%064d  %s\n' 0 "$(basename "$DEB_UP")" >"$A/srv/release/$UPGRADE_VERSION/$(basename "$DEB_UP").sha256"
check "a .deb whose sha256 does not match is refused" expect_fail_with 'sha256 mismatch' run_install "$A" "${A_ARGS[@]}" --version "$UPGRADE_VERSION"
check "after the refusal $VERSION is still installed" bash -c "[ \"\$(chroot '$A' dpkg-query -W -f='\${Version}' monky-deployd)\" = '$VERSION' ]"
(cd "$A/srv/release/$UPGRADE_VERSION" && sha256sum "$(basename "$DEB_UP")" >"$(basename "$DEB_UP").sha256")
# The agent has consumed the grant and holds a token by now.
rm -f "$A/etc/monky-deployd/bootstrap.jwt"
printf 's.agenttoken00000000000000000' >"$A/var/lib/monky-deployd/bao.token"
chroot "$A" chown monky-deployd:monky-deployd /var/lib/monky-deployd/bao.token
chmod 0600 "$A/var/lib/monky-deployd/bao.token"
token_before=$(sha256sum "$A/var/lib/monky-deployd/bao.token")
check "upgrade through install.sh --version exits 0" run_install "$A" "${A_ARGS[@]}" --version "$UPGRADE_VERSION"
check "upgraded to $UPGRADE_VERSION" bash -c "[ \"\$(chroot '$A' dpkg-query -W -f='\${Version}' monky-deployd)\" = '$UPGRADE_VERSION' ]"
check "the upgrade's package is kept too" cmp -s "$DEB_UP" "$A/var/lib/monky-deployd-update/packages/$(basename "$DEB_UP")"
check "upgrade keeps the token and does not re-stage the consumed grant" bash -c "
  [ \"\$(sha256sum '$A/var/lib/monky-deployd/bao.token')\" = '$token_before' ] && [ ! -e '$A/etc/monky-deployd/bootstrap.jwt' ] &&
  grep -q 'grant not staged' '$WORK/install.out'"
check "upgrade leaves config.yaml as it was" bash -c "grep -qx 'site: cbs' '$A/etc/monky-deployd/config.yaml' && [ \"\$(chroot '$A' stat -c '%a %U %G' /etc/monky-deployd/config.yaml)\" = '640 root monky-deployd' ]"

# A first tick that fails is reported, with exit 3.
touch "$A/etc/standin/tick-fails"
check "a failing first tick makes install.sh exit 3 (service mode)" expect_rc 3 run_install "$A" "${A_ARGS[@]}" --version "$UPGRADE_VERSION"
check "... and points at the service's journal" grep -q 'journalctl -u monky-deployd-run' "$WORK/install.out"
check "a failing first tick makes install.sh exit 3 (timer mode)" expect_rc 3 run_install "$A" "${A_ARGS[@]}" --version "$UPGRADE_VERSION" --mode timer
check "... and points at the oneshot's journal" grep -q 'journalctl -u monky-deployd -n' "$WORK/install.out"
rm -f "$A/etc/standin/tick-fails"

# Switching modes: --mode timer turns the service off and the timer on; --mode service back.
check "install.sh --mode timer exits 0" run_install "$A" "${A_ARGS[@]}" --version "$UPGRADE_VERSION" --mode timer
check "timer mode: service and laptop off, timer on, one oneshot tick" bash -c "
  l='$A/var/log/standin/systemctl.log'
  grep -qx 'disable --now monky-deployd-laptop.service monky-deployd-run.service' \$l &&
  grep -qx 'enable --now monky-deployd.timer' \$l && [ \"\$(tail -n1 \$l)\" = 'start monky-deployd.service' ] &&
  ! grep -q 'enable monky-deployd-run.service' \$l || { cat \$l; exit 1; }"
check "install.sh --mode service exits 0" run_install "$A" "${A_ARGS[@]}" --version "$UPGRADE_VERSION" --mode service
check "service mode again: timer off, service enabled and (re)started" bash -c "
  l='$A/var/log/standin/systemctl.log'
  grep -qx 'disable --now monky-deployd.timer monky-deployd-laptop.service' \$l &&
  grep -qx 'enable monky-deployd-run.service' \$l && [ \"\$(tail -n1 \$l)\" = 'restart monky-deployd-run.service' ] || { cat \$l; exit 1; }"

# ---- B: a laptop with transport proxy, grant on stdin --------------------------------------------
B=$(prepare_root install-b)
place_identity "$B"
check "install.sh (laptop, proxy, grant on stdin, --deb FILE) exits 0" \
  run_install_stdin "$B" /root/bootstrap.jwt --env "$ENV_ID" --site cbs --transport proxy --laptop --bootstrap-file - \
  --deb "/srv/release/$UPGRADE_VERSION/$(basename "$DEB_UP")"
check "--deb installs the given file and downloads no package" bash -c "
  [ \"\$(chroot '$B' dpkg-query -W -f='\${Version}' monky-deployd)\" = '$UPGRADE_VERSION' ] && ! grep -q '\.deb' '$B/var/log/standin/curl.log'"
check "laptop config: transport proxy, laptop_mode true, no CA file" bash -c "
  f='$B/etc/monky-deployd/config.yaml'; grep -qx 'transport: proxy' \$f && grep -qx 'laptop_mode: true' \$f && grep -qx '  ca_file: \"\"' \$f || { cat \$f; exit 1; }"
check "grant from stdin staged 0600 monky-deployd" bash -c "
  [ \"\$(chroot '$B' stat -c '%a %U %G' /etc/monky-deployd/bootstrap.jwt)\" = '600 monky-deployd monky-deployd' ] && [ \"\$(cat '$B/etc/monky-deployd/bootstrap.jwt')\" = '$GRANT_JWT' ]"
check "the agent reads the laptop config (status --json)" agent_status_is "$B" "$ENV_ID" proxy
check "user ziti created as a system account" bash -c "IFS=: read -r _ _ uid _ < <(chroot '$B' getent passwd ziti) && [ \"\$uid\" -lt 1000 ]"
check "identity ACL: user:ziti:r-- and user:monky-deployd:r--" bash -c "
  a=\$(chroot '$B' getfacl -cp '$IDENT'); echo \"\$a\" | grep -qx 'user:ziti:r--' && echo \"\$a\" | grep -qx 'user:monky-deployd:r--'"
check "identity dir ACL: user:ziti:--x" acl_has "$B" /opt/openziti/etc/identities "user:ziti:--x"
check "proxy environment file 0644 names the identity" bash -c "
  [ \"\$(chroot '$B' stat -c '%a %U' /etc/default/monky-deployd-proxy)\" = '644 root' ] && grep -qx 'MONKY_ZITI_IDENTITY=$IDENT' '$B/etc/default/monky-deployd-proxy'"
check "the ziti CLI was installed for transport proxy" grep -q 'install .*openziti' "$B/var/log/standin/apt-get.log"
check "systemd: proxy on, timer off, laptop loop enabled and restarted, no oneshot tick" bash -c "
  l='$B/var/log/standin/systemctl.log'
  grep -qx 'enable --now monky-deployd-proxy.service' \$l && grep -qx 'disable --now monky-deployd.timer monky-deployd-run.service' \$l &&
  grep -qx 'enable monky-deployd-laptop.service' \$l && grep -qx 'restart monky-deployd-laptop.service' \$l &&
  ! grep -q 'start monky-deployd.service' \$l || { cat \$l; exit 1; }"
snapshot "$B" >"$WORK/snap-b1"
check "laptop second run (grant from a file this time) exits 0" \
  run_install "$B" --env "$ENV_ID" --site cbs --transport proxy --laptop --bootstrap-file /root/bootstrap.jwt \
  --deb "/srv/release/$UPGRADE_VERSION/$(basename "$DEB_UP")"
check "laptop second run changes nothing" unchanged_since "$B" "$WORK/snap-b1"

# ---- D: a server with transport system: the timer by default ---------------------------------------
D=$(prepare_root install-d)
check "install.sh (transport system, no --mode) exits 0" run_install "$D" --env "$ENV_ID" --site cbs --transport system --token kit-download-token
check "transport system defaults to timer mode: timer on, one oneshot tick, the service off" bash -c "
  l='$D/var/log/standin/systemctl.log'
  grep -qx 'disable --now monky-deployd-laptop.service monky-deployd-run.service' \$l &&
  grep -qx 'enable --now monky-deployd.timer' \$l && [ \"\$(tail -n1 \$l)\" = 'start monky-deployd.service' ] || { cat \$l; exit 1; }"
MT=/var/lib/node_exporter/textfile_collector/monky-deployd.prom
check "install.sh --metrics-textfile (directory missing) exits 0" run_install "$D" --env "$ENV_ID" --site cbs --transport system --token kit-download-token --metrics-textfile "$MT"
check "--metrics-textfile: the key in config.yaml" grep -qx "metrics_textfile: $MT" "$D/etc/monky-deployd/config.yaml"
# with an ACL, stat's group bits show the mask (rwx): the base entries are read from getfacl
mt_dir_acl() {
  local acl
  expect_eq "owner" "$(in_root "$D" stat -c '%U %G' /var/lib/node_exporter/textfile_collector)" "root root" || return 1
  acl=$(in_root "$D" getfacl -cp /var/lib/node_exporter/textfile_collector)
  expect_eq "ACL" "$acl" "$(printf 'user::rwx\nuser:monky-deployd:rwx\ngroup::r-x\nmask::rwx\nother::r-x')"
}
check "--metrics-textfile: the directory made 0755 root, the agent writes it through an ACL" mt_dir_acl
check "--metrics-textfile: ReadWritePaths=- drop-ins for the three agent units" bash -c "
  for u in monky-deployd monky-deployd-laptop monky-deployd-run; do
    grep -qx 'ReadWritePaths=-/var/lib/node_exporter/textfile_collector' '$D'/etc/systemd/system/\$u.service.d/metrics.conf || exit 1
  done"
mt_snap() { (cd "$D" && find etc/monky-deployd etc/systemd/system var/lib/node_exporter -printf '%p %m %u %g\n' | sort && cat etc/monky-deployd/config.yaml); }
mt_twice_unchanged() {
  local a
  a=$(mt_snap)
  run_install "$D" --env "$ENV_ID" --site cbs --transport system --token kit-download-token --metrics-textfile "$MT" || return 1
  expect_eq "files after a second run" "$(mt_snap)" "$a"
}
check "--metrics-textfile twice changes nothing" mt_twice_unchanged
mt_removed() {
  run_install "$D" --env "$ENV_ID" --site cbs --transport system --token kit-download-token || return 1
  ! grep -q metrics_textfile "$D/etc/monky-deployd/config.yaml" && [ ! -e "$D/etc/systemd/system/monky-deployd.service.d/metrics.conf" ]
}
check "install.sh without --metrics-textfile removes its drop-ins and the key" mt_removed

# ---- C: refusals before anything is touched ---------------------------------------------------
C=$(prepare_root install-c)
snapshot "$C" >"$WORK/snap-c0"
check "a bad --env is refused" expect_fail_with "not a valid environment id" run_install "$C" --env "Env_QA" --site cbs
check "an unknown flag is refused" expect_fail_with "unknown argument" run_install "$C" --env "$ENV_ID" --site cbs --prune
check "a bad --transport is refused" expect_fail_with "transport must be" run_install "$C" --env "$ENV_ID" --site cbs --transport tun
check "a bad --mode is refused" expect_fail_with "mode must be service or timer" run_install "$C" --env "$ENV_ID" --site cbs --mode oneshot
check "--mode with --laptop is refused" expect_fail_with "mode does not apply" run_install "$C" --env "$ENV_ID" --site cbs --laptop --mode timer
printf 'not-a-jwt' >"$C/root/bad.jwt"
check "a grant that is not a JWT is refused" expect_fail_with 'not a JWT' run_install "$C" --env "$ENV_ID" --site cbs --bootstrap-file /root/bad.jwt
check "refusals changed nothing" unchanged_since "$C" "$WORK/snap-c0"
check "sdk without an identity and without --enrol-jwt fails and says how to fix it" \
  expect_fail_with "pass --enrol-jwt" run_install "$C" --env "$ENV_ID" --site cbs
printf 'not.a.validjwt\n' >"$C/root/monky-host.jwt"
check "an enrolment JWT the agent cannot use fails the install" \
  expect_fail_with 'enrolling ' run_install "$C" --env "$ENV_ID" --site cbs --enrol-jwt /root/monky-host.jwt
check "... it stops at the enrolment: no identity, no config, the JWT kept" bash -c "
  [ ! -s '$C$IDENT' ] && [ ! -e '$C/etc/monky-deployd/config.yaml' ] && [ -s '$C/root/monky-host.jwt' ] &&
  [ \"\$(tail -n1 '$WORK/install.out')\" != 'install.sh: done: monky-deployd status' ]"

# ---- E: several environments on one box (--instance, --remove --instance) -----------------------
E=$(prepare_root install-e)
install -m 0755 "$HERE/standins/docker" "$E/usr/local/bin/"
place_identity "$E"
# identity_for ENV: an enrolled identity of another environment, as place_identity leaves one
identity_for() {
  printf '{"ztAPI":"https://ctrl.test:1280","id":{"cert":"pem:%s","key":"pem:%s"}}\n' "$1" "$1" \
    >"$E/opt/openziti/etc/identities/monky-host.$1.json"
  chmod 0600 "$E/opt/openziti/etc/identities/monky-host.$1.json"
}
identity_for env-qa-b
identity_for env-qa-c
: >"$E/var/log/standin/docker.log"
# the default instance first (transport proxy, timer), as an existing box has it
check "E: the default instance (proxy, timer) installs as before" \
  run_install "$E" --env "$ENV_ID" --site cbs --transport proxy --deb "/srv/release/$VERSION/$(basename "$DEB")"
check "E: the default instance's proxy file names no ports (its unit keeps 18443/18200)" bash -c "
  f='$E/etc/default/monky-deployd-proxy'; grep -qx 'MONKY_ZITI_IDENTITY=$IDENT' \$f && ! grep -q PROXY_PORT \$f"
default_snap() { (cd "$E" && find etc/monky-deployd/config.yaml var/lib/monky-deployd etc/default/monky-deployd-proxy -maxdepth 0 -printf '%p %m %u %g\n' && sha256sum etc/monky-deployd/config.yaml etc/default/monky-deployd-proxy); }
default_snap >"$WORK/snap-e-default"

check "E: install.sh --instance a (transport system) exits 0" \
  run_install "$E" --instance a --env env-qa-a --site cbs --transport system --bootstrap-file /root/bootstrap.jwt --bao-ca /root/openbao-ca.pem
cp "$E/var/log/standin/systemctl.log" "$WORK/systemctl-e-a.log"
check "E/a: /etc/monky-deployd/a root:monky-deployd 1770, /var/lib/monky-deployd/a monky-deployd 0700" bash -c "
  [ \"\$(chroot '$E' stat -c '%a %U %G' /etc/monky-deployd/a /var/lib/monky-deployd/a)\" = \"\$(printf '1770 root monky-deployd\n700 monky-deployd monky-deployd')\" ]"
check "E/a: config.yaml 0640 in the instance's directory, naming its state dir, grant and CA" bash -c "
  f='$E/etc/monky-deployd/a/config.yaml'
  [ \"\$(chroot '$E' stat -c '%a %U %G' /etc/monky-deployd/a/config.yaml)\" = '640 root monky-deployd' ] &&
  grep -qx 'env_id: env-qa-a' \$f && grep -qx 'transport: system' \$f && grep -qx 'state_dir: /var/lib/monky-deployd/a' \$f &&
  grep -qx 'bootstrap_path: /etc/monky-deployd/a/bootstrap.jwt' \$f && grep -qx '  ca_file: /etc/monky-deployd/a/openbao-ca.pem' \$f &&
  ! grep -q proxy_port \$f || { cat \$f; exit 1; }"
check "E/a: grant and CA in the instance's directory" bash -c "
  [ \"\$(chroot '$E' stat -c '%a %U %G' /etc/monky-deployd/a/bootstrap.jwt /etc/monky-deployd/a/openbao-ca.pem)\" = \"\$(printf '600 monky-deployd monky-deployd\n640 root monky-deployd')\" ] &&
  [ \"\$(cat '$E/etc/monky-deployd/a/bootstrap.jwt')\" = '$GRANT_JWT' ]"
check "E/a: the agent, as its own user, reads the instance's config (status --json --config)" bash -c "
  out=\$(chroot '$E' setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups /usr/bin/monky-deployd --config /etc/monky-deployd/a/config.yaml status --json 2>&1) &&
  echo \"\$out\" | grep -q '\"env_id\": \"env-qa-a\"' || { echo \"\$out\"; exit 1; }"
# needs the agent's --instance flag (the agent side of instances)
check "E/a: the agent finds the instance by name (--instance a status --json)" bash -c "
  out=\$(chroot '$E' setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups /usr/bin/monky-deployd --instance a status --json 2>&1) &&
  echo \"\$out\" | grep -q '\"env_id\": \"env-qa-a\"' || { echo \"\$out\"; exit 1; }"
check "E/a: systemd: the instance's timer on, its other units off, one tick of monky-deployd@a" bash -c "
  l='$WORK/systemctl-e-a.log'
  grep -qx 'disable --now monky-deployd-proxy@a.service' \$l &&
  grep -qx 'disable --now monky-deployd-laptop@a.service monky-deployd-run@a.service' \$l &&
  grep -qx 'enable --now monky-deployd@a.timer' \$l && [ \"\$(tail -n1 \$l)\" = 'start monky-deployd@a.service' ] || { cat \$l; exit 1; }"
check "E/a: no unit of the default instance was touched" bash -c "
  ! grep -E 'monky-deployd(-run|-laptop|-proxy)?\.(service|timer)' '$WORK/systemctl-e-a.log'"
check "E/a: the default instance's config, state and proxy file are as they were" bash -c "diff '$WORK/snap-e-default' <($(declare -f default_snap); E='$E'; default_snap)"
snapshot "$E" >"$WORK/snap-e-a"
check "E/a: the same flags again exit 0 and change nothing" bash -c "
  $(declare -f run_install in_root); WORK='$WORK'
  run_install '$E' --instance a --env env-qa-a --site cbs --transport system --bootstrap-file /root/bootstrap.jwt --bao-ca /root/openbao-ca.pem &&
  grep -q 'nothing to change' '$WORK/install.out'"
check "E/a: ... not one file, owner, mode or ACL" unchanged_since "$E" "$WORK/snap-e-a"

check "E: install.sh --instance b (transport proxy, service) exits 0" \
  run_install "$E" --instance b --env env-qa-b --site cbs --transport proxy --mode service
cp "$E/var/log/standin/systemctl.log" "$WORK/systemctl-e-b.log"
check "E/b: its proxy gets the first free pair of ports (18444, 18201): environment file and config agree" bash -c "
  f='$E/etc/default/monky-deployd-proxy-b'; c='$E/etc/monky-deployd/b/config.yaml'
  [ \"\$(chroot '$E' stat -c '%a %U' /etc/default/monky-deployd-proxy-b)\" = '644 root' ] &&
  grep -qx 'MONKY_ZITI_IDENTITY=/opt/openziti/etc/identities/monky-host.env-qa-b.json' \$f &&
  grep -qx 'MONKY_TENANCY_PROXY_PORT=18444' \$f && grep -qx 'MONKY_BAO_PROXY_PORT=18201' \$f &&
  grep -A2 -x 'tenancy:' \$c | grep -qx '  proxy_port: 18444' && grep -A2 -x 'bao:' \$c | grep -qx '  proxy_port: 18201' || { cat \$f \$c; exit 1; }"
check "E/b: identity ACLs for the agent and ziti" bash -c "
  a=\$(chroot '$E' getfacl -cp /opt/openziti/etc/identities/monky-host.env-qa-b.json)
  echo \"\$a\" | grep -qx 'user:ziti:r--' && echo \"\$a\" | grep -qx 'user:monky-deployd:r--' || { echo \"\$a\"; exit 1; }"
check "E/b: systemd: its proxy and service on, its timer and laptop off, nothing of a or the default" bash -c "
  l='$WORK/systemctl-e-b.log'
  grep -qx 'enable --now monky-deployd-proxy@b.service' \$l && grep -qx 'disable --now monky-deployd@b.timer monky-deployd-laptop@b.service' \$l &&
  grep -qx 'enable monky-deployd-run@b.service' \$l && [ \"\$(tail -n1 \$l)\" = 'restart monky-deployd-run@b.service' ] &&
  ! grep -E '@a\.|monky-deployd(-run|-laptop|-proxy)?\.(service|timer)' \$l || { cat \$l; exit 1; }"
check "E: install.sh --instance c --proxy-ports 18600:18601 (laptop) exits 0" \
  run_install "$E" --instance c --env env-qa-c --site cbs --transport proxy --laptop --proxy-ports 18600:18601
check "E/c: the given ports in its environment file and config" bash -c "
  grep -qx 'MONKY_TENANCY_PROXY_PORT=18600' '$E/etc/default/monky-deployd-proxy-c' &&
  grep -qx '  proxy_port: 18601' '$E/etc/monky-deployd/c/config.yaml' &&
  grep -qx 'restart monky-deployd-laptop@c.service' '$E/var/log/standin/systemctl.log'"
check "E/b: a rerun keeps its ports" bash -c "
  $(declare -f run_install in_root); WORK='$WORK'
  run_install '$E' --instance b --env env-qa-b --site cbs --transport proxy --mode service &&
  grep -qx 'MONKY_TENANCY_PROXY_PORT=18444' '$E/etc/default/monky-deployd-proxy-b'"

snapshot "$E" >"$WORK/snap-e-refusals"
check "E: a port another instance's proxy has is refused" \
  expect_fail_with "already another instance's proxy port" run_install "$E" --instance d --env env-qa-d --site cbs --transport proxy --proxy-ports 18444:18700
check "E: a second instance of one environment is refused" \
  expect_fail_with "environment env-qa-a already runs on this box \(/etc/monky-deployd/a/config.yaml\)" run_install "$E" --instance d --env env-qa-a --site cbs --transport system
check "E: a name the default instance uses is refused" \
  expect_fail_with "is reserved" run_install "$E" --instance releases --env env-qa-d --site cbs --transport system
check "E: a bad instance name is refused" \
  expect_fail_with "not a valid instance name" run_install "$E" --instance Qa.1 --env env-qa-d --site cbs --transport system
check "E: --proxy-ports without --instance is refused" \
  expect_fail_with "is for an --instance" run_install "$E" --env "$ENV_ID" --site cbs --transport proxy --proxy-ports 18600:18601
check "E: --remove without --instance is refused" expect_fail_with "remove needs --instance" run_install "$E" --remove
check "E: --remove with install flags is refused" expect_fail_with "takes only --instance" run_install "$E" --remove --instance a --env env-qa-a
check "E: --purge without --remove is refused" expect_fail_with "purge goes with --remove" run_install "$E" --instance a --env env-qa-a --site cbs --purge
check "E: the refusals changed nothing" unchanged_since "$E" "$WORK/snap-e-refusals"

mkdir -p "$E/etc/standin/docker"
printf 'c0ffee01\n' >"$E/etc/standin/docker/ps.monky-env-qa-a"
printf 'netaa01\n' >"$E/etc/standin/docker/network.monky-env-qa-a"
printf 'monky-env-qa-a_data\n' >"$E/etc/standin/docker/volume.monky-env-qa-a"
others_snap() { (cd "$E" && find etc/monky-deployd/b etc/monky-deployd/c var/lib/monky-deployd/b var/lib/monky-deployd/c etc/default -printf '%p %m %u %g\n' | sort && cat etc/monky-deployd/config.yaml etc/monky-deployd/b/config.yaml etc/default/monky-deployd-proxy-b); }
others_snap >"$WORK/snap-e-others"
: >"$E/var/log/standin/docker.log"
check "E: install.sh --remove --instance a exits 0" run_install "$E" --remove --instance a
cp "$WORK/install.out" "$WORK/install-e-remove.out"
check "E/remove a: its units stopped and disabled; no other instance's unit touched" bash -c "
  l='$E/var/log/standin/systemctl.log'
  grep -qx 'disable --now monky-deployd@a.timer monky-deployd@a.service monky-deployd-run@a.service monky-deployd-laptop@a.service monky-deployd-proxy@a.service' \$l &&
  ! grep -E '@[bc]\.|monky-deployd(-run|-laptop|-proxy)?\.(service|timer)' \$l || { cat \$l; exit 1; }"
check "E/remove a: config, state and containers kept by default, and it says so" bash -c "
  [ -f '$E/etc/monky-deployd/a/config.yaml' ] && [ -d '$E/var/lib/monky-deployd/a' ] &&
  ! grep -q ' rm ' '$E/var/log/standin/docker.log' &&
  grep -q 'kept: /etc/monky-deployd/a, /var/lib/monky-deployd/a and the containers of compose project monky-env-qa-a' '$WORK/install-e-remove.out' ||
  { cat '$WORK/install-e-remove.out'; exit 1; }"
check "E/remove a: b, c and the default instance unchanged" bash -c "diff '$WORK/snap-e-others' <($(declare -f others_snap); E='$E'; others_snap)"
check "E: install.sh --remove --instance a --purge exits 0" run_install "$E" --remove --instance a --purge
cp "$WORK/install.out" "$WORK/install-e-purge.out"
check "E/purge a: its containers and networks removed by the project's label, its volumes kept and named" bash -c "
  l='$E/var/log/standin/docker.log'
  grep -qx 'ps -aq --filter label=com.docker.compose.project=monky-env-qa-a' \$l && grep -qx 'rm -f c0ffee01' \$l &&
  grep -qx 'network rm netaa01' \$l && ! grep -q 'volume rm' \$l &&
  grep -q 'volumes of monky-env-qa-a kept.*monky-env-qa-a_data' '$WORK/install-e-purge.out' || { cat \$l '$WORK/install-e-purge.out'; exit 1; }"
check "E/purge a: its config and state deleted, its identity kept" bash -c "
  [ ! -e '$E/etc/monky-deployd/a' ] && [ ! -e '$E/var/lib/monky-deployd/a' ] && [ -s '$E$IDENT' ]"
check "E/purge a: b, c and the default instance unchanged" bash -c "diff '$WORK/snap-e-others' <($(declare -f others_snap); E='$E'; others_snap)"
