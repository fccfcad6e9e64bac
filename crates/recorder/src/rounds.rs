//! Rounds of monitors checked from several regions, on the database side:
//! turning a region's result into an answer of its round, deciding rounds
//! (all answered, in the batch that completes them; or past their deadline,
//! by the sweeper) and applying their verdicts exactly as a single-region
//! result is applied. Everything runs inside a transaction that holds the
//! rounds' monitors locked, so a round is decided once: a crash before the
//! commit leaves it undecided, for the next batch or sweep.

use crate::alert_facts;
use crate::outbox;
use crate::plan;
use crate::round::{self, RoundInput};
use crate::state_machine;
use chrono::{DateTime, TimeDelta, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{CheckResult, MonitorStatus, Placement, Round, Trigger};
use uptime_db::monitor_decisions::{self as decisions, MonitorForDecisions};
use uptime_db::recording;
use uptime_db::rounds::{self as db, DecidedRound, OpenRound, RoundAnswers};
use uptime_db::{DbError, DbResult, Pool};
use uuid::Uuid;

/// How the recorder forms rounds.
#[derive(Debug, Clone)]
pub struct RoundRules {
    /// The regions of a monitor that names none (`regions.default`).
    pub default_regions: Vec<String>,
    /// Added to a round's due time and timeout to give its deadline.
    pub grace: Duration,
}

impl Default for RoundRules {
    fn default() -> Self {
        Self {
            default_regions: vec![uptime_contracts::DEFAULT_REGION.to_string()],
            grace: Duration::from_secs(5),
        }
    }
}

impl RoundRules {
    /// The monitor's regions R and its quorum.
    pub fn placement_of<'a>(&'a self, monitor: &'a MonitorForDecisions) -> Placement<'a> {
        Placement::of(
            monitor.regions.as_deref(),
            monitor.quorum,
            &self.default_regions,
        )
    }

    /// The round `result` answers, when its monitor is checked from several
    /// regions and it is one region's check of a round (heartbeats and
    /// results without a round are applied alone, as always).
    pub fn answer_of(
        &self,
        result: &CheckResult,
        monitor: &MonitorForDecisions,
    ) -> Option<RoundAnswers> {
        let placement = self.placement_of(monitor);
        let regions = placement.regions;
        let round_id = result.round_id?;
        let region = result.region.as_str();
        if regions.len() <= 1 || result.trigger == Trigger::Heartbeat {
            return None;
        }
        let due_at = result.due_at.unwrap_or(result.checked_at);
        let timeout = TimeDelta::seconds(i64::from(monitor.timeout_secs.max(0)));
        let grace = TimeDelta::from_std(self.grace).unwrap_or(TimeDelta::zero());
        let mut answers = serde_json::Map::new();
        // Plain data structs always serialise.
        answers.insert(
            region.to_string(),
            serde_json::to_value(result).expect("result serialises"),
        );
        Some(RoundAnswers {
            round_id,
            monitor_id: result.monitor_id,
            definition_version: result.definition_version,
            trigger: result.trigger.as_str().to_string(),
            due_at,
            deadline_at: due_at + timeout + grace,
            regions: regions.to_vec(),
            quorum: i32::try_from(placement.quorum).unwrap_or(i32::MAX),
            answers: serde_json::Value::Object(answers),
        })
    }
}

/// Merges answers of the same round into one (a statement may touch a row once).
pub fn merge_by_round(answers: Vec<RoundAnswers>) -> Vec<RoundAnswers> {
    let mut by_round: BTreeMap<Uuid, RoundAnswers> = BTreeMap::new();
    for a in answers {
        match by_round.get_mut(&a.round_id) {
            Some(existing) => {
                if let (Some(into), serde_json::Value::Object(from)) =
                    (existing.answers.as_object_mut(), a.answers)
                {
                    into.extend(from);
                }
            }
            None => {
                by_round.insert(a.round_id, a);
            }
        }
    }
    by_round.into_values().collect()
}

/// What applying results and decided rounds wrote.
#[derive(Debug, Default)]
pub struct Applied {
    pub events: Vec<recording::NewOutboxEvent>,
    pub transitions: Vec<MonitorStatus>,
    /// Rounds marked decided.
    pub decided: usize,
}

/// Decides `rounds` (regions in `offline` had no live checker) and applies
/// their verdicts together with the single-region `results` to the locked
/// `monitors`: state, daily uptime, outbox, and the rounds marked decided.
pub async fn decide_and_apply(
    conn: &mut AsyncPgConnection,
    monitors: &[MonitorForDecisions],
    results: &[&CheckResult],
    rounds: &[OpenRound],
    offline: &HashSet<String>,
    now: DateTime<Utc>,
) -> DbResult<Applied> {
    let by_id: HashMap<i64, &MonitorForDecisions> = monitors.iter().map(|m| (m.id, m)).collect();
    let mut verdicts = Vec::new();
    let mut decided_rounds: HashMap<Uuid, Round> = HashMap::new();
    let mut marks = Vec::with_capacity(rounds.len());
    for open in rounds {
        let Some(monitor) = by_id.get(&open.monitor_id) else {
            continue;
        };
        let decision = decide_open(open, offline);
        let verdict = decision.verdict.as_ref().map(|v| {
            let warn = monitor.latency_warn_ms.and_then(|v| u32::try_from(v).ok());
            state_machine::result_status(v.outcome, v.latency_ms, warn)
                .as_str()
                .to_string()
        });
        marks.push(DecidedRound {
            round_id: open.round_id,
            verdict,
            // Plain data structs always serialise.
            decision: serde_json::to_value(&decision.round).expect("round serialises"),
        });
        if let Some(v) = decision.verdict {
            // A round made for an older definition of its monitor says
            // nothing about what it watches now (as for single results).
            if plan::is_current(open.definition_version, monitor) {
                decided_rounds.insert(open.round_id, decision.round);
                verdicts.push(v);
            }
        }
    }
    let mut all: Vec<&CheckResult> = results.to_vec();
    all.extend(verdicts.iter());
    let mut applied = Applied {
        decided: db::mark_decided(conn, &marks, now).await?,
        ..Applied::default()
    };
    if all.is_empty() {
        return Ok(applied);
    }
    let mut effects = plan::effects_with_rounds(monitors, &all, &decided_rounds, now);
    // Only batches with transitions the alert decision needs more facts
    // about read them, and are planned again with them.
    if let Some(facts) =
        alert_facts::gather(conn, monitors, &effects.facts_needed, &effects.updates).await?
    {
        effects = plan::effects_with_facts(monitors, &all, &decided_rounds, &facts, now);
    }
    recording::update_monitor_states(conn, &effects.updates).await?;
    recording::add_daily_uptime(conn, &effects.increments).await?;
    recording::insert_outbox(conn, &effects.events).await?;
    // Only batches with changes into or out of `down` write here.
    uptime_db::incidents::open(conn, &effects.incidents_opened).await?;
    uptime_db::incidents::resolve(conn, &effects.incidents_resolved).await?;
    // Only incidents that are held, blocked, hold others or get reminders,
    // and only monitors with a flapping threshold, write here.
    uptime_db::alerting::set_opened(conn, &effects.incidents_alerting).await?;
    uptime_db::alerting::save_flap_states(conn, &effects.flap_updates).await?;
    applied.events = effects.events;
    applied.transitions = effects.transitions;
    Ok(applied)
}

/// The pure decision of a stored round. An answer that is not a result (a
/// hand-edited row) is left out, as if the region had not answered.
fn decide_open(open: &OpenRound, offline: &HashSet<String>) -> round::Decision {
    let mut answers = BTreeMap::new();
    if let Some(map) = open.answers.as_object() {
        for (region, value) in map {
            match serde_json::from_value::<CheckResult>(value.clone()) {
                Ok(a) => {
                    answers.insert(region.clone(), a);
                }
                Err(e) => tracing::warn!(round_id = %open.round_id, %region, error = %e,
                    "a round's answer is not a check result; left out"),
            }
        }
    }
    let trigger = if open.trigger == Trigger::Manual.as_str() {
        Trigger::Manual
    } else {
        Trigger::Scheduled
    };
    round::decide(&RoundInput {
        round_id: open.round_id,
        monitor_id: open.monitor_id,
        definition_version: open.definition_version,
        trigger,
        due_at: open.due_at,
        regions: &open.regions,
        quorum: u32::try_from(open.quorum).unwrap_or(1),
        answers: &answers,
        offline,
    })
}

/// Decides up to `limit` rounds past their deadline at `now`, in one
/// transaction. `live` are the regions with a live checker (`None`: presence
/// unknown, so every silent region counts as `no_answer`). Monitors another
/// transaction holds are skipped (swept next time).
pub async fn sweep(
    pool: &Pool,
    live: Option<&HashSet<String>>,
    now: DateTime<Utc>,
    limit: i64,
) -> DbResult<Applied> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let ids = db::monitors_with_overdue_rounds(conn, now, limit).await?;
            if ids.is_empty() {
                return Ok(Applied::default());
            }
            let monitors = decisions::lock_free(conn, &ids).await?;
            let locked: Vec<i64> = monitors.iter().map(|m| m.id).collect();
            let rounds = db::lock_overdue_rounds(conn, &locked, now, limit).await?;
            let offline: HashSet<String> = match live {
                Some(live) => rounds
                    .iter()
                    .flat_map(|r| r.regions.iter())
                    .filter(|r| !live.contains(*r))
                    .cloned()
                    .collect(),
                None => HashSet::new(),
            };
            decide_and_apply(conn, &monitors, &[], &rounds, &offline, now).await
        }
        .scope_boxed()
    })
    .await
}

/// The sweeper: every `every`, decides the rounds past their deadline,
/// publishes their events, until `shutdown`. Runs on every replica; they
/// share the work through the locks.
pub async fn run_sweeper(
    pool: Pool,
    js: async_nats::jetstream::Context,
    presence_ttl: Duration,
    every: Duration,
    limit: i64,
    shutdown: CancellationToken,
    progress: uptime_ops::Progress,
) {
    // Opened at the first round that reaches the bucket, kept after.
    let presence = tokio::sync::OnceCell::new();
    uptime_ops::shell::every(every, &shutdown, &progress, || async {
        let store = presence
            .get_or_try_init(|| uptime_contracts::presence::open_or_create(&js, presence_ttl))
            .await;
        let live = match store {
            Ok(store) => match uptime_contracts::presence::live(store).await {
                Ok(list) => Some(list.into_iter().map(|p| p.region).collect::<HashSet<_>>()),
                Err(e) => {
                    tracing::warn!(error = %e, "reading checker presence");
                    None
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "checker presence unavailable; silent regions count as no answer");
                None
            }
        };
        // A full batch means more are waiting: go on without waiting a tick.
        loop {
            match sweep(&pool, live.as_ref(), Utc::now(), limit).await {
                Ok(applied) => {
                    metrics::counter!("rounds_decided_total", "by" => "deadline")
                        .increment(applied.decided as u64);
                    for to in &applied.transitions {
                        metrics::counter!("state_changes_total", "to" => to.as_str()).increment(1);
                    }
                    outbox::publish_and_mark(&pool, &js, &applied.events).await;
                    if (applied.decided as i64) < limit || shutdown.is_cancelled() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "sweeping rounds past their deadline");
                    break;
                }
            }
        }
    })
    .await
}
