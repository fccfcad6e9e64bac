//! Assertions evaluated off the async worker threads, on a wall-clock
//! budget.
//!
//! Parsing a body of up to `max_body_bytes`, running JSONPaths and regular
//! expressions is CPU work that would stall every check and every ack
//! sharing a tokio worker thread, so it runs on the blocking pool
//! (`spawn_blocking`). At most as many evaluations run at once as there
//! are CPUs (the others wait their turn, which is not counted against
//! their budget): with more, they would only slow each other down, and a
//! burst of large bodies could push sound checks past the budget.
//!
//! A blocking thread cannot be cancelled: when the budget runs out the
//! check fails at once (over its budget), but the evaluation goes on until
//! it ends, holding its thread and its turn. What keeps that short is the
//! cost bound ([`super::budget`]): every JSONPath is refused before it
//! runs if it could cost more than its allowance, the regular expressions
//! run in linear time on a bounded text, and the body is bounded by
//! `max_body_bytes`. The time budget is the backstop for what those bounds
//! let through on a slow or overloaded machine.

use super::budget::{OverBudget, ASSERTION_TIME_BUDGET};
use super::{evaluate, ResponseView};
use std::sync::LazyLock;
use std::time::Duration;
use tokio::sync::Semaphore;
use uptime_contracts::Assertion;

/// One turn per CPU: see the module documentation.
static TURNS: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get))
});

/// A response the assertions can take to another thread. Deliberately
/// not `Debug`: it holds the request's credentials.
#[derive(Clone)]
pub struct OwnedResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub body_cut: bool,
    pub latency_ms: u32,
    pub secrets: Vec<String>,
}

impl OwnedResponse {
    pub fn view(&self) -> ResponseView<'_> {
        ResponseView {
            status: self.status,
            headers: &self.headers,
            body: &self.body,
            body_cut: self.body_cut,
            latency_ms: self.latency_ms,
            secrets: &self.secrets,
        }
    }
}

/// [`evaluate`] on a blocking thread within [`ASSERTION_TIME_BUDGET`]:
/// past it, `assertion over its budget: took longer than 2000 ms`.
pub async fn evaluate_on_budget(
    assertions: Vec<Assertion>,
    response: OwnedResponse,
) -> Option<String> {
    let work = move || evaluate(&assertions, &response.view());
    match on_budget(ASSERTION_TIME_BUDGET, work).await {
        Ok(verdict) => verdict,
        Err(Stopped::Over(over)) => Some(format!("assertion over its budget: {over}")),
        Err(Stopped::Panicked) => {
            // A bug, not the tenant's doing; the check fails rather than
            // the checker.
            tracing::error!("assertion evaluation panicked");
            Some("assertions could not be evaluated (internal error)".into())
        }
    }
}

/// Why [`on_budget`] has no answer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stopped {
    Over(OverBudget),
    Panicked,
}

/// `work` on the blocking pool, waited for at most `budget` from when its
/// turn comes.
pub(super) async fn on_budget<T: Send + 'static>(
    budget: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    // The semaphore is never closed.
    let turn = TURNS.acquire().await.map_err(|_| Stopped::Panicked)?;
    let task = tokio::task::spawn_blocking(move || {
        // The turn is given back when the work ends, not when the budget
        // does: a thread still busy still uses its CPU.
        let _turn = turn;
        // A panic fails this check, not the checker (see below and
        // `uptime_telemetry::panics`).
        uptime_telemetry::contain(work)
    });
    match tokio::time::timeout(budget, task).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(_panicked)) => Err(Stopped::Panicked),
        Err(_elapsed) => Err(Stopped::Over(OverBudget::Time { budget })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[tokio::test]
    async fn past_its_budget_the_answer_is_over_budget_and_the_work_goes_on() {
        let (release, released) = mpsc::channel::<()>();
        let (finished, done) = tokio::sync::oneshot::channel();
        // Work that cannot end before it is released, whatever the budget:
        // the outcome does not depend on how fast anything runs.
        let answer = on_budget(Duration::from_millis(10), move || {
            released.recv().unwrap();
            finished.send(()).unwrap();
            "late"
        })
        .await;
        assert_eq!(
            answer,
            Err(Stopped::Over(OverBudget::Time {
                budget: Duration::from_millis(10)
            }))
        );
        assert_eq!(
            OverBudget::Time {
                budget: ASSERTION_TIME_BUDGET
            }
            .to_string(),
            "took longer than 2000 ms"
        );
        // The blocking thread was not cancelled: it ends once released.
        release.send(()).unwrap();
        done.await.expect("the work ran to its end");
    }

    #[tokio::test]
    async fn within_its_budget_the_answer_is_the_verdict() {
        let response = OwnedResponse {
            status: 200,
            headers: Vec::new(),
            body: br#"{"status":"ok"}"#.to_vec(),
            body_cut: false,
            latency_ms: 5,
            secrets: Vec::new(),
        };
        let assertion = |target: &str| Assertion {
            source: uptime_contracts::AssertionSource::JsonBody,
            property: Some("$.status".into()),
            comparison: uptime_contracts::Comparison::Equals,
            target: Some(target.into()),
        };
        assert_eq!(
            evaluate_on_budget(vec![assertion("ok")], response.clone()).await,
            None
        );
        assert_eq!(
            evaluate_on_budget(vec![assertion("down")], response).await,
            Some(r#"assertion 1 failed: json_body $.status equals "down": got "ok""#.into())
        );
        // A panic in the work is a failed answer, not a crashed checker.
        assert_eq!(
            on_budget(ASSERTION_TIME_BUDGET, || panic!("bug")).await,
            Err::<(), _>(Stopped::Panicked)
        );
    }
}
