# shellcheck shell=bash
# The agent under its unit's sandbox, without systemd (sourced by run.sh; uses its helpers and the
# install-a root from install_tests.sh, where install.sh put the package and a config).
#
# unit_sandbox.py applies what the unit asks of the kernel: user + docker group, no capabilities,
# NoNewPrivileges, the SystemCallFilter allow-list, MemoryDenyWriteExecute, RestrictAddressFamilies,
# LockPersonality, UMask. The file-system view is built here with bind mounts: ProtectSystem=strict
# (a read-only root) with ReadWritePaths=/etc/monky-deployd and the StateDirectory writable,
# PrivateTmp (a fresh /tmp) and ProtectHome (empty /root and /home).
# Then the real binary enrols a real identity with the embedded SDK against the project's Ziti
# test network and dials a service through it: the memory rules are checked with the embedded SDK running.

SB_UNIT="$REPO/packaging/systemd/monky-deployd.service"
SB_ROOT="$A"
SB_VIEW="$WORK/sandbox-view"
ZITI_DIR="${MONKY_ZITI_DIR:-$REPO/target/ziti-net}"
ZITI_NET="$REPO/scripts/ziti-net.sh"

gcc -static -O -o "$SB_ROOT/usr/local/bin/sandbox-probe" "$HERE/sandbox_probe.c" || fatal "cannot build sandbox_probe.c"
mkdir -p "$SB_VIEW"
mount --rbind "$SB_ROOT" "$SB_VIEW"
mount -o remount,bind,ro "$SB_VIEW"
mount --bind "$SB_ROOT/etc/monky-deployd" "$SB_VIEW/etc/monky-deployd"
mount --bind "$SB_ROOT/var/lib/monky-deployd" "$SB_VIEW/var/lib/monky-deployd"
mount -t tmpfs -o mode=1777 tmpfs "$SB_VIEW/tmp"
mount -t tmpfs -o mode=0755 tmpfs "$SB_VIEW/root"
mount -t tmpfs -o mode=0755 tmpfs "$SB_VIEW/home"

sandboxed() { /usr/bin/python3 "$HERE/unit_sandbox.py" "$SB_UNIT" "$SB_VIEW" -- "$@"; }
as_agent() { in_root "$SB_ROOT" setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups "$@"; }

as_agent /usr/local/bin/sandbox-probe >"$WORK/probe-plain.out" 2>&1 || fatal "sandbox-probe failed without the sandbox"
sandboxed /usr/local/bin/sandbox-probe >"$WORK/probe-sandboxed.out" 2>&1 || { cat "$WORK/probe-sandboxed.out"; fatal "sandbox-probe failed in the sandbox"; }
probe_says() { grep -qx -- "$2" "$WORK/probe-$1.out" || { echo "probe ($1) lacks '$2':"; cat "$WORK/probe-$1.out"; return 1; }; }
check "without the sandbox the probe may map W+X memory and open netlink (control)" \
  bash -c "$(declare -f probe_says); WORK='$WORK'; probe_says plain 'mmap-wx allowed' && probe_says plain 'socket-netlink allowed' && probe_says plain 'personality allowed'"
check "sandbox: no W+X mapping, no mprotect to exec (MemoryDenyWriteExecute)" \
  bash -c "$(declare -f probe_says); WORK='$WORK'; probe_says sandboxed 'mmap-wx denied: Operation not permitted' && probe_says sandboxed 'mprotect-exec denied: Operation not permitted'"
check "sandbox: netlink refused, inet and unix allowed (RestrictAddressFamilies)" \
  bash -c "$(declare -f probe_says); WORK='$WORK'; probe_says sandboxed 'socket-netlink denied: Address family not supported by protocol' && probe_says sandboxed 'socket-inet allowed' && probe_says sandboxed 'socket-unix allowed'"
check "sandbox: personality locked, /usr read-only, state dir and /tmp writable" \
  bash -c "$(declare -f probe_says); WORK='$WORK'; probe_says sandboxed 'personality denied: Operation not permitted' && probe_says sandboxed 'write-usr denied: Read-only file system' && probe_says sandboxed 'write-state allowed' && probe_says sandboxed 'write-tmp allowed'"

check "sandboxed agent: version" bash -c "$(declare -f sandboxed); HERE='$HERE' SB_UNIT='$SB_UNIT' SB_VIEW='$SB_VIEW'; sandboxed /usr/bin/monky-deployd version | grep -qF '$VERSION'"
check "sandboxed agent: status --json reads config and state" bash -c "
  $(declare -f sandboxed); HERE='$HERE' SB_UNIT='$SB_UNIT' SB_VIEW='$SB_VIEW'
  out=\$(sandboxed /usr/bin/monky-deployd status --json) || exit 1; echo \"\$out\" | grep -q '\"env_id\": \"$ENV_ID\"'"

# Enrolment and a dial with the embedded SDK, inside the sandbox.
if "$BIN" version | grep -q 'ziti sdk: [0-9]'; then
  if [ ! -x "${ZITI_BIN:-$CACHE/bin/ziti}" ]; then
    echo "the ziti CLI is missing: running scripts/provision.sh"
    bash "$REPO/scripts/provision.sh" || fatal "scripts/provision.sh"
  fi
  ZITI_STARTED_HERE=0
  "$ZITI_NET" status "$ZITI_DIR" >/dev/null 2>&1 || ZITI_STARTED_HERE=1
  "$ZITI_NET" start "$ZITI_DIR" >"$WORK/ziti-start.out" 2>&1 || { cat "$WORK/ziti-start.out"; fatal "ziti-net.sh start"; }
  # a loopback HTTP server for the Ziti router to host (bounded: killed when run.sh ends)
  SB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$WORK/www"
  (cd "$WORK/www" && exec timeout 900 python3 -m http.server --bind 127.0.0.1 "$SB_PORT" >/dev/null 2>&1) &
  SB_HTTP_PID=$!
  "$ZITI_NET" service "$ZITI_DIR" monky-pkg-sandbox-svc 127.0.0.1 "$SB_PORT" >"$WORK/ziti-svc.out" 2>&1 \
    || { cat "$WORK/ziti-svc.out"; fatal "ziti-net.sh service"; }
  "$ZITI_NET" jwt "$ZITI_DIR" monky-pkg-sandbox "$WORK/sandbox.jwt" monky-pkg-sandbox-svc >"$WORK/ziti-jwt.out" 2>&1 \
    || { cat "$WORK/ziti-jwt.out"; fatal "ziti-net.sh jwt"; }
  grep -q localhost "$SB_ROOT/etc/hosts" 2>/dev/null || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >>"$SB_ROOT/etc/hosts"
  install -m 0600 "$WORK/sandbox.jwt" "$SB_ROOT/etc/monky-deployd/enrol.jwt"
  in_root "$SB_ROOT" chown monky-deployd:monky-deployd /etc/monky-deployd/enrol.jwt
  check "sandboxed agent enrols a real identity with the embedded SDK (W+X denied, syscall filter on)" bash -c "
    timeout 120 /usr/bin/python3 '$HERE/unit_sandbox.py' '$SB_UNIT' '$SB_VIEW' -- /usr/bin/monky-deployd enroll --jwt /etc/monky-deployd/enrol.jwt --out /var/lib/monky-deployd/enrolled.json &&
    grep -q '\"cert\"' '$SB_ROOT/var/lib/monky-deployd/enrolled.json'"
  # point the agent at the enrolled identity and the hosted service (both endpoints)
  cat >"$SB_ROOT/etc/monky-deployd/config.yaml" <<CFG
env_id: $ENV_ID
site: cbs
transport: sdk
identity: /var/lib/monky-deployd/enrolled.json
tenancy:
  service: monky-pkg-sandbox-svc
  host: tenancy.cbs.tikali.net
  timeout_s: 10
bao:
  service: monky-pkg-sandbox-svc
  host: bao.cbs.tikali.net
  ca_file: ""
  timeout_s: 10
state_dir: /var/lib/monky-deployd
CFG
  in_root "$SB_ROOT" chown root:monky-deployd /etc/monky-deployd/config.yaml
  check "sandboxed agent loads the identity and dials through the mesh (status --json)" bash -c "
    out=\$(timeout 120 /usr/bin/python3 '$HERE/unit_sandbox.py' '$SB_UNIT' '$SB_VIEW' -- /usr/bin/monky-deployd status --json) || { echo \"\$out\"; exit 1; }
    echo \"\$out\"
    echo \"\$out\" | grep -q '\"ziti_sdk\": \"[0-9]' && ! echo \"\$out\" | grep -q 'not loaded within'"
  check "a tick ends the same way inside and outside the sandbox" bash -c "
    rc_plain=0; timeout 180 chroot '$SB_ROOT' setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups /usr/bin/monky-deployd run --once >'$WORK/tick-plain.out' 2>&1 || rc_plain=\$?
    rc_sb=0; timeout 180 /usr/bin/python3 '$HERE/unit_sandbox.py' '$SB_UNIT' '$SB_VIEW' -- /usr/bin/monky-deployd run --once >'$WORK/tick-sandboxed.out' 2>&1 || rc_sb=\$?
    echo \"plain rc=\$rc_plain sandboxed rc=\$rc_sb\"; tail -n 3 '$WORK/tick-plain.out' '$WORK/tick-sandboxed.out'
    case \$rc_sb in 0|1|75|78) ;; *) echo 'not an agent exit code'; exit 1 ;; esac
    [ \$rc_plain -eq \$rc_sb ] && [ -s '$WORK/tick-sandboxed.out' ] &&
    ! grep -Eqi 'operation not permitted|read-only file system|bad system call|permission denied' '$WORK/tick-sandboxed.out'"
  # the long-lived service under its own unit's sandbox: READY=1 after its first tick, a reload
  # that re-executes it (execve under the syscall filter and NoNewPrivileges), SIGTERM -> exit 0
  check "sandboxed service (monky-deployd-run.service): ready after its first tick, re-executes on a reload, exits 0 on SIGTERM" \
    timeout 600 /usr/bin/python3 "$HERE/notify_probe.py" "$SB_VIEW" "$SB_ROOT/etc/monky-deployd/config.yaml" -- \
    /usr/bin/python3 "$HERE/unit_sandbox.py" "$REPO/packaging/systemd/monky-deployd-run.service" "$SB_VIEW" -- /usr/bin/monky-deployd run
  kill "$SB_HTTP_PID" 2>/dev/null || true
  # leave the shared network as it was found
  if [ "$ZITI_STARTED_HERE" -eq 1 ]; then "$ZITI_NET" stop "$ZITI_DIR" >/dev/null 2>&1 || true; fi
else
  check "the binary links the embedded SDK (a default-features build does)" false
fi
