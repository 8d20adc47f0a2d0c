//! The key census (issue 41): every key the compose specification gives a service, a top-level
//! entry or `deploy`, and every key the Engine API gives a container create (`ContainerConfig`,
//! `HostConfig` with its `Resources`), has a row, at the versions pinned in tests/data/census
//! (compose-spec `schema/compose-spec.json` at 170098ba07d9f53c383a41bfd4c5166b0a4529a6, moby
//! `api/swagger.yaml` v1.56 at b985e2313a8676e18072b442911fc8f64f17d440). A new key in either
//! fails here until someone decides what it is.

use std::collections::BTreeSet;

use super::*;
use crate::compose_keys;

const COMPOSE_SPEC: &str = include_str!("../../../tests/data/census/compose-spec.json");
const ENGINE_API: &str = include_str!("../../../tests/data/census/moby-api-1.56-container.yaml");

/// Engine keys the table keeps for engines older than the pinned API (still sent by compose
/// v1 and older v2 lines), with why they are not in v1.56's definitions.
const OLDER_API: &[(&str, &str)] = &[
    ("Config.MacAddress", "moved to EndpointSettings in API 1.44"),
    ("HostConfig.KernelMemory", "removed in API 1.42"),
    ("HostConfig.KernelMemoryTCP", "removed in API 1.42"),
];

fn spec() -> serde_json::Value {
    serde_json::from_str(COMPOSE_SPEC).unwrap()
}

fn props(v: &serde_json::Value) -> BTreeSet<String> {
    v["properties"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn engine_keys() -> BTreeSet<String> {
    let d: serde_yaml_ng::Value = serde_yaml_ng::from_str(ENGINE_API).unwrap();
    let defs = &d["definitions"];
    let names = |v: &serde_yaml_ng::Value| -> Vec<String> {
        v["properties"]
            .as_mapping()
            .map(|m| {
                m.keys()
                    .filter_map(|k| k.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = BTreeSet::new();
    for k in names(&defs["ContainerConfig"]) {
        out.insert(format!("Config.{k}"));
    }
    // HostConfig: allOf [Resources, {properties}]
    for k in names(&defs["Resources"]) {
        out.insert(format!("HostConfig.{k}"));
    }
    for part in defs["HostConfig"]["allOf"].as_sequence().unwrap() {
        for k in names(part) {
            out.insert(format!("HostConfig.{k}"));
        }
    }
    out
}

#[test]
fn every_compose_service_key_of_the_spec_has_a_row_and_every_row_is_in_the_spec() {
    let s = spec();
    let service = props(&s["definitions"]["service"]);
    assert!(service.len() > 80, "the schema read: {}", service.len());
    let missing: Vec<_> = service
        .iter()
        .filter(|k| compose_row(k).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "service keys without a row: {missing:?}"
    );
    let unknown: Vec<_> = ROWS
        .iter()
        .filter(|r| !r.compose.is_empty() && !service.contains(r.compose))
        .map(|r| r.compose)
        .collect();
    assert!(
        unknown.is_empty(),
        "rows for keys compose has not: {unknown:?}"
    );
    let mut seen = BTreeSet::new();
    for r in ROWS.iter().filter(|r| !r.compose.is_empty()) {
        assert!(seen.insert(r.compose), "{} twice", r.compose);
    }
}

#[test]
fn every_create_key_of_the_engine_api_has_a_row_and_every_row_is_in_the_api() {
    let api = engine_keys();
    assert!(api.len() > 80, "the definitions read: {}", api.len());
    let missing: Vec<_> = api
        .iter()
        .filter(|k| {
            let (sec, key) = k.split_once('.').unwrap();
            engine_row(sec, key).is_none()
        })
        .collect();
    assert!(missing.is_empty(), "create keys without a row: {missing:?}");
    let mut seen = BTreeSet::new();
    for e in ROWS.iter().flat_map(|r| r.engine.iter()) {
        assert!(seen.insert(*e), "{e} in two rows");
        assert!(
            api.contains(*e) || OLDER_API.iter().any(|(k, _)| k == e),
            "{e}: a row for a key the API has not"
        );
    }
}

/// The other compose tables (top level, `deploy`, volume, network, secret/config entries) are
/// compose-only (no engine spelling) and allow-lists: each of their keys is one the spec has,
/// and the spec's keys they leave out are refused by name, on purpose, with the reason here.
#[test]
fn the_other_compose_tables_name_only_spec_keys_and_leave_out_only_what_is_refused() {
    let s = spec();
    let d = &s["definitions"];
    // (table, the spec's keys, the table, the spec's keys it refuses)
    type Table<'a> = (
        &'a str,
        BTreeSet<String>,
        &'a [(&'a str, &'a str)],
        &'a [&'a str],
    );
    let tables: [Table; 6] = [
        // `include` has its own refusal in compose_check; `models` runs a host service
        ("top", props(&s), compose_keys::TOP, &["include", "models"]),
        ("deploy", props(&d["deployment"]), compose_keys::DEPLOY, &[]),
        ("volume", props(&d["volume"]), compose_keys::VOLUME, &[]),
        ("network", props(&d["network"]), compose_keys::NETWORK, &[]),
        // `environment` reads the agent's own environment; `external`, `driver`,
        // `driver_opts` and `template_driver` are swarm's
        (
            "secret",
            props(&d["secret"]),
            compose_keys::SECRET,
            &[
                "environment",
                "external",
                "driver",
                "driver_opts",
                "template_driver",
            ],
        ),
        (
            "config",
            props(&d["config"]),
            compose_keys::SECRET,
            &["environment", "external", "template_driver"],
        ),
    ];
    for (name, spec_keys, table, refused) in tables {
        assert!(!spec_keys.is_empty(), "{name}: the schema read");
        for (k, _) in table {
            // one table serves secrets and configs: `content` is a config's only
            let configs_only = name == "secret" && *k == "content";
            assert!(
                spec_keys.contains(*k) || configs_only,
                "{name}: {k} is not a key of the spec"
            );
        }
        let left: BTreeSet<&str> = spec_keys
            .iter()
            .map(String::as_str)
            .filter(|k| !table.iter().any(|(t, _)| t == k))
            .collect();
        let want: BTreeSet<&str> = refused.iter().copied().collect();
        assert_eq!(left, want, "{name}: keys of the spec the table leaves out");
    }
}

/// POLICY.md carries the table as [`policy_table`] renders it, between its markers.
#[test]
fn policy_md_carries_the_key_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/POLICY.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let (begin, end) = ("<!-- keys:begin -->\n", "<!-- keys:end -->");
    let a = doc
        .find(begin)
        .expect("POLICY.md has the keys:begin marker")
        + begin.len();
    let b = doc[a..].find(end).expect("and keys:end") + a;
    let want = policy_table();
    if std::env::var_os("MONKY_KEYS_BLESS").is_some() {
        std::fs::write(path, format!("{}{want}{}", &doc[..a], &doc[b..])).unwrap();
        return;
    }
    assert_eq!(
        &doc[a..b],
        want,
        "POLICY.md's key table is not the table's (MONKY_KEYS_BLESS=1 rewrites it)"
    );
}
