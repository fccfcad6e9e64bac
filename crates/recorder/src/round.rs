//! Deciding a round of a monitor checked from several regions: a pure
//! function of the round's regions, its quorum, the answers received and
//! which silent regions are offline. No I/O, no clock: the caller says when.
//!
//! Rules (docs/architecture.md): the regions that answered (A)
//! passed or failed; a missing region is `offline` when no checker of its
//! is live, else `no_answer`, and neither counts as a failure. The
//! effective quorum is `min(quorum, |A|)`; the round is down iff `|A| >= 1`
//! and at least that many regions failed. Fewer failures than that is a
//! regional problem: the round is up and the note names the failing
//! regions. No answer at all gives no verdict.

use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashSet};
use uptime_contracts::{CheckOutcome, CheckResult, RegionOutcome, RegionSeen, Round, Trigger};
use uuid::Uuid;

/// Longest error text a verdict carries (the failing regions' errors joined).
pub const MAX_VERDICT_ERROR_CHARS: usize = 1_000;

/// The reporter named on a round's verdict.
pub const VERDICT_REPORTER: &str = "recorder (round)";

/// A round to decide.
#[derive(Debug, Clone)]
pub struct RoundInput<'a> {
    pub round_id: Uuid,
    pub monitor_id: i64,
    /// The definition the round's checks were made for.
    pub definition_version: i64,
    pub trigger: Trigger,
    pub due_at: DateTime<Utc>,
    /// The round's regions, in the order they are reported.
    pub regions: &'a [String],
    pub quorum: u32,
    /// What each region answered (answers of regions outside the round are ignored).
    pub answers: &'a BTreeMap<String, CheckResult>,
    /// Regions with no live checker.
    pub offline: &'a HashSet<String>,
}

/// A decided round: what each region saw, and the result that moves the
/// monitor's state (`None` when no region answered).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub round: Round,
    pub verdict: Option<CheckResult>,
}

/// Decides `input` (see the module's rules).
pub fn decide(input: &RoundInput<'_>) -> Decision {
    let mut outcomes = Vec::with_capacity(input.regions.len());
    let (mut passed, mut failed, mut offline, mut silent) = (vec![], vec![], vec![], vec![]);
    for region in input.regions {
        let outcome = match input.answers.get(region) {
            Some(a) => {
                let seen = match a.outcome {
                    CheckOutcome::Pass => RegionSeen::Passed,
                    CheckOutcome::Fail => RegionSeen::Failed,
                };
                if seen == RegionSeen::Passed {
                    passed.push(a);
                } else {
                    failed.push(a);
                }
                RegionOutcome {
                    region: region.clone(),
                    seen,
                    check_id: Some(a.check_id),
                    latency_ms: a.latency_ms,
                    http_status: a.http_status,
                    error: a.error.clone(),
                }
            }
            None => {
                let seen = if input.offline.contains(region) {
                    offline.push(region.as_str());
                    RegionSeen::Offline
                } else {
                    silent.push(region.as_str());
                    RegionSeen::NoAnswer
                };
                RegionOutcome {
                    region: region.clone(),
                    seen,
                    check_id: None,
                    latency_ms: None,
                    http_status: None,
                    error: None,
                }
            }
        };
        outcomes.push(outcome);
    }

    let quorum = input.quorum.max(1);
    let answered = passed.len() + failed.len();
    let effective = (quorum as usize).min(answered);
    let mut notes = Vec::new();
    let missing = missing_text(&offline, &silent);

    let verdict = if answered == 0 {
        notes.push(match &missing {
            Some(m) => format!("no region answered ({m})"),
            None => "no region answered".to_string(),
        });
        None
    } else {
        if effective < quorum as usize {
            let names: Vec<&str> = passed
                .iter()
                .chain(failed.iter())
                .map(|a| a.region.as_str())
                .collect();
            let names = ordered(input.regions, &names);
            notes.push(format!(
                "quorum {quorum} needs {quorum} regions; only {} answered{}: decided on {}",
                names.join(", "),
                missing
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default(),
                if names.len() == 1 {
                    format!("{} alone", names[0])
                } else {
                    names.join(", ")
                },
            ));
        } else if let Some(m) = &missing {
            notes.push(format!("not counted: {m}"));
        }
        let down = failed.len() >= effective;
        if !down && !failed.is_empty() {
            let names: Vec<&str> = failed.iter().map(|a| a.region.as_str()).collect();
            notes.push(format!(
                "regional problem: {} failed ({} of {} regions that answered; quorum {})",
                ordered(input.regions, &names).join(", "),
                failed.len(),
                answered,
                effective
            ));
        }
        Some(verdict(input, down, &passed, &failed))
    };

    Decision {
        round: Round {
            round_id: input.round_id,
            quorum,
            regions: outcomes,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        },
        verdict,
    }
}

/// `names` in the round's region order.
fn ordered<'a>(regions: &'a [String], names: &[&str]) -> Vec<&'a str> {
    regions
        .iter()
        .filter(|r| names.contains(&r.as_str()))
        .map(String::as_str)
        .collect()
}

fn missing_text(offline: &[&str], silent: &[&str]) -> Option<String> {
    let mut parts: Vec<String> = offline.iter().map(|r| format!("{r} offline")).collect();
    parts.extend(silent.iter().map(|r| format!("{r} no answer")));
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The one result the round feeds the state machine. A down round carries
/// the first failing region's status and every failing region's error; an
/// up one the slowest passing region's latency (the degraded rule).
fn verdict(
    input: &RoundInput<'_>,
    down: bool,
    passed: &[&CheckResult],
    failed: &[&CheckResult],
) -> CheckResult {
    let all = passed.iter().chain(failed.iter());
    // The round happened when its first check started.
    let checked_at = all
        .clone()
        .map(|a| a.checked_at)
        .min()
        .unwrap_or(input.due_at);
    let ssl_expires_at = all.filter_map(|a| a.ssl_expires_at).min();
    let (outcome, latency_ms, http_status, error) = if down {
        let first = failed.first();
        let error = failed
            .iter()
            .map(|a| format!("{}: {}", a.region, a.error.as_deref().unwrap_or("failed")))
            .collect::<Vec<_>>()
            .join("; ");
        (
            CheckOutcome::Fail,
            first.and_then(|a| a.latency_ms),
            first.and_then(|a| a.http_status),
            Some(bounded(error)),
        )
    } else {
        let slowest = passed.iter().max_by_key(|a| a.latency_ms);
        (
            CheckOutcome::Pass,
            slowest.and_then(|a| a.latency_ms),
            slowest.and_then(|a| a.http_status),
            None,
        )
    };
    CheckResult {
        check_id: input.round_id,
        monitor_id: input.monitor_id,
        definition_version: input.definition_version,
        trigger: input.trigger,
        due_at: Some(input.due_at),
        checked_at,
        outcome,
        latency_ms,
        http_status,
        error,
        ssl_expires_at,
        reporter: VERDICT_REPORTER.to_string(),
        // The verdict is every region's, so it names none; it feeds the
        // state machine and is never stored or published as a result.
        region: String::new(),
        round_id: Some(input.round_id),
    }
}

fn bounded(mut text: String) -> String {
    if text.chars().count() > MAX_VERDICT_ERROR_CHARS {
        text = text.chars().take(MAX_VERDICT_ERROR_CHARS - 1).collect();
        text.push('…');
    }
    text
}

#[cfg(test)]
#[path = "round_tests.rs"]
mod tests;
