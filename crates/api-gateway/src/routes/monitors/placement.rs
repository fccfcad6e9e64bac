//! Where a monitor is checked from: its `regions` and `quorum`,
//! their rules, and what responses show when they are left to the
//! deployment's defaults.
//!
//! Stored NULL means "the default" (the rule is
//! [`uptime_contracts::placement`], shared with the scheduler and the
//! recorder). Responses show the effective values. Heartbeat monitors have
//! neither: they are pinged, not checked from anywhere.

use super::monitor_type::MonitorType;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use uptime_config::RegionsSettings;
use uptime_contracts::{placement, Placement};
use utoipa::ToSchema;

/// The most regions one monitor may be checked from.
pub const MAX_REGIONS: usize = 16;

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response.
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;

    /// Every monitor but heartbeats: the regions it is checked from, 1 to
    /// 16 distinct names of the deployment's regions (`GET /api/v1/regions`);
    /// stored sorted. Default (or `null`): the deployment's default regions,
    /// whatever they are at the time of each check.
    regions: opt Vec<String> [min_items = 1, max_items = 16],
        clear /// Replaces the regions; `null`: the deployment's default regions.
        => /// The regions the monitor is checked from: its own, or the
        /// deployment's default ones. `null` for heartbeat monitors.
        Option<Vec<String>>;
    /// Every monitor but heartbeats: how many regions must see a check fail
    /// for the round to fail, 1 to the number of regions. Default (or
    /// `null`): a majority of the regions (more than half). Fewer failing
    /// regions are a regional problem: recorded, not counted towards
    /// `confirmation_count`.
    quorum: opt i64 [minimum = 1, maximum = 16],
        clear /// `null`: a majority of the regions. Must stay within the number of
        /// regions when `regions` changes.
        => /// How many regions must see a check fail for a round to fail: its own,
        /// or a majority of `regions`. `null` for heartbeat monitors.
        Option<i32>;
}

/// What a heartbeat monitor is told when given regions or a quorum.
const NOT_FOR_HEARTBEATS: &str =
    "is only for checked monitors: heartbeat monitors are pinged, not checked from regions";

/// Checks `regions` and `quorum` of a monitor of `kind` against the
/// deployment's regions, adding each broken rule to `problems`.
pub(super) fn validate(
    kind: MonitorType,
    regions: Option<&[String]>,
    quorum: Option<i64>,
    settings: &RegionsSettings,
    problems: &mut Problems,
) {
    if kind == MonitorType::Heartbeat {
        if regions.is_some() {
            problems.add("regions", NOT_FOR_HEARTBEATS);
        }
        if quorum.is_some() {
            problems.add("quorum", NOT_FOR_HEARTBEATS);
        }
        return;
    }
    let regions_ok = match regions {
        Some(list) => valid_regions(list, settings, problems),
        None => true,
    };
    let Some(q) = quorum else {
        return;
    };
    let effective = placement::effective_regions(regions, &settings.default);
    let max = if regions_ok {
        effective.len()
    } else {
        MAX_REGIONS
    };
    if !(1..=max as i64).contains(&q) {
        let whose = match regions {
            Some(_) => "the number of regions".to_string(),
            None => format!(
                "the number of the deployment's default regions ({})",
                settings.default.join(", ")
            ),
        };
        problems.add("quorum", format!("must be between 1 and {max}, {whose}"));
    }
}

/// Whether `list` names 1 to [`MAX_REGIONS`] distinct known regions; adds a
/// problem for each that breaks a rule.
fn valid_regions(list: &[String], settings: &RegionsSettings, problems: &mut Problems) -> bool {
    let mut ok = true;
    if list.is_empty() || list.len() > MAX_REGIONS {
        problems.add(
            "regions",
            format!(
                "must name 1 to {MAX_REGIONS} regions (null: the deployment's default regions)"
            ),
        );
        ok = false;
    }
    for (i, region) in list.iter().enumerate() {
        let field = format!("regions[{i}]");
        if !settings.known.contains(region) {
            // Only a plausible name is echoed back: the value is user text
            // of any length.
            let what = if uptime_contracts::regions::is_valid_region(region) {
                format!("{region:?} is not a known region")
            } else {
                "is not a region name".to_string()
            };
            problems.add(
                &field,
                format!("{what} (known: {})", settings.known.join(", ")),
            );
            ok = false;
        } else if let Some(first) = list[..i].iter().position(|r| r == region) {
            problems.add(&field, format!("repeats regions[{first}] ({region})"));
            ok = false;
        }
    }
    ok
}

/// The regions as stored: sorted, so the same set is the same definition
/// whatever order it was given in.
pub(super) fn stored(regions: Option<Vec<String>>) -> Option<Vec<String>> {
    regions.map(|mut list| {
        list.sort_unstable();
        list
    })
}

/// The regions and quorum a response shows for a stored monitor: the
/// effective ones, the ones its rounds use (so a stored quorum above the
/// default regions, left by an operator shrinking them, shows as the number
/// of regions), `None` for heartbeat monitors.
pub(super) fn shown(
    kind: uptime_contracts::MonitorKind,
    regions: Option<&[String]>,
    quorum: Option<i32>,
    settings: &RegionsSettings,
) -> Shown {
    if kind == uptime_contracts::MonitorKind::Heartbeat {
        return Shown::default();
    }
    let effective = Placement::of(regions, quorum, &settings.default);
    Shown {
        regions: Some(effective.regions.to_vec()),
        quorum: Some(i32::try_from(effective.quorum).unwrap_or(i32::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown_pair(
        kind: uptime_contracts::MonitorKind,
        regions: Option<&[String]>,
        quorum: Option<i32>,
        settings: &RegionsSettings,
    ) -> (Option<Vec<String>>, Option<i32>) {
        let shown = shown(kind, regions, quorum, settings);
        (shown.regions, shown.quorum)
    }

    fn settings() -> RegionsSettings {
        RegionsSettings {
            known: ["eu", "us", "ap"].map(String::from).to_vec(),
            default: ["eu", "us"].map(String::from).to_vec(),
            presence_ttl_secs: 30,
        }
    }

    fn problems_of(
        kind: MonitorType,
        regions: Option<&[&str]>,
        quorum: Option<i64>,
    ) -> Vec<(String, String)> {
        let regions: Option<Vec<String>> =
            regions.map(|r| r.iter().map(|s| s.to_string()).collect());
        let mut problems = Problems::new();
        validate(kind, regions.as_deref(), quorum, &settings(), &mut problems);
        match problems.into_result() {
            Ok(()) => vec![],
            Err(crate::error::ApiError::InvalidBody(errors)) => {
                errors.into_iter().map(|e| (e.field, e.message)).collect()
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn quorum_is_bounded_by_the_effective_regions() {
        let http = MonitorType::Http;
        assert!(problems_of(http, None, Some(2)).is_empty());
        let too_big = problems_of(http, None, Some(3));
        assert_eq!(too_big[0].0, "quorum");
        assert!(
            too_big[0].1.contains("default regions (eu, us)"),
            "{too_big:?}"
        );
        assert!(problems_of(http, Some(&["eu", "us", "ap"]), Some(3)).is_empty());
        assert_eq!(problems_of(http, Some(&["ap"]), Some(2))[0].0, "quorum");
        assert_eq!(problems_of(http, Some(&["ap"]), Some(0))[0].0, "quorum");
    }

    #[test]
    fn regions_are_known_distinct_and_bounded() {
        let http = MonitorType::Http;
        let fields = |r: &[&str]| -> Vec<String> {
            problems_of(http, Some(r), None)
                .into_iter()
                .map(|(f, _)| f)
                .collect()
        };
        assert_eq!(fields(&[]), ["regions"]);
        assert_eq!(fields(&["eu", "mars"]), ["regions[1]"]);
        assert_eq!(fields(&["eu", "EU!"]), ["regions[1]"]);
        assert_eq!(fields(&["eu", "us", "eu"]), ["regions[2]"]);
        assert!(fields(&["ap", "eu"]).is_empty());
    }

    #[test]
    fn heartbeats_have_no_regions() {
        let hb = MonitorType::Heartbeat;
        let fields: Vec<_> = problems_of(hb, Some(&["eu"]), Some(1))
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(fields, ["regions", "quorum"]);
        assert_eq!(
            shown_pair(
                uptime_contracts::MonitorKind::Heartbeat,
                None,
                None,
                &settings()
            ),
            (None, None)
        );
    }

    #[test]
    fn responses_show_the_defaults_when_none_are_stored() {
        let http = uptime_contracts::MonitorKind::Http;
        assert_eq!(
            shown_pair(http, None, None, &settings()),
            (Some(vec!["eu".into(), "us".into()]), Some(2))
        );
        let three = ["ap", "eu", "us"].map(String::from);
        assert_eq!(
            shown_pair(http, Some(&three), None, &settings()),
            (Some(three.to_vec()), Some(2))
        );
        assert_eq!(
            shown_pair(http, Some(&three), Some(3), &settings()).1,
            Some(3)
        );
    }
}
