use super::*;

/// A `Compose` whose "CLI" is `sh -c script` (the `-p project` and step arguments land in
/// the script's `$0…`).
fn shell(script: &str) -> Compose {
    Compose {
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        flavour: ComposeFlavour::Standalone,
        project: "t32".into(),
        docker_config: PathBuf::from("/nonexistent"),
        docker_host: "unix:///nonexistent".into(),
        home: PathBuf::from("/nonexistent"),
        bounds: Bounds::within(Duration::from_secs(60)),
        wait: DockerWait::default(),
        overrides: PathBuf::from("/nonexistent"),
    }
}

#[test]
fn a_releases_override_is_found_by_its_sha_through_current() {
    let d = tempfile::tempdir().unwrap();
    let mut c = shell("true");
    c.overrides = d.path().join("overrides");
    let rel = d.path().join("releases").join("abc");
    std::fs::create_dir_all(&rel).unwrap();
    std::fs::create_dir_all(&c.overrides).unwrap();
    let cur = d.path().join("current");
    std::os::unix::fs::symlink(&rel, &cur).unwrap();
    assert_eq!(c.override_of(&rel), None);
    std::fs::write(c.overrides.join("abc.yaml"), "services: {}\n").unwrap();
    assert_eq!(c.override_of(&rel), Some(c.overrides.join("abc.yaml")));
    assert_eq!(c.override_of(&cur), Some(c.overrides.join("abc.yaml")));
    assert_eq!(
        c.override_of(&d.path().join("staging").join("abc")),
        Some(c.overrides.join("abc.yaml"))
    );
}

#[tokio::test]
async fn stdout_and_stderr_come_back_whole_and_apart() {
    // 300 000 bytes on stdout: many reads, several buffer growths
    let c = shell("head -c 300000 /dev/zero | tr '\\0' x; printf 'warn\\n' >&2");
    let (out, err) = c
        .run_split(None, &["config"], Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(out.len(), 300_000);
    assert!(out.bytes().all(|b| b == b'x'));
    assert_eq!(err.as_str(), "warn\n");
    // `run` merges them, stderr on a line of its own
    let all = c.run(None, &["x"], Duration::from_secs(30)).await.unwrap();
    assert_eq!(all.len(), 300_000 + "\nwarn\n".len());
    assert!(all.ends_with("x\nwarn\n"));
}

#[tokio::test]
async fn a_failed_run_merges_its_output_into_the_error() {
    let c = shell("printf 'out'; printf 'bad\\n' >&2; exit 3");
    match c
        .run_split(None, &["config"], Duration::from_secs(30))
        .await
    {
        Err(RuntimeError::Compose { rc, output, .. }) => {
            assert_eq!(rc, 3);
            assert_eq!(output, "out\nbad");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn read_wiped_reads_everything() {
    let data: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(*read_wiped(Some(&data[..])).await.unwrap(), data);
    assert!(read_wiped(None::<&[u8]>).await.unwrap().is_empty());
}

/// The same text as `from_utf8_lossy`.
#[test]
fn wiped_text_is_lossy_utf8() {
    for b in [
        &b"plain"[..],
        b"",
        "caf\u{e9} \u{1f600}".as_bytes(),
        b"a\xffb\xfe\xfdc",
        b"cut \xe2\x82",
        b"\xc0\x80 overlong",
    ] {
        let t = wiped_text(Zeroizing::new(b.to_vec()));
        assert_eq!(t.as_str(), String::from_utf8_lossy(b), "{b:?}");
    }
}
