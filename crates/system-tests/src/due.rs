//! Due checks as the scheduler publishes them, made and published in bulk
//! by the benchmarks that drive the pipeline without a scheduler.

/// The plain check of `target` the benchmarks load the pipeline with: a
/// 5 s timeout, status 200 expected, no keyword, default options.
pub fn plain_spec(
    kind: uptime_contracts::MonitorKind,
    target: String,
) -> uptime_contracts::CheckSpec {
    uptime_contracts::CheckSpec {
        kind,
        target,
        timeout_secs: uptime_contracts::TimeoutSecs::of(5),
        expected_status: uptime_contracts::ExpectedStatus::of(200),
        keyword: None,
        keyword_type: None,
        options: Default::default(),
    }
}

/// A scheduled check of `spec` for monitor `monitor_id` (checked from the
/// default region, definition version 1), due now, exactly as the scheduler
/// publishes one: the row's fields through
/// `uptime_db::monitors::sealed_round_checks`, the one row-to-round function
/// the scheduler and the api-gateway share (`check-due.v5`, a round of one).
/// Benchmarks publish what production publishes.
pub fn scheduled_due(
    monitor_id: i64,
    spec: &uptime_contracts::CheckSpec,
    interval_secs: u32,
) -> anyhow::Result<uptime_contracts::DueCheck> {
    let options = serde_json::to_value(&spec.options)?;
    let row = uptime_db::monitors::CheckFields {
        id: monitor_id,
        kind: spec.kind,
        target: Some(&spec.target),
        timeout_secs: i32::from(spec.timeout_secs),
        expected_status: i32::from(spec.expected_status),
        keyword: spec.keyword.as_deref(),
        keyword_type: spec.keyword_type.map(|k| k.as_str()),
        // A monitor with default options stores none.
        check_options: (!spec.options.is_empty()).then_some(&options),
        http_password_sealed: None,
        http_password_unsealed: false,
        regions: None,
    };
    let round = uptime_db::monitors::RoundOf {
        round_id: uuid::Uuid::new_v4(),
        trigger: uptime_contracts::Trigger::Scheduled,
        due_at: chrono::Utc::now(),
        definition_version: 1,
        interval_secs,
    };
    let mut checks = uptime_db::monitors::sealed_round_checks(
        row,
        &uptime_config::RegionsSettings::default(),
        round,
    )?;
    anyhow::ensure!(checks.len() == 1, "a round of one region");
    Ok(checks.remove(0))
}

/// Publishes all of `msgs` on their regions' subjects with up to 4096 acks
/// in flight; returns the time taken.
pub async fn publish_all(
    js: &async_nats::jetstream::Context,
    msgs: Vec<uptime_contracts::DueCheck>,
) -> anyhow::Result<std::time::Duration> {
    let started = std::time::Instant::now();
    let mut in_flight = futures::stream::FuturesUnordered::new();
    for msg in msgs {
        let headers = uptime_telemetry::nats::headers_with_msg_id(&msg.check_id.to_string());
        in_flight.push(std::future::IntoFuture::into_future(
            uptime_contracts::bus::publish_on(js, msg.subject(), headers, &msg).await?,
        ));
        if in_flight.len() >= 4096 {
            futures::StreamExt::next(&mut in_flight)
                .await
                .expect("an ack in flight")?;
        }
    }
    while let Some(ack) = futures::StreamExt::next(&mut in_flight).await {
        ack?;
    }
    Ok(started.elapsed())
}
