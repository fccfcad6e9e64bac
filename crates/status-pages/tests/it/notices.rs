//! Notices on a page and in its Atom feed, which must be Atom: RFC 4287's
//! required elements, in its namespace, with RFC 3339 dates.

use crate::common::{spawn, spawn_with};
use reqwest::StatusCode;

const ATOM: &str = "http://www.w3.org/2005/Atom";

fn child<'a>(node: roxmltree::Node<'a, 'a>, name: &str) -> Option<roxmltree::Node<'a, 'a>> {
    node.children().find(|c| c.has_tag_name((ATOM, name)))
}

fn assert_date(node: Option<roxmltree::Node<'_, '_>>, what: &str) {
    let text = node
        .and_then(|n| n.text())
        .unwrap_or_else(|| panic!("{what} has no date"));
    chrono::DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{what}: {text}: {e}"));
}

#[tokio::test]
async fn notices_show_on_the_page_and_its_history_and_the_feed_is_atom() {
    let service = spawn().await;
    let org = service.organisation("acme").await;
    service.page(org, "acme", "[]").await;
    service
        .sql(
            "WITH p AS (SELECT id, org_id FROM status_pages WHERE slug = 'acme'), \
             n AS (INSERT INTO status_page_notices (page_id, org_id, title, state) \
                   SELECT id, org_id, 'Slow <logins>', 'identified' FROM p RETURNING id) \
             INSERT INTO status_page_notice_updates (notice_id, state, body, created_at) \
             SELECT id, 'investigating', 'Looking into it & more', now() - interval '1 hour' FROM n \
             UNION ALL SELECT id, 'identified', 'A bad deploy', now() FROM n",
        )
        .await;
    service
        .sql(
            "WITH p AS (SELECT id, org_id FROM status_pages WHERE slug = 'acme'), \
             n AS (INSERT INTO status_page_notices (page_id, org_id, title, state, resolved_at) \
                   SELECT id, org_id, 'Old outage', 'resolved', now() FROM p RETURNING id) \
             INSERT INTO status_page_notice_updates (notice_id, state, body) SELECT id, 'resolved', 'Over.' FROM n",
        )
        .await;
    service.refreshed().await;

    let html = service.get("/status/acme").await.text().await.unwrap();
    let notices = html
        .find("<h2 id=\"notices\">Notices</h2>")
        .expect("an open notices section");
    let history = html
        .find("<h2 id=\"history\">Past notices</h2>")
        .expect("a history section");
    let open = html.find("Slow &lt;logins&gt;").unwrap();
    let old = html.find("Old outage").unwrap();
    assert!(notices < open && open < history && history < old, "{html}");
    // Updates newest first.
    assert!(html.find("A bad deploy").unwrap() < html.find("Looking into it &amp; more").unwrap());
    assert!(html.contains("href=\"/status/acme/feed.atom\""));

    let res = service.get("/status/acme/feed.atom").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/atom+xml"));
    let xml = res.text().await.unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("not XML ({e}): {xml}"));
    let feed = doc.root_element();
    assert!(feed.has_tag_name((ATOM, "feed")), "{xml}");
    // RFC 4287 4.1.1: a feed has exactly one id, title and updated, and an
    // author unless every entry has one.
    for name in ["id", "title", "updated", "author"] {
        assert_eq!(
            feed.children()
                .filter(|c| c.has_tag_name((ATOM, name)))
                .count(),
            1,
            "feed/{name}: {xml}"
        );
    }
    assert!(child(child(feed, "author").unwrap(), "name").is_some());
    assert_date(child(feed, "updated"), "feed");
    assert!(feed
        .children()
        .any(|c| c.has_tag_name((ATOM, "link")) && c.attribute("rel") == Some("self")));
    let entries: Vec<_> = feed
        .children()
        .filter(|c| c.has_tag_name((ATOM, "entry")))
        .collect();
    assert_eq!(entries.len(), 2);
    let mut ids = Vec::new();
    for entry in &entries {
        // 4.1.2: an entry has exactly one id, title and updated.
        for name in ["id", "title", "updated"] {
            assert_eq!(
                entry
                    .children()
                    .filter(|c| c.has_tag_name((ATOM, name)))
                    .count(),
                1,
                "entry/{name}: {xml}"
            );
        }
        assert_date(child(*entry, "updated"), "entry");
        ids.push(child(*entry, "id").unwrap().text().unwrap().to_string());
    }
    assert_ne!(ids[0], ids[1]);
    let first_title = child(entries[0], "title").unwrap().text().unwrap();
    assert!(first_title.starts_with("Old outage") || first_title.starts_with("Slow <logins>"));
    assert!(xml.contains("A bad deploy"));

    assert_eq!(
        service.get("/status/nope/feed.atom").await.status(),
        StatusCode::NOT_FOUND
    );
}

/// RFC 4151 tag URIs under the deployment's own authority (the host of its
/// public base URL), so ids are unique across installations: two services
/// with the same page and notice ids give different ids.
#[tokio::test]
async fn feed_and_entry_ids_are_tag_uris_of_the_deployments_host() {
    let mut ids_by_host = Vec::new();
    for base in ["https://Status.Example.com:8443/", "http://127.0.0.1:8090"] {
        let service = spawn_with(|s| s.status_pages.public_base_url = base.into()).await;
        let org = service.organisation("acme").await;
        service.page(org, "acme", "[]").await;
        service
            .sql(
                "WITH p AS (SELECT id, org_id FROM status_pages WHERE slug = 'acme') \
                 INSERT INTO status_page_notices (page_id, org_id, title, state) \
                 SELECT id, org_id, 'Slow logins', 'identified' FROM p",
            )
            .await;
        service.refreshed().await;
        let xml = service
            .get("/status/acme/feed.atom")
            .await
            .text()
            .await
            .unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let feed = doc.root_element();
        let feed_id = child(feed, "id").unwrap().text().unwrap().to_string();
        let entry = child(feed, "entry").expect("an entry");
        let entry_id = child(entry, "id").unwrap().text().unwrap().to_string();
        ids_by_host.push((feed_id, entry_id));
    }
    let [(feed_a, entry_a), (feed_b, entry_b)] = &ids_by_host[..] else {
        unreachable!()
    };
    for (id, prefix) in [
        (feed_a, "tag:status.example.com,2026:status-page/"),
        (entry_a, "tag:status.example.com,2026:notice/"),
        (feed_b, "tag:127.0.0.1,2026:status-page/"),
        (entry_b, "tag:127.0.0.1,2026:notice/"),
    ] {
        assert!(id.starts_with(prefix), "{id} is not under {prefix}");
        let specific = &id[prefix.len()..];
        assert!(
            !specific.is_empty() && specific.bytes().all(|b| b.is_ascii_digit()),
            "{id}"
        );
    }
}
