#!/usr/bin/env bash
# Starts the real services the tests and the demo use, idempotently:
#   dockerd on /var/run/docker.sock, an open registry on 127.0.0.1:5001, a registry behind
#   htpasswd on 127.0.0.1:5000 (user monky / pw from $RUN/registry.pw), and the busybox test
#   image pushed to both as .../monky/busybox:1.
set -euo pipefail
RUN="${MONKY_RUN:-/run/monky-deployd-dev}"
mkdir -p "$RUN"
log() { printf '[services] %s\n' "$*" >&2; }
ping_docker() { curl -fsS --max-time 2 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }

if ! ping_docker; then
  log "starting dockerd"
  nohup dockerd --host unix:///var/run/docker.sock >"$RUN/dockerd.log" 2>&1 &
  for _ in $(seq 1 100); do ping_docker && break; sleep 0.2; done
  ping_docker || { log "dockerd did not come up:"; tail -20 "$RUN/dockerd.log" >&2; exit 1; }
fi

start_registry() { # name port auth(0|1)
  local name=$1 port=$2 auth=$3 dir="$RUN/registry-$1"
  if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/v2/" 2>/dev/null \
     || [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/v2/")" = 401 ]; then
    return 0
  fi
  mkdir -p "$dir/data"
  {
    echo "version: 0.1"
    echo "storage: {filesystem: {rootdirectory: $dir/data}, delete: {enabled: true}}"
    echo "http: {addr: 127.0.0.1:$port}"
    echo "log: {level: warn}"
    if [ "$auth" = 1 ]; then
      echo "auth: {htpasswd: {realm: monky-test, path: $dir/htpasswd}}"
    fi
  } >"$dir/config.yml"
  if [ "$auth" = 1 ]; then
    [ -s "$RUN/registry.pw" ] || head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$RUN/registry.pw"
    htpasswd -Bbn monky "$(cat "$RUN/registry.pw")" >"$dir/htpasswd"
  fi
  log "starting registry $name on 127.0.0.1:$port"
  nohup docker-registry serve "$dir/config.yml" >"$dir/log" 2>&1 &
  for _ in $(seq 1 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/v2/" || true)
    [ "$code" = 200 ] || [ "$code" = 401 ] && return 0
    sleep 0.2
  done
  log "registry $name did not come up"; cat "$dir/log" >&2; exit 1
}
start_registry open 5001 0
start_registry auth 5000 1

# the test image: busybox on scratch (there is no public registry here)
IMAGE_REV=2  # bump when the Dockerfile below changes
if [ "$(docker image inspect -f '{{index .Config.Labels "monky.rev"}}' monky/busybox:1 2>/dev/null)" != "$IMAGE_REV" ]; then
  log "building monky/busybox:1"
  ctx=$(mktemp -d)
  cp /bin/busybox "$ctx/busybox"
  printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox","--install","-s","/bin"]\nRUN ["/bin/mkdir","-p","/tmp","/data","/www"]\nLABEL monky.rev=%s\nCMD ["sh"]\n' "$IMAGE_REV" >"$ctx/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t monky/busybox:1 "$ctx" >/dev/null
  rm -rf "$ctx"
fi
push() { # ref [auth]
  local ref=$1
  if [ "$(docker image inspect -f '{{index .Config.Labels "monky.rev"}}' "$ref:1" 2>/dev/null)" != "$IMAGE_REV" ] || ! curl -fsS -o /dev/null ${2:+-u "monky:$(cat "$RUN/registry.pw")"} \
      "http://${ref%%/*}/v2/${ref#*/}/manifests/1" -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' 2>/dev/null; then
    docker tag monky/busybox:1 "$ref:1"
    if [ -n "${2:-}" ]; then
      d=$(mktemp -d); a=$(printf 'monky:%s' "$(cat "$RUN/registry.pw")" | base64 -w0)
      printf '{"auths":{"127.0.0.1:5000":{"auth":"%s"}}}' "$a" >"$d/config.json"
      DOCKER_CONFIG=$d docker push -q "$ref:1" >/dev/null; rm -rf "$d"
    else
      docker push -q "$ref:1" >/dev/null
    fi
    log "pushed $ref:1"
  fi
}
push 127.0.0.1:5001/monky/busybox
push 127.0.0.1:5000/monky/private auth
log "ok"
