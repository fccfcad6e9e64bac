//! The pipeline on a three-node NATS JetStream cluster (streams and KV
//! buckets at R3), and what losing a node costs: nothing. Judged by the
//! rows: every slot of every monitor stored once, none skipped.

use crate::common::wait_status;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_db::schema::check_results;
use uptime_testkit::target::TargetServer;
use uptime_testkit::CLUSTER_NODES;

const INTERVAL_MS: i64 = 10_000;

/// The scheduled results of `id`: (check id, due instant in ms), by due instant.
async fn scheduled(stack: &Stack, id: i64) -> Vec<(uuid::Uuid, i64)> {
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await.unwrap();
    let rows: Vec<(uuid::Uuid, Option<chrono::DateTime<chrono::Utc>>)> = check_results::table
        .filter(check_results::monitor_id.eq(id))
        .filter(check_results::trigger.eq("scheduled"))
        .select((check_results::check_id, check_results::due_at))
        .order(check_results::due_at.asc())
        .load(&mut conn)
        .await
        .unwrap();
    rows.into_iter()
        .map(|(check, due)| (check, due.map_or(0, |d| d.timestamp_millis())))
        .collect()
}

async fn monitors(stack: &Stack, key: &str, target: &TargetServer, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let (s, m) = stack
            .call(
                Method::POST,
                "/api/v1/monitors",
                key,
                Some(
                    json!({"name": format!("m{i}"), "type": "http", "target": target.url("/"),
                            "interval_secs": INTERVAL_MS / 1000}),
                ),
            )
            .await
            .unwrap();
        assert_eq!(s, StatusCode::CREATED, "{m}");
        ids.push(m["id"].as_i64().unwrap());
    }
    ids
}

#[tokio::test]
async fn the_pipeline_runs_on_a_three_node_cluster_with_everything_at_r3() {
    let stack = Stack::start_clustered(StackOptions::default())
        .await
        .unwrap();
    let target = TargetServer::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let id = monitors(&stack, &key, &target, 1).await[0];
    wait_status(&stack, &key, id, "up").await;

    let cluster = stack.cluster.as_ref().unwrap();
    let (_client, js) = cluster.jetstream().await;
    for config in uptime_contracts::streams::all(CLUSTER_NODES) {
        let mut stream = js.get_stream(&config.name).await.unwrap();
        let info = stream.info().await.unwrap();
        assert_eq!(
            info.config.num_replicas, CLUSTER_NODES,
            "{}",
            info.config.name
        );
    }
    // The KV buckets follow the streams: the scheduler's leases and the
    // checkers' presence.
    for bucket in [scheduler::lease::BUCKET, uptime_contracts::presence::BUCKET] {
        let mut stream = js.get_stream(format!("KV_{bucket}")).await.unwrap();
        let info = stream.info().await.unwrap();
        assert_eq!(info.config.num_replicas, CLUSTER_NODES, "{bucket}");
    }
}

#[tokio::test]
async fn killing_a_nats_node_loses_no_check_and_stores_each_slot_once() {
    let mut stack = Stack::start_clustered(StackOptions::default())
        .await
        .unwrap();
    let target = TargetServer::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let ids = monitors(&stack, &key, &target, 5).await;
    for id in &ids {
        wait_status(&stack, &key, *id, "up").await;
    }

    // A crash of one node: no lame duck, nothing flushed.
    let killed_at = chrono::Utc::now().timestamp_millis();
    stack.cluster.as_mut().unwrap().kill(0).await;
    assert_eq!(stack.cluster.as_ref().unwrap().running(), CLUSTER_NODES - 1);

    // Three more slots of every monitor after the kill, each stored once.
    for id in &ids {
        let rows = stack
            .eventually(Duration::from_secs(60), || async {
                let rows = scheduled(&stack, *id).await;
                (rows.iter().filter(|(_, due)| *due > killed_at).count() >= 3).then_some(rows)
            })
            .await
            .unwrap_or_else(|| panic!("monitor {id}: slots after the kill not all stored"));
        let distinct: HashSet<_> = rows.iter().map(|(check, _)| *check).collect();
        assert_eq!(distinct.len(), rows.len(), "monitor {id}: a slot twice");
        // The first check is named after the creation instant; then slots.
        let dues: Vec<i64> = rows.iter().map(|(_, due)| *due).collect();
        for pair in dues[1..].windows(2) {
            assert_eq!(
                pair[1] - pair[0],
                INTERVAL_MS,
                "monitor {id} skipped a slot: {dues:?}"
            );
        }
    }
}
