//! Release statements (PROTOCOL "Additions for 0.5"): what a pipeline signature binds. The
//! signed bytes are a small JSON statement — for a bundle its kind, env, sha, serial and life;
//! for an agent package its kind, version, arch, sha256 and life — and every field is checked
//! here, before any lease or OpenBao request. Pure: the caller brings the box's facts (its env,
//! the sha it computed, bundle.json's serial, the high-water mark, its own clock).

use base64::Engine;
use serde::Deserialize;

pub const BUNDLE_KIND: &str = "monky-bundle/1";
pub const AGENT_KIND: &str = "monky-agent/1";
/// A statement is a few hundred bytes; anything larger is not one (bound before decoding).
pub const MAX_BYTES: usize = 4096;

use crate::{Refusal, RefusalCode};

fn refused(field: &str, why: impl std::fmt::Display) -> Refusal {
    Refusal::new(RefusalCode::StatementRefused, format!("{field} ({why})"))
}

/// The signed bytes: `statement` as it came (base64), decoded and bounded. These bytes, not a
/// re-serialisation, are what the signatures must verify over.
pub fn decode(b64: &str) -> Result<Vec<u8>, Refusal> {
    if b64.len() > MAX_BYTES * 4 / 3 + 4 {
        return Err(refused("statement", format!("over {MAX_BYTES} bytes")));
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|_| refused("statement", "not base64"))?;
    if raw.len() > MAX_BYTES {
        return Err(refused("statement", format!("over {MAX_BYTES} bytes")));
    }
    Ok(raw)
}

#[derive(Debug, Deserialize)]
struct BundleWire {
    kind: Option<String>,
    env_id: Option<String>,
    sha: Option<String>,
    serial: Option<serde_json::Value>,
    issued_at: Option<String>,
    expires_at: Option<String>,
}

#[derive(Deserialize)]
struct AgentWire {
    kind: Option<String>,
    version: Option<String>,
    arch: Option<String>,
    sha256: Option<String>,
    issued_at: Option<String>,
    expires_at: Option<String>,
}

/// A bundle statement that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleStatement {
    pub env_id: String,
    pub sha: String,
    pub serial: u64,
    pub issued_at: i64,
    pub expires_at: i64,
}

/// An agent package statement that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentStatement {
    pub version: String,
    pub arch: String,
    pub sha256: String,
    pub issued_at: i64,
    pub expires_at: i64,
}

/// The highest serial this box ever accepted, and the sha it was accepted for (the same serial
/// is acceptable again only for that sha).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct HighWater {
    pub serial: u64,
    pub sha: String,
}

impl HighWater {
    /// The higher of two marks (a mark is never lowered, whichever copy is older).
    pub fn max(a: Option<HighWater>, b: Option<HighWater>) -> Option<HighWater> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.serial > a.serial { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// What the box knows when it judges a bundle statement.
pub struct BundleFacts<'a> {
    pub env_id: &'a str,
    /// the sha the box computed over the files it received
    pub sha: &'a str,
    /// `bundle.json`'s serial
    pub serial: u64,
    pub high_water: Option<&'a HighWater>,
    /// the box's own clock (unix seconds); tenancy's `Date` never moves it
    pub now: i64,
}

fn text<'a>(field: &str, v: &'a Option<String>) -> Result<&'a str, Refusal> {
    match v.as_deref() {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(refused(field, "missing")),
    }
}

fn time(field: &str, v: &Option<String>) -> Result<i64, Refusal> {
    let s = text(field, v)?;
    s.parse::<jiff::Timestamp>()
        .map(|t| t.as_second())
        .map_err(|_| refused(field, "not an RFC 3339 time"))
}

/// Printable and short: a field of a refused statement is echoed into reports only this way.
fn shown(s: &str) -> String {
    let t: String = s
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect();
    format!("{t:?}")
}

fn life(issued: &Option<String>, expires: &Option<String>) -> Result<(i64, i64), Refusal> {
    let issued_at = time("issued_at", issued)?;
    let expires_at = time("expires_at", expires)?;
    if expires_at <= issued_at {
        return Err(refused("expires_at", "not after issued_at"));
    }
    Ok((issued_at, expires_at))
}

pub fn rfc3339(unix: i64) -> String {
    jiff::Timestamp::from_second(unix).map_or_else(|_| unix.to_string(), |t| t.to_string())
}

fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, Refusal> {
    serde_json::from_slice(bytes).map_err(|_| refused("statement", "not a JSON object"))
}

/// Bounds the box puts on what a signed statement may claim (issue 40): a statement the key
/// signed must still not be able to lock the box out of every later release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How far above the high-water mark a serial may jump (config `statement_serial_max_jump`).
    pub serial_max_jump: u64,
    /// How far `issued_at` may be ahead of the box's clock (config `statement_clock_skew_s`).
    pub clock_skew_s: u64,
}

/// Default `statement_serial_max_jump`: far more releases than any pipeline makes between two
/// ticks of a box that was off for years (a release a minute for two years is about 10^6),
/// and small enough that no single statement gets anywhere near `u64::MAX` (2^64-1 is 1.8e13
/// such jumps away). A pipeline whose serials count something faster (unix seconds: 10^6 s is
/// 11.6 days) raises it on its boxes.
pub const DEFAULT_SERIAL_MAX_JUMP: u64 = 1_000_000;
/// Default `statement_clock_skew_s`: five minutes, the usual allowance between NTP-synced clocks.
pub const DEFAULT_CLOCK_SKEW_S: u64 = 300;
/// With no high-water mark yet the bound is absolute: 2^53, the largest whole number every
/// JSON reader holds exactly (a serial above it may already mean another number to the
/// pipeline's own tools), and 2^64 - 2^53 away from the end, so the box's first statement can
/// never be one that locks it out.
pub const FIRST_SERIAL_CAP: u64 = 1 << 53;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            serial_max_jump: DEFAULT_SERIAL_MAX_JUMP,
            clock_skew_s: DEFAULT_CLOCK_SKEW_S,
        }
    }
}

impl Limits {
    /// The highest serial acceptable against this mark.
    pub fn serial_bound(&self, high_water: Option<&HighWater>) -> u64 {
        match high_water {
            Some(hw) => hw.serial.saturating_add(self.serial_max_jump),
            None => FIRST_SERIAL_CAP,
        }
    }

    fn not_from_future(&self, issued_at: i64, now: i64) -> Result<(), Refusal> {
        let skew = i64::try_from(self.clock_skew_s).unwrap_or(i64::MAX);
        if issued_at > now.saturating_add(skew) {
            return Err(Refusal::new(
                RefusalCode::StatementFromFuture,
                format!(
                    "issued_at {} is {} s ahead of this box's clock (allowance {skew} s)",
                    rfc3339(issued_at),
                    issued_at.saturating_sub(now)
                ),
            ));
        }
        Ok(())
    }
}

/// A bundle statement whose kind, env and sha name the bundle the box asked for: what it claims,
/// not yet judged against bundle.json, the high-water mark or the clock. Its signature was
/// verified first; the bundle's own files are parsed only after this and the sha check.
#[derive(Debug)]
pub struct BundleClaim {
    env_id: String,
    sha: String,
    w: BundleWire,
}

/// The part of a bundle statement that needs nothing of the bundle but its sha: kind, env, sha.
pub fn bind_bundle(bytes: &[u8], env: &str, want_sha: &str) -> Result<BundleClaim, Refusal> {
    let w: BundleWire = parse(bytes)?;
    let kind = text("kind", &w.kind)?;
    if kind != BUNDLE_KIND {
        return Err(refused(
            "kind",
            format!("{} is not {BUNDLE_KIND}", shown(kind)),
        ));
    }
    let env_id = text("env_id", &w.env_id)?.to_string();
    if env_id != env {
        return Err(refused(
            "env_id",
            format!("{} is not this box's {env}", shown(&env_id)),
        ));
    }
    let sha = text("sha", &w.sha)?.to_string();
    sha_is(&sha, want_sha)?;
    Ok(BundleClaim { env_id, sha, w })
}

fn sha_is(claimed: &str, computed: &str) -> Result<(), Refusal> {
    if claimed.eq_ignore_ascii_case(computed) {
        return Ok(());
    }
    Err(refused(
        "sha",
        format!(
            "{} is not the received bundle's {}",
            shown(claimed),
            &computed[..computed.len().min(12)]
        ),
    ))
}

impl BundleClaim {
    /// The rest, in the order PROTOCOL lists it: serial (bundle.json's, the high-water mark,
    /// the jump bound), then its life on the box's clock (not from the future, not expired).
    pub fn judge(self, f: &BundleFacts<'_>, l: &Limits) -> Result<BundleStatement, Refusal> {
        let w = &self.w;
        sha_is(&self.sha, f.sha)?;
        let serial = match &w.serial {
            None | Some(serde_json::Value::Null) => return Err(refused("serial", "missing")),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| refused("serial", "not a whole number"))?,
        };
        if serial != f.serial {
            return Err(refused(
                "serial",
                format!("{serial} differs from bundle.json's {}", f.serial),
            ));
        }
        let (issued_at, expires_at) = life(&w.issued_at, &w.expires_at)?;
        if let Some(hw) = f.high_water {
            if serial < hw.serial {
                return Err(Refusal::new(
                    RefusalCode::RollbackRefused,
                    format!("serial {serial} below {}", hw.serial),
                ));
            }
            if serial == hw.serial && !hw.sha.eq_ignore_ascii_case(f.sha) {
                return Err(Refusal::new(
                    RefusalCode::RollbackRefused,
                    format!(
                        "serial {serial} equals the high-water mark, accepted for {}",
                        &hw.sha[..hw.sha.len().min(12)]
                    ),
                ));
            }
        }
        let bound = l.serial_bound(f.high_water);
        if serial > bound {
            return Err(Refusal::new(
                RefusalCode::StatementSerialJump,
                match f.high_water {
                    Some(hw) => format!(
                        "serial {serial} is more than {} above the high-water mark {}",
                        l.serial_max_jump, hw.serial
                    ),
                    None => format!("serial {serial} above {bound} (no high-water mark yet)"),
                },
            ));
        }
        l.not_from_future(issued_at, f.now)?;
        if f.now >= expires_at {
            return Err(expired(f.sha, expires_at));
        }
        Ok(BundleStatement {
            env_id: self.env_id,
            sha: f.sha.to_ascii_lowercase(),
            serial,
            issued_at,
            expires_at,
        })
    }
}

/// Judges a bundle statement's fields with the default [`Limits`].
pub fn check_bundle(bytes: &[u8], f: &BundleFacts<'_>) -> Result<BundleStatement, Refusal> {
    check_bundle_within(bytes, f, &Limits::default())
}

/// Judges a bundle statement's fields, in the order PROTOCOL lists them: kind, env, sha, serial
/// (bundle.json's, then the high-water mark and the jump bound), then its life on the box's
/// clock.
pub fn check_bundle_within(
    bytes: &[u8],
    f: &BundleFacts<'_>,
    l: &Limits,
) -> Result<BundleStatement, Refusal> {
    bind_bundle(bytes, f.env_id, f.sha)?.judge(f, l)
}

pub fn expired(sha: &str, expires_at: i64) -> Refusal {
    Refusal::new(
        RefusalCode::BundleExpiredRefused,
        format!(
            "{} expired {}",
            &sha[..sha.len().min(12)],
            rfc3339(expires_at)
        ),
    )
}

/// What the box knows of an agent package it fetched.
pub struct AgentFacts<'a> {
    /// sha256 hex of the package bytes fetched
    pub sha256: &'a str,
    /// the package control file's Version and Architecture
    pub version: &'a str,
    pub arch: &'a str,
    pub now: i64,
}

/// Judges an agent package statement against the package the box fetched, with the default
/// [`Limits`].
pub fn check_agent(bytes: &[u8], f: &AgentFacts<'_>) -> Result<AgentStatement, Refusal> {
    check_agent_within(bytes, f, &Limits::default())
}

/// Judges an agent package statement against the package the box fetched: kind, version,
/// arch, sha256, then its life (not from the future, not expired).
pub fn check_agent_within(
    bytes: &[u8],
    f: &AgentFacts<'_>,
    l: &Limits,
) -> Result<AgentStatement, Refusal> {
    let w: AgentWire = parse(bytes)?;
    let kind = text("kind", &w.kind)?;
    if kind != AGENT_KIND {
        return Err(refused(
            "kind",
            format!("{} is not {AGENT_KIND}", shown(kind)),
        ));
    }
    let version = text("version", &w.version)?;
    if version != f.version {
        return Err(refused(
            "version",
            format!("{} is not the package's {}", shown(version), f.version),
        ));
    }
    let arch = text("arch", &w.arch)?;
    if arch != f.arch {
        return Err(refused(
            "arch",
            format!("{} is not the package's {}", shown(arch), f.arch),
        ));
    }
    let sha256 = text("sha256", &w.sha256)?;
    if !sha256.eq_ignore_ascii_case(f.sha256) {
        return Err(refused(
            "sha256",
            format!("{} is not the fetched package's", shown(sha256)),
        ));
    }
    let (issued_at, expires_at) = life(&w.issued_at, &w.expires_at)?;
    l.not_from_future(issued_at, f.now)?;
    if f.now >= expires_at {
        return Err(Refusal::new(
            RefusalCode::BundleExpiredRefused,
            format!("agent {version} expired {}", rfc3339(expires_at)),
        ));
    }
    Ok(AgentStatement {
        version: version.to_string(),
        arch: arch.to_string(),
        sha256: sha256.to_ascii_lowercase(),
        issued_at,
        expires_at,
    })
}

/// A bundle statement as a pipeline renders it (`sign-statement`, the test tenancy): compact
/// JSON, keys sorted.
pub fn render_bundle(
    env_id: &str,
    sha: &str,
    serial: u64,
    issued_at: i64,
    expires_at: i64,
) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "kind": BUNDLE_KIND,
        "env_id": env_id,
        "sha": sha.to_ascii_lowercase(),
        "serial": serial,
        "issued_at": rfc3339(issued_at),
        "expires_at": rfc3339(expires_at),
    }))
    .expect("json")
}

#[cfg(test)]
mod tests;
