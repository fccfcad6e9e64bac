//! The checker's region: which due checks it takes and how its requests
//! name where they come from.
//!
//! The checks stream is a work queue, and JetStream refuses two consumers of
//! a work queue whose filters overlap. So each region has its own durable
//! consumer with disjoint filters: region `default` keeps the consumer
//! `checker` (every replica of every release before regions shares it) and
//! any other region `r` has `checker-r`; each takes its region's subject of
//! the live version, `uptime.checks.due.v5.r`. A checker updates its
//! consumer's filter at start (create-or-update), so the subjects of retired
//! versions leave it with the upgrade.

use uptime_contracts::{is_valid_region, streams, subjects, DEFAULT_REGION};

/// A region name the checker can run in, or why not.
pub fn validate(region: &str) -> Result<(), String> {
    if is_valid_region(region) {
        Ok(())
    } else {
        Err(format!(
            "checker.region {region:?} is not a region name: 1 to 32 of a-z, 0-9 and '-', \
             not starting with '-'"
        ))
    }
}

/// The durable consumer `region`'s checkers share.
pub fn consumer_name(region: &str) -> String {
    if region == DEFAULT_REGION {
        streams::CHECKER_CONSUMER.to_string()
    } else {
        format!("{}-{region}", streams::CHECKER_CONSUMER)
    }
}

/// The subjects `region`'s consumer takes: its own of every live due-check
/// version (today only the current one).
pub fn filter_subjects(region: &str) -> Vec<String> {
    vec![subjects::due_v5(region)]
}

/// The `User-Agent` of every check request: the configured one, naming the
/// region (`uptime-checker/0.2 (region eu-west)`), so a target's logs show
/// where a check came from.
pub fn user_agent(configured: &str, region: &str) -> String {
    format!("{configured} (region {region})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_region_keeps_the_old_consumer_and_takes_the_live_versions() {
        assert_eq!(consumer_name("default"), "checker");
        assert_eq!(filter_subjects("default"), ["uptime.checks.due.v5.default"]);
    }

    #[test]
    fn another_region_takes_only_its_own_subject() {
        assert_eq!(consumer_name("eu-west"), "checker-eu-west");
        assert_eq!(filter_subjects("eu-west"), ["uptime.checks.due.v5.eu-west"]);
        // No subject of one region is another's.
        for a in filter_subjects("eu") {
            assert!(!filter_subjects("default").contains(&a));
            assert!(!filter_subjects("eu2").contains(&a));
        }
    }

    #[test]
    fn region_names_are_checked_and_user_agents_name_them() {
        assert!(validate("eu").is_ok());
        let err = validate("EU West").unwrap_err();
        assert!(err.contains("checker.region"), "{err}");
        assert_eq!(
            user_agent("uptime-checker/0.2", "eu-west"),
            "uptime-checker/0.2 (region eu-west)"
        );
    }
}
