//! Maintenance windows (box config `apply_windows`, in `apply_windows_tz` or the box's local
//! zone): outside every window an apply waits; `down` and an `urgent` check-in never do.
//! Entries are `<days> HH:MM-HH:MM` — days `daily`, `Mon`…`Sun`, a range `Mon-Fri` or a list
//! `Sat,Sun`; an end before the start runs past midnight (it belongs to its start day).

use jiff::civil::{Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{ToSpan, Zoned};

/// An `apply_windows` entry or `apply_windows_tz` the box cannot use.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error(
        "apply_windows entry {text:?}: {why} (e.g. \"Sat 02:00-05:00\", \"daily 03:00-03:30\")"
    )]
    Entry { text: String, why: &'static str },
    #[error("apply_windows_tz {tz:?}: {source}")]
    Zone {
        tz: String,
        #[source]
        source: jiff::Error,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub text: String,
    days: [bool; 7],
    start: Time,
    end: Time,
}

#[derive(Debug, Clone)]
pub struct Windows {
    list: Vec<Window>,
    tz: TimeZone,
}

fn day(s: &str) -> Option<usize> {
    let d = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let l = s.to_ascii_lowercase();
    d.iter().position(|x| l.starts_with(x) && l.len() <= 9)
}

fn idx(w: Weekday) -> usize {
    w.to_monday_zero_offset() as usize
}

fn hhmm(s: &str) -> Option<Time> {
    let (h, m) = s.split_once(':')?;
    let (h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    Time::new(h, m, 0, 0).ok()
}

impl Window {
    pub fn parse(text: &str) -> Result<Window, WindowError> {
        let bad = |why: &'static str| WindowError::Entry {
            text: text.to_string(),
            why,
        };
        let (days_s, range) = text
            .trim()
            .split_once(' ')
            .ok_or_else(|| bad("want <days> HH:MM-HH:MM"))?;
        let mut days = [false; 7];
        if days_s.eq_ignore_ascii_case("daily") {
            days = [true; 7];
        } else {
            for part in days_s.split(',') {
                match part.split_once('-') {
                    Some((a, b)) => {
                        let (a, b) = (
                            day(a).ok_or_else(|| bad("unknown day"))?,
                            day(b).ok_or_else(|| bad("unknown day"))?,
                        );
                        let mut i = a;
                        loop {
                            days[i] = true;
                            if i == b {
                                break;
                            }
                            i = (i + 1) % 7;
                        }
                    }
                    None => days[day(part).ok_or_else(|| bad("unknown day"))?] = true,
                }
            }
        }
        let (a, b) = range
            .trim()
            .split_once('-')
            .ok_or_else(|| bad("want HH:MM-HH:MM"))?;
        let (start, end) = (
            hhmm(a).ok_or_else(|| bad("bad start time"))?,
            hhmm(b).ok_or_else(|| bad("bad end time"))?,
        );
        if start == end {
            return Err(bad("empty window"));
        }
        Ok(Window {
            text: text.trim().to_string(),
            days,
            start,
            end,
        })
    }

    /// Whether `now` is inside this window.
    fn contains(&self, now: &Zoned) -> bool {
        let t = now.time();
        let today = idx(now.weekday());
        if self.start < self.end {
            self.days[today] && t >= self.start && t < self.end
        } else {
            // past midnight: the evening part belongs to today, the morning part to yesterday
            (self.days[today] && t >= self.start) || (self.days[(today + 6) % 7] && t < self.end)
        }
    }

    /// The next start at or after `now` (within eight days).
    fn next_start(&self, now: &Zoned) -> Option<Zoned> {
        for d in 0..8i64 {
            let date = now.date().checked_add(d.days()).ok()?;
            if !self.days[idx(date.weekday())] {
                continue;
            }
            let z = date
                .to_datetime(self.start)
                .to_zoned(now.time_zone().clone())
                .ok()?;
            if z >= *now {
                return Some(z);
            }
        }
        None
    }
}

impl Windows {
    /// No window configured: applies are never held back.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    pub fn parse(entries: &[String], tz: &str) -> Result<Windows, WindowError> {
        let list = entries
            .iter()
            .map(|e| Window::parse(e))
            .collect::<Result<Vec<_>, _>>()?;
        let tz = if tz.is_empty() && list.is_empty() {
            // The zone only places windows in time: with none configured no decision reads it,
            // and the box's own zone costs a walk of the whole zoneinfo tree (jiff names the
            // system zone by finding /etc/localtime in its database) on every tick.
            TimeZone::UTC
        } else if tz.is_empty() {
            TimeZone::system()
        } else {
            TimeZone::get(tz).map_err(|source| WindowError::Zone {
                tz: tz.to_string(),
                source,
            })?
        };
        Ok(Windows { list, tz })
    }

    pub fn now(&self) -> Zoned {
        // not `Zoned::now()`: that looks the system zone up first, only to be replaced
        jiff::Timestamp::now().to_zoned(self.tz.clone())
    }

    /// `None` when an apply may run now (no windows, or inside one); otherwise the window that
    /// opens next and when.
    pub fn wait(&self, now: &Zoned) -> Option<(String, Zoned)> {
        if self.list.is_empty() || self.list.iter().any(|w| w.contains(now)) {
            return None;
        }
        self.list
            .iter()
            .filter_map(|w| w.next_start(now).map(|z| (w.text.clone(), z)))
            .min_by(|a, b| a.1.cmp(&b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Zoned {
        // 2026-12-05 is a Saturday
        format!("{s}[UTC]").parse().unwrap()
    }

    fn ws(e: &[&str]) -> Windows {
        Windows::parse(&e.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "UTC").unwrap()
    }

    #[test]
    fn inside_outside_and_next() {
        let w = ws(&["Sat 02:00-05:00", "daily 03:00-03:30"]);
        assert!(w.wait(&at("2026-12-05T02:30:00")).is_none(), "inside Sat");
        assert!(
            w.wait(&at("2026-12-07T03:10:00")).is_none(),
            "inside daily (Mon)"
        );
        let (name, next) = w.wait(&at("2026-12-07T04:00:00")).unwrap();
        assert_eq!(name, "daily 03:00-03:30");
        assert_eq!(next.datetime().to_string(), "2026-12-08T03:00:00");
        let (name, next) = w.wait(&at("2026-12-05T01:00:00")).unwrap();
        assert_eq!(
            (name.as_str(), next.datetime().to_string()),
            ("Sat 02:00-05:00", "2026-12-05T02:00:00".into())
        );
        assert!(
            ws(&[]).wait(&at("2026-12-05T12:00:00")).is_none(),
            "no windows = always"
        );
    }

    #[test]
    fn past_midnight_and_ranges() {
        let w = ws(&["Mon-Fri 22:00-02:00"]);
        assert!(w.wait(&at("2026-12-07T23:00:00")).is_none(), "Mon evening");
        assert!(
            w.wait(&at("2026-12-08T01:00:00")).is_none(),
            "Tue early = Mon's window"
        );
        assert!(
            w.wait(&at("2026-12-07T01:00:00")).is_some(),
            "Mon early = Sun's, not listed"
        );
        assert!(
            w.wait(&at("2026-12-05T01:00:00")).is_none(),
            "Sat early = Fri's window"
        );
        let w = ws(&["Sat,Sun 10:00-11:00"]);
        assert!(w.wait(&at("2026-12-06T10:30:00")).is_none());
    }

    #[test]
    fn bad_entries_are_named() {
        for bad in [
            "Funday 01:00-02:00",
            "daily 25:00-26:00",
            "daily",
            "Sat 02:00-02:00",
            "Sat 2-3",
        ] {
            let e = Window::parse(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
        assert_eq!(
            Window::parse("daily").unwrap_err().to_string(),
            r#"apply_windows entry "daily": want <days> HH:MM-HH:MM (e.g. "Sat 02:00-05:00", "daily 03:00-03:30")"#
        );
        assert!(matches!(
            Windows::parse(&[], "Not/AZone"),
            Err(WindowError::Zone { .. })
        ));
        assert!(Windows::parse(&[], "Not/AZone")
            .unwrap_err()
            .to_string()
            .starts_with("apply_windows_tz \"Not/AZone\": "));
    }
}
