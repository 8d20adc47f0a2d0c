//! Log lines on stderr, redacted, with the sd-daemon priority prefix (`<3>` … `<7>`) when
//! stderr is the journal's stream: systemd reads that prefix (`SyslogLevelPrefix=yes`, the
//! default), so `journalctl -p warning` finds the agent's warnings and errors. Anywhere else
//! (a shell, a pipe) the lines are plain.
//!
//! Every line of an event carries the prefix: journald makes one entry per line, and a
//! multi-line message (a compose error, a log tail) would otherwise have its continuation lines
//! logged at the default priority, invisible under `-p err`.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::RawFd;

use tracing::{Level, Metadata};
use tracing_subscriber::fmt::MakeWriter;

/// The sd-daemon prefix for a tracing level (sd-daemon.h: SD_ERR, SD_WARNING, SD_INFO,
/// SD_DEBUG).
pub fn prefix(level: Level) -> &'static str {
    match level {
        Level::ERROR => "<3>",
        Level::WARN => "<4>",
        Level::INFO => "<6>",
        Level::DEBUG | Level::TRACE => "<7>",
    }
}

/// `text` with `prefix` at the start of each of its lines (none after a final newline).
pub fn prefixed(prefix: &str, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + prefix.len());
    for line in text.split_inclusive(|b| *b == b'\n') {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(line);
    }
    out
}

/// Whether `JOURNAL_STREAM` (`<device>:<inode>`, decimal) names the file `dev`/`ino`.
pub fn stream_matches(var: &OsStr, dev: u64, ino: u64) -> bool {
    let Some((d, i)) = var.to_str().and_then(|v| v.split_once(':')) else {
        return false;
    };
    matches!((d.parse::<u64>(), i.parse::<u64>()), (Ok(d), Ok(i)) if d == dev && i == ino)
}

/// Whether `fd` is the stream `JOURNAL_STREAM` names: the variable alone is inherited by
/// children whose stderr went elsewhere (systemd.exec(5) asks for this check).
pub fn fd_is_journal(fd: RawFd, var: Option<&OsStr>) -> bool {
    let Some(var) = var else { return false };
    // SAFETY: fstat fills a properly sized out-parameter; a bad fd is an error return.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)] // dev_t/ino_t widths differ across targets
    stream_matches(var, st.st_dev as u64, st.st_ino as u64)
}

/// Whether this process's stderr is connected to the journal.
pub fn stderr_is_journal() -> bool {
    fd_is_journal(2, std::env::var_os("JOURNAL_STREAM").as_deref())
}

/// The fmt layer's writer: one `write` per event (the layer formats the whole event first),
/// redacted as a whole, then prefixed line by line.
#[derive(Clone, Copy, Debug)]
pub struct Stderr {
    pub journal: bool,
}

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = Event;
    fn make_writer(&'a self) -> Event {
        Event { prefix: None }
    }
    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Event {
        Event {
            prefix: self.journal.then(|| prefix(*meta.level())),
        }
    }
}

/// One line the process writes outside the logger (before it starts, or a command's own error
/// line): redacted, and under the journal prefixed with `level`'s priority like every logged
/// line, so `journalctl -p err` finds a config error printed before logging is up.
pub fn early(level: Level, msg: &str) {
    let e = Event {
        prefix: stderr_is_journal().then(|| prefix(level)),
    };
    let mut text = msg.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let _ = std::io::stderr().write_all(&e.render(text.as_bytes()));
}

/// An error line outside the logger ([`early`] at `ERROR`).
pub fn early_error(msg: &str) {
    early(Level::ERROR, msg)
}

pub struct Event {
    prefix: Option<&'static str>,
}

impl Event {
    /// What goes to stderr for `buf`: redacted first, so a prefix can never split a secret.
    pub fn render(&self, buf: &[u8]) -> Vec<u8> {
        let text = monky_base::redact::redact(&String::from_utf8_lossy(buf));
        match self.prefix {
            Some(p) => prefixed(p, text.as_bytes()),
            None => text.into_bytes(),
        }
    }
}

impl Write for Event {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::io::stderr().write_all(&self.render(buf))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn levels_map_to_sd_daemon_priorities() {
        assert_eq!(prefix(Level::ERROR), "<3>");
        assert_eq!(prefix(Level::WARN), "<4>");
        assert_eq!(prefix(Level::INFO), "<6>");
        assert_eq!(prefix(Level::DEBUG), "<7>");
        assert_eq!(prefix(Level::TRACE), "<7>");
    }

    #[test]
    fn every_line_of_an_event_is_prefixed() {
        assert_eq!(prefixed("<3>", b"ERROR boom\n"), b"<3>ERROR boom\n");
        assert_eq!(
            prefixed("<4>", b"WARN compose failed:\nline 2\n\nline 4\n"),
            b"<4>WARN compose failed:\n<4>line 2\n<4>\n<4>line 4\n".to_vec()
        );
        assert_eq!(prefixed("<6>", b"no newline"), b"<6>no newline");
        assert_eq!(prefixed("<6>", b""), b"");
    }

    #[test]
    fn the_event_is_redacted_before_it_is_prefixed() {
        let token = "hvs.CAESIJlWxdoe0ISBFT4R0I2aYm8nFdQ3jZl1AnQ";
        let raw = format!("ERROR login failed\nAuthorization: Bearer {token}\n");
        let journal = Event {
            prefix: Some("<3>"),
        }
        .render(raw.as_bytes());
        let journal = String::from_utf8(journal).unwrap();
        assert!(!journal.contains("CAESIJ"), "{journal}");
        assert!(
            journal.starts_with("<3>ERROR login failed\n<3>"),
            "{journal}"
        );
        assert_eq!(journal.lines().count(), 2);
        assert!(journal.lines().all(|l| l.starts_with("<3>")), "{journal}");
        // not the journal: what the plain redacting writer wrote, unchanged
        let plain = Event { prefix: None }.render(raw.as_bytes());
        assert_eq!(plain, monky_base::redact::redact(&raw).into_bytes());
    }

    #[test]
    fn make_writer_for_prefixes_by_level_only_on_the_journal() {
        use tracing::callsite::Identifier;
        use tracing::field::FieldSet;
        use tracing::metadata::Kind;
        struct Cs;
        impl tracing::callsite::Callsite for Cs {
            fn set_interest(&self, _: tracing::subscriber::Interest) {}
            fn metadata(&self) -> &Metadata<'_> {
                unreachable!()
            }
        }
        static CS: Cs = Cs;
        let meta = |level| {
            Metadata::new(
                "e",
                "t",
                level,
                None,
                None,
                None,
                FieldSet::new(&[], Identifier(&CS)),
                Kind::EVENT,
            )
        };
        let on = Stderr { journal: true };
        let off = Stderr { journal: false };
        assert_eq!(on.make_writer_for(&meta(Level::WARN)).prefix, Some("<4>"));
        assert_eq!(on.make_writer_for(&meta(Level::ERROR)).prefix, Some("<3>"));
        assert_eq!(off.make_writer_for(&meta(Level::ERROR)).prefix, None);
        assert_eq!(on.make_writer().prefix, None);
    }

    #[test]
    fn journal_stream_must_name_this_very_fd() {
        let f = tempfile::tempfile().unwrap();
        let m = f.metadata().unwrap();
        let (dev, ino) = (m.dev(), m.ino());
        let var = |s: String| std::ffi::OsString::from(s);
        assert!(stream_matches(&var(format!("{dev}:{ino}")), dev, ino));
        assert!(!stream_matches(
            &var(format!("{dev}:{}", ino + 1)),
            dev,
            ino
        ));
        assert!(!stream_matches(
            &var(format!("{}:{ino}", dev + 1)),
            dev,
            ino
        ));
        for bad in ["", ":", "1", "x:y", "1:2:3", " 1:2"] {
            assert!(!stream_matches(OsStr::new(bad), 1, 2), "{bad:?}");
        }
        let fd = f.as_raw_fd();
        assert!(fd_is_journal(fd, Some(&var(format!("{dev}:{ino}")))));
        // the variable inherited, the fd elsewhere
        let other = tempfile::tempfile().unwrap();
        assert!(!fd_is_journal(
            other.as_raw_fd(),
            Some(&var(format!("{dev}:{ino}")))
        ));
        assert!(!fd_is_journal(fd, None));
        // a closed fd cannot be the journal
        assert!(!fd_is_journal(-1, Some(&var(format!("{dev}:{ino}")))));
    }
}
