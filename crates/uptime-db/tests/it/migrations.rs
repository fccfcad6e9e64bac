//! Migrations only ever add.
//!
//! A database records which migrations it ran, not what they said: a landed
//! migration edited afterwards is never run again where it already ran, so
//! databases installed before and after the edit silently differ (and a later
//! migration written against one of them can fail on the other). So every
//! landed migration folder is pinned here by a SHA-256 digest of its files,
//! and every migration history a database can have ends in the same schema.

use crate::history::{empty_database, folders, run_migrations_of, subset};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every landed migration and the digest of its files. A new migration is
/// added here in the commit that adds it (the failure message prints the
/// line); a landed one is never changed or removed.
#[rustfmt::skip]
const PINNED: &[(&str, &str)] = &[
    ("2026-11-22-000001_initial", "89b52708163fe1482a331a3df821e8a0f334b63ffac60cf7b2c32e66e3e44de1"),
    // As landed (with b5faf1a's index; 000002-1 adds it where it is missing).
    ("2026-11-22-000002_alert_deliveries", "7002a71f3c3c8cd27c9ee416a522316582db62b8375f41e8043f87f0a69c765a"),
    ("2026-11-22-000002-1_pending_contact_index", "18790f74ac80c188a74a633b5b21ccd574a684ef70adc10d09bebb9596d315b9"),
    ("2026-11-22-000003_delivery_order_and_leases", "87dfdc56680652528b354690a7b864b563ca2084e5cd3eb7aa4d7da10837225e"),
    ("2026-11-22-000004_user_quotas", "cfc1e1ebb5cd908b23e814c4ffb1d0b1ddc21c3337ddd7d6f1420ab2f69497c6"),
    ("2026-11-22-000005_verification_mail_on_create", "a57bc9ffc1f3e22bc06d1528785cd0cef7a76dc1c2614ef44126673bb1a95f39"),
    ("2026-11-22-000006_heartbeat_periods", "e076db45f4f11bda2124adef10c7b2331d618dfb8a4d9c30285bc596b8e9dc11"),
    ("2026-11-22-000007_definition_versions", "7b19e5eb3f6fe6cd5d08b7d905066d903a19636a49740365c9926825afe34e48"),
    ("2026-11-22-000008_partitioned_results", "1476bc8c3ba53d112f42f853c925892e19328117f405dd0dcce412b9f2d4b139"),
    ("2026-11-22-000009_retention_indexes", "11614e93cfe87a22671f4a296c7e7c79384f0fa7bd1cea3c3b363c60cd59320b"),
    ("2026-11-22-000010_hot_runtime_updates", "185437cedf6cc201cf86f3a0dcf586be63a073de58f07eb5f63e6c4a22f94457"),
    ("2026-11-22-000011_user_monitor_counts", "6a56d1516e5053700875eca3b3a178827e4d0af78e81847915e0301185f599c7"),
    ("2026-11-22-000012_more_monitor_kinds", "4f6ccd89c70f1d75137050aa718be3b0a69789921f421eea4c06ebfa46295026"),
    ("2026-11-22-000013_regions_and_rounds", "7372ac10daf80c3a68f976f297f8f7cc24622f56b712491c66cdd49dd7327347"),
    ("2026-11-22-000014_check_load_quota", "691a4e3b0eeb73dcf3b846cb388663b657c2493771956e951bb41e47255e3cfc"),
    ("2026-11-22-000015_sealed_http_password", "a1a3232f3a2436fa927ca540b2f9812ae82bfe9c6a3e710eba3cd08f80e3fac0"),
    ("2026-11-22-000016_outbox_insertion_order", "8b89d9ccbfa54b2b0b44cc8564d0bc0c07a36c2a564dbf63a4b68a95a0651b5a"),
    ("2026-11-22-000017_organisations", "a8e0038c915bb891a78808e21afd94a5fe0df2a8a7f97ce00a5caa4712ac8dd0"),
    ("2026-11-22-000018_key_scopes", "a9b2a03a9c2210b537fb56103a4ff601f2dc9914a6e23b794fe6c4ebb7593d55"),
    ("2026-11-22-000019_audit_log", "21fce58783b38b09fcf06dd640098b44eb99c3c33ca66ca1b5e22367732ea46d"),
    ("2026-11-27-000031_monitor_last_latency", "d43d4c8d54a5e74802d0ff89d26cfde391e9560e705fff8be1e150021c4b1a3b"),
    ("2026-11-27-000035_status_pages_and_badges", "b76b1c669df51d9895f48b37fae6539a1f2c22236410dbe8e8a16af064613f70"),
    ("2026-11-27-000039_status_page_notices", "ace4a58797e837db3cc74fb5d9197ed28b6f67b1200eb1252bec4a8e4ffc9cb9"),
    ("2026-11-27-000020_invitations", "e20c355690fd2b35c3cb62a3ae26ed9549ef1b672e746ec9a67cf8c4513cad1d"),
    ("2026-11-27-000021_monitor_labels", "13b20fdee903d35c909ec6c940f8a44bd89c7dc1c784670f6f460ba32a33b1dc"),
    ("2026-11-27-000022_incidents", "b47ac2ca2d9d8c05adc179cfe4220516228172c9e7df6f3d1c301d080aa7103f"),
    ("2026-11-27-000029_provider_contacts", "b0d7d06b8c271f0c23e77f41b8421fb80e7cf72e9283bb3e701a864b7eb46c69"),
    ("2026-11-27-000030_contact_event_filters", "02407e2594cfb72c7aac38c08723dd6e5bab73d204eae2236cf8f7196baff4c3"),
    ("2026-11-27-000046_idempotency_keys", "c3deae895d6ee9ee3bd4883f43f25c768568de5c306fbcaf37f626c570ad8583"),
    ("2026-11-27-000032_maintenance_windows", "1d10630ebed841e9c514e97935134dcca8c92644469ee04232576d1311b63f1a"),
    ("2026-11-27-000034_escalation_policies", "7a46dc199dc8320445bc7e4ff4a39946970ff05b6794c10a075a9c5b56769fae"),
    ("2026-11-27-000033_alert_reminders_dependencies_flapping", "db1e86a422975145c442f2b10d22108856d7976a80e90ad3651aa4b469b3ed25"),
    ("2026-11-28-000047_resource_refs", "338f60709acb85e5546afc4bee5d990eb607e36cc7c607761f0c0a7f31992939"),
    ("2026-11-28-000048_status_page_subscriptions", "4d903567b731498aba6789586d6aa5d894dadd2a64b6c7336b4b9e324df3a8be"),
    ("2026-12-02-000351_idempotent_response_headers", "59565cc5d69aa4a615cbcdf794d565f7117cd85b3e350227757807110538ed1e"),
    ("2026-12-02-000352_unicode_case_search", "be81303407a275cd295099ea7dbae9bd610e3d094c71b988918aeba3411949b9"),
];

/// SHA-256 over every file of the folder (name and content, by name), with
/// line endings normalised so a Windows checkout digests the same.
fn digest(folder: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("read migration folder")
        .map(|entry| entry.expect("folder entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        let body = std::fs::read_to_string(&file).expect("migration files are text");
        hasher.update(file.file_name().unwrap().to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(body.replace("\r\n", "\n").as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

#[test]
fn landed_migrations_are_never_edited_or_removed_and_new_ones_are_pinned() {
    let found = folders();
    let pinned: BTreeMap<&str, &str> = PINNED.iter().copied().collect();
    assert_eq!(pinned.len(), PINNED.len(), "a migration is pinned twice");
    let mut problems = Vec::new();
    for (name, expected) in &pinned {
        match found.get(*name) {
            None => problems.push(format!(
                "{name}: pinned but missing from migrations/. A landed migration is never \
                 removed or renamed (databases have run it); restore it."
            )),
            Some(path) => {
                let actual = digest(path);
                if actual != *expected {
                    problems.push(format!(
                        "{name}: its files changed after it was pinned (digest {actual}, pinned \
                         {expected}). A landed migration is never edited: databases that ran \
                         it will not run it again. Restore it (`git log -p -- migrations/{name}`) \
                         and put the change in a new migration. Only if this migration has not \
                         landed on main yet may you update its digest in PINNED."
                    ));
                }
            }
        }
    }
    let unpinned: Vec<String> = found
        .iter()
        .filter(|(name, _)| !pinned.contains_key(name.as_str()))
        .map(|(name, path)| format!("    (\"{name}\", \"{}\"),", digest(path)))
        .collect();
    if !unpinned.is_empty() {
        problems.push(format!(
            "new migrations are not pinned yet. Once a migration is final, pin it in the same \
             commit that adds it by adding to PINNED in {}:\n{}",
            file!(),
            unpinned.join("\n")
        ));
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n\n"));
}

// ---------------------------------------------------------------------------
// Every migration history ends in the same schema.
// ---------------------------------------------------------------------------

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Line {
    #[diesel(sql_type = diesel::sql_types::Text)]
    line: String,
}

/// Every index and column of the public schema, one line each, and the key
/// of each partitioned table. The partitions themselves are left out: which
/// days have one depends on the data and the day a database was migrated
/// (migration 000008), not on its history.
async fn schema_of(url: &str) -> Vec<String> {
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(
        "SELECT indexdef AS line FROM pg_indexes i WHERE schemaname = 'public' \
             AND NOT EXISTS (SELECT 1 FROM pg_class c \
                             WHERE c.relname = i.tablename AND c.relispartition) \
         UNION ALL \
         SELECT format('%s.%s %s null=%s default=%s', table_name, column_name, data_type, \
                       is_nullable, coalesce(column_default, '-')) \
         FROM information_schema.columns col WHERE table_schema = 'public' \
             AND NOT EXISTS (SELECT 1 FROM pg_class c \
                             WHERE c.relname = col.table_name AND c.relispartition) \
         UNION ALL \
         SELECT format('%s partitioned by %s', relname, pg_get_partkeydef(oid)) \
         FROM pg_class WHERE relkind = 'p' \
         ORDER BY 1",
    )
    .load::<Line>(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .map(|l| l.line)
    .collect()
}

const INITIAL: &str = "2026-11-22-000001_initial";
const DELIVERIES: &str = "2026-11-22-000002_alert_deliveries";
/// Creates, where it is missing, the index b5faf1a added to `DELIVERIES`.
const MISSING_INDEX: &str = "2026-11-22-000002-1_pending_contact_index";

/// For [`subset`]: `DELIVERIES` as it was before commit b5faf1a added the
/// per-contact pending index to it.
fn as_before_b5faf1a(name: &str, dir: &Path) {
    if name == DELIVERIES {
        let up = dir.join("up.sql");
        let body = std::fs::read_to_string(&up).unwrap();
        let before: Vec<&str> = body
            .lines()
            .filter(|l| !l.contains("alert_deliveries_pending_contact_idx"))
            .collect();
        assert!(
            before.len() < body.lines().count(),
            "the index is in 000002"
        );
        std::fs::write(&up, before.join("\n")).unwrap();
    }
}

#[tokio::test]
async fn every_migration_history_ends_in_the_schema_of_a_new_database() {
    let fresh = empty_database().await;
    uptime_db::migrate(&fresh)
        .await
        .expect("a new database migrates");
    let expected = schema_of(&fresh).await;
    assert!(
        expected
            .iter()
            .any(|l| l.contains("alert_deliveries_pending_contact_seq_idx")),
        "the claim's ordering index is there: {expected:#?}"
    );
    assert!(
        !expected
            .iter()
            .any(|l| l.contains("alert_deliveries_pending_contact_idx ")),
        "the index it replaced is gone: {expected:#?}"
    );
    assert!(
        expected
            .iter()
            .any(|l| l == "check_results partitioned by RANGE (slot_at)"),
        "results are partitioned by day of slot: {expected:#?}"
    );

    // Installed from 000002 before b5faf1a added the index, upgraded now.
    let landed = empty_database().await;
    let old = subset(&[INITIAL, DELIVERIES], as_before_b5faf1a);
    run_migrations_of(&landed, old.path()).await;
    uptime_db::migrate(&landed)
        .await
        .expect("a database from before b5faf1a upgrades");
    assert_eq!(
        schema_of(&landed).await,
        expected,
        "installed before b5faf1a"
    );

    // Installed from 000002 as it landed (with the index), upgraded now.
    let edited = empty_database().await;
    let old = subset(&[INITIAL, DELIVERIES], |_, _| {});
    run_migrations_of(&edited, old.path()).await;
    uptime_db::migrate(&edited)
        .await
        .expect("a database from after b5faf1a upgrades");
    assert_eq!(
        schema_of(&edited).await,
        expected,
        "installed after b5faf1a"
    );

    // Fully migrated without 000002-1 (000003 and later have run), then
    // given 000002-1, which runs last there and must change nothing.
    let current = empty_database().await;
    let names: Vec<String> = folders()
        .into_keys()
        .filter(|n| n != MISSING_INDEX)
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let old = subset(&names, |_, _| {});
    run_migrations_of(&current, old.path()).await;
    let applied = uptime_db::migrate(&current).await.expect("upgrades");
    assert_eq!(applied, ["202611220000021"], "only 000002-1 is new there");
    assert_eq!(
        schema_of(&current).await,
        expected,
        "migrated before the move"
    );
}
