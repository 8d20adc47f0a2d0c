//! What the box's self-care (issue 22: disk reclaim, diagnostics) remembers between ticks, in
//! `state.json`. The logic lives in `agent/reclaim.rs` and `agent/diagnose.rs`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CareState {
    /// The applied sha as the reclaim last saw it: a different applied sha means a healthy
    /// apply happened since, and this one became the rollback target.
    pub running: Option<String>,
    /// The release the box would go back to: the one that ran before the running one.
    pub rollback_target: Option<String>,
    /// The Docker data root, as the engine named it (kept so a tick does not ask every time).
    pub docker_root: Option<String>,
    /// The last reclaim that freed anything.
    pub last_reclaim: Option<Reclaimed>,
    /// A reclaim tenancy has not heard about yet (sent as `RECLAIMED:` after the action).
    pub unreported: Option<Reclaimed>,
    /// When the last diagnostics bundle went to tenancy (Unix seconds), and for which request.
    pub last_diagnostics_at: Option<u64>,
    pub last_diagnostics_id: Option<String>,
}

/// What one reclaim removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Reclaimed {
    /// Unix seconds.
    pub at: u64,
    pub bytes: u64,
    pub releases: Vec<String>,
    pub images: Vec<String>,
}

impl Reclaimed {
    /// `RECLAIMED: <bytes> bytes (<n> releases, <m> images)`, the report's detail.
    pub fn detail(&self) -> String {
        format!(
            "RECLAIMED: {} bytes ({} release{}, {} image{})",
            self.bytes,
            self.releases.len(),
            if self.releases.len() == 1 { "" } else { "s" },
            self.images.len(),
            if self.images.len() == 1 { "" } else { "s" },
        )
    }

    pub fn is_empty(&self) -> bool {
        self.releases.is_empty() && self.images.is_empty()
    }

    /// Two reclaims of one tick (a disk refusal's, then the after-apply one) as one.
    pub fn merge(&mut self, other: Reclaimed) {
        self.at = self.at.max(other.at);
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.releases.extend(other.releases);
        self.images.extend(other.images);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reclaimed_detail_counts_what_went() {
        let mut r = Reclaimed {
            at: 1,
            bytes: 1000,
            releases: vec!["a".into()],
            images: vec![],
        };
        assert_eq!(r.detail(), "RECLAIMED: 1000 bytes (1 release, 0 images)");
        r.merge(Reclaimed {
            at: 2,
            bytes: 24,
            releases: vec!["b".into()],
            images: vec!["sha256:x".into()],
        });
        assert_eq!(r.detail(), "RECLAIMED: 1024 bytes (2 releases, 1 image)");
        assert_eq!(r.at, 2);
        assert!(!r.is_empty());
        assert!(Reclaimed::default().is_empty());
    }
}
