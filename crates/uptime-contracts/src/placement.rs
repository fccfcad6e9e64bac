//! Where a monitor is checked from and how many of those regions must see it
//! fail: the one rule every service applies to a monitor's stored `regions`
//! and `quorum` (the api-gateway to validate and show them, uptime-db and the
//! scheduler to address a round's checks, the recorder to decide rounds).
//!
//! A monitor stores `regions` NULL for "the deployment's default regions at
//! the time of each check" (so an operator's change of the default moves such
//! monitors) and `quorum` NULL for "a majority of the regions". Pure: no
//! settings are read here, the caller passes the deployment's default.

use crate::DEFAULT_REGION;
use std::sync::OnceLock;

/// A monitor's effective regions and quorum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement<'a> {
    /// The regions a round goes to, never empty.
    pub regions: &'a [String],
    /// How many of them must see a failure for the round to fail: from 1 to
    /// the number of regions.
    pub quorum: u32,
}

impl<'a> Placement<'a> {
    /// The placement of a monitor that chose `regions` and `quorum` (each
    /// `None` for the default) in a deployment whose default regions are
    /// `default_regions`.
    pub fn of(
        regions: Option<&'a [String]>,
        quorum: Option<i32>,
        default_regions: &'a [String],
    ) -> Self {
        let regions = effective_regions(regions, default_regions);
        Self {
            regions,
            quorum: effective_quorum(quorum, regions.len()),
        }
    }
}

/// The regions a monitor is checked from: the ones it chose, else the
/// deployment's default ones. A deployment configured with no default region
/// (only the api-gateway refuses to start that way) still checks its monitors
/// where a single-region install would: [`DEFAULT_REGION`].
pub fn effective_regions<'a>(
    chosen: Option<&'a [String]>,
    default_regions: &'a [String],
) -> &'a [String] {
    match chosen {
        Some(regions) if !regions.is_empty() => regions,
        _ if !default_regions.is_empty() => default_regions,
        _ => single_region(),
    }
}

/// The quorum of a monitor checked from `regions` regions: the one chosen,
/// at most the number of regions (a stored quorum can exceed the default
/// regions after an operator shrinks them), else a majority. A chosen quorum
/// below 1 counts as none.
pub fn effective_quorum(chosen: Option<i32>, regions: usize) -> u32 {
    let regions = u32::try_from(regions).unwrap_or(u32::MAX).max(1);
    match chosen.and_then(|q| u32::try_from(q).ok()) {
        Some(q) if q >= 1 => q.min(regions),
        _ => majority(regions),
    }
}

/// The majority of `n` regions: more than half.
pub fn majority(n: u32) -> u32 {
    n / 2 + 1
}

fn single_region() -> &'static [String] {
    static SINGLE: OnceLock<[String; 1]> = OnceLock::new();
    SINGLE.get_or_init(|| [DEFAULT_REGION.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn majorities_are_more_than_half() {
        assert_eq!([1, 2, 3, 4, 5].map(majority), [1, 2, 2, 3, 3]);
    }

    #[test]
    fn chosen_regions_win_over_the_default_ones() {
        let default = names(&["eu", "us"]);
        let chosen = names(&["ap"]);
        assert_eq!(effective_regions(Some(&chosen), &default), chosen);
        assert_eq!(effective_regions(None, &default), default);
        assert_eq!(
            effective_regions(Some(&[]), &default),
            default,
            "an empty choice is no choice"
        );
    }

    #[test]
    fn no_default_region_is_the_single_region_of_an_install_without_regions() {
        assert_eq!(effective_regions(None, &[]), [DEFAULT_REGION]);
        assert_eq!(Placement::of(None, None, &[]).quorum, 1);
    }

    #[test]
    fn quorum_defaults_to_a_majority_and_never_exceeds_the_regions() {
        for (chosen, regions, expected) in [
            (None, 0, 1),
            (None, 1, 1),
            (None, 2, 2),
            (None, 3, 2),
            (None, 4, 3),
            (None, 5, 3),
            (Some(1), 3, 1),
            (Some(3), 3, 3),
            (Some(5), 3, 3),
            (Some(0), 3, 2),
            (Some(-1), 3, 2),
        ] {
            assert_eq!(
                effective_quorum(chosen, regions),
                expected,
                "{chosen:?} of {regions}"
            );
        }
    }

    #[test]
    fn a_placement_is_its_regions_and_their_quorum() {
        let default = names(&["eu", "us", "ap"]);
        let chosen = names(&["eu", "us"]);
        assert_eq!(
            Placement::of(None, None, &default),
            Placement {
                regions: &default,
                quorum: 2
            }
        );
        assert_eq!(
            Placement::of(Some(&chosen), Some(3), &default),
            Placement {
                regions: &chosen,
                quorum: 2
            },
            "a stored quorum beyond the regions is clamped"
        );
        assert_eq!(Placement::of(None, Some(3), &default).quorum, 3);
    }
}
