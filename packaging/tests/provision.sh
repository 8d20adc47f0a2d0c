#!/usr/bin/env bash
# Installs what the packaging tests need, pinned and cached under $MONKY_CACHE, skipping whatever
# is already there. Sourced by run.sh; fails loudly (set -e) when anything cannot be installed.
#   apt:       shellcheck, systemd (systemd-analyze), debootstrap, acl, xz-utils, binutils (strip),
#              gcc + libc6-dev (the sandbox probe), python3-seccomp (unit_sandbox.py)
#   PyPI:      ansible, ansible-lint (a venv under $MONKY_CACHE)
#   crates.io: cargo-deb (cargo install --locked --root $MONKY_CACHE)
#   Debian:    a debootstrapped minimal root, cached as a tarball

CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
ANSIBLE_PIN="ansible==12.3.0"
ANSIBLE_LINT_PIN="ansible-lint==26.10.1"
CARGO_DEB_VERSION="3.8.0"
DEBIAN_INCLUDE="acl,python3-apt"

plog() { printf '[packaging/provision] %s\n' "$*" >&2; }

provision_apt() {
  local -a want=(shellcheck debootstrap acl xz-utils binutils gcc libc6-dev python3-seccomp) missing=()
  local p
  command -v systemd-analyze >/dev/null || want+=(systemd)
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    plog "apt: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  command -v systemd-analyze >/dev/null || { plog "systemd-analyze still missing"; return 1; }
}

ANSIBLE_VENV="$CACHE/ansible-venv"
provision_ansible() {
  local stamp="$ANSIBLE_VENV/.monky-pins" pins="$ANSIBLE_PIN $ANSIBLE_LINT_PIN"
  if [ -x "$ANSIBLE_VENV/bin/ansible-lint" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pins" ]; then
    return 0
  fi
  plog "PyPI: $pins into $ANSIBLE_VENV"
  rm -rf "$ANSIBLE_VENV"
  python3 -m venv "$ANSIBLE_VENV"
  "$ANSIBLE_VENV/bin/pip" install -q --disable-pip-version-check "$ANSIBLE_PIN" "$ANSIBLE_LINT_PIN" >&2
  printf "%s" "$pins" >"$stamp"
}

CARGO_DEB="$CACHE/bin/cargo-deb"
provision_cargo_deb() {
  if [ -x "$CARGO_DEB" ] && "$CARGO_DEB" --version 2>/dev/null | grep -qw "$CARGO_DEB_VERSION"; then
    return 0
  fi
  plog "crates.io: cargo-deb $CARGO_DEB_VERSION (a few minutes the first time)"
  cargo install --quiet --locked --force --root "$CACHE" cargo-deb --version "$CARGO_DEB_VERSION" >&2
}

# The suite and mirror the machine's own apt sources name (debootstrap reaches only those).
debian_suite() { . /etc/os-release && printf '%s' "${VERSION_CODENAME:?no VERSION_CODENAME}"; }
debian_mirror() {
  local m
  m=$(grep -hE '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  if [ -z "$m" ]; then
    m=$(grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
          | sed -E 's/\[[^]]*\]//' | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  fi
  [ -n "$m" ] || { plog "no Debian mirror in /etc/apt/sources.list(.d)"; return 1; }
  printf '%s' "$m"
}

debian_tarball() { printf '%s/debian-%s-minbase-%s.tar.gz' "$CACHE" "$(debian_suite)" "${DEBIAN_INCLUDE//,/-}"; }

provision_debian_root() {
  local tarball tmp suite mirror
  tarball=$(debian_tarball)
  [ -s "$tarball" ] && return 0
  suite=$(debian_suite)
  mirror=$(debian_mirror)
  plog "debootstrap $suite (minbase + $DEBIAN_INCLUDE) from $mirror -> $tarball"
  tmp=$(mktemp -d "$CACHE/debootstrap.XXXXXX")
  debootstrap --variant=minbase --include="$DEBIAN_INCLUDE" "$suite" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 \
    || { tail -n 30 "$tmp/log" >&2; rm -rf "$tmp"; return 1; }
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*
  tar -C "$tmp/root" --numeric-owner -czf "$tmp/root.tar.gz" .
  # older roots (another suite or include list) are no longer used
  find "$CACHE" -maxdepth 1 -name 'debian-*-minbase-*.tar.gz' ! -name "$(basename "$tarball")" -delete
  mv "$tmp/root.tar.gz" "$tarball"
  rm -rf "$tmp"
}

provision_all() {
  mkdir -p "$CACHE"
  # one provisioning at a time (two test runs on one machine share the cache)
  exec 8>"$CACHE/.packaging-provision.lock"
  flock 8
  provision_apt
  provision_ansible
  provision_cargo_deb
  provision_debian_root
  exec 8>&-
}
