#!/usr/bin/env bash
# Red team, issue 31.1 (manual, not in the test command; the property test in src/base/redact.rs is the
# automated proof): secret values that reach a diagnostics bundle collected outside an apply —
# the password cut out of a composite .env value, a key cut out of a quoted one, and their
# base64 and hex — searched in what tenancy received. 0.4.0 sent all of them in clear.
# Usage: scripts/redteam-redaction.sh AGENT_BIN ENV_ID  (needs scripts/services.sh running)
set -euo pipefail
BIN=$1 ENV=$2
D=$(mktemp -d /tmp/rt-redact.XXXXXX)
mkdir -p "$D/bundle"
cat >"$D/bundle/compose.yaml" <<'Y'
services:
  app:
    image: 127.0.0.1:5001/monky/busybox:1
    init: true
    environment:
      DATABASE_URL: ${DATABASE_URL}
      QUOTED: ${QUOTED}
    command:
      - sh
      - -c
      - |
        while true; do p=$${DATABASE_URL#*app:}; p=$${p%%@*}; k=$${QUOTED#say ?}; k=$${k%?twice}
        echo "pw=$$p key=$$k"; echo "b64=$$(printf %s "$$p" | base64) hex=$$(printf %s "$$k" | od -An -tx1 | tr -d ' \n')"; sleep 1; done
Y
# shellcheck disable=SC2016 # the template's ${…} are literal
printf 'DATABASE_URL=postgres://app:${DB_PW}@db:5432/app?sslmode=require\nQUOTED=say "${API_KEY}" twice\n' >"$D/bundle/env.template"
printf '{"entries": [{"var": "DB_PW", "path": "monky/data/%s/see/db_pw", "version": 1}, {"var": "API_KEY", "path": "monky/data/%s/see/api_key", "version": 1}]}\n' "$ENV" "$ENV" >"$D/bundle/secrets.manifest.json"
printf '{"serial": 1, "need_bytes": 1048576, "agent": {"allow_privileged": false, "allow_rollback": false}}\n' >"$D/bundle/bundle.json"
STACK=${STACK_BIN:-${CARGO_TARGET_DIR:-target}/debug/monky-test-stack}
"$STACK" --dir "$D/stack" --bundle "$D/bundle" --env "$ENV" --compose-cmd plugin --config-extra $'settle_s: 0\n' >"$D/stack.log" 2>&1 &
SP=$!
trap 'kill $SP 2>/dev/null; docker compose -p monky-$ENV down -v >/dev/null 2>&1 || true' EXIT
for _ in $(seq 100); do grep -q "ready" "$D/stack.log" && break; sleep 0.2; done
"$BIN" --config "$D/stack/config.yaml" run --once >"$D/tick1.log" 2>&1 || { echo "apply failed:"; cat "$D/tick1.log"; exit 1; }
sleep 4
kill -USR1 $SP; sleep 1
"$BIN" --config "$D/stack/config.yaml" run --once >"$D/tick2.log" 2>&1 || true
for _ in $(seq 50); do [ -s "$D/stack/diagnostics.jsonl" ] && break; sleep 0.2; done
[ -s "$D/stack/diagnostics.jsonl" ] || { echo "no diagnostics bundle"; cat "$D/tick2.log"; exit 1; }
python3 - "$D/stack/secrets.json" "$D/stack/diagnostics.jsonl" "$D/tick1.log" "$D/tick2.log" <<'PY'
import json, sys
secrets = [s["value"] for s in json.load(open(sys.argv[1]))]
import base64
leaks = 0
for path in sys.argv[2:]:
    text = open(path).read()
    for v in secrets:
        forms = {"raw": v, "6-char prefix": v[:6], "base64": base64.b64encode(v.encode()).decode(),
                 "hex": v.encode().hex()}
        for form, enc in forms.items():
            hit = enc in text
            leaks += hit
            print(f"{path.split('/')[-1]}: {v[:3]}…({len(v)}) as {form}: {'IN CLEAR' if hit else 'masked'}")
sys.exit(1 if leaks else 0)
PY
echo "dir: $D"
