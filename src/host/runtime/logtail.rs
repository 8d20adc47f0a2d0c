//! A log tail read with its cap applied while reading (issue 31): the Engine API's log
//! response is fed in chunks as they arrive, demultiplexed frame by frame, and only the last
//! `cap` payload bytes are kept. Memory is `cap` plus an 8-byte header, whatever the input.

use std::collections::VecDeque;

/// The last `cap` bytes pushed, and how many were dropped before them.
pub struct TailBuf {
    buf: VecDeque<u8>,
    cap: usize,
    dropped: u64,
}

impl TailBuf {
    pub fn new(cap: usize) -> Self {
        TailBuf {
            buf: VecDeque::with_capacity(cap),
            cap,
            dropped: 0,
        }
    }

    pub fn push(&mut self, b: &[u8]) {
        if b.len() >= self.cap {
            self.dropped += (self.buf.len() + b.len() - self.cap) as u64;
            self.buf.clear();
            self.buf.extend(&b[b.len() - self.cap..]);
            return;
        }
        let over = (self.buf.len() + b.len()).saturating_sub(self.cap);
        self.buf.drain(..over);
        self.dropped += over as u64;
        self.buf.extend(b);
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Bytes pushed but not kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept bytes as text; after a cut, a partial UTF-8 sequence at the front is dropped.
    pub fn text(&self) -> String {
        let (a, b) = self.buf.as_slices();
        let mut v = Vec::with_capacity(self.buf.len());
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        let skip = if self.dropped > 0 {
            v.iter().take(3).take_while(|&&c| c & 0xC0 == 0x80).count()
        } else {
            0
        };
        String::from_utf8_lossy(&v[skip..]).into_owned()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Fewer than 8 bytes seen: framed or raw is not known yet.
    Unknown,
    /// Docker's multiplexed stream (no TTY): 8-byte headers (stream, 0, 0, 0, BE u32 length).
    Framed,
    /// A TTY container's raw text.
    Raw,
}

/// The Engine API's log stream, demultiplexed as it arrives, into a [`TailBuf`].
pub struct LogTail {
    mode: Mode,
    hdr: [u8; 8],
    hdr_len: usize,
    /// Payload bytes left in the current frame.
    left: usize,
    out: TailBuf,
}

impl LogTail {
    pub fn new(cap: usize) -> Self {
        LogTail {
            mode: Mode::Unknown,
            hdr: [0; 8],
            hdr_len: 0,
            left: 0,
            out: TailBuf::new(cap),
        }
    }

    /// One chunk of the response, split anywhere.
    pub fn feed(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            match self.mode {
                Mode::Raw => {
                    self.out.push(b);
                    return;
                }
                Mode::Unknown | Mode::Framed if self.left == 0 => {
                    let n = (8 - self.hdr_len).min(b.len());
                    self.hdr[self.hdr_len..self.hdr_len + n].copy_from_slice(&b[..n]);
                    self.hdr_len += n;
                    b = &b[n..];
                    if self.hdr_len < 8 {
                        return;
                    }
                    let h = self.hdr;
                    self.hdr_len = 0;
                    if self.mode == Mode::Unknown {
                        if matches!(h[0], 0..=2) && h[1..4] == [0, 0, 0] {
                            self.mode = Mode::Framed;
                        } else {
                            self.mode = Mode::Raw;
                            self.out.push(&h);
                            continue;
                        }
                    }
                    self.left = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
                }
                _ => {
                    let n = self.left.min(b.len());
                    self.out.push(&b[..n]);
                    self.left -= n;
                    b = &b[n..];
                }
            }
        }
    }

    /// The end of the stream: the kept text and the bytes dropped before it.
    pub fn finish(mut self) -> (String, u64) {
        if self.mode == Mode::Unknown && self.hdr_len > 0 {
            // a raw text shorter than a header
            let h = self.hdr;
            self.out.push(&h[..self.hdr_len]);
        }
        let dropped = self.out.dropped();
        (self.out.text(), dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(stream: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![stream, 0, 0, 0];
        v.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        v.extend_from_slice(payload);
        v
    }

    fn whole(input: &[u8], cap: usize) -> (String, u64) {
        let mut t = LogTail::new(cap);
        t.feed(input);
        t.finish()
    }

    #[test]
    fn frames_split_at_every_point_give_the_same_tail() {
        let mut input = Vec::new();
        for i in 0..40 {
            input.extend(frame(
                1 + (i % 2) as u8,
                format!("line {i} {}\n", "é".repeat(i)).as_bytes(),
            ));
        }
        let full = super::super::demux_logs(&input);
        for cap in [5, 64, 333, 100_000] {
            let want = whole(&input, cap);
            assert!(
                full.ends_with(want.0.trim_start_matches('\u{FFFD}')),
                "cap {cap}"
            );
            assert_eq!(want.1 as usize, full.len().saturating_sub(cap), "cap {cap}");
            for a in 0..input.len() {
                // two cuts: at `a`, and a few bytes further on (inside a header or a payload)
                let b = (a + 3).min(input.len());
                let mut t = LogTail::new(cap);
                t.feed(&input[..a]);
                t.feed(&input[a..b]);
                t.feed(&input[b..]);
                assert_eq!(t.finish(), want, "cap {cap}, cut at {a}");
            }
        }
        // byte by byte
        let mut t = LogTail::new(64);
        for b in &input {
            t.feed(std::slice::from_ref(b));
        }
        assert_eq!(t.finish(), whole(&input, 64));
    }

    #[test]
    fn the_tail_is_the_last_bytes_and_the_count_is_exact() {
        let payload: Vec<u8> = (0..10_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let input: Vec<u8> = payload.chunks(777).flat_map(|c| frame(1, c)).collect();
        let (text, dropped) = whole(&input, 1000);
        assert_eq!(text.as_bytes(), &payload[payload.len() - 1000..]);
        assert_eq!(dropped as usize, payload.len() - 1000);
        assert!(text.ends_with("9999\n"));
    }

    #[test]
    fn a_huge_single_line_keeps_only_its_end() {
        // one 64 MiB frame, streamed in 64 KiB chunks as hyper hands them over; nothing of it
        // is ever held but the cap
        let n = 64usize << 20;
        let mut t = LogTail::new(4096);
        t.feed(&[1, 0, 0, 0]);
        t.feed(&(n as u32).to_be_bytes());
        let chunk = vec![b'x'; 64 << 10];
        for _ in 0..(n / chunk.len()) - 1 {
            t.feed(&chunk);
            assert!(t.out.len() <= 4096 && t.out.buf.capacity() < 2 * 4096);
        }
        let mut last = vec![b'x'; (64 << 10) - 4];
        last.extend_from_slice(b"END\n");
        t.feed(&last);
        t.feed(&frame(2, b"after\n"));
        let (text, dropped) = t.finish();
        assert_eq!(text.len(), 4096);
        assert!(text.ends_with("xxEND\nafter\n"), "{}", &text[4000..]);
        assert_eq!(dropped as usize, n + 6 - 4096);
    }

    #[test]
    fn a_tty_container_s_raw_text_is_kept_as_is() {
        assert_eq!(whole(b"hello\nworld\n", 100), ("hello\nworld\n".into(), 0));
        assert_eq!(whole(b"hi", 100), ("hi".into(), 0));
        assert_eq!(whole(b"", 100), (String::new(), 0));
        let (t, d) = whole(b"0123456789abcdef", 4);
        assert_eq!((t.as_str(), d), ("cdef", 12));
    }

    #[test]
    fn a_cut_inside_a_character_drops_its_partial_front() {
        let (t, d) = whole(&frame(1, "aé€".as_bytes()), 4);
        // "é€" is 5 bytes: 4 kept start inside "é"
        assert_eq!((t.as_str(), d), ("€", 2));
    }
}
