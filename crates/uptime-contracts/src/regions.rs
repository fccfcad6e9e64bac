//! Region rules: what may name a region, and the check id of each region's
//! check in a round.
//!
//! A checker belongs to one region. For a monitor checked from several
//! regions, each slot is a *round*: the scheduler publishes one
//! [`crate::DueCheck`] per region on that region's subject
//! ([`crate::subjects::due_v5`]), each region's checkers consume only
//! theirs, every check's [`crate::CheckResult`] names its region and round,
//! and the recorder decides the round (by quorum) once every region answered
//! or the round's deadline passed. The round's verdict, not each region's
//! check, moves the monitor's state; [`crate::StateChange`] carries the
//! round ([`crate::Round`]), so alerts can say which regions failed and what
//! each saw.
//!
//! A monitor checked from one region has rounds of one check: its due
//! check's `check_id` is the round's id, as before regions existed.

use uuid::Uuid;

/// The region of a deployment that names none: single-region installs.
pub const DEFAULT_REGION: &str = "default";

/// Longest region name.
pub const MAX_REGION_CHARS: usize = 32;

/// Whether `name` may name a region: 1 to 32 of `a-z`, `0-9` and `-`,
/// starting with a letter or digit (it becomes a subject token and a
/// consumer name).
pub fn is_valid_region(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_REGION_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
}

/// The `check_id` of `region`'s check in round `round_id`: the round's id
/// itself for a round of one region (so single-region ids are what they
/// always were), else a UUIDv5 of the round and the region, the same for
/// every publisher (a republished round is deduplicated by JetStream).
pub fn check_id_in_round(round_id: Uuid, region: &str, regions_in_round: usize) -> Uuid {
    if regions_in_round <= 1 {
        round_id
    } else {
        Uuid::new_v5(&round_id, region.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_are_subject_tokens() {
        for ok in ["default", "eu", "us-east-1", "ap2"] {
            assert!(is_valid_region(ok), "{ok}");
        }
        for bad in [
            "",
            "EU",
            "eu.west",
            "eu west",
            "-eu",
            "eu*",
            &"a".repeat(33),
        ] {
            assert!(!is_valid_region(bad), "{bad}");
        }
    }

    #[test]
    fn a_round_of_one_keeps_its_id_and_several_get_one_each() {
        let round = Uuid::new_v4();
        assert_eq!(check_id_in_round(round, "default", 1), round);
        let eu = check_id_in_round(round, "eu", 3);
        let us = check_id_in_round(round, "us", 3);
        assert_ne!(eu, us);
        assert_ne!(eu, round);
        assert_eq!(eu, check_id_in_round(round, "eu", 3));
    }
}
