# shellcheck shell=bash
# The ansible role: lint, syntax, the vault convention, and a real run against a Debian root
# over ansible's chroot connection (sourced by run.sh; uses its helpers).
# The run skips what a chroot cannot do (apt from a mirror, systemd units: both have their own
# switches, monky_deployd_manage_packages / _manage_services) and pushes the .deb built above.

AN="$REPO/packaging/tests/ansible"
export ANSIBLE_CONFIG="$AN/ansible.cfg" ANSIBLE_ROLES_PATH="$REPO/ansible/roles" ANSIBLE_NOCOLOR=1
export ANSIBLE_LOCAL_TEMP="$WORK/ansible-local" ANSIBLE_HOME="$WORK/ansible-home"

check "ansible-lint (production profile) on the role and the playbook" \
  bash -c "cd '$REPO' && ansible-lint --offline --nocolor --profile production ansible/roles/monky_deployd packaging/tests/ansible/playbook.yml"
check "ansible-playbook --syntax-check" bash -c "cd '$AN' && ansible-playbook --syntax-check playbook.yml"
check "secrets are vaulted: vault.yml is encrypted and decrypts to vault_ names only" bash -c "
  head -n1 '$AN/group_vars/monky_hosts/vault.yml' | grep -q '^\\\$ANSIBLE_VAULT;' &&
  cd '$AN' && ansible-vault view group_vars/monky_hosts/vault.yml | grep -Ev '^(---|vault_[a-z_]+: .*)\$' | { ! grep -q .; }"
check "no role default or group variable holds a secret in clear" bash -c "
  ! grep -REn '(token|grant|password)[a-z_]*: *\"[^{\"]' '$REPO/ansible/roles/monky_deployd/defaults' '$AN/group_vars/monky_hosts/main.yml'"

# A real run: the role against a fresh Debian root, twice.
AR=$(new_root ansible-root)
place_identity "$AR"
# the second environment's identity (transport proxy needs one)
cp -a "$AR$IDENT" "$AR/opt/openziti/etc/identities/monky-host.env-stage-01.json"
cat >"$WORK/ansible-inventory.ini" <<INV
[monky_hosts]
$AR ansible_connection=community.general.chroot ansible_python_interpreter=/usr/bin/python3
INV
cat >"$WORK/ansible-vars.yml" <<VARS
monky_deployd_env_id: env-qa-02
monky_deployd_site: cbs
monky_deployd_transport: proxy
monky_deployd_manage_packages: false
monky_deployd_manage_services: false
monky_deployd_deb_src: $DEB
monky_deployd_bao_ca_pem: "-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n"
monky_deployd_config_extra:
  interval_s: 45
  bao:
    renew_below_s: 600
monky_deployd_instances:
  - name: qa
    env_id: env-qa-03
    site: cbs
    transport: system
  - name: stage
    env_id: env-stage-01
    site: lab
    transport: proxy
    proxy_ports: [18450, 18210]
    bootstrap_grant: "{{ vault_monky_deployd_bootstrap_grant }}"
    config_extra:
      interval_s: 30
VARS
play() { # OUT-FILE
  (cd "$AN" && ansible-playbook -i "$WORK/ansible-inventory.ini" -e "@$WORK/ansible-vars.yml" playbook.yml) >"$1" 2>&1 \
    || { tail -n 40 "$1"; return 1; }
}
check "the role converges a Debian root (chroot connection)" play "$WORK/ansible-run1.out"
check "role: package installed" bash -c "[ \"\$(chroot '$AR' dpkg-query -W -f='\${Status} \${Version}' monky-deployd)\" = 'install ok installed $VERSION' ]"
check "role: the installed package kept for self-update's revert (root, 0700/0600)" bash -c "
  k='/var/lib/monky-deployd-update/packages/monky-deployd_${VERSION}_${ARCH}.deb'
  [ \"\$(chroot '$AR' stat -c '%a %U %G' /var/lib/monky-deployd-update/packages \$k)\" = \"\$(printf '700 root root\n600 root root')\" ] &&
  cmp -s '$DEB' '$AR'\$k"
check "role: config.yaml root:monky-deployd 0640" stat_is "$AR" /etc/monky-deployd/config.yaml "640 root monky-deployd"
check "role: config.yaml carries the host's values and the extra keys" bash -c "
  f='$AR/etc/monky-deployd/config.yaml'
  grep -qx 'env_id: env-qa-02' \$f && grep -qx 'transport: proxy' \$f && grep -qx 'interval_s: 45' \$f &&
  grep -qx '  renew_below_s: 600' \$f && grep -qx '  host: bao.cbs.tikali.net' \$f &&
  grep -qx '  ca_file: /etc/monky-deployd/openbao-ca.pem' \$f && grep -qx 'laptop_mode: false' \$f || { cat \$f; exit 1; }"
check "role: the agent, as its own user, reads the rendered config (status --json)" \
  agent_status_is "$AR" env-qa-02 proxy
check "role: openbao-ca.pem root:monky-deployd 0640" stat_is "$AR" /etc/monky-deployd/openbao-ca.pem "640 root monky-deployd"
check "role: vaulted grant staged 0600 monky-deployd" bash -c "
  [ \"\$(chroot '$AR' stat -c '%a %U %G' /etc/monky-deployd/bootstrap.jwt)\" = '600 monky-deployd monky-deployd' ] &&
  [ \"\$(cat '$AR/etc/monky-deployd/bootstrap.jwt')\" = '$GRANT_JWT' ]"
check "role: the grant never shows in the play output" bash -c "! grep -qF '$GRANT_JWT' '$WORK/ansible-run1.out'"
check "role: directories 1770 / 0700" bash -c "[ \"\$(chroot '$AR' stat -c '%a %U %G' /etc/monky-deployd /var/lib/monky-deployd)\" = \"\$(printf '1770 root monky-deployd\n700 monky-deployd monky-deployd')\" ]"
check "role: identity ACLs for monky-deployd and ziti (proxy)" bash -c "
  a=\$(chroot '$AR' getfacl -cp '$IDENT'); d=\$(chroot '$AR' getfacl -cp /opt/openziti/etc/identities)
  echo \"\$a\" | grep -qx 'user:monky-deployd:r--' && echo \"\$a\" | grep -qx 'user:ziti:r--' &&
  echo \"\$d\" | grep -qx 'user:monky-deployd:--x' && echo \"\$d\" | grep -qx 'user:ziti:--x' || { echo \"\$a\"; echo \"\$d\"; exit 1; }"
check "role: proxy environment and run-host drop-in" bash -c "
  grep -qx 'MONKY_ZITI_IDENTITY=$IDENT' '$AR/etc/default/monky-deployd-proxy' &&
  grep -q 'ziti-edge-tunnel run-host ' '$AR/etc/systemd/system/ziti-edge-tunnel.service.d/run-host.conf'"
check "role/instances: each instance's directories 1770 / 0700 and config 0640" bash -c "
  [ \"\$(chroot '$AR' stat -c '%a %U %G' /etc/monky-deployd/qa /var/lib/monky-deployd/qa /etc/monky-deployd/stage/config.yaml)\" = \"\$(printf '1770 root monky-deployd\n700 monky-deployd monky-deployd\n640 root monky-deployd')\" ]"
check "role/instances: config.yaml of each names its environment, state dir, grant path (and proxy ports)" bash -c "
  q='$AR/etc/monky-deployd/qa/config.yaml'; t='$AR/etc/monky-deployd/stage/config.yaml'
  grep -qx 'env_id: env-qa-03' \$q && grep -qx 'transport: system' \$q && grep -qx 'state_dir: /var/lib/monky-deployd/qa' \$q &&
  grep -qx 'bootstrap_path: /etc/monky-deployd/qa/bootstrap.jwt' \$q && ! grep -q proxy_port \$q &&
  grep -qx 'env_id: env-stage-01' \$t && grep -qx '  host: tenancy.lab.tikali.net' \$t && grep -qx 'interval_s: 30' \$t &&
  grep -A3 -x 'tenancy:' \$t | grep -qx '  proxy_port: 18450' && grep -A3 -x 'bao:' \$t | grep -qx '  proxy_port: 18210' || { cat \$q \$t; exit 1; }"
# status_of_config ROOT CONFIG ENV: the agent, as its own user, parses CONFIG and reports ENV
status_of_config() {
  local out
  out=$(in_root "$1" setpriv --reuid=monky-deployd --regid=monky-deployd --init-groups /usr/bin/monky-deployd --config "$2" status --json 2>&1) ||
    { printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out" | grep -q "\"env_id\": \"$3\"" || { printf '%s\n' "$out"; return 1; }
}
check "role/instances: the agent reads instance qa's config (status --json --config)" status_of_config "$AR" /etc/monky-deployd/qa/config.yaml env-qa-03
check "role/instances: the agent reads instance stage's config (status --json --config)" status_of_config "$AR" /etc/monky-deployd/stage/config.yaml env-stage-01
check "role/instances: stage's proxy environment (identity, ports) and staged grant; none for qa" bash -c "
  f='$AR/etc/default/monky-deployd-proxy-stage'
  grep -qx 'MONKY_ZITI_IDENTITY=/opt/openziti/etc/identities/monky-host.env-stage-01.json' \$f &&
  grep -qx 'MONKY_TENANCY_PROXY_PORT=18450' \$f && grep -qx 'MONKY_BAO_PROXY_PORT=18210' \$f &&
  [ ! -e '$AR/etc/default/monky-deployd-proxy-qa' ] &&
  [ \"\$(chroot '$AR' stat -c '%a %U' /etc/monky-deployd/stage/bootstrap.jwt)\" = '600 monky-deployd' ] &&
  [ \"\$(cat '$AR/etc/monky-deployd/stage/bootstrap.jwt')\" = '$GRANT_JWT' ] || { cat \$f; exit 1; }"
check "role/instances: the default instance's config is its own (env-qa-02, /var/lib/monky-deployd)" bash -c "
  grep -qx 'env_id: env-qa-02' '$AR/etc/monky-deployd/config.yaml' && grep -qx 'state_dir: /var/lib/monky-deployd' '$AR/etc/monky-deployd/config.yaml'"
# two instances on one proxy port: refused before anything is touched
sed 's/proxy_ports: \[18450, 18210\]/proxy_ports: [18443, 18210]/' "$WORK/ansible-vars.yml" >"$WORK/ansible-vars-clash.yml"
check "role/instances: a proxy port the default instance keeps is refused" bash -c "
  cd '$AN' && ! ansible-playbook -i '$WORK/ansible-inventory.ini' -e '@$WORK/ansible-vars-clash.yml' playbook.yml >'$WORK/ansible-clash.out' 2>&1 &&
  grep -q 'share a name, an environment' '$WORK/ansible-clash.out' || { tail -n 20 '$WORK/ansible-clash.out'; exit 1; }"
check "role is idempotent: a second run changes nothing" bash -c "
  $(declare -f play); WORK='$WORK'; AN='$AN'; play '$WORK/ansible-run2.out' &&
  grep -Eq 'changed=0 +unreachable=0 +failed=0' '$WORK/ansible-run2.out' || { grep -E 'changed:|ok=' '$WORK/ansible-run2.out'; exit 1; }"
