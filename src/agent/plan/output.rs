//! The plan as a document: the `--json` schema (docs/OPERATIONS.md) and the text form.

use super::*;

#[derive(Debug, Default, Serialize)]
pub struct Plan {
    pub schema: u32,
    pub env_id: String,
    /// Tenancy's action: `apply` | `none` | `down`.
    pub action: String,
    /// What a tick would do now, in the tick's own order: `refuse` | `defer` | `retry_held` |
    /// `hold` | `apply` | `down` | `nothing`.
    pub would: String,
    pub urgent: bool,
    pub applied: Release,
    pub desired: Release,
    /// Release key id that signed the bundle (`null`: unsigned, no keys configured).
    pub signed_by: Option<String>,
    pub services: Vec<ServiceChange>,
    /// Secret names the apply would read (never values).
    pub secrets: Vec<SecretRef>,
    /// Whether env.template or the secret references differ from the running release
    /// (`null`: nothing applied yet).
    pub secrets_changed: Option<bool>,
    pub registry_credential: RegistryCred,
    pub disk: Option<Disk>,
    pub window: WindowInfo,
    pub rollback: RollbackInfo,
    /// Backoff for a failing desired sha (`RETRY_HELD`): the next attempt and when.
    pub retry: Option<RetryInfo>,
    /// `down` only: whether volumes would be removed.
    pub down_volumes: Option<bool>,
    pub refusals: Vec<PlanRefusal>,
    /// Self-update (0.4): what the tick would do about tenancy's `agent` (`null`: none offered).
    pub agent_update: Option<AgentUpdatePlan>,
    pub exit_code: i32,
}

#[derive(Debug, Default, Serialize)]
pub struct AgentUpdatePlan {
    pub running: String,
    pub offered: String,
    /// `stage` | `pending` (staged, the update unit has it) | `defer` | `reverted` |
    /// `refused` | `off` (no agent_signing_keys) | `keep` (the running version).
    pub would: String,
    pub detail: String,
}

#[derive(Debug, Default, Serialize)]
pub struct Release {
    pub sha: Option<String>,
    pub serial: Option<u64>,
}

#[derive(Debug, Default, Serialize)]
pub struct ServiceChange {
    pub service: String,
    /// `added` | `removed` | `changed` | `unchanged`.
    pub change: String,
    pub image_changed: bool,
    pub config_changed: bool,
    pub image_running: Option<String>,
    pub image_desired: Option<String>,
    pub config_hash_running: Option<String>,
    pub config_hash_desired: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct SecretRef {
    pub var: Option<String>,
    pub path: String,
    pub key: String,
    pub version: Option<u64>,
    pub registry_auth: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct RegistryCred {
    /// Some image comes from `registry_host`.
    pub needed: bool,
    pub registry: String,
    /// The bundle's manifest carries a `use: registry-auth` entry.
    pub in_manifest: bool,
    /// `<state_dir>/docker/config.json` already holds a credential for it.
    pub on_box: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct Disk {
    pub path: String,
    pub free_bytes: u64,
    pub need_bytes: u64,
}

#[derive(Debug, Default, Serialize)]
pub struct WindowInfo {
    pub entries: Vec<String>,
    pub open_now: bool,
    /// The window that opens next and when (RFC 3339), when closed now.
    pub next_window: Option<String>,
    pub next_at: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct RollbackInfo {
    pub auto_rollback: bool,
    /// The release an automatic rollback would bring back if this apply failed.
    pub target: Option<String>,
    /// The desired sha failed and was rolled back: not retried before this time (RFC 3339).
    pub held_until: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RetryInfo {
    pub attempt: u32,
    /// RFC 3339.
    pub not_before: String,
}

#[derive(Debug, Serialize)]
pub struct PlanRefusal {
    pub code: String,
    pub detail: String,
    /// The compose service (or top-level object: `secret s`, `network n`) the refused key
    /// belongs to, when a rule over the file knows it (issue 41).
    pub service: Option<String>,
    /// The key as the layer wrote it (`volumes`, `container_name`, `HostConfig.Binds`).
    pub key: Option<String>,
    /// The rule that refused, as docs/POLICY.md names it.
    pub rule: String,
    /// The edit to the bundle, or the box's permission, that would lift it.
    pub lift: String,
}

impl PlanRefusal {
    /// A refusal as `plan` lists it: its detail redacted, where it was found, its rule and
    /// what lifts it.
    pub fn of(r: Refusal) -> PlanRefusal {
        PlanRefusal {
            code: r.code.to_string(),
            detail: redact::redact(&r.detail),
            rule: r.code.rule().to_string(),
            lift: r.how_to_lift().to_string(),
            service: r.service().map(String::from),
            key: r.key().map(String::from),
        }
    }
}

pub(super) fn print_text(p: &Plan) {
    let sha = |r: &Release| {
        format!(
            "{}{}",
            r.sha.as_deref().unwrap_or("-"),
            r.serial
                .map(|s| format!(" (serial {s})"))
                .unwrap_or_default()
        )
    };
    println!("env            {}", p.env_id);
    println!(
        "action         {} (tenancy){}",
        p.action,
        if p.urgent { ", urgent" } else { "" }
    );
    println!(
        "would          {}",
        match p.would.as_str() {
            "refuse" => "REFUSE (see refusals)".to_string(),
            "defer" => format!(
                "defer: outside every window; next {} at {}",
                p.window.next_window.as_deref().unwrap_or("?"),
                p.window.next_at.as_deref().unwrap_or("?")
            ),
            "retry_held" => format!(
                "retry_held: this sha failed; attempt {} not before {}",
                p.retry.as_ref().map_or(0, |r| r.attempt),
                p.retry.as_ref().map_or("?", |r| r.not_before.as_str())
            ),
            "hold" => format!(
                "hold: this sha failed and was rolled back; not retried before {}",
                p.rollback.held_until.as_deref().unwrap_or("?")
            ),
            "down" => format!(
                "down ({})",
                if p.down_volumes == Some(true) {
                    "volumes removed"
                } else {
                    "volumes kept"
                }
            ),
            w => w.to_string(),
        }
    );
    println!("applied        {}", sha(&p.applied));
    println!(
        "desired        {}{}",
        sha(&p.desired),
        p.signed_by
            .as_ref()
            .map(|k| format!(", signed by {k}"))
            .unwrap_or_default()
    );
    if let Some(a) = &p.agent_update {
        println!(
            "agent          {} → {}: {} ({})",
            a.running, a.offered, a.would, a.detail
        );
    }
    if !p.window.entries.is_empty() {
        println!(
            "apply windows  {} ({})",
            p.window.entries.join(", "),
            match (&p.window.next_window, &p.window.next_at) {
                (Some(w), Some(at)) => format!("closed; next {w} at {at}"),
                _ => "open now".into(),
            }
        );
    }
    if p.services.is_empty() {
        println!("services       none");
    } else {
        println!("services");
        for s in &p.services {
            let (mark, what) = match s.change.as_str() {
                "added" => (
                    "+",
                    format!("added, image {}", s.image_desired.as_deref().unwrap_or("?")),
                ),
                "removed" => ("-", "removed".to_string()),
                "changed" => {
                    let mut w = Vec::new();
                    if s.image_changed {
                        w.push(format!(
                            "image {} -> {}",
                            s.image_running.as_deref().unwrap_or("?"),
                            s.image_desired.as_deref().unwrap_or("?")
                        ));
                    }
                    if s.config_changed {
                        w.push("config changed".to_string());
                    }
                    ("~", w.join("; "))
                }
                _ => ("=", "unchanged".to_string()),
            };
            println!("  {mark} {:<18} {what}", s.service);
        }
    }
    if p.action == "apply" {
        let names: Vec<String> = p
            .secrets
            .iter()
            .filter(|s| !s.registry_auth)
            .map(|s| {
                format!(
                    "{} ({}{})",
                    s.var.as_deref().unwrap_or("-"),
                    s.path,
                    s.version.map(|v| format!(" v{v}")).unwrap_or_default()
                )
            })
            .collect();
        println!(
            "secrets        {}{}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            },
            match p.secrets_changed {
                Some(true) => "  [changed since the running release]",
                Some(false) => "  [as the running release]",
                None => "",
            }
        );
        let r = &p.registry_credential;
        println!(
            "registry       {}",
            if !r.needed {
                format!("no image from {}", r.registry)
            } else if r.in_manifest {
                format!("credential for {} from the manifest", r.registry)
            } else if r.on_box {
                format!("credential for {} already on the box", r.registry)
            } else {
                format!("credential for {} MISSING", r.registry)
            }
        );
        if let Some(d) = &p.disk {
            println!(
                "disk           {}: {} MiB free, needs {} MiB",
                d.path,
                d.free_bytes >> 20,
                d.need_bytes >> 20
            );
        }
        println!(
            "rollback       {}",
            match (p.rollback.auto_rollback, &p.rollback.target) {
                (false, _) => "auto_rollback off".to_string(),
                (true, Some(t)) => format!("auto_rollback on: a failure would bring {t} back"),
                (true, None) => "auto_rollback on: no healthy release to go back to".to_string(),
            }
        );
    }
    if p.refusals.is_empty() {
        println!("refusals       none");
    } else {
        println!("refusals");
        for r in &p.refusals {
            println!("  {}: {}", r.code, r.detail);
            let at = match (&r.service, &r.key) {
                (Some(s), Some(k)) => format!("{s}.{k}, "),
                (Some(s), None) => format!("{s}, "),
                (None, Some(k)) => format!("{k}, "),
                (None, None) => String::new(),
            };
            println!("      {at}rule: {}", r.rule);
            println!("      lift: {}", r.lift);
        }
    }
}
