//! The canonical bundle sha (PROTOCOL §2).

use sha2::{Digest, Sha256};
use std::path::Path;

/// Lowercase hex SHA-256 over every file in ascending byte order of `path`:
/// `path bytes ‖ 0x00 ‖ content length as u64 big-endian ‖ content bytes`.
///
/// Paths are taken as given (no normalisation, no safety check), so tests can hash deliberately
/// unsafe bundles (`../x`, duplicates) exactly as the agent would.
pub fn bundle_sha(files: &[(String, Vec<u8>)]) -> String {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (path, content) in sorted {
        h.update(path.as_bytes());
        h.update([0u8]);
        h.update((content.len() as u64).to_be_bytes());
        h.update(content);
    }
    hex::encode(h.finalize())
}

/// Reads a directory recursively into bundle files: paths relative to `dir`, `/`-separated,
/// sorted by path bytes. Symlinks are followed. Panics (test support) on I/O errors.
pub fn read_bundle_dir(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let rd = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read bundle dir {}: {e}", dir.display()));
        for ent in rd {
            let ent = ent.unwrap_or_else(|e| panic!("read bundle dir {}: {e}", dir.display()));
            let p = ent.path();
            let md = std::fs::metadata(&p).unwrap_or_else(|e| panic!("stat {}: {e}", p.display()));
            if md.is_dir() {
                walk(root, &p, out);
            } else if md.is_file() {
                let rel = p.strip_prefix(root).expect("under root");
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let content =
                    std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
                out.push((rel.join("/"), content));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PROTOCOL.md test vector.
    #[test]
    fn protocol_test_vector() {
        let files = vec![
            (
                "compose.yaml".to_string(),
                b"services:\n  web:\n    image: example/web:1\n".to_vec(),
            ),
            ("bundle.json".to_string(), b"{\"serial\": 1}\n".to_vec()),
            ("env.template".to_string(), b"API_KEY=${API_KEY}\n".to_vec()),
        ];
        assert_eq!(
            bundle_sha(&files),
            "e9de4379648ca6cfeb8d76cf28574b371c9c10dd5a5656deda6cfc4f82beb0a2"
        );
    }

    #[test]
    fn order_is_by_path_bytes_not_input_order() {
        let a = vec![("b".to_string(), vec![1]), ("a".to_string(), vec![2])];
        let b = vec![("a".to_string(), vec![2]), ("b".to_string(), vec![1])];
        assert_eq!(bundle_sha(&a), bundle_sha(&b));
        // the length prefix separates path from content
        let c = vec![("ab".to_string(), vec![])];
        let d = vec![("a".to_string(), b"b".to_vec())];
        assert_ne!(bundle_sha(&c), bundle_sha(&d));
    }

    #[test]
    fn reads_a_directory_with_slash_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
        std::fs::write(dir.path().join("compose.yaml"), "x").unwrap();
        std::fs::write(dir.path().join("sub/deeper/f.txt"), "y").unwrap();
        let files = read_bundle_dir(dir.path());
        let paths: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(paths, ["compose.yaml", "sub/deeper/f.txt"]);
    }
}
