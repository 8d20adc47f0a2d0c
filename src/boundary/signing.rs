//! Release-pipeline signatures: Ed25519 over the 64 ASCII bytes of a lowercase hex sha256 the
//! box computed itself — of a bundle (PROTOCOL 0.3, `bundle_signing_keys`) or of an agent package
//! (0.4, `agent_signing_keys`). Which keys count is the box's own config, never tenancy's; with
//! no bundle keys configured, unsigned bundles are accepted (and `status` says so).

use std::collections::BTreeMap;

use base64::Engine;
use ed25519_dalek::{Signature, VerifyingKey};

use crate::{Refusal, RefusalCode};
use monky_wire::tenancy::SignatureWire;

pub const CODE: RefusalCode = RefusalCode::BundleSignatureInvalid;

/// A configured public key that cannot be used; names the config key and the key id.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{name}.{id}: not base64 ({source})")]
    NotBase64 {
        name: String,
        id: String,
        #[source]
        source: base64::DecodeError,
    },
    #[error("{name}.{id}: {len} bytes, an Ed25519 public key is 32")]
    Length {
        name: String,
        id: String,
        len: usize,
    },
    #[error("{name}.{id}: not an Ed25519 public key")]
    NotEd25519 { name: String, id: String },
}

/// Why no signature verifies over a sha (key ids only, never signature bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("no signature; this box requires one by a configured key")]
    Missing,
    /// The key ids the signatures named (at most 8, printable), untrusted ones marked.
    #[error("no valid signature by a configured key; seen: {}", .0.join(", "))]
    NoneValid(Vec<String>),
}

/// The box's trusted release keys, by key id.
#[derive(Debug, Clone, Default)]
pub struct Keys(BTreeMap<String, VerifyingKey>);

impl Keys {
    /// Parses `bundle_signing_keys` (key id → base64 of the 32-byte public key); an error
    /// names the key id.
    pub fn parse(cfg: &BTreeMap<String, String>) -> Result<Keys, KeyError> {
        Keys::parse_key("bundle_signing_keys", cfg)
    }

    /// Parses a key map read from the config key `name` (named in errors).
    pub fn parse_key(name: &str, cfg: &BTreeMap<String, String>) -> Result<Keys, KeyError> {
        let mut out = BTreeMap::new();
        for (id, b64) in cfg {
            let (name, id_) = (name.to_string(), id.clone());
            let raw = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|source| KeyError::NotBase64 {
                    name: name.clone(),
                    id: id_.clone(),
                    source,
                })?;
            let arr: [u8; 32] = raw.as_slice().try_into().map_err(|_| KeyError::Length {
                name: name.clone(),
                id: id_.clone(),
                len: raw.len(),
            })?;
            let k = VerifyingKey::from_bytes(&arr)
                .map_err(|_| KeyError::NotEd25519 { name, id: id_ })?;
            out.insert(id.clone(), k);
        }
        Ok(Keys(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn ids(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }

    /// At least one signature by a configured key must verify over `sha`; otherwise the
    /// refusal names the key ids the bundle carried (never signature bytes).
    pub fn verify(&self, sha: &str, sigs: &[SignatureWire]) -> Result<Option<String>, Refusal> {
        if self.0.is_empty() {
            return Ok(None);
        }
        self.check(sha, sigs)
            .map(Some)
            .map_err(|why| Refusal::new(CODE, why.to_string()))
    }

    /// The key id whose signature verifies over `sha`, or why none does (key ids only). With
    /// no keys configured nothing verifies.
    pub fn check(&self, sha: &str, sigs: &[SignatureWire]) -> Result<String, SignatureError> {
        self.check_message(sha.to_ascii_lowercase().as_bytes(), sigs)
    }

    /// As [`Keys::verify`], over a release statement's bytes exactly (PROTOCOL 0.5).
    pub fn verify_statement(
        &self,
        statement: &[u8],
        sigs: &[SignatureWire],
    ) -> Result<Option<String>, Refusal> {
        if self.0.is_empty() {
            return Ok(None);
        }
        self.check_message(statement, sigs)
            .map(Some)
            .map_err(|why| Refusal::new(CODE, why.to_string()))
    }

    /// The key id whose signature verifies over `msg`, or why none does.
    pub fn check_message(
        &self,
        msg: &[u8],
        sigs: &[SignatureWire],
    ) -> Result<String, SignatureError> {
        for s in sigs {
            let Some(key) = self.0.get(&s.key_id) else {
                continue;
            };
            if s.alg != "ed25519" {
                continue;
            }
            let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(s.sig.trim()) else {
                continue;
            };
            let Ok(sig) = Signature::from_slice(&raw) else {
                continue;
            };
            // verify_strict: no malleable or small-order signatures
            if key.verify_strict(msg, &sig).is_ok() {
                return Ok(s.key_id.clone());
            }
        }
        let seen: Vec<String> = sigs
            .iter()
            .map(|s| {
                let id: String = s
                    .key_id
                    .chars()
                    .filter(|c| c.is_ascii_graphic())
                    .take(64)
                    .collect();
                if self.0.contains_key(&s.key_id) {
                    id
                } else {
                    format!("{id} (not trusted here)")
                }
            })
            .take(8)
            .collect();
        Err(if seen.is_empty() {
            SignatureError::Missing
        } else {
            SignatureError::NoneValid(seen)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn key(n: u8) -> (SigningKey, String) {
        let k = SigningKey::from_bytes(&[n; 32]);
        let p = base64::engine::general_purpose::STANDARD.encode(k.verifying_key().as_bytes());
        (k, p)
    }

    fn sig(id: &str, k: &SigningKey, msg: &str) -> SignatureWire {
        SignatureWire {
            key_id: id.into(),
            alg: "ed25519".into(),
            sig: base64::engine::general_purpose::STANDARD
                .encode(k.sign(msg.as_bytes()).to_bytes()),
        }
    }

    #[test]
    fn verifies_by_configured_keys_only() {
        let sha = "ab".repeat(32);
        let (k1, p1) = key(1);
        let (k2, p2) = key(2);
        let keys = Keys::parse(&BTreeMap::from([("r1".into(), p1), ("r2".into(), p2)])).unwrap();
        assert_eq!(
            keys.verify(&sha, &[sig("r2", &k2, &sha)]).unwrap(),
            Some("r2".into())
        );
        assert!(keys
            .verify(&sha, &[])
            .unwrap_err()
            .detail
            .contains("no signature"));
        assert!(
            keys.verify(&sha, &[sig("r1", &k2, &sha)]).is_err(),
            "wrong key"
        );
        assert!(
            keys.verify(&sha, &[sig("r1", &k1, &"cd".repeat(32))])
                .is_err(),
            "other sha"
        );
        let (k3, _) = key(3);
        let e = keys.verify(&sha, &[sig("r3", &k3, &sha)]).unwrap_err();
        assert!(e.detail.contains("r3 (not trusted here)"), "{}", e.detail);
        let mut bad = sig("r1", &k1, &sha);
        bad.sig = "!!!".into();
        assert!(keys.verify(&sha, &[bad]).is_err());
        // an upper-case sha in the wire is the same bundle: the message is the lowercase hex
        assert!(keys
            .verify(&sha.to_uppercase(), &[sig("r1", &k1, &sha)])
            .is_ok());
        assert!(Keys::default().verify(&sha, &[]).unwrap().is_none());
    }

    #[test]
    fn bad_keys_are_named() {
        let e = Keys::parse(&BTreeMap::from([("k".into(), "AAAA".into())]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bundle_signing_keys.k") && e.contains("32"),
            "{e}"
        );
        let e = Keys::parse(&BTreeMap::from([("k".into(), "%%".into())]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not base64"), "{e}");
        let e = Keys::parse_key(
            "agent_signing_keys",
            &BTreeMap::from([("a".into(), "AAAA".into())]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("agent_signing_keys.a: "), "{e}");
    }
}
