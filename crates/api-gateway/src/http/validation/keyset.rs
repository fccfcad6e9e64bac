//! Keyset pages, the one way every list pages: a page is at most `limit`
//! items after where the previous one ended, fetched as `limit + 1` rows
//! (the extra row only tells that another page exists), and its
//! `next_cursor` says where it ended. What a cursor carries is the list's
//! [`Key`]: an id for the lists in id order, a position
//! (`super::positions`) for those newest first.

use crate::http::error::{ApiError, FieldError};
use std::future::Future;

/// Where an item sits in a list's order, as its cursor carries it.
pub trait Key: Sized {
    /// The opaque cursor. Clients must not build cursors themselves; the
    /// encoding may change.
    fn encode(&self) -> String;
    /// `None` for a text this API did not hand out.
    fn decode(text: &str) -> Option<Self>;
}

/// Pagination of list endpoints: `?limit=1..=100` (default 50) and
/// `?cursor=` from the previous page's `next_cursor`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Items per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the first page.
    pub cursor: Option<String>,
}

pub const DEFAULT_PAGE_SIZE: i64 = 50;
pub const MAX_PAGE_SIZE: i64 = 100;

/// A page request after validation: at most `limit` items after `after`.
#[derive(Debug, Clone, Copy)]
pub struct Keyset<K> {
    pub limit: i64,
    pub after: Option<K>,
}

impl<K: Key> Keyset<K> {
    /// `limit` (1 to 100, `default` when absent) and the key `cursor`
    /// names; 400 `invalid query parameters` naming every problem.
    pub fn parse(limit: Option<i64>, cursor: Option<&str>, default: i64) -> Result<Self, ApiError> {
        let mut problems = Vec::new();
        let limit = limit.unwrap_or(default);
        if !(1..=MAX_PAGE_SIZE).contains(&limit) {
            problems.push(FieldError::new(
                "limit",
                format!("must be between 1 and {MAX_PAGE_SIZE}"),
            ));
        }
        let after = cursor.and_then(|text| {
            let key = K::decode(text);
            if key.is_none() {
                problems.push(FieldError::new("cursor", "is not a cursor this API issued"));
            }
            key
        });
        if problems.is_empty() {
            Ok(Self { limit, after })
        } else {
            Err(ApiError::InvalidQuery(problems))
        }
    }

    /// The page: `fetch(after, limit + 1)` loads its rows in the list's
    /// order, `key_of` tells where each sits.
    pub async fn fetch<T, E, Fut>(
        self,
        fetch: impl FnOnce(Option<K>, i64) -> Fut,
        key_of: impl Fn(&T) -> K,
    ) -> Result<(Vec<T>, Option<String>), ApiError>
    where
        Fut: Future<Output = Result<Vec<T>, E>>,
        ApiError: From<E>,
    {
        let rows = fetch(self.after, self.limit + 1).await?;
        Ok(split(rows, self.limit, key_of))
    }
}

/// Splits `limit + 1` fetched rows into the page and its `next_cursor`.
pub fn split<T, K: Key>(
    mut rows: Vec<T>,
    limit: i64,
    key_of: impl Fn(&T) -> K,
) -> (Vec<T>, Option<String>) {
    let limit = usize::try_from(limit).unwrap_or(0);
    if rows.len() > limit {
        rows.truncate(limit);
        let next = rows.last().map(|r| key_of(r).encode());
        (rows, next)
    } else {
        (rows, None)
    }
}

/// The body of a page of a list: the items shown, then where it ended
/// (declared with [`list_body!`](crate::http::validation::list_body)).
pub trait ListBody: serde::Serialize {
    /// What the page shows of each row.
    type Item;

    fn of(items: Vec<Self::Item>, next_cursor: Option<String>) -> Self;

    /// `200` with the page of `rows` ([`Keyset::fetch`]), each shown by `show`.
    fn response<T>(
        rows: Vec<T>,
        next_cursor: Option<String>,
        show: impl FnMut(T) -> Self::Item,
    ) -> actix_web::HttpResponse
    where
        Self: Sized,
    {
        actix_web::HttpResponse::Ok()
            .json(Self::of(rows.into_iter().map(show).collect(), next_cursor))
    }

    /// [`response`](Self::response) of the page `page` asks for, which
    /// `fetch` and `key_of` load ([`Keyset::fetch`]).
    fn respond<K: Key, T, E, Fut>(
        page: Keyset<K>,
        fetch: impl FnOnce(Option<K>, i64) -> Fut,
        key_of: impl Fn(&T) -> K,
        show: impl FnMut(T) -> Self::Item,
    ) -> impl Future<Output = Result<actix_web::HttpResponse, ApiError>>
    where
        Self: Sized,
        Fut: Future<Output = Result<Vec<T>, E>>,
        ApiError: From<E>,
    {
        async move {
            let (rows, next_cursor) = page.fetch(fetch, key_of).await?;
            Ok(Self::response(rows, next_cursor, show))
        }
    }
}

/// Declares a list page's body, `{"<items>": [...], "next_cursor": ...}`,
/// and its [`ListBody`]: `list_body!(ApiKeyList, api_keys: ApiKeyResponse)`.
/// `older` before the name: the list is newest first, so the next page is
/// older.
macro_rules! list_body {
    (older $($body:tt)*) => {
        $crate::http::validation::list_body!(@ " Pass as `?cursor=` for the next (older) page; `null` on the last page." $($body)*);
    };
    (@ $cursor_doc:literal $name:ident, $items:ident: $item:ty) => {
        #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
        pub struct $name {
            pub $items: Vec<$item>,
            #[doc = $cursor_doc]
            pub next_cursor: Option<String>,
        }

        impl $crate::http::validation::ListBody for $name {
            type Item = $item;

            fn of(items: Vec<$item>, next_cursor: Option<String>) -> Self {
                Self { $items: items, next_cursor }
            }
        }
    };
    ($($body:tt)*) => {
        $crate::http::validation::list_body!(@ " Pass as `?cursor=` for the next page; `null` on the last page." $($body)*);
    };
}
pub(crate) use list_body;

/// A page of a list in id order, as the lists of the kinds take it.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: i64,
    pub after_id: Option<i64>,
}

impl PageQuery {
    /// The page asked for, in id order.
    pub fn keyset(&self) -> Result<Keyset<i64>, ApiError> {
        Keyset::parse(self.limit, self.cursor.as_deref(), DEFAULT_PAGE_SIZE)
    }

    /// 400 `invalid query parameters` for a limit out of range or a cursor
    /// this API did not hand out.
    pub fn validate(&self) -> Result<Page, ApiError> {
        let page = self.keyset()?;
        Ok(Page {
            limit: page.limit,
            after_id: page.after,
        })
    }
}

/// [`split`] of a list in id order.
pub fn paginate<T>(
    rows: Vec<T>,
    limit: i64,
    id_of: impl Fn(&T) -> i64,
) -> (Vec<T>, Option<String>) {
    split(rows, limit, id_of)
}

impl Key for i64 {
    fn encode(&self) -> String {
        encode_cursor(*self)
    }

    fn decode(text: &str) -> Option<Self> {
        decode_cursor(text)
    }
}

/// The opaque `next_cursor` after the item with id `last_id`.
pub fn encode_cursor(last_id: i64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("id:{last_id}"))
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let digits = std::str::from_utf8(&bytes).ok()?.strip_prefix("id:")?;
    // Exactly what `cursor_pattern` documents: 1 to 18 plain digits.
    if !(1..=MAX_CURSOR_DIGITS).contains(&digits.len())
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

/// Ids in cursors have at most this many digits (ids stay far below 10^18).
const MAX_CURSOR_DIGITS: usize = 18;

/// The regular expression (JSON Schema `pattern`) that matches exactly the
/// cursors [`decode_cursor`] accepts: unpadded base64url of `id:` and 1 to 18
/// digits. Base64 turns each 3 digits into 4 characters, the first two set by
/// the first digit, the third by the second, the fourth by the third.
pub fn cursor_pattern() -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let ch = |i: u8| char::from(B64[usize::from(i)]);
    let digits = b'0'..=b'9';
    let alternatives = |f: &dyn Fn(u8) -> String| {
        let mut all: Vec<String> = digits.clone().map(f).collect();
        all.dedup();
        format!("(?:{})", all.join("|"))
    };
    let first = alternatives(&|b| format!("{}{}", ch(b >> 2), ch(((b & 3) << 4) | (b'0' >> 4))));
    let second = alternatives(&|b| ch((b & 0xf) << 2).to_string());
    let third = alternatives(&|b| ch(b & 0x3f).to_string());
    let last_one = alternatives(&|b| format!("{}{}", ch(b >> 2), ch((b & 3) << 4)));
    let group = format!("{first}{second}{third}");
    let groups = MAX_CURSOR_DIGITS / 3;
    format!(
        "^aWQ6(?:{group}){{0,{}}}(?:{group}|{first}{second}|{last_one})$",
        groups - 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_foreign_ones_are_refused() {
        assert_eq!(decode_cursor(&encode_cursor(42)), Some(42));
        assert_eq!(decode_cursor("42"), None);
        assert_eq!(decode_cursor("!!"), None);
        let page = PageQuery {
            limit: Some(0),
            cursor: Some("nope".into()),
        };
        match page.validate() {
            Err(ApiError::InvalidQuery(problems)) => assert_eq!(problems.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cursors_have_1_to_18_plain_digits() {
        use base64::Engine;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        for bad in ["id:", "id:+5", "id:-5", "id: 5", "id:1234567890123456789"] {
            assert_eq!(decode_cursor(&enc(bad)), None, "{bad}");
        }
        assert_eq!(decode_cursor(&enc("id:007")), Some(7));
        assert_eq!(
            decode_cursor(&enc("id:999999999999999999")),
            Some(999_999_999_999_999_999)
        );
        let pattern = cursor_pattern();
        assert!(
            pattern.starts_with("^aWQ6(?:(?:MD|MT|Mj|Mz|ND|NT|Nj|Nz|OD|OT)"),
            "{pattern}"
        );
    }

    #[test]
    fn paginate_hands_out_a_cursor_only_when_more_rows_exist() {
        let (rows, next) = paginate(vec![1, 2, 3], 2, |r| *r);
        assert_eq!(rows, vec![1, 2]);
        assert_eq!(next.as_deref().and_then(decode_cursor), Some(2));
        let (rows, next) = paginate(vec![1, 2], 2, |r| *r);
        assert_eq!(rows, vec![1, 2]);
        assert!(next.is_none());
    }
}
