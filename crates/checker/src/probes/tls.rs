//! PLACEHOLDER (issue 12, being written): the tls probe.

use crate::address::AddressPolicy;
use crate::report::CheckReport;
use uptime_contracts::CheckSpecV2;

pub struct TlsProbe {
    #[allow(dead_code)]
    policy: AddressPolicy,
}

impl TlsProbe {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }

    pub async fn check(&self, _spec: &CheckSpecV2) -> CheckReport {
        CheckReport::failed("tls checks are not written yet")
    }
}
