//! The rule of which monitors a caller reaches (`uptime_db::reach`) has a
//! spelling per kind of query: the query builder's, the SQL text of
//! statements written by hand, and the subquery the audit log filters with.
//! They must agree, for a caller limited by labels and for one who is not.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Jsonb, Nullable};
use diesel_async::RunQueryDsl;
use serde_json::json;
use std::collections::BTreeSet;
use uptime_contracts::MonitorKind;
use uptime_db::reach::Reach;
use uptime_db::schema::monitors;
use uptime_testkit::fixtures::{insert_monitor, monitor_definition};
use uptime_testkit::TestDb;

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

#[tokio::test]
async fn every_spelling_of_the_rule_reaches_the_same_monitors() {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let org = uptime_db::users::create(&mut conn, "acme")
        .await
        .unwrap()
        .id;
    let other = uptime_db::users::create(&mut conn, "rival")
        .await
        .unwrap()
        .id;
    let mut ids = Vec::new();
    for (owner, labels) in [
        (org, json!({"team": "payments", "env": "prod"})),
        (org, json!({"team": "payments"})),
        (org, json!({"team": "search"})),
        (org, json!({})),
        (other, json!({"team": "payments"})),
    ] {
        let row = insert_monitor(&mut conn, owner, monitor_definition(MonitorKind::Tcp)).await;
        diesel::update(monitors::table.filter(monitors::id.eq(row.id)))
            .set(monitors::labels.eq(labels))
            .execute(&mut conn)
            .await
            .unwrap();
        ids.push(row.id);
    }
    let payments = json!({"team": "payments"});
    let prod_payments = json!({"team": "payments", "env": "prod"});
    for (selector, expected) in [
        (None, vec![ids[0], ids[1], ids[2], ids[3]]),
        (Some(&payments), vec![ids[0], ids[1]]),
        (Some(&prod_payments), vec![ids[0]]),
    ] {
        let reach = Reach {
            org_id: org,
            selector,
        };
        let expected: BTreeSet<i64> = expected.into_iter().collect();
        let built: BTreeSet<i64> = reach
            .monitor_ids()
            .load(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(built, expected, "query builder, {selector:?}");
        let among = reach.reached_among(&mut conn, &ids).await.unwrap();
        assert_eq!(among.into_iter().collect::<BTreeSet<_>>(), expected);
        let text: Vec<Id> = diesel::sql_query(format!(
            "SELECT m.id FROM monitors m WHERE {}",
            Reach::sql_test("m", "$1", "$2")
        ))
        .bind::<BigInt, _>(reach.org_id)
        .bind::<Nullable<Jsonb>, _>(reach.bind())
        .load(&mut conn)
        .await
        .unwrap();
        let text: BTreeSet<i64> = text.into_iter().map(|r| r.id).collect();
        assert_eq!(text, expected, "SQL text, {selector:?}");
        let filtered: BTreeSet<i64> = monitors::table
            .filter(reach.around_reached_ids("monitors.id IN (", ")"))
            .select(monitors::id)
            .load(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(filtered, expected, "subquery, {selector:?}");
    }
}
