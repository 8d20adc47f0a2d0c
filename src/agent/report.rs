//! Reports to tenancy (redacted, then cut to the protocol's limits) and the text helpers
//! they use.

use super::*;
use monky_base::redact::Keep;
use monky_wire::tenancy::ReportResult;

/// One report for tenancy, as an action decided it.
pub(super) struct Said {
    sha: Option<String>,
    result: ReportResult,
    detail: String,
    log_tail: Zeroizing<String>,
}

/// What an action did: the reports the tick sends, in order, and how the tick ends. Actions
/// decide what to say; only the tick says it.
pub(super) struct Outcome {
    pub(super) said: Vec<Said>,
    pub(super) res: Result<Exit, Failure>,
}

impl Outcome {
    /// Nothing to tell tenancy beyond the check-in.
    pub(super) fn quiet(res: Result<Exit, Failure>) -> Outcome {
        Outcome {
            said: Vec::new(),
            res,
        }
    }

    /// `result` for `sha` with `detail`; the tick ends `res`.
    pub(super) fn says(
        sha: Option<&str>,
        result: ReportResult,
        detail: &str,
        res: Result<Exit, Failure>,
    ) -> Outcome {
        Outcome::quiet(res).and(sha, result, detail, "")
    }

    /// `sha` reported `applied` (with why, when there is more to say); exit 0.
    pub(super) fn applied(sha: &str, detail: &str) -> Outcome {
        Outcome::says(Some(sha), ReportResult::Applied, detail, Ok(Exit::Ok))
    }

    /// The failure reported as `failed` for `sha`, with its log tail; the tick ends with it.
    pub(super) fn failed(sha: Option<&str>, f: Failure) -> Outcome {
        let (detail, tail) = (f.message().to_string(), f.log_tail().to_string());
        Outcome::quiet(Err(f)).and(sha, ReportResult::Failed, &detail, &tail)
    }

    /// `note` before the first report's detail (`LOCK_OVERRIDDEN: …; <detail>`).
    pub(super) fn noted(mut self, note: Option<String>) -> Outcome {
        if let (Some(n), Some(first)) = (note, self.said.first_mut()) {
            first.detail = if first.detail.is_empty() {
                n
            } else {
                format!("{n}; {}", first.detail)
            };
        }
        self
    }

    /// One more report, after those already decided.
    pub(super) fn and(
        mut self,
        sha: Option<&str>,
        result: ReportResult,
        detail: &str,
        log_tail: &str,
    ) -> Outcome {
        self.said.push(Said {
            sha: sha.map(str::to_string),
            result,
            detail: detail.to_string(),
            log_tail: Zeroizing::new(log_tail.to_string()),
        });
        self
    }
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// Sends one report: the containers as they are, the text redacted, then cut.
    pub(super) async fn send(&mut self, s: Said) {
        let containers = match self.now.seen.clone() {
            Some(cs) => cs,
            None => self.containers().await,
        };
        // redaction first, then the cut, then the cut's edges (as everywhere)
        let detail = redact::redact_cut(&s.detail, DETAIL_MAX, Keep::Head);
        let log_tail = redact::redact_cut(&s.log_tail, LOG_TAIL_MAX, Keep::Tail);
        let token = self.tokens.bearer();
        monky_base::testhook::pause("before-report");
        let result = s.result;
        let rep = Report {
            env_id: &self.cfg.env_id,
            sha: s.sha.as_deref(),
            result,
            detail,
            log_tail,
            agent_version: VERSION,
            containers: &containers,
        };
        match self.c.tenancy.report(&token, &rep).await {
            Ok(()) => {
                self.state.last_report = Some(state::now());
                self.state.last_result = Some(result.to_string());
                if result != ReportResult::Failed {
                    self.state.last_error = None;
                }
            }
            Err(e) => warn!("report {result} not delivered: {e}"),
        }
    }
}

/// A refusal as the failure the tick reports, with the output that explains it.
pub(super) fn refused(r: Refusal, log_tail: &str) -> Failure {
    Failure::from(r).with_log_tail(log_tail)
}

/// The registry's own words from a failed pull, on one line (0.1.7). Redacted whole before it
/// is cut: a secret cut in half would no longer match.
pub(super) fn pull_diagnosis(output: &str) -> String {
    let output = redact::redact(output);
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error")
                || l.contains("denied")
                || l.contains("unauthorized")
                || l.contains("manifest")
                || l.contains("credentials")
                || l.contains("refused")
                || l.contains("no such host")
                || l.contains("not found")
        })
        .collect();
    let joined = if lines.is_empty() {
        output.trim().to_string()
    } else {
        lines.join(" | ")
    };
    redact::redact_cut(&joined, 600, Keep::Tail)
}

/// A `compose config` failure for a refusal: every line compose wrote (its own list of what is
/// wrong rarely says "error" on each line), redacted, the release's own path written `.` (no
/// refusal quotes a scratch or release directory), then cut.
pub(super) fn config_diagnosis(output: &str, release: &Path) -> String {
    let output = redact::redact(output);
    let dir = release.to_string_lossy();
    let joined = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            if dir.is_empty() {
                l.to_string()
            } else {
                l.replace(dir.as_ref(), ".")
            }
        })
        .collect::<Vec<_>>()
        .join(" | ");
    redact::redact_cut(&joined, 600, Keep::Head)
}

/// The `UNHEALTHY` detail naming each bad service (or that services are missing).
pub(super) fn unhealthy_detail(timeout_s: u64, bad: &[String]) -> String {
    format!(
        "UNHEALTHY: not healthy within {timeout_s}s: {}",
        if bad.is_empty() {
            "services missing".to_string()
        } else {
            bad.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_diagnosis_keeps_every_line_and_no_release_path() {
        let out = "3 error(s) decoding:\n\n* 'services[dev].devices[0]' expected a map\n\
                   Duplicate mount points: [/st/plan-1/etc/p:/p:rw, d:/p:rw]\n";
        let d = config_diagnosis(out, Path::new("/st/plan-1"));
        assert_eq!(
            d,
            "3 error(s) decoding: | * 'services[dev].devices[0]' expected a map | \
             Duplicate mount points: [./etc/p:/p:rw, d:/p:rw]"
        );
    }

    #[test]
    fn a_pull_diagnosis_keeps_the_registry_words_redacted_then_cut() {
        let out = "Pulling web ...\n\nError response from daemon: pull access denied for x, \
                   repository does not exist\nunauthorized: authentication required\nDone\n";
        assert_eq!(
            pull_diagnosis(out),
            "Error response from daemon: pull access denied for x, repository does not exist \
             | unauthorized: authentication required"
        );
        // nothing that looks like an error: the whole output, trimmed
        assert_eq!(pull_diagnosis("  just this \n"), "just this");
        // a token in the output is masked before the cut, and the cut keeps the tail
        let tok = format!("hvs.{}", "a".repeat(40));
        let long = format!("error: {tok} {}", "x".repeat(2000));
        let d = pull_diagnosis(&long);
        assert!(!d.contains(&tok) && d.len() <= 600, "{d}");
    }

    #[test]
    fn cuts_never_split_a_character() {
        assert_eq!(redact::redact_cut("ééé", 3, Keep::Head), "é");
        assert_eq!(redact::redact_cut("ééé", 3, Keep::Tail), "é");
        assert_eq!(redact::redact_cut("abc", 9, Keep::Head), "abc");
        assert_eq!(
            unhealthy_detail(20, &[]),
            "UNHEALTHY: not healthy within 20s: services missing"
        );
    }
}
