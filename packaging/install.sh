#!/usr/bin/env bash
# install.sh — put monky-deployd on a box from the enrolment kit, idempotently.
#
#   sudo bash install.sh --env env-qa-02 --site cbs --bootstrap-file bootstrap.jwt \
#        --enrol-jwt monky-host.env-qa-02.jwt [--token T] [--transport sdk|proxy|system] \
#        [--version 0.6.0] [--deb FILE] [--docker-data-root DIR] [--laptop] [--mode service|timer] \
#        [--bao-ca openbao-ca.pem] [--source gitlab|gitea] [--metrics-textfile PATH] [--dry-run]
#        [--instance NAME [--proxy-ports TENANCY:BAO]]
#   sudo bash install.sh --remove --instance NAME [--purge] [--dry-run]
#
# --instance NAME installs one more environment beside the others on this box: its config in
# /etc/monky-deployd/NAME/, its state in /var/lib/monky-deployd/NAME, its units
# monky-deployd@NAME.timer, monky-deployd-run@NAME, monky-deployd-laptop@NAME and
# monky-deployd-proxy@NAME (transport proxy: on its own loopback ports, picked when not given).
# Without it the box's default (unnamed) instance is installed, as always.
# --remove --instance NAME stops and disables that instance's units only; its config, state and
# containers stay (a later --instance NAME takes them up again). With --purge its containers and
# networks are removed and its config and state deleted; its volumes and Ziti identity stay.
#
# Every step first looks at what is already there and changes only what differs, so running it
# twice with the same flags changes nothing the second time. --dry-run prints what would change
# and changes nothing. See docs/OPERATIONS.md.
#
# Environment:
#   MONKY_DEPLOYD_TOKEN     download token (same as --token; keeps it out of `ps`)
#   MONKY_DEPLOYD_BASE_URL  override the release download location (mirrors, tests)
set -euo pipefail
umask 077

DEFAULT_VERSION="0.6.0"
PKG=monky-deployd
AGENT_USER=monky-deployd
ETC_DIR=/etc/monky-deployd
STATE_DIR=/var/lib/monky-deployd
UPDATE_KEEP=/var/lib/monky-deployd-update
PROXY_ENV=/etc/default/monky-deployd-proxy
IDENTITY_DIR=/opt/openziti/etc/identities
TUNNEL_DROPIN_DIR=/etc/systemd/system/ziti-edge-tunnel.service.d
TUNNEL_DROPIN="$TUNNEL_DROPIN_DIR/run-host.conf"
ZITI_KEYRING=/usr/share/keyrings/openziti.asc
ZITI_SOURCES=/etc/apt/sources.list.d/openziti-release.list
ZITI_REPO_URL="https://packages.openziti.org/zitipax-openziti-deb-stable"
ZITI_KEY_URL="https://get.openziti.io/tun/package-repos.gpg"
GITLAB_BASE="https://scm.tikali.ai/api/v4/projects/69/packages/generic/monky-deployd"
GITEA_BASE="https://gitea.cbs.tikali.net/mdella/monky-deployd/releases/download"

ENV_ID=""
SITE=""
ENROL_JWT=""
TOKEN="${MONKY_DEPLOYD_TOKEN:-}"
BOOTSTRAP_FILE=""
TRANSPORT="sdk"
VERSION="$DEFAULT_VERSION"
DEB_FILE=""
DOCKER_DATA_ROOT=""
LAPTOP=0
MODE=""
BAO_CA_SRC=""
SOURCE="gitlab"
METRICS_TEXTFILE=""
INSTANCE=""
PROXY_PORTS=""
REMOVE=0
PURGE=0
DRY_RUN=0
CHANGED=0

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }

need_arg() { if [ "$#" -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value"; fi; }

while [ "$#" -gt 0 ]; do
  case "$1" in
    --env) need_arg "$@"; ENV_ID=$2; shift 2 ;;
    --site) need_arg "$@"; SITE=$2; shift 2 ;;
    --enrol-jwt) need_arg "$@"; ENROL_JWT=$2; shift 2 ;;
    --token) need_arg "$@"; TOKEN=$2; shift 2 ;;
    --bootstrap-file) need_arg "$@"; BOOTSTRAP_FILE=$2; shift 2 ;;
    --transport) need_arg "$@"; TRANSPORT=$2; shift 2 ;;
    --version) need_arg "$@"; VERSION=$2; shift 2 ;;
    --deb) need_arg "$@"; DEB_FILE=$2; shift 2 ;;
    --docker-data-root) need_arg "$@"; DOCKER_DATA_ROOT=$2; shift 2 ;;
    --laptop) LAPTOP=1; shift ;;
    --mode) need_arg "$@"; MODE=$2; shift 2 ;;
    --bao-ca) need_arg "$@"; BAO_CA_SRC=$2; shift 2 ;;
    --source) need_arg "$@"; SOURCE=$2; shift 2 ;;
    --metrics-textfile) need_arg "$@"; METRICS_TEXTFILE=$2; shift 2 ;;
    --instance) need_arg "$@"; INSTANCE=$2; shift 2 ;;
    --proxy-ports) need_arg "$@"; PROXY_PORTS=$2; shift 2 ;;
    --remove) REMOVE=1; shift ;;
    --purge) PURGE=1; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

# ---- helpers ----------------------------------------------------------------------------------
# act CMD...: run a command that changes the system (or print it in a dry run).
act() {
  CHANGED=1
  if [ "$DRY_RUN" -eq 1 ]; then say "would run: $*"; return 0; fi
  "$@"
}

# sysd ARGS...: systemctl, which is idempotent by itself (enable, daemon-reload, start a tick),
# so it does not count as a change.
sysd() {
  if [ "$DRY_RUN" -eq 1 ]; then say "would run: systemctl $*"; return 0; fi
  systemctl "$@"
}

# ensure_dir PATH MODE OWNER GROUP
ensure_dir() {
  local path=$1 mode=$2 owner=$3 group=$4
  if [ ! -d "$path" ]; then
    act install -d -m "$mode" -o "$owner" -g "$group" "$path"
    return 0
  fi
  if [ "$(stat -c '%a %U %G' "$path")" != "$(printf '%o' "0$mode") $owner $group" ]; then
    act chown "$owner:$group" "$path"
    act chmod "$mode" "$path"
  fi
}

# put_file CONTENT_FILE DEST MODE OWNER GROUP: atomic replace when content or metadata differ.
# Returns 0 when something changed, 1 when the file was already right.
put_file() {
  local src=$1 dest=$2 mode=$3 owner=$4 group=$5 tmp
  if [ -f "$dest" ] && cmp -s "$src" "$dest" \
    && [ "$(stat -c '%a %U %G' "$dest")" = "$(printf '%o' "0$mode") $owner $group" ]; then
    return 1
  fi
  CHANGED=1
  if [ "$DRY_RUN" -eq 1 ]; then say "would write $dest ($mode $owner:$group)"; return 0; fi
  tmp=$(mktemp "$(dirname "$dest")/.$(basename "$dest").XXXXXX")
  cat -- "$src" >"$tmp"
  chown "$owner:$group" "$tmp"
  chmod "$mode" "$tmp"
  mv -f -- "$tmp" "$dest"
  say "wrote $dest"
  return 0
}

# put_text DEST MODE OWNER GROUP <<<TEXT
put_text() {
  local rc=0
  printf '%s' "$(cat)" >"$WORK/text"
  printf '\n' >>"$WORK/text"
  put_file "$WORK/text" "$@" || rc=$?
  return "$rc"
}

# ensure_acl PATH ENTRY (e.g. u:monky-deployd:r--)
ensure_acl() {
  local path=$1 entry=$2 who perms
  who=${entry%:*}
  perms=${entry##*:}
  if getfacl -cp -- "$path" 2>/dev/null | grep -qx "$who:$perms"; then return 0; fi
  act setfacl -m "$entry" -- "$path"
}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_install() {
  act env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

APT_UPDATED=0
apt_update_once() {
  [ "$APT_UPDATED" -eq 1 ] && return 0
  APT_UPDATED=1
  act apt-get update
}

download() { # URL DEST
  local url=$1 dest=$2
  local -a hdr=()
  [ -n "$TOKEN" ] && [ "$SOURCE" = gitlab ] && hdr=(-H "DEPLOY-TOKEN: $TOKEN")
  curl -fsSL --retry 3 --proto '=https' "${hdr[@]}" -o "$dest" "$url"
}

# ---- validation: everything is checked before anything is touched -----------------------------
# Instances: names as the agent's --instance takes them. Reserved: the names the default instance
# already uses inside /var/lib/monky-deployd and /etc/monky-deployd (an instance's directory sits
# beside them); the agent keeps the same list (src/host/instance.rs).
RESERVED_INSTANCES="current docker guard lock releases staging update"
if [ -n "$INSTANCE" ]; then
  [[ "$INSTANCE" =~ ^[a-z0-9][a-z0-9_-]{0,30}$ ]] \
    || die "--instance '$INSTANCE' is not a valid instance name (a-z, 0-9, _ and -, at most 31, first a letter or digit)"
  for r in $RESERVED_INSTANCES; do
    [ "$INSTANCE" != "$r" ] || die "--instance '$INSTANCE' is reserved (the default instance has an entry of that name)"
  done
  I_ETC="$ETC_DIR/$INSTANCE"
  I_STATE="$STATE_DIR/$INSTANCE"
  AT="@$INSTANCE"
  PROXY_ENV="/etc/default/monky-deployd-proxy-$INSTANCE"
  AGENT_CMD="monky-deployd --instance $INSTANCE"
else
  I_ETC=$ETC_DIR
  I_STATE=$STATE_DIR
  AT=""
  AGENT_CMD="monky-deployd"
fi
CONFIG="$I_ETC/config.yaml"
GRANT="$I_ETC/bootstrap.jwt"
BAO_CA="$I_ETC/openbao-ca.pem"
# this instance's units (the default instance's are the unnamed ones)
U_TICK="monky-deployd$AT.service"
U_TIMER="monky-deployd$AT.timer"
U_RUN="monky-deployd-run$AT.service"
U_LAPTOP="monky-deployd-laptop$AT.service"
U_PROXY="monky-deployd-proxy$AT.service"

# --remove --instance NAME: this instance's units off; the rest of the box untouched.
remove_instance() {
  local env="" project="" ids u dropin
  sysd disable --now "$U_TIMER" "$U_TICK" "$U_RUN" "$U_LAPTOP" "$U_PROXY"
  for u in "$U_TICK" "$U_RUN" "$U_LAPTOP"; do
    dropin="/etc/systemd/system/$u.d/metrics.conf"
    if [ -e "$dropin" ] && grep -q "install.sh (--metrics-textfile)" "$dropin"; then
      act rm -f -- "$dropin"
      act rmdir --ignore-fail-on-non-empty -- "/etc/systemd/system/$u.d"
    fi
  done
  sysd daemon-reload
  if [ -f "$CONFIG" ]; then
    env=$(sed -n 's/^env_id: *\([a-z0-9-]*\) *$/\1/p' "$CONFIG" | head -n1)
    project=$(sed -n 's/^compose_project: *\([A-Za-z0-9_-]*\) *$/\1/p' "$CONFIG" | head -n1)
    [ -n "$project" ] || [ -z "$env" ] || project="monky-$env"
  fi
  if [ "$PURGE" -eq 0 ]; then
    say "instance $INSTANCE stopped and disabled; kept: $I_ETC, $I_STATE$([ -z "$project" ] || printf ' and the containers of compose project %s (they keep running, no longer managed)' "$project")"
    say "install.sh --instance $INSTANCE takes it up again; --remove --instance $INSTANCE --purge deletes it"
    return 0
  fi
  if [ -n "$project" ] && command -v docker >/dev/null; then
    ids=$(docker ps -aq --filter "label=com.docker.compose.project=$project")
    # shellcheck disable=SC2086 # one id per word
    [ -z "$ids" ] || act docker rm -f $ids >/dev/null
    ids=$(docker network ls -q --filter "label=com.docker.compose.project=$project")
    # shellcheck disable=SC2086
    [ -z "$ids" ] || act docker network rm $ids >/dev/null
    ids=$(docker volume ls -q --filter "label=com.docker.compose.project=$project" | tr '\n' ' ')
    [ -z "$ids" ] || say "volumes of $project kept (delete them with docker volume rm): $ids"
  elif [ -n "$project" ]; then
    say "no docker command: the containers of $project were not removed"
  fi
  for d in "$I_ETC" "$I_STATE" "$PROXY_ENV"; do
    [ ! -e "$d" ] || act rm -rf -- "$d"
  done
  say "instance $INSTANCE purged (its Ziti identity stays in $IDENTITY_DIR)"
}
if [ "$REMOVE" -eq 1 ]; then
  [ -n "$INSTANCE" ] || die "--remove needs --instance NAME (the default instance goes with the package: apt-get remove monky-deployd)"
  if [ -n "$ENV_ID$SITE$ENROL_JWT$BOOTSTRAP_FILE$DEB_FILE$MODE$PROXY_PORTS$BAO_CA_SRC$METRICS_TEXTFILE$DOCKER_DATA_ROOT" ] || [ "$LAPTOP" -eq 1 ]; then
    die "--remove takes only --instance, --purge and --dry-run"
  fi
  [ "$(id -u)" -eq 0 ] || die "run as root (sudo)"
  [ "$DRY_RUN" -eq 1 ] && say "dry run: nothing will be changed"
  remove_instance
  if [ "$DRY_RUN" -eq 1 ]; then say "dry run done"; else say "done"; fi
  exit 0
fi
[ "$PURGE" -eq 0 ] || die "--purge goes with --remove --instance NAME"
[ -n "$ENV_ID" ] || die "--env is required"
[[ "$ENV_ID" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || die "--env '$ENV_ID' is not a valid environment id"
[ -n "$SITE" ] || die "--site is required"
[[ "$SITE" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || die "--site '$SITE' is not a valid site name"
case "$TRANSPORT" in sdk|proxy|system) ;; *) die "--transport must be sdk, proxy or system" ;; esac
case "$SOURCE" in gitlab|gitea) ;; *) die "--source must be gitlab or gitea" ;; esac
case "$MODE" in ""|service|timer) ;; *) die "--mode must be service or timer" ;; esac
[ "$LAPTOP" -eq 0 ] || [ -z "$MODE" ] || die "--laptop runs its own loop unit: --mode does not apply"
# The long-lived service keeps the Ziti context between ticks: the default for sdk, where a fresh
# process pays the identity load every tick. proxy and system gain nothing from it.
if [ -z "$MODE" ]; then
  if [ "$TRANSPORT" = sdk ]; then MODE=service; else MODE=timer; fi
fi
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+([~+.-][0-9A-Za-z.~+-]+)?$ ]] || die "--version '$VERSION' is not a version"
[ -z "$DOCKER_DATA_ROOT" ] || [[ "$DOCKER_DATA_ROOT" == /* ]] || die "--docker-data-root must be absolute"
if [ -n "$METRICS_TEXTFILE" ]; then
  if ! [[ "$METRICS_TEXTFILE" =~ ^/[A-Za-z0-9._/-]+\.prom$ ]] || [[ "$METRICS_TEXTFILE" == *..* ]]; then
    die "--metrics-textfile must be an absolute path ending in .prom (letters, digits, . _ - /)"
  fi
fi
for f in "$ENROL_JWT" "$BAO_CA_SRC" "$DEB_FILE"; do
  [ -z "$f" ] || [ -r "$f" ] || die "cannot read $f"
done
if [ -n "$BOOTSTRAP_FILE" ] && [ "$BOOTSTRAP_FILE" != "-" ]; then
  [ -r "$BOOTSTRAP_FILE" ] || die "cannot read $BOOTSTRAP_FILE"
fi
[ "$(id -u)" -eq 0 ] || die "run as root (sudo)"
command -v dpkg >/dev/null || die "dpkg not found: this installer supports Debian and Ubuntu"
# One environment, one instance: two would share a compose project, an identity and a token.
for c in "$ETC_DIR/config.yaml" "$ETC_DIR"/*/config.yaml; do
  if [ ! -f "$c" ] || [ "$c" = "$CONFIG" ]; then continue; fi
  if grep -qx "env_id: $ENV_ID" "$c"; then die "environment $ENV_ID already runs on this box ($c)"; fi
done
# transport proxy: each instance's ziti proxy listens on its own two loopback ports; the default
# instance keeps 18443 (tenancy) and 18200 (OpenBao).
TPORT=""
BPORT=""
if [ -n "$PROXY_PORTS" ]; then
  [ -n "$INSTANCE" ] || die "--proxy-ports is for an --instance (the default instance uses 18443:18200)"
  [ "$TRANSPORT" = proxy ] || die "--proxy-ports goes with --transport proxy"
  [[ "$PROXY_PORTS" =~ ^([0-9]{4,5}):([0-9]{4,5})$ ]] || die "--proxy-ports must be TENANCY:BAO (two port numbers)"
  TPORT=${BASH_REMATCH[1]}
  BPORT=${BASH_REMATCH[2]}
  for p in "$TPORT" "$BPORT"; do
    if [ "$p" -lt 1024 ] || [ "$p" -gt 65535 ]; then die "--proxy-ports: $p is not a port in 1024-65535"; fi
  done
  [ "$TPORT" != "$BPORT" ] || die "--proxy-ports: the two ports must differ"
fi
# ports_of FILE: the two ports an instance's proxy environment file names
ports_of() { sed -n 's/^MONKY_\(TENANCY\|BAO\)_PROXY_PORT=\([0-9]*\)$/\2/p' "$1"; }
if [ -n "$INSTANCE" ] && [ "$TRANSPORT" = proxy ]; then
  used="18443 18200"
  for f in /etc/default/monky-deployd-proxy-*; do
    if [ ! -f "$f" ] || [ "$f" = "$PROXY_ENV" ]; then continue; fi
    used="$used $(ports_of "$f" | tr '\n' ' ')"
  done
  if [ -z "$TPORT" ] && [ -f "$PROXY_ENV" ]; then
    TPORT=$(sed -n 's/^MONKY_TENANCY_PROXY_PORT=\([0-9]*\)$/\1/p' "$PROXY_ENV")
    BPORT=$(sed -n 's/^MONKY_BAO_PROXY_PORT=\([0-9]*\)$/\1/p' "$PROXY_ENV")
  fi
  if [ -z "$TPORT" ] || [ -z "$BPORT" ]; then
    # the first pair above the default instance's that no other instance uses
    for k in $(seq 1 200); do
      case " $used " in *" $((18443 + k)) "*|*" $((18200 + k)) "*) continue ;; esac
      TPORT=$((18443 + k))
      BPORT=$((18200 + k))
      break
    done
  fi
  for p in "$TPORT" "$BPORT"; do
    case " $used " in *" $p "*) die "port $p is already another instance's proxy port" ;; esac
  done
fi

IDENTITY="$IDENTITY_DIR/monky-host.$ENV_ID.json"
# Read a stdin grant now, before any subprocess can consume stdin.
GRANT_TEXT=""
if [ -n "$BOOTSTRAP_FILE" ]; then
  if [ "$BOOTSTRAP_FILE" = "-" ]; then GRANT_TEXT=$(cat); else GRANT_TEXT=$(cat -- "$BOOTSTRAP_FILE"); fi
  GRANT_TEXT=$(printf '%s' "$GRANT_TEXT" | tr -d '[:space:]')
  [[ "$GRANT_TEXT" =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ ]] \
    || die "the bootstrap grant is not a JWT (three base64url parts)"
fi

[ "$DRY_RUN" -eq 1 ] && say "dry run: nothing will be changed"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# ---- 1. container runtime ---------------------------------------------------------------------
if ! command -v docker >/dev/null; then
  say "docker is missing: installing docker.io"
  apt_update_once
  apt_install docker.io
fi
if ! { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null; }; then
  say "no compose: installing the compose plugin"
  apt_update_once
  if apt-cache show docker-compose-plugin >/dev/null 2>&1; then apt_install docker-compose-plugin
  elif apt-cache show docker-compose-v2 >/dev/null 2>&1; then apt_install docker-compose-v2
  else apt_install docker-compose
  fi
fi

# ---- 2. the OpenZiti tunneler (hosts the backend's own services on the mesh) ------------------
if ! pkg_installed ziti-edge-tunnel; then
  say "ziti-edge-tunnel is missing: adding the OpenZiti package repository"
  if [ ! -s "$ZITI_KEYRING" ]; then
    if [ "$DRY_RUN" -eq 1 ]; then say "would fetch $ZITI_KEY_URL into $ZITI_KEYRING"; CHANGED=1
    else
      download "$ZITI_KEY_URL" "$WORK/openziti.asc"
      grep -q 'BEGIN PGP PUBLIC KEY BLOCK' "$WORK/openziti.asc" || die "$ZITI_KEY_URL is not an armored key"
      install -m 0644 -o root -g root "$WORK/openziti.asc" "$ZITI_KEYRING"
    fi
  fi
  put_text "$ZITI_SOURCES" 0644 root root <<EOF || true
deb [signed-by=$ZITI_KEYRING] $ZITI_REPO_URL debian main
EOF
  APT_UPDATED=0
  apt_update_once
  apt_install ziti-edge-tunnel
fi
if [ "$TRANSPORT" = proxy ] && ! command -v ziti >/dev/null; then
  say "transport proxy needs the ziti CLI: installing openziti"
  apt_update_once
  apt_install openziti
fi

# ---- 3. the package ---------------------------------------------------------------------------
ARCH=$(dpkg --print-architecture)
INSTALLED_VERSION=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || true)
if [ -n "$DEB_FILE" ]; then
  WANT_VERSION=$(dpkg-deb -f "$DEB_FILE" Version)
  WANT_PKG=$(dpkg-deb -f "$DEB_FILE" Package)
  [ "$WANT_PKG" = "$PKG" ] || die "$DEB_FILE is package '$WANT_PKG', not $PKG"
else
  WANT_VERSION=$VERSION
fi
if pkg_installed "$PKG" && [ "$INSTALLED_VERSION" = "$WANT_VERSION" ]; then
  say "$PKG $INSTALLED_VERSION already installed"
else
  if [ -z "$DEB_FILE" ]; then
    deb="${PKG}_${VERSION}_${ARCH}.deb"
    if [ -n "${MONKY_DEPLOYD_BASE_URL:-}" ]; then base="${MONKY_DEPLOYD_BASE_URL%/}/$VERSION"
    elif [ "$SOURCE" = gitlab ]; then base="$GITLAB_BASE/$VERSION"
    else base="$GITEA_BASE/v$VERSION"
    fi
    if [ "$DRY_RUN" -eq 1 ]; then
      say "would download $base/$deb and $base/$deb.sha256"
    else
      download "$base/$deb" "$WORK/$deb"
      download "$base/$deb.sha256" "$WORK/$deb.sha256"
      want=$(awk '{print $1; exit}' "$WORK/$deb.sha256")
      got=$(sha256sum "$WORK/$deb" | awk '{print $1}')
      [[ "$want" =~ ^[0-9a-f]{64}$ ]] || die "$deb.sha256 does not hold a sha256"
      [ "$want" = "$got" ] || die "sha256 mismatch for $deb: expected $want, got $got"
      say "downloaded $deb (sha256 ok)"
    fi
    DEB_FILE="$WORK/$deb"
  fi
  act dpkg -i "$DEB_FILE"
  # self-update reverts to the package that runs now: keep it where the root update unit looks
  # (docs/OPERATIONS.md, "Self-update")
  ensure_dir "$UPDATE_KEEP" 0700 root root
  ensure_dir "$UPDATE_KEEP/packages" 0700 root root
  put_file "$DEB_FILE" "$UPDATE_KEEP/packages/${PKG}_${WANT_VERSION}_${ARCH}.deb" 0600 root root || true
fi

# ---- 4. user and directories (the package's postinst makes them; this re-asserts) -------------
if ! id "$AGENT_USER" >/dev/null 2>&1; then
  [ "$DRY_RUN" -eq 1 ] || die "user $AGENT_USER is missing after installing the package"
  say "would rely on the package to create user $AGENT_USER"
  AGENT_GROUP_OK=0
else
  AGENT_GROUP_OK=1
fi
if [ "$AGENT_GROUP_OK" -eq 1 ]; then
  ensure_dir "$ETC_DIR" 1770 root "$AGENT_USER"
  ensure_dir "$STATE_DIR" 0700 "$AGENT_USER" "$AGENT_USER"
  if [ -n "$INSTANCE" ]; then
    # the instance's own pair, made like the default instance's
    ensure_dir "$I_ETC" 1770 root "$AGENT_USER"
    ensure_dir "$I_STATE" 0700 "$AGENT_USER" "$AGENT_USER"
  fi
  if getent group docker >/dev/null && ! id -nG "$AGENT_USER" | tr ' ' '\n' | grep -qx docker; then
    act usermod -aG docker "$AGENT_USER"
  fi
fi

# ---- 5. docker data root ----------------------------------------------------------------------
if [ -n "$DOCKER_DATA_ROOT" ]; then
  ensure_dir "$DOCKER_DATA_ROOT" 0711 root root
  current=""
  if [ -f /etc/docker/daemon.json ]; then
    current=$(sed -n 's/.*"data-root"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' /etc/docker/daemon.json)
  fi
  if [ "$current" != "$DOCKER_DATA_ROOT" ]; then
    if [ -s /etc/docker/daemon.json ] && ! grep -q '^[[:space:]]*{[[:space:]]*}[[:space:]]*$' /etc/docker/daemon.json; then
      die "/etc/docker/daemon.json already has settings; add \"data-root\": \"$DOCKER_DATA_ROOT\" by hand"
    fi
    ensure_dir /etc/docker 0755 root root
    put_text /etc/docker/daemon.json 0644 root root <<EOF || true
{
  "data-root": "$DOCKER_DATA_ROOT"
}
EOF
    say "docker data-root is now $DOCKER_DATA_ROOT (images and containers under the old root stay there)"
    sysd restart docker.service
  fi
fi

# ---- 6. the box's Ziti identity ---------------------------------------------------------------
ENROLLED=0
if [ ! -s "$IDENTITY" ]; then
  if [ -n "$ENROL_JWT" ]; then
    ensure_dir "$IDENTITY_DIR" 0700 root root
    say "enrolling $IDENTITY"
    act monky-deployd enroll --jwt "$ENROL_JWT" --out "$IDENTITY"
    act chown root:root "$IDENTITY"
    act chmod 0600 "$IDENTITY"
    ENROLLED=1
  elif [ "$TRANSPORT" != system ]; then
    die "$IDENTITY is missing: pass --enrol-jwt (transport $TRANSPORT needs the box's identity)"
  fi
fi
if [ -e "$IDENTITY" ] || [ "$DRY_RUN" -eq 1 ]; then
  if [ "$AGENT_GROUP_OK" -eq 1 ]; then
    # The agent reads the identity through an ACL and never owns it; it needs search (x) on the
    # directory to reach the file.
    [ -e "$IDENTITY" ] && ensure_acl "$IDENTITY" "user:$AGENT_USER:r--"
    [ -d "$IDENTITY_DIR" ] && ensure_acl "$IDENTITY_DIR" "user:$AGENT_USER:--x"
  fi
fi

# ---- 7. tunneler mode: run-host unless the laptop's tunneler owns DNS (transport system) ------
if [ "$TRANSPORT" != system ]; then
  ensure_dir "$TUNNEL_DROPIN_DIR" 0755 root root
  if put_text "$TUNNEL_DROPIN" 0644 root root <<EOF
# Written by monky-deployd's install.sh: host this box's services, leave DNS and routes alone.
[Service]
ExecStart=
ExecStart=/opt/openziti/bin/ziti-edge-tunnel run-host --verbose=2 --identity-dir=$IDENTITY_DIR
EOF
  then
    sysd daemon-reload
    sysd restart ziti-edge-tunnel.service
  fi
fi

# ---- 8. configuration -------------------------------------------------------------------------
if [ -n "$BAO_CA_SRC" ]; then
  put_file "$BAO_CA_SRC" "$BAO_CA" 0640 root "$AGENT_USER" || true
  CA_LINE="  ca_file: $BAO_CA"
else
  CA_LINE='  ca_file: ""'
fi
laptop_mode=false
[ "$LAPTOP" -eq 1 ] && laptop_mode=true
METRICS_LINE=""
[ -z "$METRICS_TEXTFILE" ] || METRICS_LINE=$'\n'"metrics_textfile: $METRICS_TEXTFILE"
# an instance names its own grant path, and its proxy ports when it has a proxy
TPORT_LINE=""
BPORT_LINE=""
if [ -n "$TPORT" ]; then
  TPORT_LINE=$'\n'"  proxy_port: $TPORT"
  BPORT_LINE=$'\n'"  proxy_port: $BPORT"
fi
GRANT_LINE=""
[ -z "$INSTANCE" ] || GRANT_LINE=$'\n'"bootstrap_path: $GRANT"
put_text "$CONFIG" 0640 root "$AGENT_USER" <<EOF || true
# $CONFIG — written by install.sh; rerun install.sh (or edit) to change.
# Keys not listed keep their defaults (see /usr/share/doc/monky-deployd/config.example.yaml).
env_id: $ENV_ID
site: $SITE
transport: $TRANSPORT
identity: $IDENTITY
tenancy:
  host: tenancy.$SITE.tikali.net$TPORT_LINE
bao:
  host: bao.$SITE.tikali.net$BPORT_LINE
$CA_LINE
state_dir: $I_STATE$GRANT_LINE
laptop_mode: $laptop_mode$METRICS_LINE
EOF

# ---- 8b. the metrics textfile directory ---------------------------------------------------------
# node_exporter's package may own the directory, or it may not exist yet: it is made if missing,
# and the agent gets write access through an ACL (it never owns it). The units see it through a
# ReadWritePaths drop-in; its "-" keeps a directory removed later from failing every start with
# 226/NAMESPACE.
for unit in "$U_TICK" "$U_LAPTOP" "$U_RUN"; do
  dropin="/etc/systemd/system/$unit.d/metrics.conf"
  if [ -n "$METRICS_TEXTFILE" ]; then
    ensure_dir "/etc/systemd/system/$unit.d" 0755 root root
    put_text "$dropin" 0644 root root <<EOF || true
# Written by monky-deployd's install.sh (--metrics-textfile): the agent writes its node_exporter
# textfile here (the unit is otherwise read-only).
[Service]
ReadWritePaths=-$(dirname "$METRICS_TEXTFILE")
EOF
  elif [ -e "$dropin" ] && grep -q "install.sh (--metrics-textfile)" "$dropin"; then
    act rm -f -- "$dropin"
  fi
done
if [ -n "$METRICS_TEXTFILE" ]; then
  metrics_dir=$(dirname "$METRICS_TEXTFILE")
  [ -d "$metrics_dir" ] || act install -d -m 0755 -o root -g root "$metrics_dir"
  if [ "$AGENT_GROUP_OK" -eq 1 ] && { [ -d "$metrics_dir" ] || [ "$DRY_RUN" -eq 1 ]; }; then
    ensure_acl "$metrics_dir" "user:$AGENT_USER:rwx"
  fi
fi

# ---- 9. transport proxy: the ziti CLI as user ziti ----------------------------------------------
if [ "$TRANSPORT" = proxy ]; then
  if ! id ziti >/dev/null 2>&1; then
    act useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin ziti
  fi
  if [ -n "$INSTANCE" ]; then
    put_text "$PROXY_ENV" 0644 root root <<EOF || true
# Read by $U_PROXY (written by install.sh); the ports are config.yaml's proxy_port.
MONKY_ZITI_IDENTITY=$IDENTITY
MONKY_TENANCY_PROXY_PORT=$TPORT
MONKY_BAO_PROXY_PORT=$BPORT
EOF
  else
    put_text "$PROXY_ENV" 0644 root root <<EOF || true
# Read by monky-deployd-proxy.service (written by install.sh).
MONKY_ZITI_IDENTITY=$IDENTITY
EOF
  fi
  if [ -e "$IDENTITY" ]; then
    ensure_acl "$IDENTITY" "user:ziti:r--"
    ensure_acl "$IDENTITY_DIR" "user:ziti:--x"
  fi
  sysd enable --now "$U_PROXY"
else
  sysd disable --now "$U_PROXY"
fi

# ---- 10. the bootstrap grant ------------------------------------------------------------------
if [ -n "$GRANT_TEXT" ]; then
  if [ -s "$I_STATE/bao.token" ]; then
    # The agent already holds a token, so this grant was most likely consumed by an earlier run.
    say "an OpenBao token exists: grant not staged (to replace the token with a new grant, see"
    say "'Re-bootstrap' in docs/OPERATIONS.md)"
  else
    printf '%s' "$GRANT_TEXT" | put_text "$GRANT" 0600 "$AGENT_USER" "$AGENT_USER" || true
  fi
fi

# ---- 11. scheduling and the first tick ----------------------------------------------------------
sysd daemon-reload
if [ "$LAPTOP" -eq 1 ]; then
  sysd disable --now "$U_TIMER" "$U_RUN"
  sysd enable "$U_LAPTOP"
  sysd restart "$U_LAPTOP"
elif [ "$MODE" = service ]; then
  sysd disable --now "$U_TIMER" "$U_LAPTOP"
  sysd enable "$U_RUN"
  # Type=notify: the start returns once the first tick has run (READY=1); a restart takes up a
  # new binary or config
  say "starting the service (its first tick)"
  if ! sysd restart "$U_RUN"; then
    say "installed, but the service did not start: journalctl -u ${U_RUN%.service} -n 50; $AGENT_CMD status"
    exit 3
  fi
else
  sysd disable --now "$U_LAPTOP" "$U_RUN"
  sysd enable --now "$U_TIMER"
  say "running one tick"
  if ! sysd start "$U_TICK"; then
    say "installed, but the first tick failed: journalctl -u ${U_TICK%.service} -n 50; $AGENT_CMD status"
    exit 3
  fi
fi

if [ "$ENROLLED" -eq 1 ] && [ -e "$ENROL_JWT" ]; then
  act rm -f -- "$ENROL_JWT"
fi

if [ "$CHANGED" -eq 0 ]; then say "nothing to change"; fi
if [ "$DRY_RUN" -eq 1 ]; then say "dry run done"; else say "done: $AGENT_CMD status"; fi
