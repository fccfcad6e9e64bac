//! PLACEHOLDER (issue 12, being written): the dns probe.

use crate::address::AddressPolicy;
use crate::report::CheckReport;
use uptime_contracts::CheckSpecV2;

pub struct DnsProbe {
    #[allow(dead_code)]
    policy: AddressPolicy,
}

impl DnsProbe {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }

    pub async fn check(&self, _spec: &CheckSpecV2) -> CheckReport {
        CheckReport::failed("dns checks are not written yet")
    }
}
