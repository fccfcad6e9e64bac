//! "Each outage the driver made is one incident, and nothing else is",
//! pure: each monitor's windows in which the plan made its target fail
//! (from the failure to when the monitor must have noticed its end), each
//! to hold exactly one incident opened in it, and no incident elsewhere.

/// One monitor's expected outages: `[from, to)` ms in which its incident
/// opens. A healthy monitor has none.
#[derive(Debug, Clone)]
pub struct Outages {
    pub monitor_id: i64,
    pub name: String,
    pub windows: Vec<(i64, i64)>,
}

#[derive(Debug, Default, Clone)]
pub struct PhaseVerdict {
    pub outages: usize,
    /// Outages with exactly one incident.
    pub seen_once: usize,
    pub problems: Vec<String>,
}

impl PhaseVerdict {
    pub fn clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// `expected` against each monitor's incidents' start times (ms), for
/// incidents opened before `until_ms`.
pub fn judge(
    expected: &[Outages],
    started: &std::collections::HashMap<i64, Vec<i64>>,
    until_ms: i64,
) -> PhaseVerdict {
    let mut v = PhaseVerdict::default();
    for o in expected {
        let mut starts: Vec<i64> = started.get(&o.monitor_id).cloned().unwrap_or_default();
        starts.retain(|s| *s < until_ms);
        for (from, to) in &o.windows {
            v.outages += 1;
            let inside = starts.iter().filter(|s| (*from..*to).contains(*s)).count();
            if inside == 1 {
                v.seen_once += 1;
            } else {
                v.problems.push(format!(
                    "{}: {inside} incidents for the outage from {from} to {to} (ms)",
                    o.name
                ));
            }
        }
        let outside: Vec<i64> = starts
            .iter()
            .copied()
            .filter(|s| !o.windows.iter().any(|(f, t)| (*f..*t).contains(s)))
            .collect();
        if !outside.is_empty() {
            v.problems.push(format!(
                "{}: incidents outside every outage, opened at {outside:?} (ms)",
                o.name
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn outages() -> Vec<Outages> {
        vec![
            Outages {
                monitor_id: 1,
                name: "flip".into(),
                windows: vec![(100, 200), (300, 400)],
            },
            Outages {
                monitor_id: 2,
                name: "steady".into(),
                windows: vec![],
            },
        ]
    }

    #[test]
    fn one_incident_per_outage_and_none_elsewhere_is_clean() {
        let started = HashMap::from([(1, vec![150, 320])]);
        let v = judge(&outages(), &started, 1000);
        assert!(v.clean(), "{v:?}");
        assert_eq!((v.outages, v.seen_once), (2, 2));
    }

    #[test]
    fn a_missed_outage_a_split_one_and_a_stray_incident_are_each_found() {
        let started = HashMap::from([(1, vec![150, 160]), (2, vec![500])]);
        let v = judge(&outages(), &started, 1000);
        assert_eq!(v.problems.len(), 3, "{v:?}");
        assert_eq!(v.seen_once, 0);
    }
}
