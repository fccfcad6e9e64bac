//! icmp monitors: echo requests answered within the timeout. They have no
//! options of their own: only their target's rule.

use crate::validation::Problems;

/// The target: a host name or an IP address (IPv6 without brackets).
pub(crate) fn check_target(problems: &mut Problems, target: &str, allow_private: bool) {
    problems.check_host("target", target, allow_private);
}
