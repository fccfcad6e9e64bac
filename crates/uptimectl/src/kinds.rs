//! The resource kinds that `apply` and `export` handle, and what the file
//! format needs to know of each: where the API keeps them, which fields of
//! their create bodies refer to other resources by id (written by ref in
//! files), and which fields are write-only secrets.

/// A kind of resource a file can hold. The order is the export's (contacts
/// and policies before the monitors that name them, monitors before the
/// windows and pages that name them), which only makes files read
/// top-down; the server resolves refs in any order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    AlertContact,
    EscalationPolicy,
    Monitor,
    MaintenanceWindow,
    StatusPage,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::AlertContact,
        Kind::EscalationPolicy,
        Kind::Monitor,
        Kind::MaintenanceWindow,
        Kind::StatusPage,
    ];

    /// As `kind` says in a file and on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AlertContact => "AlertContact",
            Kind::EscalationPolicy => "EscalationPolicy",
            Kind::Monitor => "Monitor",
            Kind::MaintenanceWindow => "MaintenanceWindow",
            Kind::StatusPage => "StatusPage",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The collection's path under `/api/v1/`.
    pub fn collection(self) -> &'static str {
        match self {
            Kind::AlertContact => "alert-contacts",
            Kind::EscalationPolicy => "escalation-policies",
            Kind::Monitor => "monitors",
            Kind::MaintenanceWindow => "maintenance-windows",
            Kind::StatusPage => "status-pages",
        }
    }

    /// The field of a list page that holds the items.
    pub fn list_field(self) -> &'static str {
        match self {
            Kind::AlertContact => "alert_contacts",
            Kind::EscalationPolicy => "escalation_policies",
            Kind::Monitor => "monitors",
            Kind::MaintenanceWindow => "maintenance_windows",
            Kind::StatusPage => "status_pages",
        }
    }

    /// The OpenAPI component of the create body, which a `spec` is.
    pub fn create_schema(self) -> &'static str {
        match self {
            Kind::AlertContact => "CreateContact",
            Kind::EscalationPolicy => "CreatePolicy",
            Kind::Monitor => "CreateMonitor",
            Kind::MaintenanceWindow => "CreateWindow",
            Kind::StatusPage => "CreateStatusPage",
        }
    }

    /// The file `export` writes the kind's resources to.
    pub fn file_name(self) -> String {
        format!("{}.yaml", self.collection())
    }

    /// The ref `export` gives a resource that has none (the contract's
    /// `<kind-lowercase>-<id>`).
    pub fn default_ref(self, id: i64) -> String {
        format!("{}-{id}", self.name().to_ascii_lowercase())
    }
}

/// A field of a create body that names other resources by id, and the
/// field that names them by ref instead.
#[derive(Debug, Clone, Copy)]
pub struct RefField {
    pub kind: Kind,
    /// `None`: a field of the spec itself; `Some(array)`: of each item of
    /// that array of the spec (a page's `groups`, a policy's `steps`).
    pub within: Option<&'static str>,
    /// The OpenAPI component that holds the field.
    pub schema: &'static str,
    pub ids: &'static str,
    pub refs: &'static str,
    pub target: Kind,
    /// A list of ids (else one id).
    pub many: bool,
    /// The list's order means something (a status page shows its
    /// monitors in it); else it is a set, which the API keeps sorted by
    /// id, and `export` writes its refs sorted by ref (ids, and so their
    /// order, differ between organisations).
    pub ordered: bool,
    /// A field of the apply's spec that the create body does not have (a
    /// monitor's escalation policy is set by its own route, `PUT
    /// /api/v1/monitors/{id}/escalation-policy`): the file format's schema
    /// declares it even when the OpenAPI component does not.
    pub apply_only: bool,
}

pub const REF_FIELDS: &[RefField] = &[
    RefField {
        kind: Kind::Monitor,
        within: None,
        schema: "CreateMonitor",
        ids: "alert_contact_ids",
        refs: "alert_contact_refs",
        target: Kind::AlertContact,
        many: true,
        ordered: false,
        apply_only: false,
    },
    RefField {
        kind: Kind::Monitor,
        within: None,
        schema: "CreateMonitor",
        ids: "depends_on",
        refs: "depends_on_refs",
        target: Kind::Monitor,
        many: true,
        ordered: false,
        apply_only: false,
    },
    RefField {
        kind: Kind::Monitor,
        within: None,
        schema: "CreateMonitor",
        ids: "escalation_policy_id",
        refs: "escalation_policy_ref",
        target: Kind::EscalationPolicy,
        many: false,
        ordered: false,
        apply_only: true,
    },
    RefField {
        kind: Kind::MaintenanceWindow,
        within: None,
        schema: "CreateWindow",
        ids: "monitor_ids",
        refs: "monitor_refs",
        target: Kind::Monitor,
        many: true,
        ordered: false,
        apply_only: false,
    },
    RefField {
        kind: Kind::StatusPage,
        within: Some("groups"),
        schema: "PageGroup",
        ids: "monitor_ids",
        refs: "monitor_refs",
        target: Kind::Monitor,
        many: true,
        ordered: true,
        apply_only: false,
    },
    RefField {
        kind: Kind::EscalationPolicy,
        within: Some("steps"),
        schema: "StepBody",
        ids: "contact_ids",
        refs: "contact_refs",
        target: Kind::AlertContact,
        many: true,
        ordered: false,
        apply_only: false,
    },
];

/// A write-only field: given on create, never answered (or answered
/// redacted). Files may give it as `{from_env: VAR}`; `export` always
/// writes it that way when the response says one is stored.
#[derive(Debug, Clone, Copy)]
pub struct SecretField {
    pub kind: Kind,
    /// Where it is in the spec: `["basic_auth", "password"]`.
    pub path: &'static [&'static str],
    /// The OpenAPI component and property that declare it.
    pub schema: &'static str,
    pub property: &'static str,
    /// Where the response says whether one is stored, and the value that
    /// says it is (a contact's `secret: "set"`, a monitor's
    /// `basic_auth.password_set: true`).
    pub stored_flag: &'static [&'static str],
    pub stored_value: fn(&serde_json::Value) -> bool,
}

pub const SECRET_FIELDS: &[SecretField] = &[
    SecretField {
        kind: Kind::AlertContact,
        path: &["secret"],
        schema: "CreateContact",
        property: "secret",
        stored_flag: &["secret"],
        stored_value: |v| v == "set",
    },
    // Slack, Teams and Discord URLs: answered redacted (`value_redacted`),
    // other contacts' `value` as it is.
    SecretField {
        kind: Kind::AlertContact,
        path: &["value"],
        schema: "CreateContact",
        property: "value",
        stored_flag: &["value_redacted"],
        stored_value: |v| v == &serde_json::Value::Bool(true),
    },
    SecretField {
        kind: Kind::Monitor,
        path: &["basic_auth", "password"],
        schema: "BasicAuthInput",
        property: "password",
        stored_flag: &["basic_auth", "password_set"],
        stored_value: |v| v == &serde_json::Value::Bool(true),
    },
];

/// The contract's ref syntax: 1 to 255 of `[a-z0-9._-]`, starting and
/// ending alphanumeric.
pub const REF_PATTERN: &str = "^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$";
pub const MAX_REF_CHARS: usize = 255;

pub fn is_valid_ref(candidate: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes = candidate.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_REF_CHARS
        && alnum(bytes[0])
        && alnum(bytes[bytes.len() - 1])
        && bytes
            .iter()
            .all(|&c| alnum(c) || matches!(c, b'.' | b'_' | b'-'))
}

/// The environment variable `export` names for a secret
/// (`UPTIME_SECRET_<KIND>_<REF>_<FIELD>`, uppercased, every other
/// character than letters and digits `_`).
pub fn secret_env_var(kind: Kind, reference: &str, field: &str) -> String {
    format!("UPTIME_SECRET_{}_{reference}_{field}", kind.name())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_follow_the_contracts_syntax() {
        for good in ["a", "payments-api", "ns.name", "a_b", "0"] {
            assert!(is_valid_ref(good), "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a b", "é", &"a".repeat(256)] {
            assert!(!is_valid_ref(bad), "{bad}");
        }
        assert!(is_valid_ref(&"a".repeat(255)));
    }

    #[test]
    fn secret_variables_are_uppercase_with_underscores() {
        assert_eq!(
            secret_env_var(Kind::Monitor, "payments.api-1", "basic_auth.password"),
            "UPTIME_SECRET_MONITOR_PAYMENTS_API_1_BASIC_AUTH_PASSWORD"
        );
        assert_eq!(Kind::AlertContact.default_ref(7), "alertcontact-7");
        assert_eq!(Kind::parse("StatusPage"), Some(Kind::StatusPage));
        assert_eq!(Kind::parse("statuspage"), None);
    }
}
