//! Self-update (issue 21, PROTOCOL 0.4): the files the unprivileged agent and the root update
//! unit share under `<state_dir>/update/`, and the rules both sides judge an offered package by.
//!
//! The agent only ever *stages*: it downloads the package tenancy offers, checks the sha256 it
//! computed against the offer, a signature by a key in the box's own `agent_signing_keys` over
//! that hex, and the downgrade rule, then writes the package and last `staged.json` (atomically).
//! `monky-deployd update-install` (root, `monky-deployd-update.service`, started by a path unit
//! watching `staged.json`) judges it again and installs it; see [`install`].

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use monky_boundary::signing::{Keys, SignatureError};
use monky_wire::tenancy::SignatureWire;

pub mod install;

/// Why an offered package is refused: both the agent (staging) and the root unit (installing)
/// judge by these rules and say why in these words.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The version, cut to 64 characters.
    #[error(
        "version {0:?} is not a package version (digits first; letters, digits, . + ~ -; at most 64)"
    )]
    BadVersion(String),
    #[error("{offered} is older than the running {running} (permit_agent_downgrade is false)")]
    Downgrade { offered: String, running: String },
    /// The control-field reader would not run.
    #[error("{reader}: {source}")]
    Reader {
        reader: String,
        #[source]
        source: std::io::Error,
    },
    /// The reader ran and refused the file (its last line of stderr).
    #[error("not a readable package ({reader} --field: {said})")]
    Unreadable { reader: String, said: String },
    #[error("the package's control file has no {0}")]
    NoField(&'static str),
    /// What the package's own control fields say against its label.
    #[error("the label disagrees with the package: {}", .0.join("; "))]
    Mislabelled(Vec<String>),
    #[error("the offered sha256 is not 64 hex characters")]
    BadSha,
    #[error(
        "sha256 mismatch: offered {}, package is {}",
        monky_wire::tenancy::short(Some(.offered.as_str())),
        monky_wire::tenancy::short(Some(.computed.as_str()))
    )]
    ShaMismatch { offered: String, computed: String },
    #[error("signature: {0}")]
    Signature(#[from] SignatureError),
    /// A release statement refused (PROTOCOL 0.5): its code and detail.
    #[error("{0}")]
    Statement(monky_boundary::Refusal),
}

/// What the agent stages for the root unit: `update/staged.json`, written after the package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Staged {
    pub version: String,
    pub sha256: String,
    pub from_version: String,
    pub arch: String,
    /// The package's file name inside `update/`.
    pub package: String,
    pub staged_at: u64,
    /// The offer's signatures, so the root unit verifies by itself.
    pub signatures: Vec<SignatureWire>,
    /// The offer's release statement (base64), when it had one: the signatures cover it.
    #[serde(default)]
    pub statement: Option<String>,
}

/// What the root unit tells the agent: `update/result.json` (one outcome, read once).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// `AGENT_UPDATED: …`, `AGENT_REVERTED: …` or `AGENT_UPDATE_FAILED: …`.
    pub note: String,
    /// A version that was installed and taken back: not retried until tenancy names another.
    #[serde(default)]
    pub reverted: Option<String>,
    /// An offer (version, sha256) the unit refused: not staged again while tenancy offers it.
    #[serde(default)]
    pub refused: Option<(String, String)>,
    pub at: u64,
}

/// `update/ticked.json`: the last tick that counts for probation (check-in answered, exit 0
/// or 75), by the version that ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticked {
    pub version: String,
    pub at: u64,
}

/// How many reverted versions a box remembers (agent state and the unit's `reverted.json`).
pub const REVERTED_KEPT: usize = 32;

/// Adds `version` to a list of reverted versions, the oldest going beyond [`REVERTED_KEPT`].
pub fn remember_reverted(list: &mut Vec<String>, version: &str) {
    list.retain(|v| v != version);
    list.push(version.to_string());
    if list.len() > REVERTED_KEPT {
        list.drain(..list.len() - REVERTED_KEPT);
    }
}

pub fn staged_json(update_dir: &Path) -> PathBuf {
    update_dir.join("staged.json")
}
pub fn outcome_json(update_dir: &Path) -> PathBuf {
    update_dir.join("result.json")
}
pub fn ticked_json(update_dir: &Path) -> PathBuf {
    update_dir.join("ticked.json")
}

/// The Debian architecture this build runs on (what the package URL names).
pub fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "arm" => "armhf",
        "x86" => "i386",
        other => other,
    }
}

pub fn package_name(version: &str, arch: &str) -> String {
    format!("monky-deployd_{version}_{arch}.deb")
}

/// The running agent's Debian package version, revision (and epoch) included: the packaging's
/// `MONKY_DEB_VERSION` at build time, else the crate version (build.rs). What self-update
/// compares offers with.
pub const PACKAGE_VERSION: &str = env!("MONKY_PACKAGE_VERSION");

/// A package version without its Debian revision (`0.4.1-2` → `0.4.1`): what the binary calls
/// itself.
pub fn upstream(v: &str) -> &str {
    v.rsplit_once('-').map_or(v, |(u, _)| u)
}

/// A version safe in a URL path and a file name, as Debian spells versions (no epoch: `:`
/// has no place in either; [`cmp_versions`] still orders a running version that has one).
pub fn valid_version(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.as_bytes()[0].is_ascii_digit()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".+~-".contains(&b))
}

/// dpkg's ordering of two versions `[epoch:]upstream[-revision]`: split at the first `:` and
/// the last `-` (no epoch is 0, no revision is ""), then epoch, upstream and revision in turn.
pub fn cmp_versions(a: &str, b: &str) -> Ordering {
    let (ea, ua, ra) = debian_parts(a);
    let (eb, ub, rb) = debian_parts(b);
    verrevcmp(ea, eb)
        .then_with(|| verrevcmp(ua, ub))
        .then_with(|| verrevcmp(ra, rb))
}

/// (epoch, upstream, revision) as dpkg's parseversion splits them.
fn debian_parts(v: &str) -> (&str, &str, &str) {
    let (epoch, rest) = v.split_once(':').unwrap_or(("0", v));
    let (up, rev) = rest.rsplit_once('-').unwrap_or((rest, ""));
    (epoch, up, rev)
}

/// dpkg's verrevcmp: runs of non-digits compared with `~` before everything (even the end),
/// letters before other characters; runs of digits by value.
fn verrevcmp(a: &str, b: &str) -> Ordering {
    fn order(c: Option<u8>) -> i32 {
        match c {
            None => 0,
            Some(b'~') => -1,
            Some(c) if c.is_ascii_alphabetic() => i32::from(c),
            Some(c) => i32::from(c) + 256,
        }
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        // the non-digit run
        while (i < a.len() && !a[i].is_ascii_digit()) || (j < b.len() && !b[j].is_ascii_digit()) {
            let ca = a.get(i).copied().filter(|c| !c.is_ascii_digit());
            let cb = b.get(j).copied().filter(|c| !c.is_ascii_digit());
            let (oa, ob) = (order(ca), order(cb));
            if oa != ob {
                return oa.cmp(&ob);
            }
            i += usize::from(ca.is_some());
            j += usize::from(cb.is_some());
        }
        // the digit run, by value (leading zeros do not count)
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let (si, sj) = (i, j);
        while a.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        let by_len = (i - si).cmp(&(j - sj));
        if by_len != Ordering::Equal {
            return by_len;
        }
        let by_digits = a[si..i].cmp(&b[sj..j]);
        if by_digits != Ordering::Equal {
            return by_digits;
        }
    }
    Ordering::Equal
}

/// Whether `offered` may replace `running` on this box: a well-formed version, and not an
/// older one without `permit_agent_downgrade`.
pub fn judge_version(
    offered: &str,
    running: &str,
    permit_downgrade: bool,
) -> Result<(), PackageError> {
    if !valid_version(offered) {
        return Err(PackageError::BadVersion(offered.chars().take(64).collect()));
    }
    if cmp_versions(offered, running) == Ordering::Less && !permit_downgrade {
        return Err(PackageError::Downgrade {
            offered: offered.to_string(),
            running: running.to_string(),
        });
    }
    Ok(())
}

/// A package's own control fields, as dpkg reads them from the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    pub package: String,
    pub version: String,
    pub arch: String,
}

/// The package name every agent package carries.
pub const PACKAGE: &str = "monky-deployd";

/// The control fields of `deb`, read by `dpkg-deb --field` — the same reader `dpkg -i` uses,
/// so what is judged here is what would be installed (no second parser to disagree with it).
pub fn read_control(dpkg_deb: &str, deb: &Path) -> Result<Control, PackageError> {
    let out = std::process::Command::new(dpkg_deb)
        .arg("--field")
        .arg(deb)
        .args(["Package", "Version", "Architecture"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| PackageError::Reader {
            reader: dpkg_deb.to_string(),
            source,
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(PackageError::Unreadable {
            reader: dpkg_deb.to_string(),
            said: err.trim().lines().last().unwrap_or("").to_string(),
        });
    }
    parse_fields(&String::from_utf8_lossy(&out.stdout))
}

/// `Package: …`, `Version: …`, `Architecture: …` lines (dpkg-deb's answer for several fields).
fn parse_fields(text: &str) -> Result<Control, PackageError> {
    let field = |name: &'static str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .ok_or(PackageError::NoField(name))
    };
    Ok(Control {
        package: field("Package")?,
        version: field("Version")?,
        arch: field("Architecture")?,
    })
}

/// The offer's label agrees with what the package is: its name, its version (exactly, as
/// dpkg will record it) and this box's architecture. Otherwise what disagrees.
pub fn judge_control(c: &Control, label: &str, arch: &str) -> Result<(), PackageError> {
    let mut wrong = Vec::new();
    if c.package != PACKAGE {
        wrong.push(format!("it is package {:?}, not {PACKAGE}", c.package));
    }
    if c.version != label {
        wrong.push(format!("its own Version is {:?}", c.version));
    }
    if c.arch != arch {
        wrong.push(format!(
            "its Architecture is {:?}, this box is {arch}",
            c.arch
        ));
    }
    if wrong.is_empty() {
        return Ok(());
    }
    Err(PackageError::Mislabelled(wrong))
}

/// The package bytes are the ones offered and signed: `computed` (the sha256 hex of the file
/// as read here) equals the offer's, and a configured key signed that hex. The key id.
pub fn judge_package(
    keys: &Keys,
    offered_sha: &str,
    computed: &str,
    sigs: &[SignatureWire],
    statement: Option<&[u8]>,
) -> Result<String, PackageError> {
    if !monky_wire::tenancy::is_sha(&offered_sha.to_ascii_lowercase()) {
        return Err(PackageError::BadSha);
    }
    if !computed.eq_ignore_ascii_case(offered_sha) {
        return Err(PackageError::ShaMismatch {
            offered: offered_sha.to_string(),
            computed: computed.to_string(),
        });
    }
    Ok(match statement {
        // the signatures cover the statement; the caller binds its fields (bind_statement)
        Some(s) => keys.check_message(s, sigs)?,
        None => keys.check(computed, sigs)?,
    })
}

/// The offer's release statement, decoded, or why the package is refused: `require` and none.
pub fn offered_statement(
    statement: Option<&str>,
    require: bool,
) -> Result<Option<Vec<u8>>, PackageError> {
    match statement {
        Some(b64) => monky_boundary::statement::decode(b64)
            .map(Some)
            .map_err(PackageError::Statement),
        None if require => Err(PackageError::Statement(monky_boundary::Refusal::new(
            monky_boundary::RefusalCode::StatementRefused,
            "missing",
        ))),
        None => Ok(None),
    }
}

/// Before any parser reads the package: the verified statement names exactly the bytes
/// received (`computed`), the offer's `label` and this box's `arch`, and is alive. The control
/// file is then held to the label ([`judge_control`]), so to the statement too.
pub fn bind_statement(
    statement: &[u8],
    label: &str,
    arch: &str,
    computed: &str,
    now: u64,
    limits: &monky_boundary::statement::Limits,
) -> Result<(), PackageError> {
    monky_boundary::statement::check_agent_within(
        statement,
        &monky_boundary::statement::AgentFacts {
            sha256: computed,
            version: label,
            arch,
            now: i64::try_from(now).unwrap_or(i64::MAX),
        },
        limits,
    )
    .map(|_| ())
    .map_err(PackageError::Statement)
}

/// A package statement's fields against the package itself: its sha256 as computed here,
/// its control file's Version and Architecture, and its life on this box's clock.
pub fn judge_statement(
    statement: &[u8],
    c: &Control,
    computed: &str,
    now: u64,
    limits: &monky_boundary::statement::Limits,
) -> Result<(), PackageError> {
    // the same check as before the parse, now against what the package says it is
    bind_statement(statement, &c.version, &c.arch, computed, now, limits)
}

/// sha256 hex of a file, read in pieces.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests;
