#!/usr/bin/env bash
# A real OpenZiti network for tests and benches: `ziti edge quickstart` (controller + edge router in
# one process) with every piece of state under DIR. Idempotent: `start` reuses a running network
# and restarts a stopped one from the same DIR (same PKI, same database, same identities).
#
#   ziti-net.sh start    DIR                      start or reuse; prints ZITI_* lines
#   ziti-net.sh split    DIR                      run the controller and the edge router as two
#                                                 processes (`ziti controller run` / `ziti router
#                                                 run` on the quickstart's configs), starting the
#                                                 one(s) not running; a split DIR stays split
#   ziti-net.sh stop-ctrl|stop-router DIR         stop one of the two (split DIR)
#   ziti-net.sh stop     DIR                      stop every process of DIR (state kept)
#   ziti-net.sh status   DIR                      exit 0 when the controller answers
#   ziti-net.sh service  DIR NAME HOST PORT       (re)create a host.v1 service hosted by the router
#   ziti-net.sh identity DIR NAME OUT.json [SVC…] (re)create an identity with Dial on SVC…, enrol it
#                                                 with the ziti CLI into OUT.json
#   ziti-net.sh jwt      DIR NAME OUT.jwt  [SVC…] the same, but only write the one-time JWT
#   ziti-net.sh ziti     DIR ARGS…                run the ziti CLI logged in to this network
#
# Env: ZITI_BIN (default /var/cache/monky-deployd-dev/bin/ziti, see scripts/provision.sh),
#      ZITI_CTRL_PORT (1280), ZITI_ROUTER_PORT (3022): fixed at the first start of a DIR.
set -euo pipefail

ZITI_BIN="${ZITI_BIN:-/var/cache/monky-deployd-dev/bin/ziti}"

die() { printf 'ziti-net: %s\n' "$*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 start|stop|status|service|identity|jwt|ziti DIR [args]"
cmd=$1
DIR=$2
shift 2
[ -x "$ZITI_BIN" ] || die "no ziti CLI at $ZITI_BIN (run scripts/provision.sh)"
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# Ports are fixed at the first start of a DIR (its PKI and router config name them).
if [ -f "$DIR/ports" ]; then
  read -r CTRL_PORT ROUTER_PORT <"$DIR/ports"
else
  CTRL_PORT="${ZITI_CTRL_PORT:-1280}"
  ROUTER_PORT="${ZITI_ROUTER_PORT:-3022}"
fi
CTRL="https://localhost:$CTRL_PORT"

# The CLI keeps its login under $HOME/.config/ziti: keep it inside DIR.
z() { HOME="$DIR/home" "$ZITI_BIN" "$@"; }

# running [PIDFILE]: the quickstart process (pid), or ctrl.pid / router.pid of a split DIR
running() { [ -f "$DIR/${1:-pid}" ] && kill -0 "$(cat "$DIR/${1:-pid}")" 2>/dev/null; }
answering() { curl -sfk --max-time 2 "$CTRL/edge/client/v1/version" >/dev/null 2>&1; }

login() {
  z edge login "localhost:$CTRL_PORT" -u admin -p admin -y >/dev/null 2>&1 \
    || die "cannot log in to $CTRL (see $DIR/quickstart.log)"
}

router_name() {
  z edge list edge-routers -j 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(d[0]["name"] if d else "")'
}

# Serialise concurrent callers (parallel test binaries) on one lock per DIR.
exec 9>"$DIR/lock"
flock 9

start() {
  if [ -f "$DIR/split" ]; then split; return; fi
  if running && answering; then
    login
  else
    if running; then kill "$(cat "$DIR/pid")" 2>/dev/null || true; sleep 1; fi
    if answering; then die "something else already answers on $CTRL"; fi
    mkdir -p "$DIR/home"
    HOME="$DIR/home" setsid nohup "$ZITI_BIN" edge quickstart --home "$DIR/qs" \
      --ctrl-address localhost --ctrl-port "$CTRL_PORT" \
      --router-address localhost --router-port "$ROUTER_PORT" \
      >>"$DIR/quickstart.log" 2>&1 </dev/null 9>&- &
    echo $! >"$DIR/pid"
    echo "$CTRL_PORT $ROUTER_PORT" >"$DIR/ports"
    for _ in $(seq 120); do answering && break; sleep 0.5; done
    answering || die "controller did not answer on $CTRL within 60s (see $DIR/quickstart.log)"
    login
  fi
  router_online
}

# The router must be online before services it hosts can be dialled; prints the ZITI_* lines.
router_online() {
  local name=""
  for _ in $(seq 120); do
    name=$(router_name)
    if [ -n "$name" ] && z edge list edge-routers "name=\"$name\"" -j | grep -q '"isOnline": *true'; then break; fi
    sleep 0.5
  done
  [ -n "$name" ] || die "no edge router registered (see $DIR/quickstart.log)"
  echo "$name" >"$DIR/router"
  echo "ZITI_NET_DIR=$DIR"
  echo "ZITI_CTRL=$CTRL"
  echo "ZITI_ROUTER=$name"
  echo "ZITI_VERSION=$("$ZITI_BIN" version)"
}

# stop PIDFILE: TERM, then KILL after 10 s
stop_pid() {
  if running "$1"; then
    local pid
    pid=$(cat "$DIR/$1")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/$1"
}

split() {
  [ -f "$DIR/qs/ctrl.yaml" ] || die "no quickstart in $DIR: run start first"
  stop_pid pid
  touch "$DIR/split"
  if ! running ctrl.pid; then
    if answering; then die "something else already answers on $CTRL"; fi
    HOME="$DIR/home" setsid nohup "$ZITI_BIN" controller run "$DIR/qs/ctrl.yaml" \
      >>"$DIR/ctrl.log" 2>&1 </dev/null 9>&- &
    echo $! >"$DIR/ctrl.pid"
  fi
  for _ in $(seq 120); do answering && break; sleep 0.5; done
  answering || die "controller did not answer on $CTRL within 60s (see $DIR/ctrl.log)"
  login
  if ! running router.pid; then
    local cfg
    cfg=$(find "$DIR/qs" -maxdepth 1 -name 'router-*.yaml' | head -1)
    HOME="$DIR/home" setsid nohup "$ZITI_BIN" router run "$cfg" \
      >>"$DIR/router.log" 2>&1 </dev/null 9>&- &
    echo $! >"$DIR/router.pid"
    # the controller may still list the old process as online: wait for the new one's listener
    for _ in $(seq 120); do (exec 3<>"/dev/tcp/127.0.0.1/$ROUTER_PORT") 2>/dev/null && break; sleep 0.5; done
  fi
  router_online
}

delete_quiet() { z edge delete "$@" >/dev/null 2>&1 || true; }

case "$cmd" in
  start) start ;;
  split) split ;;
  stop) stop_pid pid; stop_pid router.pid; stop_pid ctrl.pid ;;
  stop-ctrl) stop_pid ctrl.pid ;;
  stop-router) stop_pid router.pid ;;
  status) (running || running ctrl.pid) && answering ;;
  service)
    [ $# -eq 3 ] || die "usage: $0 service DIR NAME HOST PORT"
    name=$1 host=$2 port=$3
    login
    router=$(cat "$DIR/router" 2>/dev/null || router_name)
    delete_quiet service-policy "$name.bind"
    delete_quiet service "$name"
    delete_quiet config "$name.host"
    z edge create config "$name.host" host.v1 \
      "{\"protocol\":\"tcp\",\"address\":\"$host\",\"port\":$port}" >/dev/null
    sid=$(z edge create service "$name" --configs "$name.host" | sed -n 's/.* with id: *//p')
    [ -n "$sid" ] || die "could not create service $name"
    z edge create service-policy "$name.bind" Bind --service-roles "@$name" --identity-roles "@$router" >/dev/null
    # Wait for the router to report the terminator of *this* service (by id: a deleted namesake
    # may still list one), so the first dial does not race it.
    has_terminator() {
      z edge list terminators "service=\"$sid\"" -j 2>/dev/null \
        | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("data") else 1)'
    }
    for _ in $(seq 120); do has_terminator && break; sleep 0.25; done
    has_terminator || die "router $router did not bind service $name within 30s"
    ;;
  identity | jwt)
    [ $# -ge 2 ] || die "usage: $0 $cmd DIR NAME OUT [SERVICE…]"
    name=$1 out=$2
    shift 2
    login
    delete_quiet service-policy "$name.dial"
    delete_quiet identity "$name"
    jwt="$DIR/$name.jwt"
    rm -f "$jwt"
    z edge create identity "$name" -o "$jwt" >/dev/null
    if [ $# -gt 0 ]; then
      roles=$(printf '@%s,' "$@")
      z edge create service-policy "$name.dial" Dial --identity-roles "@$name" --service-roles "${roles%,}" >/dev/null
    fi
    if [ "$cmd" = jwt ]; then
      cp "$jwt" "$out"
    else
      rm -f "$out"
      z edge enroll "$jwt" -o "$out" >/dev/null 2>&1 || die "ziti edge enroll of $name failed"
      chmod 600 "$out"
    fi
    ;;
  ziti)
    login
    z "$@"
    ;;
  *) die "unknown command $cmd" ;;
esac
