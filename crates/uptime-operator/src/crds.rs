//! The CustomResourceDefinitions, generated from the Rust types. The chart
//! ships them as committed YAML (`deploy/helm/uptime/files/crds/`), pinned
//! by a test that regenerates and compares; `uptime-operator --print-crds`
//! prints the same documents.

use crate::resources::{AlertContact, Monitor};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// The chart's directory of CRD files, from the repository root.
pub const CHART_CRD_DIR: &str = "deploy/helm/uptime/files/crds";

/// Each CRD with the name of its file in [`CHART_CRD_DIR`].
pub fn crds() -> Vec<(&'static str, CustomResourceDefinition)> {
    vec![
        ("alertcontacts.uptime.dev.yaml", AlertContact::crd()),
        ("monitors.uptime.dev.yaml", Monitor::crd()),
    ]
}

/// One CRD as the committed file holds it.
pub fn crd_yaml(crd: &CustomResourceDefinition) -> Result<String, serde_norway::Error> {
    let body = serde_norway::to_string(crd)?;
    Ok(format!(
        "# Generated from crates/uptime-operator/src/resources.rs; do not edit.\n\
         # Regenerate: UPTIME_BLESS=1 cargo nextest run -p uptime-operator -E 'test(crds)'\n{body}"
    ))
}

/// Every CRD as one multi-document YAML stream (`--print-crds`).
pub fn all_crds_yaml() -> Result<String, serde_norway::Error> {
    let mut out = String::new();
    for (_, crd) in crds() {
        out.push_str("---\n");
        out.push_str(&serde_norway::to_string(&crd)?);
    }
    Ok(out)
}
