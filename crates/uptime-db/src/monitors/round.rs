//! The one way a monitor row becomes a round's due checks: one [`DueCheck`]
//! (the password sealed) per region the monitor is checked from, shared by
//! the scheduler (each slot) and the api-gateway (each manual check), so
//! both name a round's checks the same way.

use super::spec::{check_spec_sealed, CheckFields, SpecError};
use chrono::{DateTime, Utc};
use uptime_config::RegionsSettings;
use uptime_contracts::{check_id_in_round, placement, CheckSpec, DueCheck, Trigger};
use uuid::Uuid;

/// What names a round and what every check of it carries besides the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundOf {
    /// The slot's check id (scheduled) or the request's (manual).
    pub round_id: Uuid,
    pub trigger: Trigger,
    pub due_at: DateTime<Utc>,
    pub definition_version: i64,
    pub interval_secs: u32,
}

/// The due checks of `round` for the monitor of `row` (the basic-auth
/// password sealed): one per effective region of the row
/// ([`placement::effective_regions`]), in the row's order, each with
/// its region's check id. A round of one region has one check whose id is
/// the round's, exactly as before regions existed.
pub fn sealed_round_checks<'a>(
    row: impl Into<CheckFields<'a>>,
    regions: &RegionsSettings,
    round: RoundOf,
) -> Result<Vec<DueCheck>, SpecError> {
    let row = row.into();
    let spec = check_spec_sealed(row)?;
    Ok(round_checks(row.id, spec, row.regions, regions, round))
}

/// The due checks of `round` for monitor `monitor_id` checking `spec` from
/// `chosen_regions` (`None`: the deployment's default ones): the second half
/// of [`sealed_round_checks`], for a spec built from the row earlier (the
/// scheduler's configuration cache, while the database is unreachable).
pub fn round_checks(
    monitor_id: i64,
    spec: CheckSpec,
    chosen_regions: Option<&[String]>,
    regions: &RegionsSettings,
    round: RoundOf,
) -> Vec<DueCheck> {
    let chosen = placement::effective_regions(chosen_regions, &regions.default);
    let n = chosen.len();
    chosen
        .iter()
        .map(|region| DueCheck {
            check_id: check_id_in_round(round.round_id, region, n),
            monitor_id,
            definition_version: round.definition_version,
            interval_secs: round.interval_secs,
            trigger: round.trigger,
            due_at: round.due_at,
            spec: spec.clone(),
            region: region.clone(),
            round_id: round.round_id,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_contracts::{MonitorKind, DEFAULT_REGION};

    fn row(regions: Option<&[String]>) -> CheckFields<'_> {
        CheckFields {
            id: 7,
            kind: MonitorKind::Http,
            target: Some("https://example.com"),
            timeout_secs: 5,
            expected_status: 200,
            keyword: None,
            keyword_type: None,
            check_options: None,
            http_password_sealed: None,
            http_password_unsealed: false,
            regions,
        }
    }

    fn round() -> RoundOf {
        RoundOf {
            round_id: Uuid::from_u128(42),
            trigger: Trigger::Scheduled,
            due_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            definition_version: 3,
            interval_secs: 60,
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_default_monitor_has_one_check_named_after_the_round() {
        let checks = sealed_round_checks(row(None), &RegionsSettings::default(), round()).unwrap();
        assert_eq!(checks.len(), 1);
        let due = &checks[0];
        assert_eq!(due.check_id, round().round_id);
        assert_eq!(due.round_id, round().round_id);
        assert_eq!(due.region, DEFAULT_REGION);
        assert_eq!(due.subject(), "uptime.checks.due.v5.default");
        assert_eq!(
            (due.monitor_id, due.definition_version, due.interval_secs),
            (7, 3, 60)
        );
        assert_eq!(
            (due.trigger, due.due_at),
            (Trigger::Scheduled, round().due_at)
        );
        assert_eq!(due.spec, check_spec_sealed(row(None)).unwrap());
    }

    #[test]
    fn several_regions_get_one_check_each_in_one_round() {
        let chosen = names(&["eu", "us", "ap"]);
        let settings = RegionsSettings {
            known: names(&["eu", "us", "ap"]),
            ..Default::default()
        };
        let checks = sealed_round_checks(row(Some(&chosen)), &settings, round()).unwrap();
        let regions: Vec<_> = checks.iter().map(|c| c.region.as_str()).collect();
        assert_eq!(regions, ["eu", "us", "ap"]);
        let ids: std::collections::HashSet<_> = checks.iter().map(|c| c.check_id).collect();
        assert_eq!(ids.len(), 3);
        assert!(!ids.contains(&round().round_id));
        for due in &checks {
            assert_eq!(due.round_id, round().round_id);
            assert_eq!(
                due.check_id,
                check_id_in_round(round().round_id, &due.region, 3)
            );
            assert_eq!(
                due.subject(),
                format!("uptime.checks.due.v5.{}", due.region)
            );
        }
        // The same round built again (a republish) has the same ids.
        let again = sealed_round_checks(row(Some(&chosen)), &settings, round()).unwrap();
        assert_eq!(again, checks);
    }

    #[test]
    fn a_row_naming_no_region_takes_the_deployment_defaults() {
        let settings = RegionsSettings {
            known: names(&["eu", "us"]),
            default: names(&["eu", "us"]),
            ..Default::default()
        };
        let checks = sealed_round_checks(row(None), &settings, round()).unwrap();
        let regions: Vec<_> = checks.iter().map(|c| c.region.as_str()).collect();
        assert_eq!(regions, ["eu", "us"]);
        let empty = RegionsSettings {
            default: Vec::new(),
            ..Default::default()
        };
        let checks = sealed_round_checks(row(None), &empty, round()).unwrap();
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].region, DEFAULT_REGION);
    }

    #[test]
    fn every_check_of_a_round_carries_the_password_sealed_as_stored() {
        use uptime_contracts::{BasicAuth, CheckOptions, HttpRequest};
        let options = crate::monitors::options_column(&CheckOptions {
            http: Some(HttpRequest {
                basic_auth: Some(BasicAuth {
                    username: "u".into(),
                    password_sealed: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        let chosen = names(&["eu", "us"]);
        let settings = RegionsSettings {
            known: chosen.clone(),
            ..Default::default()
        };
        let row = CheckFields {
            check_options: options.as_ref(),
            http_password_sealed: Some("v1.k1.q83vEjRWeJC7ze8S0Ykg3eP0mVo"),
            ..row(Some(&chosen))
        };
        let checks = sealed_round_checks(row, &settings, round()).unwrap();
        assert_eq!(checks.len(), 2);
        for due in checks {
            assert_eq!(
                due.spec.password_sealed(),
                Some("v1.k1.q83vEjRWeJC7ze8S0Ykg3eP0mVo")
            );
            let wire = serde_json::to_string(&due).unwrap();
            assert!(!wire.contains(r#""password":"#), "{wire}");
        }
    }

    #[test]
    fn a_row_with_no_spec_has_no_round() {
        let heartbeat = CheckFields {
            kind: MonitorKind::Heartbeat,
            ..row(None)
        };
        assert_eq!(
            sealed_round_checks(heartbeat, &RegionsSettings::default(), round()),
            Err(SpecError::Heartbeat)
        );
    }
}
