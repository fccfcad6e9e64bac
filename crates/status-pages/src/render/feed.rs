//! A page's notices as an Atom feed (RFC 4287): the feed's `id`, `title`,
//! `updated`, `author` and `link rel="self"`; an entry per notice with its
//! `id`, `title`, `updated`, `link` to the page and its updates as text
//! `content`, newest notice first. Ids are RFC 4151 tag URIs under the
//! deployment's own host (`tag:status.example.com,2026:notice/123`):
//! permanent and unique across installations (notice ids are unique in
//! one).

use super::escape;
use crate::model::NoticeView;
use crate::settings::TAG_YEAR;
use chrono::{DateTime, SecondsFormat, Utc};
use std::fmt::Write;

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// What the feed says of its page.
pub struct FeedHead<'a> {
    /// The tag URIs' authority ([`crate::settings::ServeSettings::tag_authority`]).
    pub authority: &'a str,
    pub page_id: i64,
    pub title: &'a str,
    /// The page's URL path (`/status/{slug}`): links are relative to the
    /// feed's own address, which depends on the domain it was read from.
    pub page_path: &'a str,
    /// The page's last change: the feed's `updated` when it has no notice.
    pub page_updated: DateTime<Utc>,
}

pub fn render(head: &FeedHead<'_>, notices: &[NoticeView]) -> String {
    let updated = notices
        .iter()
        .map(|n| n.updated_at)
        .chain(std::iter::once(head.page_updated))
        .max()
        .unwrap_or(head.page_updated);
    let title = escape(head.title);
    let authority = escape(head.authority);
    let mut xml = String::with_capacity(4096);
    let _ = write!(
        xml,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\
         <id>tag:{authority},{TAG_YEAR}:status-page/{}</id><title>{title}: notices</title><updated>{}</updated>\
         <author><name>{title}</name></author>\
         <link rel=\"self\" type=\"application/atom+xml\" href=\"{}/feed.atom\"/>\
         <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>",
        head.page_id,
        rfc3339(updated),
        escape(head.page_path),
        escape(head.page_path),
    );
    let mut newest_first: Vec<&NoticeView> = notices.iter().collect();
    newest_first.sort_by_key(|n| std::cmp::Reverse(n.id));
    for notice in newest_first {
        let mut content = String::new();
        for update in notice.updates.iter().rev() {
            let _ = write!(
                content,
                "{} ({}): {}\n\n",
                update.state,
                rfc3339(update.created_at),
                update.body
            );
        }
        let _ = write!(
            xml,
            "<entry><id>tag:{authority},{TAG_YEAR}:notice/{}</id><title>{} [{}]</title>\
             <updated>{}</updated><published>{}</published>\
             <link rel=\"alternate\" type=\"text/html\" href=\"{}#notice-{}\"/>\
             <content type=\"text\">{}</content></entry>",
            notice.id,
            escape(&notice.title),
            notice.state,
            rfc3339(notice.updated_at),
            rfc3339(notice.created_at),
            escape(head.page_path),
            notice.id,
            escape(content.trim_end()),
        );
    }
    xml.push_str("</feed>\n");
    xml
}
