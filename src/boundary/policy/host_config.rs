//! `HostConfig` of a container create: the allow-list of keys, the rules of the engine-only
//! ones, and the shapes of `Binds` and `Mounts`. A key in no table is refused by name and value.
//! The keys a compose service sets too (privilege, namespaces, ports, limits, bind sources…)
//! are judged by the container rules (`boundary::container`) over the whole create.

use std::path::Path;

use serde_json::Value;

use super::paths::HostBind;
use super::{deny, is_zero, network_name, short_value, str_of, BoxFacts, Refs, R};
use crate::keys;
use crate::{Refusal, RefusalCode};

/// A rule over one non-zero `HostConfig` key: `(path, value, boundary, refs)`, where `path` is
/// `HostConfig.<key>` for the refusal.
type Rule = fn(&str, &Value, &BoxFacts, &mut Refs) -> R;

pub(super) const HOST_RULES: &[(&str, Rule)] = &[
    ("Binds", binds),
    ("Mounts", mounts),
    ("NetworkMode", network_mode),
    ("VolumesFrom", volumes_from),
    ("IpcMode", joins),
    ("PidMode", joins),
    ("LogConfig", log_config),
    ("Isolation", isolation),
    ("Runtime", runtime),
    ("OomScoreAdj", oom_score_adj),
    // the container rules judge these on the whole create (`boundary::container`), with the
    // file passes' functions, once every key here is known
    ("Privileged", container_rule),
    ("UTSMode", container_rule),
    ("UsernsMode", container_rule),
    ("CgroupnsMode", container_rule),
    ("Devices", container_rule),
    ("DeviceRequests", container_rule),
    ("DeviceCgroupRules", container_rule),
    ("SecurityOpt", container_rule),
    ("CapAdd", container_rule),
    ("Sysctls", container_rule),
    ("PortBindings", container_rule),
    ("Ulimits", container_rule),
    ("Memory", container_rule),
    ("PidsLimit", container_rule),
    // engine keys the container description leaves out: the file passes refuse the compose keys
    // that set them by name (`compose_keys`) or, `cgroup_parent`, leave them to this guard.
    // Only the box's own permit lets these through
    ("CgroupParent", privilege),
    ("Cgroup", privilege),
    ("OomKillDisable", privilege),
    ("MaskedPaths", unmask),
    ("ReadonlyPaths", unmask),
    ("Annotations", privilege),
    ("StorageOpt", privilege),
    ("CpuRealtimePeriod", privilege),
    ("CpuRealtimeRuntime", privilege),
];

pub(super) fn host_config(hc: &Value, b: &BoxFacts, refs: &mut Refs) -> R {
    let Some(hc) = hc.as_object() else {
        return deny("HostConfig is not an object");
    };
    for (k, v) in hc {
        let path = format!("HostConfig.{k}");
        if keys::engine_passes_by_name("HostConfig", k) || is_zero(v) {
            continue;
        }
        match HOST_RULES.iter().find(|(n, _)| n == k) {
            Some((_, rule)) => rule(&path, v, b, refs)?,
            None => return refused(&path, v),
        }
    }
    // An empty MaskedPaths list is "zero" above but means "unmask everything".
    for k in ["MaskedPaths", "ReadonlyPaths"] {
        if matches!(hc.get(k), Some(Value::Array(a)) if a.is_empty()) && !b.privileged {
            return Err(Refusal::new(
                RefusalCode::PrivilegedRefused,
                format!("HostConfig.{k} (empty list unmasks /proc and /sys)"),
            ));
        }
    }
    Ok(())
}

fn refused(path: &str, v: &Value) -> R {
    deny(format!("{path} {}", short_value(v)))
}

/// Judged by the container rules ([`crate::container`]) over the whole create.
fn container_rule(_: &str, _: &Value, _: &BoxFacts, _: &mut Refs) -> R {
    Ok(())
}

/// A privilege the box may permit: the file passes refuse its compose key with the same code
/// (`boundary::keys`, a privilege row).
fn privilege(path: &str, v: &Value, b: &BoxFacts, _: &mut Refs) -> R {
    if b.privileged {
        Ok(())
    } else {
        Err(Refusal::new(
            RefusalCode::PrivilegedRefused,
            format!("{path} {}", short_value(v)),
        ))
    }
}

/// MaskedPaths: [] (systempaths=unconfined) unmasks /proc; zero-ness is not enough, and the
/// refusal names no value. The file passes refuse the same shape as `security_opt`
/// (`PRIVILEGED_REFUSED`): engine-only as a key, the same code.
fn unmask(path: &str, _: &Value, b: &BoxFacts, _: &mut Refs) -> R {
    if b.privileged {
        Ok(())
    } else {
        Err(Refusal::new(RefusalCode::PrivilegedRefused, path))
    }
}

fn binds(path: &str, v: &Value, _: &BoxFacts, refs: &mut Refs) -> R {
    for s in v.as_array().into_iter().flatten() {
        bind_string(str_of(s), refs).map_err(|d| d.within(path))?;
    }
    Ok(())
}

fn mounts(path: &str, v: &Value, _: &BoxFacts, refs: &mut Refs) -> R {
    for m in v.as_array().into_iter().flatten() {
        mount(m, refs).map_err(|d| d.within(path))?;
    }
    Ok(())
}

fn network_mode(_: &str, v: &Value, _: &BoxFacts, refs: &mut Refs) -> R {
    network_name(str_of(v), refs)
}

/// Another container of the project: its mounts were judged when it was created.
fn volumes_from(_: &str, v: &Value, _: &BoxFacts, refs: &mut Refs) -> R {
    for c in v.as_array().into_iter().flatten() {
        let id = str_of(c).split(':').next().unwrap_or("");
        refs.containers.insert(id.to_string());
    }
    Ok(())
}

/// `container:<id>` (`IpcMode`, `PidMode`): for the caller to check it is the project's own;
/// the mode itself is the container rules'.
fn joins(_: &str, v: &Value, _: &BoxFacts, refs: &mut Refs) -> R {
    if let Some(id) = str_of(v).strip_prefix("container:") {
        refs.containers.insert(id.to_string());
    }
    Ok(())
}

fn log_config(path: &str, v: &Value, _: &BoxFacts, _: &mut Refs) -> R {
    let drv = v.get("Type").map(str_of).unwrap_or("");
    if !drv.is_empty() && !crate::policy::rules::LOG_DRIVERS.contains(&drv) {
        return deny(format!("{path}.Type {drv}"));
    }
    Ok(())
}

/// Not a privilege: a box's permit does not let another isolation through.
fn isolation(path: &str, v: &Value, _: &BoxFacts, _: &mut Refs) -> R {
    if str_of(v) == "default" {
        return Ok(());
    }
    refused(path, v)
}

fn runtime(path: &str, v: &Value, b: &BoxFacts, refs: &mut Refs) -> R {
    if keys::ENGINE_DEFAULTS.contains(&("runtime", str_of(v))) {
        return Ok(());
    }
    privilege(path, v, b, refs)
}

/// An integer is the container rules'; anything else is no score the engine knows.
fn oom_score_adj(path: &str, v: &Value, b: &BoxFacts, refs: &mut Refs) -> R {
    match v.as_i64() {
        Some(_) => Ok(()),
        None => privilege(path, v, b, refs),
    }
}

/// A `Binds` entry's options; its source is the container rules' (`binds`). Read by the one
/// parser of an engine bind ([`crate::volume::engine_bind`]).
fn bind_string(s: &str, refs: &mut Refs) -> R {
    let b = crate::volume::engine_bind(s);
    let src = b.source;
    for o in &b.options {
        match *o {
            "ro" | "rw" | "nocopy" | "rprivate" | "private" => {}
            other => return deny(format!("{src}: bind option {other}")),
        }
    }
    if src.starts_with('/') {
        // judged by the container rules' bind rule; recorded for the invariant
        refs.binds
            .push(HostBind::new(Path::new(src), !b.read_only()));
        Ok(())
    } else {
        refs.volumes.insert(src.to_string());
        Ok(())
    }
}

/// A `Mounts` entry's shape; a bind's source is the container rules' (`binds`).
fn mount(m: &Value, refs: &mut Refs) -> R {
    let ty = m.get("Type").map(str_of).unwrap_or("");
    let src = m.get("Source").map(str_of).unwrap_or("");
    let read_only = m.get("ReadOnly").and_then(|v| v.as_bool()).unwrap_or(false);
    if let Some(o) = m.as_object() {
        for k in o.keys() {
            if ![
                "Type",
                "Source",
                "Target",
                "ReadOnly",
                "Consistency",
                "BindOptions",
                "VolumeOptions",
                "TmpfsOptions",
            ]
            .contains(&k.as_str())
                && !is_zero(&o[k])
            {
                return deny(format!("mount key {k}"));
            }
        }
    }
    match ty {
        "bind" => {
            if let Some(bo) = m.get("BindOptions").and_then(|v| v.as_object()) {
                for (k, v) in bo {
                    let ok = match k.as_str() {
                        "Propagation" => ["", "rprivate", "private"].contains(&str_of(v)),
                        "CreateMountpoint"
                        | "NonRecursive"
                        | "ReadOnlyNonRecursive"
                        | "ReadOnlyForceRecursive" => true,
                        _ => is_zero(v),
                    };
                    if !ok {
                        return deny(format!("{src}: BindOptions.{k} {}", short_value(v)));
                    }
                }
            }
            // judged by the container rules' bind rule; recorded for the invariant
            refs.binds.push(HostBind::new(Path::new(src), !read_only));
            Ok(())
        }
        "volume" => {
            if let Some(vo) = m.get("VolumeOptions").and_then(|v| v.as_object()) {
                for (k, v) in vo {
                    if !["NoCopy", "Labels", "Subpath"].contains(&k.as_str()) && !is_zero(v) {
                        return deny(format!("volume {src}: VolumeOptions.{k}"));
                    }
                }
            }
            if !src.is_empty() {
                refs.volumes.insert(src.to_string());
            }
            Ok(())
        }
        "tmpfs" => Ok(()),
        other => deny(format!("mount type {other:?}")),
    }
}
