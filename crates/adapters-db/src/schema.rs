//! Diesel's view of the tables in `migrations/` (the same on both backends).

diesel::table! {
    merchants (id) {
        id -> Text,
        name -> Text,
        enabled -> SmallInt,
        created_at -> BigInt,
        require_timestamp -> SmallInt,
        require_signature_v2 -> SmallInt,
    }
}

diesel::table! {
    merchant_keys (merchant_id, direction, version) {
        merchant_id -> Text,
        direction -> Text,
        version -> Integer,
        secret -> Text,
        created_at -> BigInt,
        expires_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    merchant_methods (merchant_id, direction, method) {
        merchant_id -> Text,
        direction -> Text,
        method -> Text,
    }
}

diesel::table! {
    routes (id) {
        id -> BigInt,
        direction -> Text,
        method -> Text,
        currency -> Text,
        min_amount -> BigInt,
        max_amount -> BigInt,
        priority -> Integer,
        provider -> Text,
        flow -> Text,
        lifetime_secs -> Nullable<BigInt>,
        enabled -> SmallInt,
    }
}

diesel::table! {
    operations (id) {
        id -> Text,
        merchant_id -> Text,
        direction -> Text,
        method -> Text,
        status -> SmallInt,
        amount -> BigInt,
        currency -> Text,
        user_id -> Text,
        merchant_operation_id -> Nullable<Text>,
        callback_url -> Nullable<Text>,
        success_url -> Nullable<Text>,
        fail_url -> Nullable<Text>,
        processing_url -> Nullable<Text>,
        requisites -> Nullable<Text>,
        user_data -> Nullable<Text>,
        action -> Nullable<Text>,
        error_code -> Nullable<Text>,
        error_message -> Nullable<Text>,
        route_id -> BigInt,
        expires_at -> Nullable<BigInt>,
        provider_state -> Nullable<Text>,
        due_at -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
        fingerprint -> Nullable<Text>,
        provider -> Text,
        fingerprint_key -> Nullable<Integer>,
        fee -> BigInt,
        fee_terms -> Nullable<Text>,
    }
}

diesel::table! {
    balances (merchant_id, currency) {
        merchant_id -> Text,
        currency -> Text,
        available -> BigInt,
        held -> BigInt,
        entry_at -> BigInt,
    }
}

diesel::table! {
    ledger (id) {
        id -> BigInt,
        merchant_id -> Text,
        currency -> Text,
        kind -> Text,
        available_delta -> BigInt,
        held_delta -> BigInt,
        operation_id -> Nullable<Text>,
        created_at -> BigInt,
        refund_id -> Nullable<Text>,
        actor -> Nullable<Text>,
        reason -> Nullable<Text>,
        available_after -> Nullable<BigInt>,
        held_after -> Nullable<BigInt>,
        dispute_id -> Nullable<Text>,
    }
}

diesel::table! {
    callback_outbox (id) {
        id -> Text,
        operation_id -> Text,
        refund_id -> Nullable<Text>,
        merchant_id -> Text,
        direction -> Text,
        url -> Text,
        body -> Text,
        state -> Text,
        attempts -> Integer,
        failures_in_run -> Integer,
        next_attempt_at -> Nullable<BigInt>,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
        last_error -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        dispute_id -> Nullable<Text>,
        change_id -> Nullable<Text>,
        sequence -> BigInt,
    }
}

diesel::table! {
    merchant_callbacks (merchant_id, direction, created_at, callback_id) {
        merchant_id -> Text,
        direction -> Text,
        created_at -> BigInt,
        callback_id -> Text,
    }
}

diesel::table! {
    callback_attempts (callback_id, attempt) {
        callback_id -> Text,
        attempt -> Integer,
        at -> BigInt,
        duration_ms -> BigInt,
        http_status -> Nullable<Integer>,
        error -> Nullable<Text>,
    }
}

diesel::table! {
    refunds (id) {
        id -> Text,
        operation_id -> Text,
        merchant_id -> Text,
        merchant_refund_id -> Nullable<Text>,
        fingerprint -> Nullable<Text>,
        amount -> BigInt,
        currency -> Text,
        status -> SmallInt,
        error_code -> Nullable<Text>,
        error_message -> Nullable<Text>,
        callback_url -> Nullable<Text>,
        provider -> Text,
        acquirer_id -> Nullable<Text>,
        check_at -> Nullable<BigInt>,
        unknown_since -> Nullable<BigInt>,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
        fingerprint_key -> Nullable<Integer>,
        fee -> BigInt,
        fee_terms -> Nullable<Text>,
    }
}

diesel::table! {
    providers (name) {
        name -> Text,
        kind -> Text,
        url -> Text,
        api_key -> Text,
        webhook_secret -> Text,
        timeout_ms -> BigInt,
        allow_insecure -> SmallInt,
        enabled -> SmallInt,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    provider_attempts (operation_id, number) {
        operation_id -> Text,
        number -> Integer,
        route_id -> BigInt,
        provider -> Text,
        state -> Text,
        acquirer_id -> Nullable<Text>,
        failure_code -> Nullable<Text>,
        redirect_url -> Nullable<Text>,
        latency_ms -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
        next_check_at -> Nullable<BigInt>,
        unknown_since -> Nullable<BigInt>,
        reads -> Integer,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    provider_discrepancies (id) {
        id -> BigInt,
        operation_id -> Text,
        provider -> Text,
        reported -> Text,
        at -> BigInt,
        resolved_at -> Nullable<BigInt>,
        resolved_by -> Nullable<Text>,
        resolution_note -> Nullable<Text>,
        resolution_entry -> Nullable<BigInt>,
    }
}

diesel::table! {
    gateway_processes (id) {
        id -> Text,
        version -> Text,
        started_at -> BigInt,
        seen_at -> BigInt,
    }
}

diesel::table! {
    process_circuits (process_id, provider) {
        process_id -> Text,
        provider -> Text,
        state -> Text,
        failures -> Integer,
        open_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    gateway_settings (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    console_accounts (name) {
        name -> Text,
        role -> Text,
        password_hash -> Text,
        enabled -> SmallInt,
        created_at -> BigInt,
    }
}

diesel::table! {
    console_sessions (id) {
        id -> Text,
        operator -> Text,
        csrf -> Text,
        created_at -> BigInt,
        last_seen_at -> BigInt,
    }
}

diesel::table! {
    signin_failures (id) {
        id -> BigInt,
        name -> Text,
        at -> BigInt,
    }
}

diesel::table! {
    audit_log (id) {
        id -> BigInt,
        actor -> Text,
        action -> Text,
        target -> Text,
        before_value -> Nullable<Text>,
        after_value -> Nullable<Text>,
        at -> BigInt,
    }
}

diesel::table! {
    operation_events (id) {
        id -> BigInt,
        operation_id -> Text,
        refund_id -> Nullable<Text>,
        at -> BigInt,
        detail -> Text,
    }
}

diesel::table! {
    operation_counts (minute, direction, method, status, currency, slot) {
        minute -> BigInt,
        direction -> Text,
        method -> Text,
        status -> SmallInt,
        currency -> Text,
        slot -> SmallInt,
        count -> BigInt,
        amount -> BigInt,
    }
}

diesel::table! {
    ledger_checks (id) {
        id -> BigInt,
        at -> BigInt,
        actor -> Text,
        mismatches -> BigInt,
    }
}

diesel::table! {
    page_reads (operation_id) {
        operation_id -> Text,
        read_at -> BigInt,
    }
}

diesel::table! {
    data_steps (name) {
        name -> Text,
        progress -> Nullable<Text>,
        rows_changed -> BigInt,
        done_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    tariffs (merchant_id, direction, method, currency) {
        merchant_id -> Text,
        direction -> Text,
        method -> Text,
        currency -> Text,
        percent_hundredths -> Integer,
        fixed_fee -> BigInt,
        min_fee -> Nullable<BigInt>,
        max_fee -> Nullable<BigInt>,
        updated_at -> BigInt,
    }
}

diesel::table! {
    disputes (id) {
        id -> Text,
        kind -> Text,
        operation_id -> Text,
        merchant_id -> Text,
        status -> Text,
        reason -> Text,
        amount -> BigInt,
        currency -> Text,
        comment -> Nullable<Text>,
        due_by -> Nullable<BigInt>,
        resolution -> Nullable<Text>,
        provider -> Nullable<Text>,
        acquirer_id -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        evidence_state -> Nullable<Text>,
        evidence_key -> Nullable<Text>,
        evidence_text -> Nullable<Text>,
        check_at -> Nullable<BigInt>,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    dispute_files (dispute_id, n) {
        dispute_id -> Text,
        n -> Integer,
        file_name -> Text,
        content_type -> Text,
        data -> Binary,
        created_at -> BigInt,
    }
}

diesel::joinable!(console_sessions -> console_accounts (operator));

diesel::joinable!(merchant_callbacks -> callback_outbox (callback_id));

diesel::allow_tables_to_appear_in_same_query!(
    merchants,
    merchant_keys,
    merchant_methods,
    routes,
    tariffs,
    operations,
    balances,
    ledger,
    callback_outbox,
    merchant_callbacks,
    callback_attempts,
    refunds,
    disputes,
    dispute_files,
    providers,
    provider_attempts,
    provider_discrepancies,
    gateway_processes,
    process_circuits,
    gateway_settings,
    console_accounts,
    console_sessions,
    signin_failures,
    audit_log,
    operation_events,
    operation_counts,
    ledger_checks,
    page_reads,
    data_steps,
);
