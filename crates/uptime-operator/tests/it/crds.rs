//! The chart's CRD files are the ones the types generate. After a change
//! of the types: `UPTIME_BLESS=1 cargo nextest run -p uptime-operator -E
//! 'test(crds)'` and review the diff.

use std::path::PathBuf;
use uptime_operator::crds::{crd_yaml, crds, CHART_CRD_DIR};

fn bless() -> bool {
    std::env::var("UPTIME_BLESS").is_ok_and(|v| v == "1")
}

#[test]
fn committed_crds_match_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(CHART_CRD_DIR);
    let mut stale = Vec::new();
    for (file, crd) in crds() {
        let expected = crd_yaml(&crd).expect("the CRD renders");
        let path = dir.join(file);
        if bless() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &expected).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(committed) if committed == expected => {}
            Ok(_) => stale.push(format!("{} differs from the types", path.display())),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "{} (run with UPTIME_BLESS=1 to regenerate)",
        stale.join("; ")
    );
}

#[test]
fn crds_name_the_group_version_and_status_subresource() {
    for (_, crd) in crds() {
        assert_eq!(crd.spec.group, "uptime.dev");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(version
            .subresources
            .as_ref()
            .and_then(|s| s.status.as_ref())
            .is_some());
        let schema = serde_json::to_value(&version.schema).unwrap();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["x-kubernetes-preserve-unknown-fields"], true, "{spec}");
        assert!(spec["properties"]["secret_fields"].is_object(), "{spec}");
    }
}
