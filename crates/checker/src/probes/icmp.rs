//! PLACEHOLDER (issue 12, being written): the icmp probe.

use crate::address::AddressPolicy;
use crate::report::CheckReport;
use uptime_contracts::CheckSpecV2;

pub struct IcmpProbe {
    #[allow(dead_code)]
    policy: AddressPolicy,
}

impl IcmpProbe {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }

    pub async fn check(&self, _spec: &CheckSpecV2) -> CheckReport {
        CheckReport::failed("icmp checks are not written yet")
    }
}
