//! The status-page resource as the API takes and shows it, and the checks
//! of its fields (every bound here is in the OpenAPI document too).

use crate::validation::{Problems, UrlRules};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use uptime_db::status_pages::StatusPage;
use utoipa::ToSchema;

pub const MAX_SLUG_CHARS: usize = 63;
pub const SLUG_PATTERN: &str = "^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$";
pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
pub const MAX_DOMAIN_CHARS: usize = 253;
pub const MAX_GROUPS: usize = 20;
pub const MAX_GROUP_NAME_CHARS: usize = 100;
pub const MAX_IDS_PER_GROUP: usize = 100;
/// Distinct monitors a page names by id, over all its groups.
pub const MAX_IDS_PER_PAGE: usize = 200;

/// One named group of monitors on a page, shown in the order given.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PageGroup {
    /// The group's heading.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Monitors shown in this order (at most 100 per group, 200 distinct per
    /// page); the organisation's monitors only.
    #[serde(default)]
    #[schema(max_items = 100)]
    pub monitor_ids: Vec<i64>,
    /// Also shows every monitor carrying these labels (`{"team":
    /// "payments"}`, at most 32 terms), after the listed ones, by name. A
    /// group needs `monitor_ids` or a selector.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, String>>)]
    pub selector: Option<BTreeMap<String, String>>,
}

crate::refs::with_ref! {
    /// A new status page.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CreateStatusPage {
        /// The page's path: `/status/{slug}` (lowercase letters, digits and
        /// inner `-`; unique across the service).
        #[schema(
            min_length = 1,
            max_length = 63,
            pattern = "^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
        )]
        pub slug: String,
        #[schema(min_length = 1, max_length = 200)]
        pub title: String,
        #[schema(max_length = 2000)]
        pub description: Option<String>,
        /// An absolute `https://` URL of the logo image.
        #[schema(max_length = 2048)]
        pub logo_url: Option<String>,
        /// A host name that shows this page at `/` (route it to the
        /// status-pages service: the Helm chart's `statusPages.ingress.hosts`).
        #[schema(max_length = 253, pattern = "^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")]
        pub custom_domain: Option<String>,
        /// The groups of monitors shown, in order (at most 20).
        #[serde(default)]
        #[schema(max_items = 20)]
        pub groups: Vec<PageGroup>,
        /// A private page is shown only with its access token (issued in this
        /// response, once).
        #[serde(default)]
        pub private: bool,
    }
    /// A stable name of the caller's choice (monitoring as code names the
    /// page by it): 1 to 255 of lowercase letters, digits, `.`, `_`, `-`,
    /// alphanumeric at both ends; unique among the organisation's pages
    /// (`409` naming `ref` when taken) and immutable once set.
    create ref
}

crate::refs::with_ref! {
    /// A change to a page: fields left out stay as they are; `null` clears the
    /// optional ones.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct UpdateStatusPage {
        #[schema(
            min_length = 1,
            max_length = 63,
            pattern = "^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
        )]
        pub slug: Option<String>,
        #[schema(min_length = 1, max_length = 200)]
        pub title: Option<String>,
        #[serde(default, deserialize_with = "crate::validation::double_option")]
        #[schema(max_length = 2000, value_type = Option<String>)]
        pub description: Option<Option<String>>,
        #[serde(default, deserialize_with = "crate::validation::double_option")]
        #[schema(max_length = 2048, value_type = Option<String>)]
        pub logo_url: Option<Option<String>>,
        #[serde(default, deserialize_with = "crate::validation::double_option")]
        #[schema(max_length = 253, value_type = Option<String>, pattern = "^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")]
        pub custom_domain: Option<Option<String>>,
        #[schema(max_items = 20)]
        pub groups: Option<Vec<PageGroup>>,
        /// `true` makes the page private (a token is issued in this response
        /// when it has none); `false` makes it public and drops its token.
        pub private: Option<bool>,
    }
    /// Sets the ref of a page that has none; repeating the current ref (or
    /// `null` while there is none) changes nothing; changing or removing a
    /// set ref is a `400` naming `ref`.
    update ref
}

crate::refs::with_ref! {
    /// A status page.
    #[derive(Debug, Serialize, ToSchema)]
    pub struct StatusPageResponse {
        pub id: i64,
        pub slug: String,
        pub title: String,
        pub description: Option<String>,
        pub logo_url: Option<String>,
        pub custom_domain: Option<String>,
        pub groups: Vec<PageGroup>,
        pub private: bool,
        /// Where the page is served (`status_pages.public_base_url`).
        pub url: String,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
        /// The private page's access token: only in the response that issued
        /// it. Open the page as `{url}?access_token=...`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub access_token: Option<String>,
    }
    /// The page's ref; `null` when it has none.
    shown ref
}

impl StatusPageResponse {
    pub fn of(page: StatusPage, base_url: &str, access_token: Option<String>) -> Self {
        Self {
            id: page.id,
            url: format!("{}/status/{}", base_url.trim_end_matches('/'), page.slug),
            slug: page.slug,
            title: page.title,
            description: page.description,
            logo_url: page.logo_url,
            custom_domain: page.custom_domain,
            groups: serde_json::from_value(page.groups).unwrap_or_default(),
            private: page.access_token_sha256.is_some(),
            created_at: page.created_at,
            updated_at: page.updated_at,
            access_token,
            ref_: None,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StatusPageList {
    pub status_pages: Vec<StatusPageResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// A page's fields after validation, as stored.
pub struct CheckedPage {
    pub slug: String,
    pub title: String,
    pub description: Option<String>,
    pub logo_url: Option<String>,
    pub custom_domain: Option<String>,
    pub groups: Vec<PageGroup>,
}

impl CheckedPage {
    pub fn groups_json(&self) -> Value {
        json!(self.groups)
    }

    /// Every monitor id the groups name, once.
    pub fn monitor_ids(&self) -> Vec<i64> {
        let ids: BTreeSet<i64> = self
            .groups
            .iter()
            .flat_map(|g| g.monitor_ids.iter().copied())
            .collect();
        ids.into_iter().collect()
    }

    /// Adds a problem for every field out of bounds; trims the texts and
    /// lowercases the domain.
    pub fn check(mut self, problems: &mut Problems) -> Self {
        self.slug = self.slug.trim().to_string();
        if self.slug.chars().count() > MAX_SLUG_CHARS || !is_slug(&self.slug) {
            problems.add(
                "slug",
                format!("must be 1 to {MAX_SLUG_CHARS} lowercase letters, digits and '-' (not at either end)"),
            );
        }
        self.title = self.title.trim().to_string();
        if self.title.is_empty() {
            problems.add("title", "must not be empty");
        }
        problems.check_len("title", &self.title, MAX_TITLE_CHARS);
        if let Some(description) = &self.description {
            problems.check_len("description", description, MAX_DESCRIPTION_CHARS);
        }
        if let Some(logo) = &self.logo_url {
            problems.check_url(
                "logo_url",
                logo,
                UrlRules {
                    allow_http: false,
                    allow_private_hosts: false,
                },
            );
        }
        if let Some(domain) = self.custom_domain.take() {
            let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
            if !is_domain(&domain) {
                problems.add(
                    "custom_domain",
                    format!("must be a host name of at most {MAX_DOMAIN_CHARS} characters with at least two labels (status.example.com)"),
                );
            }
            self.custom_domain = Some(domain);
        }
        self.check_groups(problems);
        self
    }

    fn check_groups(&mut self, problems: &mut Problems) {
        if self.groups.len() > MAX_GROUPS {
            problems.add("groups", format!("at most {MAX_GROUPS} groups"));
            return;
        }
        for (i, group) in self.groups.iter_mut().enumerate() {
            group.name = group.name.trim().to_string();
            let field = format!("groups[{i}].name");
            if group.name.is_empty() {
                problems.add(&field, "must not be empty");
            }
            problems.check_len(&field, &group.name, MAX_GROUP_NAME_CHARS);
            if group.monitor_ids.len() > MAX_IDS_PER_GROUP {
                problems.add(
                    &format!("groups[{i}].monitor_ids"),
                    format!("at most {MAX_IDS_PER_GROUP} monitors per group"),
                );
            }
            let mut seen = BTreeSet::new();
            group.monitor_ids.retain(|id| seen.insert(*id));
            match &group.selector {
                Some(selector) if selector.is_empty() => problems.add(
                    &format!("groups[{i}].selector"),
                    "must name at least one label (leave it out to pick monitors by id only)",
                ),
                Some(selector) => {
                    let labels = uptime_labels::Labels(selector.clone());
                    for (_, problem) in labels.problems() {
                        problems.add(&format!("groups[{i}].selector"), problem.to_string());
                    }
                }
                None if group.monitor_ids.is_empty() => {
                    problems.add(&format!("groups[{i}]"), "needs monitor_ids or a selector")
                }
                None => {}
            }
        }
        if self.monitor_ids().len() > MAX_IDS_PER_PAGE {
            problems.add(
                "groups",
                format!("at most {MAX_IDS_PER_PAGE} distinct monitors by id per page"),
            );
        }
    }
}

fn is_slug(slug: &str) -> bool {
    let b = slug.as_bytes();
    !b.is_empty()
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A DNS host name: at least two labels of 1 to 63 letters, digits and
/// inner hyphens.
fn is_domain(domain: &str) -> bool {
    domain.len() <= MAX_DOMAIN_CHARS
        && domain.split('.').count() >= 2
        && domain.split('.').all(|label| {
            let b = label.as_bytes();
            (1..=63).contains(&b.len())
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_domains_have_their_shapes() {
        assert!(is_slug("acme"));
        assert!(is_slug("acme-status-2"));
        assert!(!is_slug("-acme"));
        assert!(!is_slug("Acme"));
        assert!(!is_slug(""));
        assert!(is_domain("status.example.com"));
        assert!(!is_domain("localhost"));
        assert!(!is_domain("exa_mple.com"));
        assert!(!is_domain("-a.com"));
    }
}
