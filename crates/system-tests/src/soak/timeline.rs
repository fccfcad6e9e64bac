//! The plan's one-off actions, each at its time: a test alert, a bulk
//! create and later the deletion of half of it, an apply (a contact and
//! monitors by ref), its dry run and a second apply that renames, a
//! monitor created and deleted, a pause and a resume, a `pause` window by
//! id and a `silence` window by label, a status page notice and its
//! update, a rename.

use super::api::id_of;
use super::context::Ctx;
use super::ledger::now_ms;
use super::setup::record_contact;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// Monitors made by the bulk create.
pub const BULK_MONITORS: usize = 120;

/// The one-off actions, in time order.
pub async fn run(ctx: Ctx) -> anyhow::Result<()> {
    let p = ctx.plan.clone();
    let mut actions: Vec<(f64, &'static str)> = vec![
        (p.test_alert_at, "test alert"),
        (p.bulk_at, "bulk create"),
        (p.bulk_delete_at, "bulk delete"),
        (p.apply_at, "apply"),
        (p.dry_run_at, "dry run"),
        (p.reapply_at, "apply again"),
        (p.late_monitor.0, "create late"),
        (p.late_monitor.1, "delete late"),
        (p.paused.0, "pause"),
        (p.paused.1, "resume"),
        ((p.pause_window.0 - 60.0).max(1.0), "pause window"),
        (p.silence_window.0, "silence window"),
        (p.total * 0.15, "notice"),
        (p.total * 0.45, "notice update"),
        (p.total * 0.55, "rename"),
        (p.total * 0.2, "idempotent create"),
    ];
    actions.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut paused_at = 0;
    for (t, action) in actions {
        ctx.at(t).await;
        let done = match action {
            "pause" => {
                paused_at = now_ms();
                set_active(&ctx, false).await
            }
            "resume" => {
                let done = set_active(&ctx, true).await;
                let id = ctx.monitor("paused-by-user");
                ctx.ledger().paused(id, paused_at, now_ms());
                done
            }
            _ => one_off(&ctx, action).await,
        };
        if let Err(e) = done {
            ctx.api.finding(format!(
                "{action} at {t:.0} s (ran at {:.0} s): {e:#}",
                ctx.elapsed()
            ));
        }
    }
    Ok(())
}

/// Deletes monitor `id` through the API, and notes in the ledger when it
/// went (taken before the request: from then on no check is owed).
async fn delete_monitor(ctx: &Ctx, id: i64) -> anyhow::Result<()> {
    let at = now_ms();
    ctx.api
        .expect(
            Method::DELETE,
            &format!("/api/v1/monitors/{id}"),
            None,
            StatusCode::NO_CONTENT,
        )
        .await?;
    ctx.ledger().deleted(id, at);
    Ok(())
}

async fn set_active(ctx: &Ctx, active: bool) -> anyhow::Result<()> {
    let id = ctx.monitor("paused-by-user");
    let body = json!({"active": active});
    let m = ctx
        .api
        .expect(
            Method::PATCH,
            &format!("/api/v1/monitors/{id}"),
            Some(&body),
            StatusCode::OK,
        )
        .await?;
    anyhow::ensure!(m["active"] == active, "PATCH active {active}: {m}");
    Ok(())
}

fn applied_set(ctx: &Ctx, suffix: &str) -> Value {
    let mut resources = vec![json!({"kind": "AlertContact", "ref": "applied", "spec":
        {"name": "applied", "type": "webhook", "value": ctx.applied_url, "events": ["down"]}})];
    for i in 1..=3 {
        resources.push(json!({"kind": "Monitor", "ref": format!("applied-{i}"), "spec": {
            "name": format!("applied-{i}{suffix}"), "type": "http", "target": format!("{}/applied-{i}", ctx.steady_url),
            "interval_secs": 20, "alert_contact_refs": ["applied"]}}));
    }
    json!({"resources": resources})
}

async fn one_off(ctx: &Ctx, action: &str) -> anyhow::Result<()> {
    let api = &ctx.api;
    match action {
        "test alert" => {
            let id = ctx.ledger().contact("all");
            let sent = api
                .expect(
                    Method::POST,
                    &format!("/api/v1/alert-contacts/{id}/test"),
                    None,
                    StatusCode::OK,
                )
                .await?;
            anyhow::ensure!(sent["status"] == "sent", "{sent}");
            *ctx.ledger().test_alerts.entry(id).or_default() += 1;
        }
        "bulk create" => {
            let monitors: Vec<Value> = (0..BULK_MONITORS)
                .map(|i| json!({"name": format!("bulk-{i}"), "type": "http", "target": format!("{}/bulk/{i}", ctx.steady_url), "interval_secs": 30}))
                .collect();
            let created = api
                .post("/api/v1/monitors/bulk", &json!({"monitors": monitors}))
                .await?;
            let list = created["monitors"].as_array().cloned().unwrap_or_default();
            anyhow::ensure!(
                list.len() == BULK_MONITORS,
                "bulk created {} monitors",
                list.len()
            );
            let mut ledger = ctx.ledger();
            for m in &list {
                let id = ledger.created(m, &[])?;
                ledger.bulk.push(id);
            }
        }
        "bulk delete" => {
            let half: Vec<i64> = {
                let ledger = ctx.ledger();
                ledger.bulk.iter().copied().step_by(2).collect()
            };
            for id in half {
                delete_monitor(ctx, id).await?;
            }
        }
        "apply" => {
            let answer = api
                .expect(
                    Method::POST,
                    "/api/v1/apply",
                    Some(&applied_set(ctx, "")),
                    StatusCode::OK,
                )
                .await?;
            anyhow::ensure!(
                answer["applied"] == true && answer["summary"]["create"] == 4,
                "apply: {answer}"
            );
            let contact = answer["plan"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["kind"] == "AlertContact");
            let contact_id = contact
                .and_then(|c| c["id"].as_i64())
                .ok_or_else(|| anyhow::anyhow!("no contact in {answer}"))?;
            {
                let mut ledger = ctx.ledger();
                record_contact(
                    &mut ledger,
                    "applied",
                    contact_id,
                    ctx.applied_receiver.clone(),
                    Some(&["down"]),
                    "info",
                );
            }
            for entry in answer["plan"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["kind"] == "Monitor")
            {
                let id = entry["id"]
                    .as_i64()
                    .ok_or_else(|| anyhow::anyhow!("no id in {entry}"))?;
                let monitor = api.get(&format!("/api/v1/monitors/{id}")).await?;
                ctx.ledger().created(&monitor, &[contact_id])?;
            }
        }
        "dry run" => {
            let mut body = applied_set(ctx, "");
            body["dry_run"] = json!(true);
            let answer = api
                .expect(Method::POST, "/api/v1/apply", Some(&body), StatusCode::OK)
                .await?;
            anyhow::ensure!(
                answer["applied"] == false && answer["summary"]["unchanged"] == 4,
                "dry run: {answer}"
            );
        }
        "apply again" => {
            let answer = api
                .expect(
                    Method::POST,
                    "/api/v1/apply",
                    Some(&applied_set(ctx, " (renamed)")),
                    StatusCode::OK,
                )
                .await?;
            let s = &answer["summary"];
            anyhow::ensure!(
                answer["applied"] == true && s["update"] == 3 && s["unchanged"] == 1,
                "apply again: {answer}"
            );
        }
        "create late" => {
            let body = json!({"name": "late", "type": "http", "target": format!("{}/late", ctx.steady_url), "interval_secs": 10});
            let monitor = api.post("/api/v1/monitors", &body).await?;
            let mut ledger = ctx.ledger();
            let id = ledger.created(&monitor, &[])?;
            ledger.monitors.insert("late", id);
        }
        "delete late" => {
            delete_monitor(ctx, ctx.monitor("late")).await?;
        }
        "pause window" => {
            let id = ctx.monitor("paused-by-window");
            let (from, to) = ctx.plan.pause_window;
            let body = json!({"name": "soak pause", "monitor_ids": [id], "effect": "pause",
                              "starts_at": ctx.wall(from), "ends_at": ctx.wall(to)});
            let window = api.post("/api/v1/maintenance-windows", &body).await?;
            ctx.ledger().pause_window = Some((id_of(&window)?, vec![id]));
        }
        "silence window" => {
            let body = json!({"name": "soak silence", "label_selector": {"soak": "silenced"}, "effect": "silence",
                              "duration_minutes": ctx.plan.silence_window.1});
            let window = api.post("/api/v1/maintenance-windows", &body).await?;
            anyhow::ensure!(
                window["open_now"] == true,
                "an ad hoc window opens now: {window}"
            );
        }
        "notice" | "notice update" => {
            let page = ctx
                .ledger()
                .counts
                .get("status_page_id")
                .copied()
                .unwrap_or_default();
            if action == "notice" {
                let body = json!({"title": "Soak test", "body": "We are looking into it."});
                let notice = api
                    .post(&format!("/api/v1/status-pages/{page}/notices"), &body)
                    .await?;
                ctx.ledger()
                    .counts
                    .insert("notice_id", id_of(&notice)? as u64);
            } else {
                let notice = ctx
                    .ledger()
                    .counts
                    .get("notice_id")
                    .copied()
                    .unwrap_or_default();
                let body = json!({"state": "resolved", "body": "All clear."});
                let path = format!("/api/v1/status-pages/{page}/notices/{notice}/updates");
                let notice = api
                    .expect(Method::POST, &path, Some(&body), StatusCode::OK)
                    .await?;
                anyhow::ensure!(notice["state"] == "resolved", "{notice}");
            }
        }
        "rename" => {
            let id = ctx.monitor("http-assert");
            let body = json!({"name": "http-assert (renamed)"});
            api.expect(
                Method::PATCH,
                &format!("/api/v1/monitors/{id}"),
                Some(&body),
                StatusCode::OK,
            )
            .await?;
        }
        "idempotent create" => {
            // A client that timed out sends the same create again: it gets
            // the monitor made the first time, not a second one.
            let body = json!({"name": "idempotent", "type": "http", "target": format!("{}/idempotent", ctx.steady_url),
                              "interval_secs": 10});
            let (first, replayed_first, monitor) = api
                .post_idempotent("/api/v1/monitors", &body, "soak-create-1")
                .await?;
            anyhow::ensure!(
                first == StatusCode::CREATED && !replayed_first,
                "first create: {first} {monitor}"
            );
            let id = {
                let mut ledger = ctx.ledger();
                let id = ledger.created(&monitor, &[])?;
                ledger.monitors.insert("idempotent", id);
                id
            };
            let (again, replayed, same) = api
                .post_idempotent("/api/v1/monitors", &body, "soak-create-1")
                .await?;
            anyhow::ensure!(
                again == StatusCode::CREATED && replayed && same["id"] == id,
                "the retried create: {again} {replayed} {same}"
            );
        }
        other => anyhow::bail!("no action {other}"),
    }
    Ok(())
}
