//! Several environments on one box (issue 34, PROTOCOL 0.5): each is an *instance* of the agent
//! with its own config, state dir, token, Ziti identity, compose project, lock, metrics file and
//! units (`monky-deployd@<name>.service` …). The default (unnamed) instance is the single one of
//! earlier releases and keeps its paths: `/etc/monky-deployd/config.yaml`, `/var/lib/monky-deployd`.
//! A named instance lives in `/etc/monky-deployd/<name>/` and `/var/lib/monky-deployd/<name>/`,
//! that is *inside* the default instance's directories: hence the [`RESERVED`] names.
//!
//! Nothing here talks to the network: the box's instances are read from their configs
//! (`/etc/monky-deployd/config.yaml` and `/etc/monky-deployd/*/config.yaml`) and state files.

use std::path::{Path, PathBuf};

use crate::config::{Config, Transport};

/// Where the configs live; a named instance's is `<ETC_DIR>/<name>/config.yaml`.
pub const ETC_DIR: &str = "/etc/monky-deployd";
/// Where the state dirs live; a named instance's is `<STATE_ROOT>/<name>`.
pub const STATE_ROOT: &str = "/var/lib/monky-deployd";
/// The environment variable `--instance` can also come from.
pub const ENV_VAR: &str = "MONKY_DEPLOYD_INSTANCE";

/// Names no instance may take: every entry the default instance writes in its state dir (or
/// keeps in `/etc/monky-deployd`) that the name rule would otherwise allow, and `default` (what
/// `instances` calls the unnamed one). Names with a dot (`state.json`, `config.yaml`) can never
/// be instance names. A test in `agent/tests.rs` checks every entry a tick leaves in a state dir.
pub const RESERVED: &[&str] = &[
    // state dir (Config's paths; the guard's socket dir; the service's files are dotted)
    "releases",
    "current",
    "staging",
    "update",
    "docker",
    "guard",
    "lock",
    "snapshots",
    "overrides",
    // the tick lock's and state files' temporaries are dotted; the root unit's own dir is apart
    "default",
];

/// Why a name cannot be an instance's.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NameError {
    #[error(
        "instance name {0:?} is invalid: 1-31 of a-z 0-9 _ -, starting with a letter or digit"
    )]
    Form(String),
    #[error(
        "instance name {0:?} is reserved (the default instance uses it in its own directories)"
    )]
    Reserved(String),
}

/// `^[a-z0-9][a-z0-9_-]{0,30}$` and not [`RESERVED`].
pub fn check_name(name: &str) -> Result<(), NameError> {
    let b = name.as_bytes();
    let first = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = !b.is_empty()
        && b.len() <= 31
        && first(b[0])
        && b.iter().all(|&c| first(c) || c == b'_' || c == b'-');
    if !ok {
        return Err(NameError::Form(name.chars().take(64).collect()));
    }
    if RESERVED.contains(&name) {
        return Err(NameError::Reserved(name.into()));
    }
    Ok(())
}

/// Which instance this process is, and where the box's configs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// `None`: the default instance.
    pub name: Option<String>,
    /// [`ETC_DIR`] unless a test moves it (`--etc-dir`).
    pub etc_dir: PathBuf,
}

impl Default for Instance {
    fn default() -> Self {
        Instance {
            name: None,
            etc_dir: ETC_DIR.into(),
        }
    }
}

impl Instance {
    /// A checked name (`None` = the default instance).
    pub fn new(name: Option<&str>, etc_dir: &Path) -> Result<Instance, NameError> {
        if let Some(n) = name {
            check_name(n)?;
        }
        Ok(Instance {
            name: name.map(String::from),
            etc_dir: etc_dir.to_path_buf(),
        })
    }

    /// The config file when `--config` is not given.
    pub fn config_path(&self) -> PathBuf {
        match &self.name {
            None => self.etc_dir.join("config.yaml"),
            Some(n) => self.etc_dir.join(n).join("config.yaml"),
        }
    }

    /// `state_dir` when the config does not set it.
    pub fn default_state_dir(&self) -> PathBuf {
        match &self.name {
            None => STATE_ROOT.into(),
            Some(n) => Path::new(STATE_ROOT).join(n),
        }
    }

    /// `bootstrap_path` when the config does not set it: the grant is one env's secret.
    pub fn default_bootstrap_path(&self) -> PathBuf {
        match &self.name {
            None => self.etc_dir.join("bootstrap.jwt"),
            Some(n) => self.etc_dir.join(n).join("bootstrap.jwt"),
        }
    }

    /// The metrics label value and the name in tables: "" for the default instance.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// What `instances` prints for it.
    pub fn display(&self) -> &str {
        self.name.as_deref().unwrap_or("default")
    }

    /// The systemd units of this instance the update installer try-restarts.
    pub fn units(&self) -> Vec<String> {
        match &self.name {
            None => crate::selfupdate::install::AGENT_UNITS
                .iter()
                .map(|u| u.to_string())
                .collect(),
            Some(n) => ["monky-deployd", "monky-deployd-run", "monky-deployd-laptop"]
                .iter()
                .map(|u| format!("{u}@{n}.service"))
                .collect(),
        }
    }
}

static CURRENT: std::sync::OnceLock<Instance> = std::sync::OnceLock::new();

/// Names this process's instance, once, before any config is loaded (`main` does, from
/// `--instance`): every [`Config::load`] of the process then reads the config as that
/// instance's (the service's reload included).
pub fn set_current(i: Instance) {
    let _ = CURRENT.set(i);
}

/// This process's instance; the default one unless [`set_current`] named another.
pub fn current() -> &'static Instance {
    static DEFAULT: std::sync::OnceLock<Instance> = std::sync::OnceLock::new();
    CURRENT
        .get()
        .unwrap_or_else(|| DEFAULT.get_or_init(Instance::default))
}

/// One instance found on the box, and its config as it loads (or why it does not).
#[derive(Debug)]
pub struct Peer {
    pub instance: Instance,
    pub config: Result<Config, crate::config::ConfigError>,
}

/// Every instance configured on the box: the default one (if `<etc>/config.yaml` exists),
/// then the named ones (`<etc>/<name>/config.yaml`, valid names only) by name.
pub fn all(etc_dir: &Path) -> Vec<Peer> {
    configured(etc_dir).into_iter().map(load_peer).collect()
}

/// The instances whose config file exists, in [`all`]'s order, none loaded yet.
fn configured(etc_dir: &Path) -> Vec<Instance> {
    let mut out = Vec::new();
    let default = Instance {
        name: None,
        etc_dir: etc_dir.to_path_buf(),
    };
    if default.config_path().is_file() {
        out.push(default);
    }
    let mut names: Vec<String> = std::fs::read_dir(etc_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| check_name(n).is_ok())
        .collect();
    names.sort();
    for n in names {
        let i = Instance {
            name: Some(n),
            etc_dir: etc_dir.to_path_buf(),
        };
        if i.config_path().is_file() {
            out.push(i);
        }
    }
    out
}

fn load_peer(instance: Instance) -> Peer {
    let config = Config::load_for(&instance.config_path(), &instance);
    Peer { instance, config }
}

/// The box's other instances: every one but `me` (by name).
pub fn others(me: &Instance) -> Vec<Peer> {
    // filtered before loading: every timer tick pays for each config it parses
    configured(&me.etc_dir)
        .into_iter()
        .filter(|i| i.name != me.name)
        .map(load_peer)
        .collect()
}

/// What the other instances keep from this one's bundles: everything each depends on
/// ([`crate::depends`], as a peer: its data roots are files here).
#[derive(Debug, Default)]
pub struct PeerFacts {
    pub ports: Vec<u16>,
    pub files: Vec<PathBuf>,
    /// Their endpoints: no network of this instance's bundles may hold their addresses.
    pub remotes: Vec<crate::depends::Dep<crate::depends::Remote>>,
    /// Their compose projects (those whose config loads): no container name of this instance's
    /// bundles is inside their namespaces.
    pub projects: Vec<String>,
}

pub fn peer_facts(peers: &[Peer]) -> PeerFacts {
    let d = peer_depends(peers);
    let mut ports = d.port_values();
    ports.sort_unstable();
    ports.dedup();
    let mut files = d.path_values();
    files.sort();
    files.dedup();
    let mut projects: Vec<String> = peers
        .iter()
        .filter_map(|p| p.config.as_ref().ok())
        .map(|c| c.compose_project.clone())
        .filter(|p| !p.is_empty())
        .collect();
    projects.sort();
    projects.dedup();
    PeerFacts {
        ports,
        files,
        remotes: d.remotes,
        projects,
    }
}

/// Every other instance's dependencies, as a peer's; for a config that does not load, its
/// file and its default state dir and grant (its ports are not known: a warning says so).
pub fn peer_depends(peers: &[Peer]) -> crate::depends::Depends {
    use crate::depends::{Dep, Depends};
    let mut all = Depends::default();
    for p in peers {
        let who = p.instance.display();
        match &p.config {
            Ok(c) => all.extend(c.depends().as_peer(who)),
            Err(e) => {
                tracing::warn!(
                    "instance {who}: its config does not load, its ports are not known: {e}"
                );
                for path in [
                    p.instance.config_path(),
                    p.instance.default_state_dir(),
                    p.instance.default_bootstrap_path(),
                ] {
                    all.paths.push(Dep {
                        value: path,
                        from: format!("instance {who}'s files"),
                    });
                }
            }
        }
    }
    all
}

/// The other instances' own files and data roots (sorted).
pub fn peer_files(peers: &[Peer]) -> Vec<PathBuf> {
    peer_facts(peers).files
}

/// Host ports the other instances keep: no container of this one publishes them.
pub fn peer_ports(peers: &[Peer]) -> Vec<u16> {
    peer_facts(peers).ports
}

/// Whether two compose projects' names overlap: equal, or one extends the other past a
/// separator (`shop` and `shop-eu`: `shop`'s namespace `shop-*` holds `shop-eu-web-1`).
pub fn projects_overlap(a: &str, b: &str) -> bool {
    let extends = |long: &str, short: &str| {
        long.strip_prefix(short)
            .is_some_and(|rest| rest.starts_with(['-', '_']))
    };
    a == b || extends(a, b) || extends(b, a)
}

/// What this instance shares with another that it must not: the same state dir, env, compose
/// project, metrics file, bootstrap grant, Ziti identity, or (both on `proxy`) a local port.
pub fn clashes(me: &Config, peers: &[Peer]) -> Vec<String> {
    let mut out = Vec::new();
    for p in peers {
        let Ok(o) = &p.config else { continue };
        let who = p.instance.display();
        let same = |a: &Path, b: &Path| {
            monky_boundary::policy::lexical(a) == monky_boundary::policy::lexical(b)
        };
        if same(&me.state_dir, &o.state_dir) {
            out.push(format!(
                "state_dir {} is instance {who}'s too",
                me.state_dir.display()
            ));
        }
        if me.env_id == o.env_id {
            out.push(format!("env_id {} is instance {who}'s too", me.env_id));
        }
        if me.compose_project == o.compose_project {
            out.push(format!(
                "compose_project {} is instance {who}'s too",
                me.compose_project
            ));
        } else if projects_overlap(&me.compose_project, &o.compose_project) {
            out.push(format!(
                "compose_project {} and instance {who}'s {} share a name space (one extends \
                 the other), so each could take the other's containers, networks and volumes",
                me.compose_project, o.compose_project
            ));
        }
        for a in &me.bind_roots {
            for b in &o.bind_roots {
                let (la, lb) = (
                    monky_boundary::policy::lexical(a),
                    monky_boundary::policy::lexical(b),
                );
                if la.starts_with(&lb) || lb.starts_with(&la) {
                    out.push(format!(
                        "bind_roots {} overlaps instance {who}'s {}: its containers would read \
                         and rewrite the other's data",
                        a.display(),
                        b.display()
                    ));
                }
            }
        }
        if !me.metrics_textfile.is_empty() && me.metrics_textfile == o.metrics_textfile {
            out.push(format!(
                "metrics_textfile {} is instance {who}'s too",
                me.metrics_textfile
            ));
        }
        if same(&me.bootstrap_path, &o.bootstrap_path) {
            out.push(format!(
                "bootstrap_path {} is instance {who}'s too",
                me.bootstrap_path.display()
            ));
        }
        if me.transport == Transport::Sdk
            && o.transport == Transport::Sdk
            && me.identity == o.identity
        {
            out.push(format!("identity {} is instance {who}'s too", me.identity));
        }
        if me.transport == Transport::Proxy && o.transport == Transport::Proxy {
            for port in [me.tenancy.proxy_port, me.bao.proxy_port] {
                if [o.tenancy.proxy_port, o.bao.proxy_port].contains(&port) {
                    out.push(format!("proxy port {port} is instance {who}'s too"));
                }
            }
        }
    }
    out
}

/// The instance that stages self-updates for the box (the package is one per box): the first
/// that has self-update on (`agent_signing_keys`), the default instance before the named ones
/// by name. `None`: self-update is off everywhere.
pub fn updater(all: &[Peer]) -> Option<&Peer> {
    all.iter().find(|p| {
        p.config
            .as_ref()
            .is_ok_and(|c| !c.agent_signing_keys.is_empty())
    })
}

/// The release directories another instance may run or roll back to: every one it still has
/// on disk (its own reclaim already dropped the rest) and what it is staging. `None` when its
/// state dir cannot be read: then nothing it might use can be ruled out.
pub fn peer_release_dirs(c: &Config) -> Option<Vec<PathBuf>> {
    let mut v = Vec::new();
    // staging first: a release promoted (renamed) between the two reads is seen in one of them
    for d in [c.staging_dir(), c.releases_dir()] {
        match std::fs::read_dir(&d) {
            Ok(rd) => v.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!("{}: {e}", d.display());
                return None;
            }
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests;
