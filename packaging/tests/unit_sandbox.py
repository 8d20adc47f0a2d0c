#!/usr/bin/python3
"""Run a command inside a Debian root under the kernel-level restrictions a systemd unit asks
for, without systemd (there is no systemd PID 1 on the build machines).

    unit_sandbox.py UNIT-FILE ROOT -- COMMAND [ARGS...]

Read from the unit and applied, in this order, the way systemd's exec path does:
  User= Group= SupplementaryGroups= (names resolved in ROOT), UMask=, Environment=,
  CapabilityBoundingSet= (empty: every capability dropped), NoNewPrivileges=,
  SystemCallFilter= (allow-list lines, then ~deny lines; groups expanded with
  `systemd-analyze syscall-filter`), SystemCallErrorNumber=, SystemCallArchitectures=native,
  RestrictAddressFamilies=, MemoryDenyWriteExecute= (the same rules systemd installs: no
  PROT_WRITE|PROT_EXEC mmap, no PROT_EXEC mprotect/pkey_mprotect, no SHM_EXEC shmat),
  LockPersonality= (personality() only with the current persona).
  Type=notify: NOTIFY_SOCKET and WATCHDOG_USEC are passed on from the caller, as systemd sets them.
Not applied here: the file-system view (ProtectSystem=, ReadWritePaths=, PrivateTmp=, ...),
which run.sh sets up with bind mounts before calling this, and the namespace/cgroup options.
Needs python3-seccomp (Debian) and root.
"""
import ctypes
import errno
import os
import re
import socket
import subprocess
import sys

import seccomp


def unit_settings(path):
    settings = {}
    section = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section != "[Service]" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def expand_group(name, seen=None):
    """All syscall names of a @group (recursively), per this machine's systemd."""
    seen = seen if seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                         capture_output=True, text=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        if item.startswith("@"):
            calls |= expand_group(item, seen)
        else:
            calls.add(item)
    return calls


def expand(items):
    calls = set()
    for item in items:
        calls |= expand_group(item) if item.startswith("@") else {item}
    return calls


def lookup(root, db, name):
    with open(os.path.join(root, "etc", db), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(":")
            if fields[0] == name:
                return fields
    sys.exit(f"unit_sandbox: {name} not in {root}/etc/{db}")


def build_filters(s):
    """One seccomp filter per setting, as systemd installs them: the kernel runs every loaded
    filter and the most restrictive answer wins."""
    errno_name = (s.get("SystemCallErrorNumber") or ["EPERM"])[-1]
    deny = seccomp.ERRNO(getattr(errno, errno_name))
    filters = []
    allow_list = None
    allowed = None
    for value in s.get("SystemCallFilter", []):
        if value.startswith("~"):
            if allowed is not None:
                allowed -= expand(value[1:].split())
        else:
            allowed = (allowed or set()) | expand(value.split())
    if allowed is not None:
        f = seccomp.SyscallFilter(defaction=deny)
        # systemd always lets the exec itself through
        allowed |= {"execve", "execveat", "exit", "exit_group", "rt_sigreturn"}
        for name in sorted(allowed):
            try:
                f.add_rule(seccomp.ALLOW, name)
            except (RuntimeError, ValueError):
                pass  # not a syscall on this architecture
        allow_list = f
    if (s.get("MemoryDenyWriteExecute") or ["no"])[-1] == "yes":
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        prot_wx = 0x2 | 0x4  # PROT_WRITE | PROT_EXEC
        f.add_rule(deny, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, prot_wx, prot_wx))
        f.add_rule(deny, "mprotect", seccomp.Arg(2, seccomp.MASKED_EQ, 0x4, 0x4))
        f.add_rule(deny, "pkey_mprotect", seccomp.Arg(2, seccomp.MASKED_EQ, 0x4, 0x4))
        f.add_rule(deny, "shmat", seccomp.Arg(2, seccomp.MASKED_EQ, 0o100000, 0o100000))  # SHM_EXEC
        filters.append(f)
    families = (s.get("RestrictAddressFamilies") or [""])[-1].split()
    if families:
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        keep = {int(getattr(socket, fam)) for fam in families}
        for fam in range(0, 46):
            if fam not in keep:
                f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, fam))
        filters.append(f)
    if (s.get("LockPersonality") or ["no"])[-1] == "yes":
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        # as systemd does: only the current persona (PER_LINUX) may be set
        f.add_rule(deny, "personality", seccomp.Arg(0, seccomp.NE, 0))
        filters.append(f)
    if allow_list is not None:
        # last, as systemd does: loading a filter is itself a syscall the allow-list may not hold
        filters.append(allow_list)
    return filters


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    unit, root, argv = sys.argv[1], sys.argv[2], sys.argv[4:]
    s = unit_settings(unit)
    filters = build_filters(s)  # expand groups before leaving the host's file system

    user = (s.get("User") or ["root"])[-1]
    pw = lookup(root, "passwd", user)
    uid, gid, home = int(pw[2]), int(pw[3]), pw[5]
    if s.get("Group"):
        gid = int(lookup(root, "group", s["Group"][-1])[2])
    groups = [gid] + [int(lookup(root, "group", g)[2]) for v in s.get("SupplementaryGroups", []) for g in v.split()]
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": home,
           "USER": user, "LOGNAME": user, "LANG": "C.UTF-8"}
    # Type=notify: systemd hands the service its notify socket and watchdog interval
    if (s.get("Type") or [""])[-1] == "notify":
        for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC"):
            if k in os.environ:
                env[k] = os.environ[k]
    for value in s.get("Environment", []):
        for pair in re.findall(r'(?:"[^"]*"|\S)+', value):
            k, _, v = pair.strip('"').partition("=")
            env[k] = v

    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as f:
        last_cap = int(f.read())
    os.chroot(root)
    os.chdir("/")
    if (s.get("CapabilityBoundingSet") or [None])[-1] == "":
        for cap in range(last_cap + 1):
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                sys.exit(f"unit_sandbox: cannot drop capability {cap}")
    os.setgroups(groups)
    os.setgid(gid)
    os.setuid(uid)
    umask = (s.get("UMask") or [None])[-1]
    if umask:
        os.umask(int(umask, 8))
    if (s.get("NoNewPrivileges") or ["no"])[-1] == "yes":
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            sys.exit("unit_sandbox: PR_SET_NO_NEW_PRIVS failed")
    for f in filters:
        f.load()
    os.execve(argv[0], argv, env)


if __name__ == "__main__":
    main()
