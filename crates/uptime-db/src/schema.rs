//! Diesel table definitions, matching `migrations/`.

diesel::table! {
    users (id) {
        id -> Int8,
        name -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    organisations (id) {
        id -> Int8,
        name -> Text,
        created_at -> Timestamptz,
        monitor_count -> Int8,
        check_load_millis -> Int8,
    }
}

diesel::table! {
    memberships (org_id, user_id) {
        org_id -> Int8,
        user_id -> Int8,
        role -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Int8,
        user_id -> Int8,
        name -> Text,
        prefix -> Text,
        key_sha256 -> Text,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
        org_id -> Int8,
        scope -> Text,
        label_selector -> Nullable<Jsonb>,
    }
}

diesel::table! {
    alert_contacts (id) {
        id -> Int8,
        org_id -> Int8,
        #[sql_name = "type"]
        kind -> Text,
        name -> Text,
        value -> Text,
        verified -> Bool,
        verification_token_sha256 -> Nullable<Text>,
        signing_secret -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        secret_sealed -> Nullable<Text>,
        options -> Jsonb,
        event_kinds -> Nullable<Array<Text>>,
        min_severity -> Int2,
    }
}

diesel::table! {
    monitors (id) {
        id -> Int8,
        org_id -> Int8,
        name -> Text,
        #[sql_name = "type"]
        kind -> Text,
        target -> Nullable<Text>,
        interval_secs -> Int4,
        timeout_secs -> Int4,
        keyword -> Nullable<Text>,
        keyword_type -> Nullable<Text>,
        expected_status -> Int4,
        confirmation_count -> Int4,
        ssl_warn_days -> Int4,
        latency_warn_ms -> Nullable<Int4>,
        heartbeat_token -> Nullable<Text>,
        active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        status -> Text,
        status_since -> Nullable<Timestamptz>,
        consecutive_failures -> Int4,
        last_checked_at -> Nullable<Timestamptz>,
        last_heartbeat_at -> Nullable<Timestamptz>,
        ssl_expires_at -> Nullable<Timestamptz>,
        ssl_warned_for -> Nullable<Timestamptz>,
        heartbeat_counted_until -> Nullable<Timestamptz>,
        definition_version -> Int8,
        check_options -> Nullable<Jsonb>,
        http_password -> Nullable<Text>,
        http_password_sealed -> Nullable<Text>,
        heartbeat_schedule -> Nullable<Text>,
        heartbeat_timezone -> Nullable<Text>,
        heartbeat_started_at -> Nullable<Timestamptz>,
        regions -> Nullable<Array<Text>>,
        quorum -> Nullable<Int4>,
        check_load_millis -> Int4,
        last_latency_ms -> Nullable<Int4>,
        labels -> Jsonb,
        maintenance_effect -> Nullable<Text>,
        maintenance_since -> Nullable<Timestamptz>,
        maintenance_until -> Nullable<Timestamptz>,
        reminder_interval_secs -> Nullable<Int4>,
        reminder_max -> Nullable<Int4>,
        depends_on -> Array<Int8>,
        flap_threshold -> Nullable<Int4>,
        flap_window_secs -> Nullable<Int4>,
        flap_stable_secs -> Nullable<Int4>,
        flap_changes -> Nullable<Array<Timestamptz>>,
        flapping_since -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    monitor_alert_contacts (monitor_id, contact_id) {
        monitor_id -> Int8,
        contact_id -> Int8,
    }
}

diesel::table! {
    // Partitioned by range of `slot_at` (migration 000008); the primary key is
    // (check_id, slot_at), and `id` (from a sequence) is unique but not indexed.
    check_results (check_id, slot_at) {
        id -> Int8,
        check_id -> Uuid,
        monitor_id -> Int8,
        trigger -> Text,
        status -> Text,
        checked_at -> Timestamptz,
        due_at -> Nullable<Timestamptz>,
        latency_ms -> Nullable<Int4>,
        http_status -> Nullable<Int4>,
        error -> Nullable<Text>,
        ssl_expires_at -> Nullable<Timestamptz>,
        reporter -> Text,
        recorded_at -> Timestamptz,
        definition_version -> Nullable<Int8>,
        slot_at -> Timestamptz,
        region -> Nullable<Text>,
        round_id -> Nullable<Uuid>,
        in_maintenance -> Bool,
    }
}

diesel::table! {
    daily_uptime (monitor_id, day) {
        monitor_id -> Int8,
        day -> Date,
        total_checks -> Int4,
        up_checks -> Int4,
    }
}

diesel::table! {
    outbox_events (id) {
        id -> Uuid,
        // NULL for events about no monitor (audit entries, migration 000019).
        monitor_id -> Nullable<Int8>,
        subject -> Text,
        payload -> Jsonb,
        created_at -> Timestamptz,
        published_at -> Nullable<Timestamptz>,
        seq -> Int8,
    }
}

diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(api_keys -> organisations (org_id));
diesel::joinable!(alert_contacts -> organisations (org_id));
diesel::joinable!(monitors -> organisations (org_id));
diesel::joinable!(memberships -> users (user_id));
diesel::joinable!(memberships -> organisations (org_id));
diesel::joinable!(monitor_alert_contacts -> monitors (monitor_id));
diesel::joinable!(monitor_alert_contacts -> alert_contacts (contact_id));
diesel::joinable!(check_results -> monitors (monitor_id));
diesel::table! {
    maintenance_windows (id) {
        id -> Int8,
        org_id -> Int8,
        name -> Text,
        monitor_ids -> Array<Int8>,
        label_selector -> Nullable<Jsonb>,
        effect -> Text,
        starts_at -> Timestamptz,
        ends_at -> Nullable<Timestamptz>,
        rrule -> Nullable<Text>,
        timezone -> Nullable<Text>,
        duration_secs -> Nullable<Int4>,
        last_ends_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    maintenance_spans (id) {
        id -> Int8,
        window_id -> Nullable<Int8>,
        org_id -> Int8,
        effect -> Text,
        monitor_ids -> Array<Int8>,
        label_selector -> Nullable<Jsonb>,
        starts_at -> Timestamptz,
        ends_at -> Timestamptz,
        closed_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(daily_uptime -> monitors (monitor_id));

diesel::table! {
    alert_deliveries (id) {
        id -> Uuid,
        event_id -> Uuid,
        contact_id -> Int8,
        monitor_id -> Nullable<Int8>,
        kind -> Text,
        event_type -> Text,
        payload -> Jsonb,
        status -> Text,
        attempts -> Int4,
        last_error -> Nullable<Text>,
        next_attempt_at -> Timestamptz,
        locked_until -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        delivered_at -> Nullable<Timestamptz>,
        seq -> Int8,
        locked_by -> Nullable<Text>,
    }
}

diesel::table! {
    alert_delivery_attempts (id) {
        id -> Int8,
        delivery_id -> Uuid,
        attempted_at -> Timestamptz,
        outcome -> Text,
        http_status -> Nullable<Int4>,
        error -> Nullable<Text>,
        duration_ms -> Int4,
    }
}

diesel::joinable!(alert_deliveries -> alert_contacts (contact_id));
diesel::joinable!(alert_delivery_attempts -> alert_deliveries (delivery_id));

diesel::allow_tables_to_appear_in_same_query!(
    users,
    organisations,
    memberships,
    api_keys,
    alert_contacts,
    monitors,
    monitor_alert_contacts,
    check_results,
    daily_uptime,
    outbox_events,
    alert_deliveries,
    alert_delivery_attempts,
);

// Abuse limits (migration 000004_user_quotas; the organisation's since
// 000017_organisations). Queried on their own, never
// joined, so they stay out of `allow_tables_to_appear_in_same_query!`.

diesel::table! {
    organisation_quotas (org_id) {
        org_id -> Int8,
        monitors -> Nullable<Int8>,
        alert_contacts -> Nullable<Int8>,
        api_keys -> Nullable<Int8>,
        updated_at -> Timestamptz,
        checks_per_minute -> Nullable<Int8>,
    }
}

diesel::table! {
    audit_log (id) {
        id -> Int8,
        org_id -> Int8,
        actor_user_id -> Int8,
        key_prefix -> Text,
        address -> Nullable<Text>,
        at -> Timestamptz,
        action -> Text,
        resource_kind -> Text,
        resource_id -> Nullable<Int8>,
        changes -> Jsonb,
    }
}

diesel::table! {
    incidents (id) {
        id -> Uuid,
        org_id -> Int8,
        monitor_id -> Int8,
        started_at -> Timestamptz,
        resolved_at -> Nullable<Timestamptz>,
        cause -> Nullable<Text>,
        acknowledged_at -> Nullable<Timestamptz>,
        acknowledged_via -> Nullable<Text>,
        acknowledged_by_user_id -> Nullable<Int8>,
        acknowledged_by_key_prefix -> Nullable<Text>,
        acknowledged_by_contact_id -> Nullable<Int8>,
        alerts -> Jsonb,
        alert_held -> Nullable<Text>,
        blocked_by -> Array<Int8>,
        held_children -> Int4,
        reminders_sent -> Int4,
        next_reminder_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    manual_checks (monitor_id) {
        monitor_id -> Int8,
        check_id -> Uuid,
        queued_at -> Timestamptz,
    }
}

diesel::table! {
    verification_mail_log (id) {
        id -> Int8,
        org_id -> Int8,
        contact_id -> Int8,
        sent_at -> Timestamptz,
        on_create -> Bool,
    }
}

diesel::table! {
    check_rounds (round_id) {
        round_id -> Uuid,
        monitor_id -> Int8,
        definition_version -> Int8,
        trigger -> Text,
        due_at -> Timestamptz,
        deadline_at -> Timestamptz,
        regions -> Array<Text>,
        quorum -> Int4,
        answers -> Jsonb,
        decided_at -> Nullable<Timestamptz>,
        verdict -> Nullable<Text>,
        decision -> Nullable<Jsonb>,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(check_rounds -> monitors (monitor_id));

// Invitations (migration 000020_invitations); queried on their own.
diesel::table! {
    invitations (id) {
        id -> Int8,
        org_id -> Int8,
        email -> Text,
        role -> Text,
        token_sha256 -> Text,
        invited_by -> Int8,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        accepted_at -> Nullable<Timestamptz>,
        accepted_by -> Nullable<Int8>,
        revoked_at -> Nullable<Timestamptz>,
    }
}
