//! The release pipeline's side of statements (`monky-deployd sign-statement`): render a
//! bundle's or an agent package's statement from the artefact itself and sign its bytes, so
//! that what a pipeline hands to tenancy (`statement` + `signatures`) is made by the same
//! rules the box checks. Never used by a box's tick.

use std::path::Path;

use base64::Engine;
use ed25519_dalek::{Signer, SigningKey};
use zeroize::Zeroizing;

use monky_agent::Exit;
use monky_wire::tenancy::SignatureWire;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;
/// A bundle directory a pipeline signs is small; a runaway walk is a mistake.
const MAX_FILES: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The key file or an argument is wrong.
    #[error("{0}")]
    Input(String),
    /// The artefact cannot be read or judged.
    #[error("{0}")]
    Artefact(String),
}

/// A release key from a file holding the base64 of its 32-byte Ed25519 seed; the file must
/// not be readable by group or others.
pub fn load_key(path: &Path) -> Result<SigningKey, PipelineError> {
    use std::os::unix::fs::PermissionsExt;
    let bad = |why: String| PipelineError::Input(format!("key {}: {why}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(bad(format!(
            "mode {:o}: a release key must be readable by its owner only (chmod 600)",
            meta.permissions().mode() & 0o777
        )));
    }
    let text = Zeroizing::new(std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?);
    let raw = Zeroizing::new(
        B64.decode(text.trim())
            .map_err(|_| bad("not base64".into()))?,
    );
    let seed: Zeroizing<[u8; 32]> = Zeroizing::new(
        raw.as_slice()
            .try_into()
            .map_err(|_| bad(format!("{} bytes, an Ed25519 seed is 32", raw.len())))?,
    );
    Ok(SigningKey::from_bytes(&seed))
}

/// The public half, as a box's `bundle_signing_keys` / `agent_signing_keys` holds it.
pub fn public_key(k: &SigningKey) -> String {
    B64.encode(k.verifying_key().as_bytes())
}

/// The files of a bundle directory (regular files, relative `/` paths; a symlink or other
/// special file is refused, as the box would never receive one).
pub fn read_bundle_dir(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, PipelineError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d)
            .map_err(|e| PipelineError::Artefact(format!("{}: {e}", d.display())))?;
        for e in entries {
            let e = e.map_err(|e| PipelineError::Artefact(format!("{}: {e}", d.display())))?;
            let p = e.path();
            let t = e
                .file_type()
                .map_err(|e| PipelineError::Artefact(format!("{}: {e}", p.display())))?;
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                let rel = p
                    .strip_prefix(dir)
                    .ok()
                    .and_then(|r| r.to_str())
                    .ok_or_else(|| {
                        PipelineError::Artefact(format!("{}: not a UTF-8 path", p.display()))
                    })?
                    .to_string();
                let bytes = std::fs::read(&p)
                    .map_err(|e| PipelineError::Artefact(format!("{}: {e}", p.display())))?;
                out.push((rel, bytes));
                if out.len() > MAX_FILES {
                    return Err(PipelineError::Artefact(format!(
                        "{}: over {MAX_FILES} files",
                        dir.display()
                    )));
                }
            } else {
                return Err(PipelineError::Artefact(format!(
                    "{}: not a regular file or directory",
                    p.display()
                )));
            }
        }
    }
    Ok(out)
}

/// What a pipeline hands to tenancy with a bundle or a package offer.
#[derive(Debug, serde::Serialize)]
pub struct Signed {
    /// the bundle's canonical sha, or the package's sha256
    pub sha: String,
    /// base64 of the statement's bytes
    pub statement: String,
    pub signatures: Vec<SignatureWire>,
}

fn sign(key: &SigningKey, key_id: &str, sha: String, bytes: Vec<u8>) -> Signed {
    Signed {
        sha,
        statement: B64.encode(&bytes),
        signatures: vec![SignatureWire {
            key_id: key_id.to_string(),
            alg: "ed25519".into(),
            sig: B64.encode(key.sign(&bytes).to_bytes()),
        }],
    }
}

/// The statement of the bundle in `dir` for `env_id`: its sha as the box will compute it, the
/// serial of its bundle.json, issued `now` and expiring `life_s` later.
pub fn sign_bundle(
    key: &SigningKey,
    key_id: &str,
    env_id: &str,
    dir: &Path,
    now: i64,
    life_s: u64,
) -> Result<Signed, PipelineError> {
    let files = read_bundle_dir(dir)?;
    let sha = monky_boundary::bundle::canonical_sha(
        files.iter().map(|(p, c)| (p.as_str(), c.as_slice())),
    );
    let serial = files
        .iter()
        .find(|(p, _)| p == "bundle.json")
        .and_then(|(_, c)| serde_json::from_slice::<serde_json::Value>(c).ok())
        .and_then(|v| v["serial"].as_u64())
        .ok_or_else(|| {
            PipelineError::Artefact(format!(
                "{}: no bundle.json with a whole-number serial",
                dir.display()
            ))
        })?;
    let expires = now.saturating_add(i64::try_from(life_s).unwrap_or(i64::MAX));
    let bytes = monky_boundary::statement::render_bundle(env_id, &sha, serial, now, expires);
    Ok(sign(key, key_id, sha, bytes))
}

/// The statement of an agent package: its sha256, and the Version and Architecture its control
/// file says (read with `dpkg_deb`, as the box will).
pub fn sign_package(
    key: &SigningKey,
    key_id: &str,
    dpkg_deb: &str,
    deb: &Path,
    now: i64,
    life_s: u64,
) -> Result<Signed, PipelineError> {
    let sha = monky_host::selfupdate::file_sha256(deb)
        .map_err(|e| PipelineError::Artefact(format!("{}: {e}", deb.display())))?;
    let c = monky_host::selfupdate::read_control(dpkg_deb, deb)
        .map_err(|e| PipelineError::Artefact(format!("{}: {e}", deb.display())))?;
    let expires = now.saturating_add(i64::try_from(life_s).unwrap_or(i64::MAX));
    let bytes = serde_json::to_vec(&serde_json::json!({
        "kind": monky_boundary::statement::AGENT_KIND,
        "version": c.version,
        "arch": c.arch,
        "sha256": sha,
        "issued_at": monky_boundary::statement::rfc3339(now),
        "expires_at": monky_boundary::statement::rfc3339(expires),
    }))
    .expect("json");
    Ok(sign(key, key_id, sha, bytes))
}

/// `monky-deployd sign-statement`: the public half of `key` with `public`, else the signed
/// statement of the bundle (`(env, dir)`) or of the agent package, printed as JSON. An error
/// goes to stderr: bad input and an unreadable artefact alike exit 1.
pub fn sign_statement(
    key: &Path,
    key_id: &str,
    bundle: Option<(&str, &Path)>,
    package: Option<&Path>,
    life_s: u64,
    public: bool,
) -> Exit {
    let fail = |e: PipelineError| {
        monky_host::journal::early_error(&format!("monky-deployd sign-statement: {e}"));
        Exit::Fail
    };
    let k = match load_key(key) {
        Ok(k) => k,
        Err(e) => return fail(e),
    };
    if public {
        println!("{}", public_key(&k));
        return Exit::Ok;
    }
    let now = i64::try_from(monky_base::clock::now()).unwrap_or(i64::MAX);
    let signed = match (bundle, package) {
        (Some((env, dir)), None) => sign_bundle(&k, key_id, env, dir, now, life_s),
        (None, Some(deb)) => sign_package(&k, key_id, "dpkg-deb", deb, now, life_s),
        _ => Err(PipelineError::Input(
            "give --env with --bundle-dir, or --package".into(),
        )),
    };
    match signed {
        Ok(s) => {
            println!("{}", serde_json::to_string_pretty(&s).expect("json"));
            Exit::Ok
        }
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_signed_bundle_statement_is_what_the_box_accepts() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("release.key");
        std::fs::write(&key, B64.encode([7u8; 32])).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_key(&key)
            .unwrap_err()
            .to_string()
            .contains("chmod 600"));
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let k = load_key(&key).unwrap();
        let b = d.path().join("b");
        std::fs::create_dir_all(b.join("config")).unwrap();
        std::fs::write(b.join("bundle.json"), br#"{"serial": 9}"#).unwrap();
        std::fs::write(b.join("compose.yaml"), b"services: {}\n").unwrap();
        std::fs::write(b.join("config/app.toml"), b"x = 1\n").unwrap();
        let s = sign_bundle(&k, "release-2026", "env-qa-02", &b, 1_800_000_000, 3600).unwrap();
        let bytes = monky_boundary::statement::decode(&s.statement).unwrap();
        let keys = monky_boundary::signing::Keys::parse(&std::collections::BTreeMap::from([(
            "release-2026".to_string(),
            public_key(&k),
        )]))
        .unwrap();
        assert_eq!(
            keys.verify_statement(&bytes, &s.signatures).unwrap(),
            Some("release-2026".into())
        );
        let st = monky_boundary::statement::check_bundle(
            &bytes,
            &monky_boundary::statement::BundleFacts {
                env_id: "env-qa-02",
                sha: &s.sha,
                serial: 9,
                high_water: None,
                now: 1_800_000_001,
            },
        )
        .unwrap();
        assert_eq!(st.expires_at, 1_800_003_600);
        std::fs::remove_file(b.join("bundle.json")).unwrap();
        assert!(sign_bundle(&k, "r", "e", &b, 0, 1).is_err());
    }
    #[test]
    fn the_command_exits_1_on_bad_input_and_0_when_it_signs() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("release.key");
        std::fs::write(&key, B64.encode([7u8; 32])).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(sign_statement(&key, "r", None, None, 60, true), Exit::Fail);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(sign_statement(&key, "r", None, None, 60, true), Exit::Ok);
        // neither a bundle nor a package
        assert_eq!(sign_statement(&key, "r", None, None, 60, false), Exit::Fail);
        let b = d.path().join("b");
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("compose.yaml"), b"services: {}\n").unwrap();
        // no bundle.json: the artefact is refused
        let bundle = Some(("env-qa-02", b.as_path()));
        assert_eq!(
            sign_statement(&key, "r", bundle, None, 60, false),
            Exit::Fail
        );
        std::fs::write(b.join("bundle.json"), br#"{"serial": 3}"#).unwrap();
        assert_eq!(sign_statement(&key, "r", bundle, None, 60, false), Exit::Ok);
    }
}
