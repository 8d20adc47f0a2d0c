//! Every line the process writes carries its priority on the journal's stream (issue 43 §8),
//! also the ones written before the logger starts: a config that cannot be read and a usage
//! error are found by `journalctl -p err`. The stream is a file whose device and inode
//! `JOURNAL_STREAM` names, as systemd sets it; no dockerd is needed.

use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

use crate::common::BIN;

/// `args` with stderr on a file that `JOURNAL_STREAM` names (or not): exit code and stderr.
fn on_stream(args: &[&str], journal: bool) -> (i32, String) {
    let f = tempfile::NamedTempFile::new().unwrap();
    let m = f.as_file().metadata().unwrap();
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("MONKY_LOG")
        .stdout(Stdio::null())
        .stderr(f.reopen().unwrap());
    if journal {
        c.env("JOURNAL_STREAM", format!("{}:{}", m.dev(), m.ino()));
    } else {
        c.env_remove("JOURNAL_STREAM");
    }
    let code = c.status().unwrap().code().unwrap_or(-1);
    (code, std::fs::read_to_string(f.path()).unwrap())
}

#[test]
fn every_line_on_the_journal_carries_its_priority_from_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-config.yaml");
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "env_id: [unclosed\n").unwrap();
    let cases: Vec<(&str, Vec<String>, i32)> = vec![
        (
            "a config that does not exist",
            vec![
                "--config".into(),
                missing.display().to_string(),
                "run".into(),
                "--once".into(),
            ],
            1,
        ),
        (
            "a config that is not YAML",
            vec![
                "--config".into(),
                broken.display().to_string(),
                "status".into(),
            ],
            1,
        ),
        (
            "a usage error",
            vec!["run".into(), "--no-such-flag".into()],
            2,
        ),
    ];
    for (what, args, want) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = on_stream(&args, true);
        assert_eq!(code, *want, "{what}: {err}");
        assert!(!err.trim().is_empty(), "{what}: nothing written");
        for line in err.lines() {
            assert!(
                line.starts_with("<3>"),
                "{what}: a line without the error priority: {line:?}\n{err}"
            );
        }
        // the control: the same run on a terminal or a pipe has no prefix
        let (code, plain) = on_stream(&args, false);
        assert_eq!(code, *want, "{what}: {plain}");
        assert!(
            !plain.contains("<3>") && !plain.trim().is_empty(),
            "{what}: {plain}"
        );
        eprintln!(
            "{what}: exit {code}, {} line(s) at <3>",
            err.lines().count()
        );
    }
}
