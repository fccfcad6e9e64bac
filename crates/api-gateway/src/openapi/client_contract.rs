//! What every authenticated operation shares for clients that pace and
//! retry themselves (providers, SDKs, `uptimectl`): the rate-limit headers
//! on every response (`crate::middleware::rate_limit_headers`) and, on
//! every POST, the optional `Idempotency-Key` with its two refusals
//! (`crate::idempotency`).

use serde_json::{json, Value};

const RATE_LIMIT_HEADERS: &[(&str, &str)] = &[
    ("RateLimit-Policy", "`<burst>;w=<seconds>`: the organisation's bucket holds `burst` requests and refills from empty in `w` seconds"),
    ("RateLimit", "`limit=<burst>, remaining=<requests left now>, reset=<seconds until the bucket is full again>` (IETF httpapi rate-limit headers draft)"),
    ("X-RateLimit-Limit", "The bucket's size (as `limit` above)"),
    ("X-RateLimit-Remaining", "Requests left now (as `remaining` above)"),
    ("X-RateLimit-Reset", "Seconds until the bucket is full again (as `reset` above)"),
];

pub fn add(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (item_path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let needs_key = op["security"].as_array().is_some_and(|s| !s.is_empty());
            if !needs_key {
                continue;
            }
            if method == "post" {
                add_idempotency(op);
            }
            add_conditions(method, item_path, op);
            if let Some(responses) = op["responses"].as_object_mut() {
                for response in responses.values_mut() {
                    let Some(response) = response.as_object_mut() else {
                        continue;
                    };
                    let headers = response.entry("headers").or_insert_with(|| json!({}));
                    for (name, description) in RATE_LIMIT_HEADERS {
                        headers[*name] =
                            json!({"description": description, "schema": {"type": "string"}});
                    }
                }
            }
        }
    }
}

fn add_idempotency(op: &mut Value) {
    let parameter = json!({
        "name": crate::idempotency::HEADER,
        "in": "header",
        "required": false,
        "description": "Makes the POST safe to retry: the first response to this key (per organisation) is kept for `retention.idempotency_hours` (24 h by default) and replayed, with `Idempotent-Replayed: true`, to the same request (method, path, query and body) sent again with it. 5xx and 429 answers are not kept.",
        "schema": {"type": "string", "minLength": 1, "maxLength": crate::idempotency::MAX_KEY_LEN, "pattern": "^[!-~]+$"},
    });
    match op["parameters"].as_array_mut() {
        Some(parameters) => parameters.push(parameter),
        None => op["parameters"] = json!([parameter]),
    }
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        })
    };
    if let Some(responses) = op["responses"].as_object_mut() {
        responses.entry("400").or_insert_with(|| {
            error("`invalid request body`: field `Idempotency-Key` when it is not 1 to 255 visible ASCII characters")
        });
        responses.entry("409").or_insert_with(|| {
            error("`conflict`: a request with this `Idempotency-Key` is still being processed (field `Idempotency-Key`); retry after `Retry-After`")
        });
        responses.insert(
            "422".into(),
            error("`unprocessable request`: this `Idempotency-Key` was used for another request (field `Idempotency-Key`)"),
        );
    }
}

/// `ETag` on `200`/`201`, `If-None-Match` → `304` on GETs, `If-Match` →
/// `412` on the writes that honour it (`crate::etag`), `400` on the others.
fn add_conditions(method: &str, path: &str, op: &mut Value) {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        })
    };
    let parameter = |name: &str, description: &str| json!({"name": name, "in": "header", "required": false, "description": description, "schema": {"type": "string"}});
    let honoured = crate::etag::CONDITIONAL_ROUTES
        .iter()
        .any(|(m, r)| m.eq_ignore_ascii_case(method) && *r == path);
    let mut parameters = Vec::new();
    if let Some(responses) = op["responses"].as_object_mut() {
        for status in ["200", "201"] {
            if let Some(response) = responses.get_mut(status).and_then(Value::as_object_mut) {
                let headers = response.entry("headers").or_insert_with(|| json!({}));
                headers["ETag"] = json!({"description": "The representation's version (a digest of its bytes): send it as `If-None-Match` to a GET, or as `If-Match` to a write that honours it", "schema": {"type": "string"}});
            }
        }
        match method {
            "get" => {
                responses.insert("304".into(), json!({"description": "Not modified: `If-None-Match` names the current `ETag`; no body"}));
                parameters.push(parameter(
                    "If-None-Match",
                    "An `ETag` of an earlier answer: `304` with no body while it is still current",
                ));
            }
            "patch" | "delete" | "put" if honoured => {
                responses.insert("412".into(), error("`precondition failed`: `If-Match` names another version than the current one (field `If-Match`; the current `ETag` is in the answer's `ETag` header); nothing changed"));
                parameters.push(parameter("If-Match", "The `ETag` the change is based on: the write happens only if the resource is still at that version (checked under the row's lock), else `412`"));
            }
            "patch" | "delete" | "put" => {
                responses.entry("400").or_insert_with(|| {
                    error("`invalid request body`: field `If-Match` when sent, since this operation does not take it")
                });
            }
            _ => {}
        }
    }
    if parameters.is_empty() {
        return;
    }
    match op["parameters"].as_array_mut() {
        Some(existing) => existing.extend(parameters),
        None => op["parameters"] = Value::Array(parameters),
    }
}
