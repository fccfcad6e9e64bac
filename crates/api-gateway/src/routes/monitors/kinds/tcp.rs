//! tcp monitors: a TCP connection to `host:port` that opens within the
//! timeout. They have no options of their own: only their target's rule.

use crate::validation::Problems;

/// The target: `host:port` (IPv6 in brackets).
pub(crate) fn check_target(problems: &mut Problems, target: &str, allow_private: bool) {
    problems.check_host_port("target", target, allow_private);
}
