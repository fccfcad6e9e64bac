//! A loopback stand-in for the alert providers' APIs: it answers each
//! request as the provider does and checks it against what the provider
//! documents (method, path, authentication, required fields, lengths,
//! escaping). A request that breaks a rule is answered `400` with the
//! broken rule, as the provider would refuse it, and kept in `refused`.

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// One request the receiver took.
#[derive(Debug, Clone)]
pub struct Taken {
    /// Path and query, e.g. `/v2/alerts/uptime-1-2/close?identifierType=alias`.
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    PagerDuty,
    Opsgenie,
    Teams,
    Discord,
    Telegram,
    Ntfy,
    Pushover,
}

#[derive(Default)]
pub struct Log {
    pub accepted: Vec<Taken>,
    /// Requests refused, with the rule each broke.
    pub refused: Vec<(Taken, String)>,
}

pub struct ProviderReceiver {
    /// `http://127.0.0.1:PORT`, every provider's base URL in the test.
    pub base: String,
    pub log: Arc<Mutex<Log>>,
    _server: actix_web::dev::ServerHandle,
}

impl ProviderReceiver {
    pub async fn start(provider: Provider) -> Self {
        let log: Arc<Mutex<Log>> = Arc::default();
        let shared = log.clone();
        let server = HttpServer::new(move || {
            let shared = shared.clone();
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
                let shared = shared.clone();
                async move {
                    let taken = Taken {
                        path: req
                            .uri()
                            .path_and_query()
                            .map(|p| p.to_string())
                            .unwrap_or_default(),
                        authorization: req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string),
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                    };
                    let json_body = req
                        .headers()
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|v| v.starts_with("application/json"));
                    let verdict = if req.method() != actix_web::http::Method::POST {
                        Err(format!("method {} (POST expected)", req.method()))
                    } else if !json_body {
                        Err("Content-Type is not application/json".to_string())
                    } else {
                        validate(provider, &taken)
                    };
                    let mut log = shared.lock().unwrap();
                    match verdict {
                        Ok(()) => {
                            log.accepted.push(taken);
                            success(provider)
                        }
                        Err(rule) => {
                            log.refused.push((taken, rule.clone()));
                            HttpResponse::BadRequest().json(json!({"message": rule}))
                        }
                    }
                }
            }))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        let base = format!("http://{}", server.addrs()[0]);
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            base,
            log,
            _server: handle,
        }
    }

    pub fn accepted(&self) -> Vec<Taken> {
        self.log.lock().unwrap().accepted.clone()
    }

    pub fn refused(&self) -> Vec<(Taken, String)> {
        self.log.lock().unwrap().refused.clone()
    }
}

/// The provider's documented success answer.
fn success(provider: Provider) -> HttpResponse {
    match provider {
        Provider::PagerDuty => HttpResponse::Accepted()
            .json(json!({"status": "success", "message": "Event processed"})),
        Provider::Opsgenie => HttpResponse::Accepted()
            .json(json!({"result": "Request will be processed", "took": 0.01, "requestId": "r"})),
        Provider::Teams => HttpResponse::Accepted().finish(),
        Provider::Discord => HttpResponse::NoContent().finish(),
        Provider::Telegram => HttpResponse::Ok().json(json!({"ok": true, "result": {}})),
        Provider::Ntfy => HttpResponse::Ok().json(json!({"id": "x", "event": "message"})),
        Provider::Pushover => HttpResponse::Ok().json(json!({"status": 1, "request": "r"})),
    }
}

fn validate(provider: Provider, taken: &Taken) -> Result<(), String> {
    match provider {
        Provider::PagerDuty => pagerduty(taken),
        Provider::Opsgenie => opsgenie(taken),
        Provider::Teams => teams(taken),
        Provider::Discord => discord(taken),
        Provider::Telegram => telegram(taken),
        Provider::Ntfy => ntfy(taken),
        Provider::Pushover => pushover(taken),
    }
}

fn require(ok: bool, rule: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(rule.to_string())
    }
}

fn text<'a>(body: &'a Value, pointer: &str) -> Result<&'a str, String> {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{pointer} must be a string"))
}

fn chars_within(s: &str, min: usize, max: usize, what: &str) -> Result<(), String> {
    let n = s.chars().count();
    require(
        (min..=max).contains(&n),
        &format!("{what} must be {min} to {max} characters, is {n}"),
    )
}

/// Events API v2: `POST /v2/enqueue`; routing_key 32 characters;
/// event_action trigger/acknowledge/resolve; dedup_key at most 255;
/// a trigger's payload has summary (≤1024), source, severity
/// (critical/error/warning/info); a timestamp, when given, is ISO 8601.
fn pagerduty(t: &Taken) -> Result<(), String> {
    require(t.path == "/v2/enqueue", "path must be /v2/enqueue")?;
    let b = &t.body;
    chars_within(text(b, "/routing_key")?, 32, 32, "routing_key")?;
    let action = text(b, "/event_action")?;
    require(
        ["trigger", "acknowledge", "resolve"].contains(&action),
        "event_action must be trigger, acknowledge or resolve",
    )?;
    chars_within(text(b, "/dedup_key")?, 1, 255, "dedup_key")?;
    if action != "trigger" {
        return Ok(());
    }
    chars_within(text(b, "/payload/summary")?, 1, 1024, "payload.summary")?;
    chars_within(text(b, "/payload/source")?, 1, 255, "payload.source")?;
    let severity = text(b, "/payload/severity")?;
    require(
        ["critical", "error", "warning", "info"].contains(&severity),
        "payload.severity must be critical, error, warning or info",
    )?;
    if let Some(ts) = b.pointer("/payload/timestamp") {
        let ts = ts.as_str().unwrap_or("");
        require(
            chrono::DateTime::parse_from_rfc3339(ts).is_ok(),
            "payload.timestamp must be ISO 8601",
        )?;
    }
    if let Some(links) = b.get("links") {
        for link in links.as_array().ok_or("links must be an array")? {
            text(link, "/href")?;
        }
    }
    Ok(())
}

/// Alert API: `Authorization: GenieKey <key>`; `POST /v2/alerts` with
/// message (≤130), alias (≤512), priority P1..P5, description (≤15000);
/// `POST /v2/alerts/{alias}/close?identifierType=alias` and
/// `POST /v2/alerts/{alias}/acknowledge?identifierType=alias`.
fn opsgenie(t: &Taken) -> Result<(), String> {
    let key = t
        .authorization
        .as_deref()
        .and_then(|a| a.strip_prefix("GenieKey "));
    require(
        key.is_some_and(|k| !k.is_empty()),
        "Authorization must be GenieKey <key>",
    )?;
    if t.path == "/v2/alerts" {
        let b = &t.body;
        chars_within(text(b, "/message")?, 1, 130, "message")?;
        chars_within(text(b, "/alias")?, 1, 512, "alias")?;
        if let Some(d) = b.get("description") {
            chars_within(d.as_str().unwrap_or(""), 0, 15_000, "description")?;
        }
        if let Some(p) = b.get("priority") {
            require(
                ["P1", "P2", "P3", "P4", "P5"].contains(&p.as_str().unwrap_or("")),
                "priority must be P1 to P5",
            )?;
        }
        return Ok(());
    }
    let alias = t
        .path
        .strip_prefix("/v2/alerts/")
        .and_then(|rest| {
            rest.strip_suffix("/close?identifierType=alias")
                .or_else(|| rest.strip_suffix("/acknowledge?identifierType=alias"))
        })
        .ok_or("path must be /v2/alerts or /v2/alerts/{alias}/(close|acknowledge)?identifierType=alias")?;
    chars_within(alias, 1, 512, "alias")
}

/// A Workflows webhook: `{"type": "message", "attachments": [{"contentType":
/// "application/vnd.microsoft.card.adaptive", "content": AdaptiveCard}]}`.
fn teams(t: &Taken) -> Result<(), String> {
    let b = &t.body;
    require(text(b, "/type")? == "message", "type must be message")?;
    let attachments = b["attachments"]
        .as_array()
        .ok_or("attachments must be an array")?;
    require(!attachments.is_empty(), "attachments must not be empty")?;
    for a in attachments {
        require(
            text(a, "/contentType")? == "application/vnd.microsoft.card.adaptive",
            "contentType must be application/vnd.microsoft.card.adaptive",
        )?;
        require(
            text(a, "/content/type")? == "AdaptiveCard",
            "content.type must be AdaptiveCard",
        )?;
        text(a, "/content/version")?;
        let body = a["content"]["body"]
            .as_array()
            .ok_or("content.body must be an array")?;
        for element in body {
            text(element, "/type")?;
        }
    }
    Ok(())
}

/// Execute Webhook: `POST /api/webhooks/{id}/{token}` with embeds (at most
/// 10; title ≤256, description ≤4096, colour an integer, ≤25 fields).
fn discord(t: &Taken) -> Result<(), String> {
    require(
        t.path.starts_with("/api/webhooks/123456/"),
        "path must be /api/webhooks/{id}/{token}",
    )?;
    let embeds = t.body["embeds"]
        .as_array()
        .ok_or("embeds must be an array")?;
    require((1..=10).contains(&embeds.len()), "1 to 10 embeds")?;
    for e in embeds {
        chars_within(text(e, "/title")?, 1, 256, "embed title")?;
        if let Some(d) = e.get("description") {
            chars_within(d.as_str().unwrap_or(""), 0, 4096, "embed description")?;
        }
        require(e["color"].is_u64(), "embed color must be an integer")?;
        if let Some(fields) = e.get("fields") {
            let fields = fields.as_array().ok_or("fields must be an array")?;
            require(fields.len() <= 25, "at most 25 fields")?;
            for f in fields {
                chars_within(text(f, "/name")?, 1, 256, "field name")?;
                chars_within(text(f, "/value")?, 1, 1024, "field value")?;
            }
        }
    }
    Ok(())
}

/// `POST /bot<token>/sendMessage` with chat_id, text (1 to 4096 after
/// entity parsing) and parse_mode HTML: only the supported tags, every
/// other `<`, `>` and `&` escaped.
fn telegram(t: &Taken) -> Result<(), String> {
    require(
        t.path == "/bot123456:TEST-token_x/sendMessage",
        "path must be /bot<token>/sendMessage",
    )?;
    let b = &t.body;
    require(
        b["chat_id"].is_i64() || b["chat_id"].is_string(),
        "chat_id must be an integer or a string",
    )?;
    require(text(b, "/parse_mode")? == "HTML", "parse_mode must be HTML")?;
    let text = text(b, "/text")?;
    let visible = telegram_html_text(text)?;
    chars_within(&visible, 1, 4096, "text (after entities parsing)")
}

/// The text a Telegram HTML message shows, or the first markup error.
fn telegram_html_text(html: &str) -> Result<String, String> {
    const TAGS: [&str; 8] = ["b", "i", "u", "s", "code", "pre", "a", "tg-spoiler"];
    let mut shown = String::new();
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                let end = rest.find('>').ok_or("unclosed tag")?;
                let tag = rest[1..end].trim_start_matches('/');
                let name = tag.split_whitespace().next().unwrap_or("");
                require(TAGS.contains(&name), &format!("unsupported tag <{name}>"))?;
                rest = &rest[end + 1..];
            }
            '&' => {
                let end = rest.find(';').ok_or("bare & (must be &amp;)")?;
                let entity = &rest[..=end];
                let ch = match entity {
                    "&lt;" => '<',
                    "&gt;" => '>',
                    "&amp;" => '&',
                    "&quot;" => '"',
                    _ => return Err(format!("unknown entity {entity}")),
                };
                shown.push(ch);
                rest = &rest[end + 1..];
            }
            '>' => return Err("bare > (must be &gt;)".into()),
            _ => {
                shown.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    Ok(shown)
}

/// JSON publish: `POST /` with topic, and optional title, message,
/// priority (1 to 5) and tags (an array of strings).
fn ntfy(t: &Taken) -> Result<(), String> {
    require(t.path == "/", "a JSON publish goes to the server's root")?;
    require(
        t.authorization.as_deref() == Some("Bearer tk_testtoken"),
        "Authorization must be Bearer <access token>",
    )?;
    let b = &t.body;
    chars_within(text(b, "/topic")?, 1, 64, "topic")?;
    if let Some(p) = b.get("priority") {
        require(
            p.as_u64().is_some_and(|p| (1..=5).contains(&p)),
            "priority must be 1 to 5",
        )?;
    }
    if let Some(tags) = b.get("tags") {
        let tags = tags.as_array().ok_or("tags must be an array")?;
        require(tags.iter().all(Value::is_string), "tags must be strings")?;
    }
    if let Some(m) = b.get("message") {
        require(
            m.as_str().unwrap_or("").len() <= 4096,
            "message at most 4096 bytes",
        )?;
    }
    Ok(())
}

/// `POST /1/messages.json` with token and user (30 characters each),
/// message (1 to 1024), title (≤250), priority -2 to 2 (2 needs retry and
/// expire).
fn pushover(t: &Taken) -> Result<(), String> {
    require(
        t.path == "/1/messages.json",
        "path must be /1/messages.json",
    )?;
    let b = &t.body;
    chars_within(text(b, "/token")?, 30, 30, "token")?;
    chars_within(text(b, "/user")?, 30, 30, "user")?;
    chars_within(text(b, "/message")?, 1, 1024, "message")?;
    if let Some(title) = b.get("title") {
        chars_within(title.as_str().unwrap_or(""), 0, 250, "title")?;
    }
    if let Some(p) = b.get("priority") {
        let p = p.as_i64().ok_or("priority must be an integer")?;
        require((-2..=2).contains(&p), "priority must be -2 to 2")?;
        require(
            p != 2 || (b.get("retry").is_some() && b.get("expire").is_some()),
            "priority 2 needs retry and expire",
        )?;
    }
    Ok(())
}
