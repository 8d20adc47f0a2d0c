//! The HTTP egress proxy a box may have to use (`egress_proxy`, PROTOCOL 0.5 "Egress proxy"):
//! which proxy, with which credentials, and which targets go direct.
//!
//! Only the route is decided here; the `system` transport tunnels through it with `CONNECT`
//! (`transport`), the `sdk` transport hands it to the SDK's connector. Nothing is exempt
//! implicitly, loopback included: what must go direct is listed in `no_proxy`.

use std::net::IpAddr;
use std::sync::Arc;

use base64::Engine as _;
use monky_base::cidr::Cidr;
use zeroize::Zeroizing;

/// A bad proxy URL or `no_proxy` entry, or an unusable credentials file.
#[derive(Debug, thiserror::Error)]
#[error("egress_proxy: {0}")]
pub struct EgressError(pub String);

fn bad(msg: impl Into<String>) -> EgressError {
    EgressError(msg.into())
}

/// Basic credentials for the proxy; the password only ever lives zeroized.
pub struct Credentials {
    pub user: String,
    pub password: Zeroizing<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, <redacted>)", self.user)
    }
}

impl Credentials {
    /// `user:password` (a credentials file's one line, or a URL's userinfo once decoded).
    pub fn parse(text: &str) -> Result<Credentials, EgressError> {
        let line = text.trim_end_matches(['\n', '\r']);
        if line.contains('\n') {
            return Err(bad("credentials: one line `user:password` expected"));
        }
        let (user, password) = line
            .split_once(':')
            .ok_or_else(|| bad("credentials: `user:password` expected (no `:`)"))?;
        if user.is_empty() {
            return Err(bad("credentials: empty user name"));
        }
        Ok(Credentials {
            user: user.to_string(),
            password: Zeroizing::new(password.to_string()),
        })
    }

    /// The `Proxy-Authorization` value.
    pub fn basic_header(&self) -> Zeroizing<String> {
        let pair = Zeroizing::new(format!("{}:{}", self.user, *self.password));
        Zeroizing::new(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair.as_bytes())
        ))
    }
}

/// The proxy every non-exempt connection goes through.
#[derive(Debug)]
pub struct ProxyRoute {
    pub host: String,
    pub port: u16,
    pub credentials: Option<Credentials>,
}

impl ProxyRoute {
    /// `http://host:port`, as messages, `status` and diagnostics show it: never the credentials.
    pub fn shown(&self) -> String {
        format!("http://{}", authority(&self.host, self.port))
    }
}

/// `host:port` as a request target or URI authority, an IPv6 literal bracketed (once).
pub fn authority(host: &str, port: impl std::fmt::Display) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A proxy URL split into its parts: `http://[user:password@]host[:port][/]`.
pub struct ProxyUrl {
    pub host: String,
    pub port: u16,
    /// Userinfo, percent-decoded (only an environment URL may carry it).
    pub credentials: Option<Credentials>,
}

impl ProxyUrl {
    pub fn parse(url: &str) -> Result<ProxyUrl, EgressError> {
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.contains("://") {
            return Err(bad(format!(
                "proxy URL scheme {:?}: only http:// proxies (CONNECT) are supported",
                url.split("://").next().unwrap_or_default()
            )));
        } else {
            // curl and Go take a bare `host:port` as http://
            url
        };
        let rest = rest.trim_end_matches('/');
        if rest.contains('/') || rest.contains('?') || rest.contains('#') {
            return Err(bad("proxy URL: a proxy has no path, query or fragment"));
        }
        let (userinfo, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        // RFC 9110: http's default port
        let (host, port) =
            split_host_port(hostport, 80).map_err(|e| bad(format!("proxy URL: {}", e.0)))?;
        let credentials = match userinfo {
            Some(u) => Some(Credentials::parse(&Zeroizing::new(percent_decode(u)?))?),
            None => None,
        };
        Ok(ProxyUrl {
            host,
            port,
            credentials,
        })
    }
}

/// `host[:port]` (an IPv6 literal in brackets) → lower-case host and port, `default` when none.
pub fn split_host_port(hp: &str, default: u16) -> Result<(String, u16), EgressError> {
    let (host, port) = if let Some(r) = hp.strip_prefix('[') {
        let (h, after) = r.split_once(']').ok_or_else(|| bad("unclosed `[`"))?;
        (h, after.strip_prefix(':'))
    } else {
        match hp.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hp, None),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let port = match port {
        None | Some("") => default,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad(format!("bad port {p:?}")))?,
    };
    Ok((host.to_ascii_lowercase(), port))
}

fn percent_decode(s: &str) -> Result<String, EgressError> {
    // the crate passes a malformed escape through; a credential with one is a typo to name
    let b = s.as_bytes();
    let well_formed = b.iter().enumerate().all(|(i, c)| {
        *c != b'%'
            || b.get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return Err(bad("proxy URL: bad %-escape in the credentials"));
    }
    let out = Zeroizing::new(percent_encoding::percent_decode_str(s).collect::<Vec<u8>>());
    String::from_utf8(out.to_vec()).map_err(|_| bad("proxy URL: credentials are not UTF-8"))
}

#[derive(Debug, Clone, PartialEq)]
enum Exempt {
    /// `*`: nothing goes through the proxy.
    All,
    /// `example.com`: that name and its subdomains (curl's and Go's reading).
    Name(String),
    /// `.example.com`: subdomains only.
    Suffix(String),
    Ip(IpAddr),
    Cidr(Cidr),
}

/// The targets reached directly: host names, `.suffix` domains, IPs and CIDRs, `*` for all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoProxy {
    list: Vec<Exempt>,
}

impl NoProxy {
    /// Entries from config and from `NO_PROXY` (comma or whitespace separated); a `:port` on
    /// a name is ignored as curl does. An entry that is none of the forms is an error.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<NoProxy, EgressError> {
        let mut list = Vec::new();
        for raw in entries
            .into_iter()
            .flat_map(|e| e.split([',', ' ', '\t']))
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            list.push(parse_exempt(raw)?);
        }
        Ok(NoProxy { list })
    }

    /// Whether `host` (a name or an IP literal, brackets allowed) goes direct.
    pub fn matches(&self, host: &str) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let ip: Option<IpAddr> = host.parse().ok();
        self.list.iter().any(|e| match (e, ip) {
            (Exempt::All, _) => true,
            (Exempt::Ip(a), Some(ip)) => *a == ip,
            (Exempt::Cidr(c), Some(ip)) => c.contains_ip(ip),
            (Exempt::Name(n), None) => host == *n || host.ends_with(&format!(".{n}")),
            (Exempt::Suffix(s), None) => host.ends_with(s.as_str()),
            _ => false,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

fn parse_exempt(raw: &str) -> Result<Exempt, EgressError> {
    if raw == "*" {
        return Ok(Exempt::All);
    }
    let e = raw.to_ascii_lowercase();
    if let Some((net, bits)) = e.split_once('/') {
        let net: IpAddr = net
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| bad(format!("no_proxy {raw:?}: not an IP prefix")))?;
        return Cidr::parse(&format!("{net}/{bits}"))
            .map(Exempt::Cidr)
            .ok_or_else(|| bad(format!("no_proxy {raw:?}: bad prefix length")));
    }
    let bare = e.trim_start_matches('[');
    if let Some(inner) = bare.split(']').next().filter(|_| e.starts_with('[')) {
        return inner
            .parse()
            .map(Exempt::Ip)
            .map_err(|_| bad(format!("no_proxy {raw:?}: not an IP")));
    }
    if let Ok(ip) = e.parse::<IpAddr>() {
        return Ok(Exempt::Ip(ip));
    }
    // name[:port]: the port is not part of the match
    let name = match e.rsplit_once(':') {
        Some((n, p)) if p.parse::<u16>().is_ok() => n,
        _ => e.as_str(),
    };
    if let Ok(ip) = name.parse::<IpAddr>() {
        return Ok(Exempt::Ip(ip));
    }
    let valid = |s: &str| {
        !s.is_empty()
            && s.split('.').all(|l| {
                !l.is_empty()
                    && l.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
    };
    if let Some(s) = name.strip_prefix("*.").or_else(|| name.strip_prefix('.')) {
        if valid(s) {
            return Ok(Exempt::Suffix(format!(".{s}")));
        }
    } else if valid(name.trim_end_matches('.')) {
        return Ok(Exempt::Name(name.trim_end_matches('.').to_string()));
    }
    Err(bad(format!(
        "no_proxy {raw:?}: not a host name, .suffix, IP or CIDR"
    )))
}

/// The box's egress: a proxy (or none) and what bypasses it. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Egress {
    proxy: Option<Arc<ProxyRoute>>,
    no_proxy: NoProxy,
}

impl Egress {
    pub fn direct() -> Egress {
        Egress::default()
    }

    pub fn new(proxy: Option<ProxyRoute>, no_proxy: NoProxy) -> Egress {
        Egress {
            proxy: proxy.map(Arc::new),
            no_proxy,
        }
    }

    /// The proxy a connection to `host` goes through, or `None` for direct.
    pub fn route(&self, host: &str) -> Option<&Arc<ProxyRoute>> {
        self.proxy.as_ref().filter(|_| !self.no_proxy.matches(host))
    }

    pub fn proxy(&self) -> Option<&Arc<ProxyRoute>> {
        self.proxy.as_ref()
    }

    /// The proxy password (and the pair, whose base64 a `Proxy-Authorization` header carries)
    /// to the redactor; every tick, since a tick forgets what it registered at its end.
    pub fn register_secrets(&self) {
        if let Some(c) = self.proxy.as_ref().and_then(|p| p.credentials.as_ref()) {
            monky_base::redact::register_basic(&c.user, &c.password);
        }
    }

    pub fn no_proxy(&self) -> &NoProxy {
        &self.no_proxy
    }

    /// e.g. `direct`, `via http://proxy:3128 (Basic auth)`, `direct (no_proxy)`, for `host`.
    pub fn describe_for(&self, host: &str) -> String {
        match (&self.proxy, self.route(host)) {
            (None, _) => "direct".into(),
            (Some(_), None) => "direct (no_proxy)".into(),
            (Some(_), Some(p)) => format!(
                "via {}{}",
                p.shown(),
                if p.credentials.is_some() {
                    " (Basic auth)"
                } else {
                    ""
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests;
