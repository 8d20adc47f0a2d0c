//! The system's trust anchors, from the same places and with the same result as
//! `rustls_native_certs::load_native_certs` (0.8, Unix) — `SSL_CERT_FILE` / `SSL_CERT_DIR` when
//! either is set, else what `openssl_probe` finds; the file, then every regular file of the
//! directories once by inode; `CERTIFICATE` sections only; sorted, duplicates dropped — but
//! cheaper, because a heartbeat over https pays for it every tick: [`Roots`] reads the store
//! once for both clients of a tick (it was read for each), and the certificates — public, so
//! the constant-time decoder meant for keys buys nothing — are decoded line by line with the
//! ordinary base64 decoder. A tick stopped at the connect: ≈ 14 → ≈ 7 ms CPU (`perf stat`).
//!
//! Unreadable files and undecodable blocks are skipped, as the agent skipped them before.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use rustls::pki_types::CertificateDer;

/// Lenient like a PEM reader: padding optional, trailing bits ignored.
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The system anchors, read at most once per value: the clients a tick builds share one.
#[derive(Default)]
pub struct Roots(std::sync::OnceLock<Vec<CertificateDer<'static>>>);

impl Roots {
    pub fn get(&self) -> &[CertificateDer<'static>] {
        self.0.get_or_init(native)
    }
}

/// The trust anchors of this system.
fn native() -> Vec<CertificateDer<'static>> {
    let file = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from);
    let dirs: Vec<PathBuf> = std::env::var_os("SSL_CERT_DIR")
        .map(|d| {
            std::env::split_paths(&d)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if file.is_some() || !dirs.is_empty() {
        return load(file.as_deref(), &dirs);
    }
    let probed = openssl_probe::probe();
    load(probed.cert_file.as_deref(), &probed.cert_dir)
}

/// The certificates of `file` and of the regular files in `dirs`.
fn load(file: Option<&Path>, dirs: &[PathBuf]) -> Vec<CertificateDer<'static>> {
    let mut r = Reader::default();
    if let Some(f) = file {
        if let Ok(m) = std::fs::metadata(f) {
            r.files.insert((m.dev(), m.ino()));
        }
        r.read(f);
    }
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            // followed: `openssl rehash` names are symlinks
            match std::fs::metadata(&p) {
                Ok(m) if m.is_file() && r.files.insert((m.dev(), m.ino())) => r.read(&p),
                _ => {}
            }
        }
    }
    let mut out = r.certs;
    out.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
    out.dedup();
    out
}

#[derive(Default)]
struct Reader {
    files: HashSet<(u64, u64)>,
    certs: Vec<CertificateDer<'static>>,
}

impl Reader {
    fn read(&mut self, path: &Path) {
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        for b64 in sections(&bytes) {
            if let Ok(der) = B64.decode(&b64) {
                self.certs.push(CertificateDer::from(der));
            }
        }
    }
}

const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
const END: &[u8] = b"-----END CERTIFICATE-----";

/// The base64 of each `CERTIFICATE` section: from a BEGIN line to the next END line, line by
/// line as a PEM reader goes (surrounding whitespace and CR ignored).
fn sections(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<u8>> = None;
    for line in bytes.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        match &mut cur {
            None if line == BEGIN => cur = Some(Vec::with_capacity(2048)),
            None => {}
            Some(_) if line == END => out.extend(cur.take()),
            Some(b) => b.extend_from_slice(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the crate it replaces, on this machine's store and on a directory with the
    /// shapes a store has: a bundle, hash-named symlinks, a copy in other line endings, a
    /// file with no certificate, a directory, a dangling link.
    #[test]
    fn the_same_anchors_as_rustls_native_certs() {
        let ours = native();
        let theirs = {
            let mut v = rustls_native_certs::load_native_certs().certs;
            v.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
            v.dedup();
            v
        };
        assert!(
            !theirs.is_empty(),
            "this machine has no CA store to compare"
        );
        assert_eq!(ours, theirs);

        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (&theirs[0], &theirs[1], &theirs[2]);
        let pem = |der: &CertificateDer<'_>, eol: &str| {
            let b = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
            let lines: Vec<&str> = b
                .as_bytes()
                .chunks(64)
                .map(|l| std::str::from_utf8(l).unwrap())
                .collect();
            format!(
                "-----BEGIN CERTIFICATE-----{eol}{}{eol}-----END CERTIFICATE-----{eol}",
                lines.join(eol)
            )
        };
        let bundle = d.path().join("bundle.crt");
        std::fs::write(
            &bundle,
            format!("# comment\n{}{}", pem(a, "\n"), pem(b, "\n")),
        )
        .unwrap();
        let dir = d.path().join("certs");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.pem"), pem(a, "\n")).unwrap();
        std::fs::write(dir.join("b-crlf.pem"), pem(b, "\r\n")).unwrap();
        std::fs::write(dir.join("c.pem"), format!("junk\n{}", pem(c, "\n"))).unwrap();
        std::fs::write(dir.join("README"), "no certificate here\n").unwrap();
        std::os::unix::fs::symlink(dir.join("c.pem"), dir.join("1234abcd.0")).unwrap();
        std::os::unix::fs::symlink("a.pem", dir.join("5678ef01.0")).unwrap();
        std::os::unix::fs::symlink(".", dir.join("self.0")).unwrap();
        std::os::unix::fs::symlink(&bundle, dir.join("ca-certificates.crt")).unwrap();
        std::os::unix::fs::symlink(d.path().join("gone"), dir.join("dangling.0")).unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        let ours = load(Some(&bundle), std::slice::from_ref(&dir));
        let mut theirs =
            rustls_native_certs::load_certs_from_paths(Some(&bundle), Some(&dir)).certs;
        theirs.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
        theirs.dedup();
        assert_eq!(ours.len(), 3);
        assert_eq!(ours, theirs);
    }

    #[test]
    fn a_begin_inside_a_line_or_without_an_end_is_not_a_section() {
        let one = |s: &str| sections(s.as_bytes());
        assert!(one("x -----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").is_empty());
        assert!(one("-----BEGIN CERTIFICATE-----\nAAAA\n").is_empty());
        assert!(one("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").is_empty());
        assert_eq!(
            one("-----BEGIN CERTIFICATE-----\r\nQUJD\r\nREVG\n-----END CERTIFICATE-----"),
            vec![b"QUJDREVG".to_vec()]
        );
    }
}
