//! PLACEHOLDER (issue 12, being written): the tcp probe.

use crate::address::AddressPolicy;
use crate::report::CheckReport;
use uptime_contracts::CheckSpecV2;

pub struct TcpProbe {
    #[allow(dead_code)]
    policy: AddressPolicy,
}

impl TcpProbe {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }

    pub async fn check(&self, _spec: &CheckSpecV2) -> CheckReport {
        CheckReport::failed("tcp checks are not written yet")
    }
}
