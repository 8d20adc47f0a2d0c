#!/usr/bin/python3
"""Play systemd's side of Type=notify for a service run without systemd (sandbox_tests.sh).

    notify_probe.py VIEW CONFIG -- COMMAND [ARGS...]

Binds VIEW/tmp/notify (seen as /tmp/notify by a command chrooted into VIEW), starts COMMAND with
NOTIFY_SOCKET and WATCHDOG_USEC set, and checks, in order: READY=1 after a `STATUS=tick 1`;
WATCHDOG=1; a SIGHUP after a change to CONFIG that only a new process takes up (log_level)
re-executes it in the same pid, which becomes ready again; SIGTERM ends it with exit 0.
Prints what it received; exits 1 on the first failed expectation.
"""
import os
import signal
import socket
import subprocess
import sys
import time


def main():
    view, config, argv = sys.argv[1], sys.argv[2], sys.argv[4:]
    assert sys.argv[3] == "--", __doc__
    path = os.path.join(view, "tmp/notify")
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    os.chmod(path, 0o777)  # the agent's user sends to it
    sock.settimeout(1.0)
    env = dict(os.environ, NOTIFY_SOCKET="/tmp/notify", WATCHDOG_USEC="60000000")
    out = open(os.path.join(view, "tmp/notify-probe.out"), "w+b")
    child = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    got = []

    def wait_for(pred, secs, what):
        deadline = time.time() + secs
        while time.time() < deadline:
            if pred():
                return
            if child.poll() is not None:
                fail(f"the service exited ({child.returncode}) waiting for {what}")
            try:
                got.extend(sock.recv(4096).decode().splitlines())
            except socket.timeout:
                pass
        fail(f"timed out after {secs}s waiting for {what}")

    def fail(msg):
        print(f"FAIL: {msg}\nreceived: {got}")
        out.seek(0)
        print(out.read().decode(errors="replace")[-4000:])
        if child.poll() is None:
            child.kill()
        sys.exit(1)

    wait_for(lambda: "READY=1" in got, 180, "READY=1")
    ticks = [m for m in got if m.startswith("STATUS=tick 1:")]
    if not ticks or got.index(ticks[0]) > got.index("READY=1"):
        fail("READY=1 before the first tick's STATUS")
    if "WATCHDOG=1" not in got:
        fail("no WATCHDOG=1 with the first tick")
    print(f"ready after: {ticks[0]}")

    original = open(config).read()
    with open(config, "a") as f:
        f.write("log_level: debug\n")
    pid = child.pid
    child.send_signal(signal.SIGHUP)
    try:
        wait_for(lambda: got.count("READY=1") >= 2, 180, "READY=1 from the re-executed process")
    finally:
        with open(config, "w") as f:
            f.write(original)
    out.seek(0)
    log = out.read().decode(errors="replace")
    if "starting afresh" not in log or child.pid != pid:
        fail("the reload did not re-execute in the same pid")
    print("re-executed in the same pid and ready again")

    child.send_signal(signal.SIGTERM)
    try:
        rc = child.wait(30)
    except subprocess.TimeoutExpired:
        fail("no exit within 30s of SIGTERM")
    if rc != 0:
        fail(f"exit {rc} after SIGTERM")
    print(f"SIGTERM: exit 0; received {got}")
    out.seek(0)
    log = out.read().decode(errors="replace")
    for bad in ("Operation not permitted", "Bad system call", "Read-only file system"):
        if bad.lower() in log.lower():
            fail(f"the service's log says '{bad}'")


if __name__ == "__main__":
    main()
