//! Issue 12 in the monitor API: the http options (method, headers, body,
//! basic auth with a write-only password, assertions) and every rule that
//! refuses them, by the field it names.

use serde_json::{json, Value};

const SECRET: &str = "s3cr3t-Pa55-w0rd";

fn http() -> Value {
    json!({"name": "api", "type": "http", "target": "https://api.example.com/health"})
}

mod password;
mod refusals;
mod round_trip;
