#!/usr/bin/env python3
"""A heartbeat tick of the seed's design (monky-deployd 0.1.x, stdlib-only Python), for
scripts/bench-heartbeat.sh to measure beside the Rust agent. NOT a product: it implements only
the `system` transport's heartbeat path -- load config, flock, state.json, the stored OpenBao
token, the project's containers from the Engine API, `POST /v1/agent/checkin`, and when tenancy
says `none`: the health verdict, `POST /v1/agent/report`, token upkeep, state saved, exit 0.
Any other action (apply, down) or a missing token exits 1 saying so: the bench only ticks a box
that is already converged.

Written the way the seed was (its README and 0.1.7 changes, /work/shared/seeds/): argparse CLI,
`logging` with a redacting filter, a YAML *subset* config parser (maps, scalars, simple lists,
comments -- the seed's config.py; no PyYAML, the seed was stdlib only), dataclasses, http.client
for tenancy and OpenBao (TLS with the configured CA when `scheme: https`), files written tmp +
fsync + rename. One difference from the seed, on purpose: the seed's heartbeat ran
`docker compose ps` (a subprocess); this one asks the Engine API over the docker socket, the
same three requests the Rust agent makes, so both ticks do the same work. With
MONKY_PY_LIST=compose-ps the project's containers are listed the seed's way instead, by
`docker compose -p <project> ps --all --format json` (the restart-count inspects stay, so the
report is the same).

    python3 monky_deployd.py [--config PATH] run --once
"""

from __future__ import annotations

import argparse
import fcntl
import http.client
import json
import logging
import os
import re
import socket
import ssl
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path

__version__ = "0.1.7"
EX_OK, EX_FAIL, EX_TEMPFAIL, EX_CONFIG = 0, 1, 75, 78
DEFAULT_CONFIG_PATH = "/etc/monky-deployd/config.yaml"
JOB_LABEL = "monky.job"
BODY_LIMIT = 1 << 20

log = logging.getLogger("monky-deployd")


# -- redaction (every log line goes through it) --------------------------------------------------
class Redactor(logging.Filter):
    PATTERNS = [
        (re.compile(r"\b(?:hvs|hvb|hvr|s|b|r)\.[A-Za-z0-9_-]{20,}"), "***"),
        (re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), "***"),
        (re.compile(r"(?i)\b(?:authorization:\s*)?(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), "***"),
        (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"), r"\1***@"),
    ]
    values: list[str] = []

    @classmethod
    def scrub(cls, text: str) -> str:
        for v in sorted(cls.values, key=len, reverse=True):
            text = text.replace(v, "***")
        for rx, repl in cls.PATTERNS:
            text = rx.sub(repl, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.scrub(record.getMessage())
        record.args = None
        return True


# -- config: the seed's YAML subset ---------------------------------------------------------------
class ConfigError(Exception):
    pass


def _scalar(text: str):
    t = text.strip()
    if not t or t in ("~", "null"):
        return None
    if t[0] in "\"'":
        if len(t) < 2 or t[-1] != t[0]:
            raise ConfigError(f"unterminated string {t!r}")
        return json.loads(t) if t[0] == '"' else t[1:-1].replace("''", "'")
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [_scalar(x) for x in inner.split(",")] if inner else []
    if t == "{}":
        return {}
    low = t.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    return t


def _strip_comment(line: str) -> str:
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def parse_yaml_subset(text: str) -> dict:
    """Maps (nested by indentation), scalars, simple lists (`- x` or `[a, b]`), comments."""
    root: dict = {}
    stack: list[tuple[int, object]] = [(-1, root)]
    pending: tuple[int, dict, str] | None = None  # a `key:` whose value is on the next lines
    for n, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        while stack and indent <= stack[-1][0]:
            stack.pop()
        if pending is not None:
            p_indent, p_parent, p_key = pending
            pending = None
            if indent > p_indent:
                child: object = [] if body.startswith("- ") or body == "-" else {}
                p_parent[p_key] = child
                stack.append((p_indent, child))
        parent = stack[-1][1]
        if body.startswith("- ") or body == "-":
            if not isinstance(parent, list):
                raise ConfigError(f"line {n}: a list item where a key was expected")
            parent.append(_scalar(body[1:]))
            continue
        if not isinstance(parent, dict) or ":" not in body:
            raise ConfigError(f"line {n}: expected `key: value`")
        key, _, value = body.partition(":")
        key = key.strip().strip("\"'")
        if value.strip():
            parent[key] = _scalar(value)
        else:
            parent[key] = None
            pending = (indent, parent, key)
    return root


@dataclass
class Endpoint:
    host: str = ""
    port: int = 443
    scheme: str = "https"
    server_name: str = ""
    ca_file: str = ""
    renew_below_s: int = 900
    extra: dict = field(default_factory=dict)


@dataclass
class Config:
    env_id: str
    site: str = ""
    transport: str = "sdk"
    tenancy: Endpoint = field(default_factory=Endpoint)
    bao: Endpoint = field(default_factory=Endpoint)
    state_dir: str = "/var/lib/monky-deployd"
    bootstrap_path: str = "/etc/monky-deployd/bootstrap.jwt"
    compose_project: str = ""
    docker_socket: str = "/var/run/docker.sock"
    laptop_mode: bool = False
    log_level: str = "INFO"
    timeout_s: int = 30
    path: str = DEFAULT_CONFIG_PATH

    @classmethod
    def load(cls, path: str) -> "Config":
        try:
            data = parse_yaml_subset(Path(path).read_text())
        except OSError as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        if not data.get("env_id"):
            raise ConfigError("env_id is required")

        def endpoint(name: str) -> Endpoint:
            d = data.get(name) or {}
            known = {"host", "port", "scheme", "server_name", "ca_file", "renew_below_s"}
            return Endpoint(
                **{k: v for k, v in d.items() if k in known and v is not None},
                extra={k: v for k, v in d.items() if k not in known},
            )

        cfg = cls(
            env_id=str(data["env_id"]),
            site=str(data.get("site") or ""),
            transport=str(data.get("transport") or "sdk"),
            tenancy=endpoint("tenancy"),
            bao=endpoint("bao"),
            path=path,
        )
        for k in ("state_dir", "bootstrap_path", "compose_project", "docker_socket", "log_level"):
            if data.get(k):
                setattr(cfg, k, str(data[k]))
        cfg.laptop_mode = bool(data.get("laptop_mode", False))
        if not cfg.compose_project:
            cfg.compose_project = f"monky-{cfg.env_id}"
        if cfg.transport != "system":
            raise ConfigError(f"transport {cfg.transport!r}: this bench tick implements `system` only")
        for ep in (cfg.tenancy, cfg.bao):
            if ep.scheme not in ("http", "https"):
                raise ConfigError(f"scheme {ep.scheme!r} must be http or https")
        return cfg

    @property
    def state_path(self) -> Path:
        return Path(self.state_dir) / "state.json"

    @property
    def token_path(self) -> Path:
        return Path(self.state_dir) / "bao.token"

    @property
    def lock_path(self) -> Path:
        return Path(self.state_dir) / "lock"


# -- files ----------------------------------------------------------------------------------------
def write_private(path: Path, data: bytes) -> None:
    """tmp (0600) + fsync + rename + fsync of the directory: never half-written."""
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def ensure_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != 0o700:
        path.chmod(0o700)


# -- HTTP -----------------------------------------------------------------------------------------
class HttpError(Exception):
    def __init__(self, what: str, status: int, code: str = "", message: str = ""):
        super().__init__(f"{what}: {status} {code} {message}".strip())
        self.status, self.code = status, code


class Client:
    """One keep-alive connection to tenancy or OpenBao (a tick makes two or three requests)."""

    def __init__(self, ep: Endpoint, timeout: int):
        self.ep, self.timeout = ep, timeout
        self.conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self.conn is None:
            if self.ep.scheme == "https":
                ctx = ssl.create_default_context(cafile=self.ep.ca_file or None)
                self.conn = TLSConnection(
                    self.ep.host, self.ep.port, self.ep.server_name or self.ep.host, ctx, self.timeout
                )
            else:
                self.conn = http.client.HTTPConnection(self.ep.host, self.ep.port, timeout=self.timeout)
        return self.conn

    def request(self, what: str, method: str, path: str, bearer: str | None, body=None):
        headers = {"User-Agent": f"monky-deployd/{__version__}", "Accept": "application/json"}
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        conn = self._connect()
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read(BODY_LIMIT + 1)
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            self.conn = None
            raise HttpError(what, 0, "", str(exc)) from exc
        if len(raw) > BODY_LIMIT:
            raise HttpError(what, resp.status, "", "body over 1 MiB")
        if resp.status >= 300:
            code = message = ""
            try:
                err = json.loads(raw)["error"]
                code, message = err.get("code", ""), err.get("message", "")
            except (ValueError, KeyError, TypeError):
                message = raw[:200].decode(errors="replace")
            raise HttpError(what, resp.status, code, message)
        return resp, (json.loads(raw) if raw else None)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


class TLSConnection(http.client.HTTPConnection):
    """HTTPS to host:port whose certificate and SNI are checked against `server_name` (the real
    host name, whatever address the transport dials)."""

    def __init__(self, host: str, port: int, server_name: str, ctx: ssl.SSLContext, timeout: int):
        super().__init__(host, port, timeout=timeout)
        self.server_name, self.ctx = server_name, ctx

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self.ctx.wrap_socket(sock, server_hostname=self.server_name)


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, socket_path: str, timeout: int):
        super().__init__("docker", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.socket_path)
        self.sock = s


class Engine:
    """The Engine API over the docker socket: the project's containers, their restart counts."""

    def __init__(self, socket_path: str, timeout: int):
        self.conn = UnixHTTPConnection(socket_path, timeout)

    def get(self, path: str):
        self.conn.request("GET", path, headers={"Host": "docker"})
        resp = self.conn.getresponse()
        raw = resp.read()
        if resp.status != 200:
            raise OSError(f"engine {path}: {resp.status}")
        return json.loads(raw)

    def containers(self, project: str) -> list[dict]:
        filt = json.dumps({"label": [f"com.docker.compose.project={project}"]}, separators=(",", ":"))
        out = []
        for c in self.get("/containers/json?all=1&filters=" + urllib.parse.quote(filt, safe="")):
            labels = c.get("Labels") or {}
            if labels.get("com.docker.compose.oneoff") == "True":
                continue
            status, state = c.get("Status", ""), c.get("State", "")
            health = ""
            if "(healthy)" in status:
                health = "healthy"
            elif "(unhealthy)" in status:
                health = "unhealthy"
            elif "(health: starting)" in status:
                health = "starting"
            m = re.match(r"Exited \((-?\d+)\)", status) if state == "exited" else None
            service = labels.get("com.docker.compose.service", "")
            out.append(_item(service, state, health, int(m.group(1)) if m else None, labels, c.get("Id", "")))
        out.sort(key=lambda x: x["service"])
        return out

    def restarts(self, cid: str) -> int:
        return int(self.get(f"/containers/{cid}/json").get("RestartCount") or 0)

    def close(self) -> None:
        self.conn.close()


def compose_ps(project: str, timeout: int) -> list[dict]:
    """The seed's heartbeat listing: the compose CLI (JSON lines since compose 2.21, an array
    before), mapped to what Engine.containers returns."""
    import subprocess  # the seed imported it at start; only this variant needs it

    try:
        out = subprocess.run(
            ["docker", "compose", "-p", project, "ps", "--all", "--format", "json"],
            capture_output=True, text=True, timeout=timeout, check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError) as exc:
        raise OSError(f"docker compose ps: {exc}") from exc
    out = out.strip()
    rows = json.loads(out) if out.startswith("[") else [json.loads(l) for l in out.splitlines() if l.strip()]
    cs = []
    for r in rows:
        labels = dict(kv.split("=", 1) for kv in (r.get("Labels") or "").split(",") if "=" in kv)
        state = r.get("State", "")
        code = int(r.get("ExitCode") or 0) if state == "exited" else None
        cs.append(_item(r.get("Service", ""), state, r.get("Health", ""), code, labels, r.get("ID", "")))
    cs.sort(key=lambda x: x["service"])
    return cs


def _item(service: str, state: str, health: str, exit_code, labels: dict, cid: str) -> dict:
    """One container as the check-in and report carry it (`_id` stays local)."""
    item = {"service": service, "state": state, "health": health}
    if exit_code is not None:
        item["exit_code"] = exit_code
    if labels.get(JOB_LABEL, "").strip().lower() in ("true", "1", "yes"):
        item["job"] = True
    item["_id"] = cid
    return item


def release_services(release: Path) -> tuple[list[str], set[str]]:
    """The release's services and its one-shot jobs, from compose.yaml's `services:` block (the
    top-level keys under it; `labels` naming monky.job). Full YAML is not stdlib: this reads the
    structure compose files of the renderer have, which is all the heartbeat needs."""
    try:
        text = (release / "compose.yaml").read_text()
    except OSError:
        return [], set()
    services: list[str] = []
    jobs: set[str] = set()
    in_services, svc_indent, current = False, None, None
    for raw in text.splitlines():
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            in_services = line.startswith("services:")
            svc_indent = None
            continue
        if not in_services:
            continue
        if svc_indent is None:
            svc_indent = indent
        if indent == svc_indent and line.strip().endswith(":"):
            current = line.strip()[:-1].strip("\"'")
            services.append(current)
        elif current and JOB_LABEL in line and re.search(r"(true|1|yes)[\"']?\s*$", line, re.I):
            jobs.add(current)
    return services, jobs


# -- the tick -------------------------------------------------------------------------------------
class Agent:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.tenancy = Client(cfg.tenancy, cfg.timeout_s)
        self.bao = Client(cfg.bao, cfg.timeout_s)
        self.engine = Engine(cfg.docker_socket, cfg.timeout_s)
        self.state: dict = {}

    def tick(self) -> int:
        cfg = self.cfg
        sd = Path(cfg.state_dir)
        for d in (sd, sd / "releases", sd / "staging", sd / "docker"):
            ensure_dir(d)
        lock = os.open(cfg.lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("another tick holds %s; nothing to do", cfg.lock_path)
                return EX_OK
            try:
                self.state = json.loads(cfg.state_path.read_text())
            except FileNotFoundError:
                self.state = {}
            self.state.setdefault("env_id", cfg.env_id)
            counters = self.state.setdefault("counters", {})
            try:
                rc = self._tick_locked()
            except HttpError as exc:
                if exc.status == 0 or exc.status >= 500 or exc.status == 429:
                    rc = EX_OK if cfg.laptop_mode else EX_TEMPFAIL
                    log.warning("temporary failure (exit 75, next tick retries): %s", exc)
                elif exc.code == "AGENT_ENV_MISMATCH":
                    rc = EX_CONFIG
                    log.error("%s", exc)
                else:
                    rc = EX_FAIL
                    log.error("%s", exc)
                self.state["last_error"] = Redactor.scrub(str(exc))
            ticks = counters.setdefault("ticks", {})
            ticks[str(rc)] = ticks.get(str(rc), 0) + 1
            if rc == EX_OK:
                counters["last_success"] = int(time.time())
            write_private(cfg.state_path, (json.dumps(self.state, indent=2) + "\n").encode())
            return rc
        finally:
            os.close(lock)
            self.tenancy.close()
            self.bao.close()
            self.engine.close()

    def _tick_locked(self) -> int:
        cfg, st = self.cfg, self.state
        try:
            token = cfg.token_path.read_text().strip()
        except FileNotFoundError:
            log.error("no OpenBao token at %s (bootstrap is not part of this bench tick)", cfg.token_path)
            return EX_FAIL
        Redactor.values.append(token)
        tok = st.get("token") or {}
        if tok.get("env_id") and tok["env_id"] != cfg.env_id:
            log.error("AGENT_ENV_MISMATCH: the token is pinned to %s", tok["env_id"])
            return EX_CONFIG
        current = Path(cfg.state_dir) / "current"
        containers = self._containers(current)
        body = {
            "env_id": cfg.env_id,
            "agent_version": __version__,
            "applied_sha": st.get("applied_sha"),
            "host": socket.gethostname(),
            "containers": [_wire(c) for c in containers],
            "clock_skew_s": st.get("counters", {}).get("clock_skew_s"),
        }
        resp, out = self.tenancy.request("checkin", "POST", "/v1/agent/checkin", token, body)
        self._note_clock(resp)
        st["last_checkin"] = int(time.time())
        st["desired_sha"] = out.get("desired_sha")
        action = out.get("action")
        st["last_action"] = action
        log.info(
            "checkin: action=%s desired=%s applied=%s",
            action,
            (out.get("desired_sha") or "-")[:12],
            (st.get("applied_sha") or "-")[:12],
        )
        if action != "none":
            log.error("action %s: only the heartbeat is part of this bench tick", action)
            return EX_FAIL
        sha = st.get("applied_sha")
        if sha is None:
            return EX_OK  # nothing applied yet: the check-in was the heartbeat
        expected, jobs = release_services(Path(cfg.state_dir) / "releases" / sha)
        result, detail = "applied", ""
        before = st.get("restarts") or {}
        for c in containers:
            if not c.get("job") and c["_id"] in before and c.get("restarts", 0) > before[c["_id"]]:
                result = "failed"
                detail = f"CRASH_LOOP: {c['service']} restarted {c['restarts']} times"
                break
        st["restarts"] = {c["_id"]: c["restarts"] for c in containers if "restarts" in c}
        if result == "applied":
            bad = [s for s in expected if not any(c["service"] == s and _well(c) for c in containers)]
            bad += [c["service"] for c in containers if not _well(c) and c["service"] not in bad]
            if bad:
                result, detail = "failed", "UNHEALTHY: " + ", ".join(bad)
                log.warning("heartbeat: %s", detail)
        report = {
            "env_id": cfg.env_id,
            "sha": sha,
            "result": result,
            "detail": Redactor.scrub(detail)[:900],
            "log_tail": "",
            "agent_version": __version__,
            "containers": [_wire(c) for c in containers],
        }
        self.tenancy.request("report", "POST", "/v1/agent/report", token, report)
        st["last_report"] = int(time.time())
        st["last_result"] = result
        st["last_error"] = None if result == "applied" else detail
        self._upkeep(token)
        return EX_OK if result == "applied" else EX_FAIL

    def _containers(self, current: Path) -> list[dict]:
        try:
            if os.environ.get("MONKY_PY_LIST") == "compose-ps":
                cs = compose_ps(self.cfg.compose_project, self.cfg.timeout_s)
            else:
                cs = self.engine.containers(self.cfg.compose_project)
        except OSError as exc:
            log.warning("engine: %s", exc)
            return []
        _, jobs = release_services(current)
        for c in cs:
            if c["service"] in jobs:
                c["job"] = True
            if not c.get("job") and c["_id"]:
                try:
                    c["restarts"] = self.engine.restarts(c["_id"])
                except OSError:
                    pass
        return cs

    def _note_clock(self, resp) -> None:
        date = resp.getheader("Date")
        if date:
            try:
                skew = int(time.time() - parsedate_to_datetime(date).timestamp())
                self.state.setdefault("counters", {})["clock_skew_s"] = skew
            except (TypeError, ValueError):
                pass

    def _upkeep(self, token: str) -> None:
        """renew-self when the token's TTL runs low (a heartbeat usually has nothing to do)."""
        tok = self.state.get("token") or {}
        left = int(tok.get("expires_at") or 0) - int(time.time())
        if not tok.get("renewable") or left > self.cfg.bao.renew_below_s:
            return
        _, out = self.bao.request(
            "renew-self", "POST", "/v1/auth/token/renew-self", token, {"increment": "3600s"}
        )
        auth = (out or {}).get("auth") or {}
        tok["expires_at"] = int(time.time()) + int(auth.get("lease_duration") or 0)
        self.state["token"] = tok


def _well(c: dict) -> bool:
    if c.get("job"):
        return c["state"] == "exited" and c.get("exit_code", 0) == 0
    return c["state"] == "running" and c["health"] in ("", "healthy")


def _wire(c: dict) -> dict:
    return {k: v for k, v in c.items() if not k.startswith("_")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="monky-deployd")
    p.add_argument("--config", default=DEFAULT_CONFIG_PATH)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--once", action="store_true")
    r.add_argument("--prune", action="store_true")
    sub.add_parser("version")
    args = p.parse_args(argv)
    if args.cmd == "version":
        print(f"monky-deployd {__version__} (python {sys.version.split()[0]}, bench tick)")
        return EX_OK
    try:
        cfg = Config.load(args.config)
    except ConfigError as exc:
        print(f"monky-deployd: {exc}", file=sys.stderr)
        return EX_FAIL
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(Redactor())
    fmt = "%(levelname)s %(message)s" if os.environ.get("JOURNAL_STREAM") else "%(asctime)s %(levelname)s %(message)s"
    handler.setFormatter(logging.Formatter(fmt))
    logging.basicConfig(level=cfg.log_level.upper(), handlers=[handler])
    if not args.once:
        print("monky-deployd: this bench tick implements `run --once` only", file=sys.stderr)
        return EX_FAIL
    return Agent(cfg).tick()


if __name__ == "__main__":
    sys.exit(main())
