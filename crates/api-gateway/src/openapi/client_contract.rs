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
    for item in paths.values_mut() {
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
        responses.entry("409").or_insert_with(|| {
            error("`conflict`: a request with this `Idempotency-Key` is still being processed (field `Idempotency-Key`); retry after `Retry-After`")
        });
        responses.insert(
            "422".into(),
            error("`unprocessable request`: this `Idempotency-Key` was used for another request (field `Idempotency-Key`)"),
        );
    }
}
