#!/usr/bin/env bash
# Vendor patch tlsuv-0001 (a kept-alive HTTP connection never carries a request to a server that
# tlsuv_http_set_url() moved away from; the same URL again keeps it): ziti-sys/checks/
# tlsuv_keepalive.c, linked against the vendored tlsuv the build made, asks two local HTTP/1.1
# servers A, A, B, A with a 3 s keep-alive and must be answered by A on connection 1 twice, then
# B, then A on a new connection. Needs a vendored build in the target dir (cargo build first).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
fail() { echo "check-tlsuv-keepalive: $*" >&2; exit 1; }
# whichever profiles exist: on a fresh machine only debug/ does, and find on a missing start
# point exits 1, which under pipefail ended this script with no message (0.4)
dirs=()
for p in debug release; do [ -d "$target/$p/build" ] && dirs+=("$target/$p/build"); done
if [ ${#dirs[@]} -eq 0 ] || ! find "${dirs[@]}" -path '*/ziti-sys-*/out/*/libtlsuv.a' | grep -q .; then
  echo "check-tlsuv-keepalive: no vendored ziti-sys build under $target; building one (cargo build -p ziti-sys)" >&2
  cargo build -q -p ziti-sys || fail "cargo build -p ziti-sys failed"
  dirs=("$target/debug/build")
fi
out=$(find "${dirs[@]}" -path '*/ziti-sys-*/out/*/libtlsuv.a' -printf '%T@ %p\n' \
  | sort -rn | head -1 | sed -E 's#^[^ ]+ (.*/ziti-sys-[^/]+/out)/.*#\1#') || fail "looking for the vendored build under $target failed"
[ -n "$out" ] || fail "no vendored ziti-sys build under $target (run cargo build first)"
dir=$(mktemp -d /tmp/tlsuv-keepalive.XXXXXX)
trap 'kill $(cat "$dir/srv.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$dir"' EXIT
tlsuv=$(dirname "$(find "$out" -name libtlsuv.a | head -1)")
cc -O1 -Wall -Werror -Wno-unused-function -o "$dir/check" ziti-sys/checks/tlsuv_keepalive.c \
  -I vendor/tlsuv/include -I "$tlsuv/generated" -I vendor/tlsuv/deps/uv_link_t/include \
  -I "$out/libuv/include" -I "$out/llhttp/include" "$tlsuv/libtlsuv.a" "$out/llhttp/lib/libllhttp.a" "$out/libuv/lib/libuv.a" \
  -lssl -lcrypto -lz -lpthread -ldl
python3 - "$dir" <<'PY' &
import http.server, socketserver, sys, threading, os
d = sys.argv[1]
def server(name):
    conns = {"n": 0}
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def setup(self):
            super().setup()
            conns["n"] += 1
            self.conn = conns["n"]
        def do_GET(self):
            b = f"{name} conn={self.conn}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
        def log_message(self, *a): pass
    s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
    s.daemon_threads = True
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]
a, b = server("A"), server("B")
open(os.path.join(d, "ports.tmp"), "w").write(f"{a} {b}\n")
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))
threading.Event().wait()
PY
echo $! >"$dir/srv.pid"
for _ in $(seq 50); do [ -f "$dir/ports" ] && break; sleep 0.1; done
read -r pa pb <"$dir/ports" || fail "test servers did not start"
got=$(timeout 20 "$dir/check" "http://127.0.0.1:$pa" "http://127.0.0.1:$pb") || fail "check program failed: $got"
want=$'A conn=1\nA conn=1\nB conn=1\nA conn=2'
[ "$got" = "$want" ] || fail "answered by"$'\n'"$got"$'\n'"expected"$'\n'"$want"
echo "check-tlsuv-keepalive: 1 passed, 0 failed"
