//! The deploy grant: an ES256 JWT signed by "tenancy" (PROTOCOL "The grant and OpenBao").

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePublicKey, LineEnding};
use rand_core::{OsRng, RngCore};
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `iss` of every grant; OpenBao's `jwt-tenancy` mount has it as `bound_issuer`.
pub const GRANT_ISSUER: &str = "monky-tenancy";
/// `aud` of every grant; the `see-env` role's `bound_audiences`.
pub const GRANT_AUDIENCE: &str = "openbao-see-env";
/// `kind` claim; the `see-env` role's `bound_claims`.
pub const GRANT_KIND: &str = "deploy-grant";

/// A minted grant, as tenancy's lease response carries it.
#[derive(Clone, Debug)]
pub struct Grant {
    /// The compact JWS.
    pub jwt: String,
    /// Random hex; becomes the token's `meta.grant_jti` after login.
    pub jti: String,
    pub env_id: String,
    /// `exp` claim (unix seconds).
    pub exp: u64,
    /// `exp` as RFC 3339 UTC, e.g. `2026-12-02T09:00:00Z`.
    pub expires_at: String,
}

/// A fresh P-256 signing key standing in for tenancy's grant key.
#[derive(Clone)]
pub struct Signer {
    key: SigningKey,
}

impl Default for Signer {
    fn default() -> Self {
        Self::new()
    }
}

pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

pub(crate) fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

pub(crate) fn rfc3339(unix: u64) -> String {
    jiff::Timestamp::from_second(i64::try_from(unix).unwrap_or(i64::MAX))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

impl Signer {
    pub fn new() -> Self {
        Signer {
            key: SigningKey::random(&mut OsRng),
        }
    }

    /// SPKI PEM (`-----BEGIN PUBLIC KEY-----`), the form `jwt_validation_pubkeys` takes.
    pub fn public_key_pem(&self) -> String {
        self.key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .expect("pem")
    }

    /// Mints a grant for `env_id`: claims `iss`, `aud`, `kind`, `env_id`, a random `jti`,
    /// `iat` = `nbf` = now, `exp` = now + `ttl`.
    pub fn mint_grant(&self, env_id: &str, ttl: Duration) -> Grant {
        let now = now_unix();
        let jti = random_hex(16);
        let exp = now + ttl.as_secs();
        let claims = json!({
            "iss": GRANT_ISSUER,
            "aud": GRANT_AUDIENCE,
            "kind": GRANT_KIND,
            "env_id": env_id,
            "jti": jti,
            "iat": now,
            "nbf": now,
            "exp": exp,
        });
        Grant {
            jwt: self.sign_claims(&claims),
            jti,
            env_id: env_id.to_string(),
            exp,
            expires_at: rfc3339(exp),
        }
    }

    /// Signs arbitrary claims (negative tests: expired, wrong audience, wrong kind…).
    /// Header `{"alg":"ES256","typ":"JWT"}`, signature raw r‖s (64 bytes), base64url unpadded.
    pub fn sign_claims(&self, claims: &Value) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256","typ":"JWT"}"#);
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).expect("json"));
        let signing_input = format!("{header}.{payload}");
        let sig: Signature = self.key.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;
    use p256::pkcs8::DecodePublicKey;

    #[test]
    fn grant_verifies_with_the_published_key() {
        let s = Signer::new();
        let g = s.mint_grant("env-a", Duration::from_secs(3600));
        let parts: Vec<&str> = g.jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], GRANT_ISSUER);
        assert_eq!(claims["aud"], GRANT_AUDIENCE);
        assert_eq!(claims["kind"], GRANT_KIND);
        assert_eq!(claims["env_id"], "env-a");
        assert_eq!(claims["jti"], g.jti.as_str());
        assert_eq!(claims["exp"].as_u64().unwrap(), g.exp);
        assert!(g.expires_at.ends_with('Z'));
        let sig_bytes = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        assert_eq!(sig_bytes.len(), 64);
        let vk = VerifyingKey::from_public_key_pem(&s.public_key_pem()).unwrap();
        let sig = Signature::from_slice(&sig_bytes).unwrap();
        vk.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
    }
}
