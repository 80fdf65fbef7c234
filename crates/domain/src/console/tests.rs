use super::*;
use crate::testkit::{id, OperationBuilder};

#[test]
fn each_role_allows_what_the_one_before_it_allows() {
    assert!(Role::Viewer.allows(Need::Read));
    assert!(!Role::Viewer.allows(Need::Act));
    assert!(!Role::Viewer.allows(Need::Administer));
    assert!(Role::Operator.allows(Need::Act));
    assert!(!Role::Operator.allows(Need::Administer));
    assert!(Role::Admin.allows(Need::Administer));
    for role in [Role::Viewer, Role::Operator, Role::Admin] {
        assert_eq!(Role::parse(role.as_str()), Ok(role));
    }
    assert!(Role::parse("root").is_err());
    assert!(Role::parse("Admin").is_err());
}

#[test]
fn operator_names_are_folded_and_checked() {
    assert_eq!(operator_name(" Alice ").as_deref(), Ok("alice"));
    assert_eq!(operator_name("ops.team@x-1").as_deref(), Ok("ops.team@x-1"));
    for bad in ["", "-x", ".x", "a b", "a/b", "ä", &"a".repeat(65)] {
        assert!(operator_name(bad).is_err(), "{bad:?}");
    }
    assert!(operator_name(&"a".repeat(64)).is_ok());
}

fn session(created: i64, seen: i64) -> Session {
    Session {
        id: "h".into(),
        operator: "alice".into(),
        role: Role::Viewer,
        csrf: "c".into(),
        created_at: Timestamp::from_millis(created),
        last_seen_at: Timestamp::from_millis(seen),
    }
}

#[test]
fn a_session_ends_after_8_idle_hours_or_24_in_all() {
    let s = session(0, 0);
    assert!(s.is_live(Timestamp::from_millis(SESSION_IDLE_MS - 1)));
    assert!(!s.is_live(Timestamp::from_millis(SESSION_IDLE_MS)));
    let busy = session(0, SESSION_ABSOLUTE_MS - 1000);
    assert!(busy.is_live(Timestamp::from_millis(SESSION_ABSOLUTE_MS - 1)));
    assert!(!busy.is_live(Timestamp::from_millis(SESSION_ABSOLUTE_MS)));
}

#[test]
fn a_session_is_touched_at_most_once_a_minute() {
    let s = session(0, 0);
    assert!(!s.needs_touch(Timestamp::from_millis(SESSION_TOUCH_MS - 1)));
    assert!(s.needs_touch(Timestamp::from_millis(SESSION_TOUCH_MS)));
}

#[test]
fn the_fifth_failure_within_a_minute_limits_the_next_attempt() {
    assert!(!signin_limited(4));
    assert!(signin_limited(5));
    assert!(signin_limited(50));
}

#[test]
fn actors_name_their_kind() {
    assert_eq!(Actor::operator("alice").as_str(), "operator:alice");
    assert_eq!(Actor::cli("root").as_str(), "cli:root");
    assert_eq!(Actor::cli(" ").as_str(), "cli:unknown");
}

#[test]
fn a_cursor_round_trips_and_refuses_anything_else() {
    let cursor = Cursor {
        created_at: Timestamp::from_millis(1_700_000_000_123),
        id: id(7),
    };
    let token = cursor.encode();
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(Cursor::decode(&token), Ok(cursor));
    for bad in ["", "zz", "00", &hex::encode("12.nope"), &hex::encode("x.y")] {
        assert!(Cursor::decode(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn csv_cells_neutralise_formulas_and_quote_separators() {
    for (cell, written) in [
        ("plain", "plain"),
        ("", ""),
        ("=1+1", "'=1+1"),
        ("+7", "'+7"),
        ("-5", "'-5"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "\"'\rx\""),
        ("a,b", "\"a,b\""),
        ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("=a,\"b\"", "\"'=a,\"\"b\"\"\""),
        ("line\nnext", "\"line\nnext\""),
        ("a=b", "a=b"),
    ] {
        assert_eq!(csv_cell(cell), written, "{cell:?}");
    }
}

#[test]
fn a_csv_row_has_every_column_in_order_and_ends_in_crlf() {
    let op = OperationBuilder::deposit(PaymentMethod::Card).build();
    let row = csv_row(&Listed {
        operation: op.clone(),
        refunded: 1050,
    });
    assert!(row.ends_with("\r\n"));
    let cells: Vec<&str> = row.trim_end_matches("\r\n").split(',').collect();
    assert_eq!(cells.len(), CSV_HEADER.split(',').count());
    assert_eq!(cells[0], op.id().to_string());
    assert_eq!(cells[3], "deposit");
    assert_eq!(cells[5], op.status().number().to_string());
    assert_eq!(cells[7], op.amount().format(op.currency()));
    assert_eq!(cells[9], "10.50");
    assert_eq!(cells[12], op.created_at().to_rfc3339());
    let payout = OperationBuilder::payout(PaymentMethod::Card).build();
    let row = csv_row(&Listed {
        operation: payout,
        refunded: 0,
    });
    assert_eq!(
        row.split(',').nth(9),
        Some(""),
        "no refundedAmount for a payout"
    );
}

fn count(minute: i64, method: PaymentMethod, status: Status, n: i64) -> MinuteCount {
    MinuteCount {
        minute,
        direction: Direction::Deposit,
        method,
        status,
        currency: Currency::RUB,
        count: n,
        amount: n * 100,
    }
}

#[test]
fn the_overview_counts_today_and_draws_the_last_hour_and_day() {
    let now = Timestamp::from_millis(100_000 * 60_000 + 30_000);
    let today = Timestamp::from_millis(99_990 * 60_000);
    let counts = [
        count(100_000, PaymentMethod::Card, Status::Approved, 3),
        count(100_000, PaymentMethod::Card, Status::Declined, 1),
        count(99_995, PaymentMethod::Sbp, Status::Processing, 2),
        // Yesterday (before today's start) but within the last hour and day.
        count(99_980, PaymentMethod::Card, Status::Declined, 4),
        // 23 hours ago.
        count(100_000 - 23 * 60, PaymentMethod::Card, Status::Approved, 5),
    ];
    let o = Overview::build(&counts, Health::default(), today, now);
    let card_approved = FigureKey {
        direction: Direction::Deposit,
        method: PaymentMethod::Card,
        status: 1,
        currency: Currency::RUB,
    };
    assert_eq!(o.today.get(&card_approved), Some(&(3, 300)));
    assert_eq!(o.today.values().map(|c| c.0).sum::<i64>(), 6);
    assert_eq!(o.approval_rate, Some(0.75));
    assert_eq!(o.per_minute.len(), 60);
    assert_eq!(o.per_minute[59], [3, 1, 0]);
    assert_eq!(o.per_minute[54], [0, 0, 2]);
    assert_eq!(o.per_minute[39], [0, 4, 0]);
    let card = &o.approval_by_method[&(Direction::Deposit, PaymentMethod::Card)];
    assert_eq!(card.len(), 24);
    assert_eq!(card[23], Some(3.0 / 8.0));
    assert_eq!(card[0], Some(1.0));
    assert_eq!(card[10], None);
    assert!(!o
        .approval_by_method
        .contains_key(&(Direction::Deposit, PaymentMethod::Sbp)));
}

#[test]
fn no_final_operation_means_no_approval_rate() {
    let now = Timestamp::from_millis(60_000 * 1000);
    let o = Overview::build(&[], Health::default(), now, now);
    assert_eq!(o.approval_rate, None);
    assert!(o.today.is_empty());
}

#[test]
fn a_manual_note_defaults_to_manual_and_refuses_control_characters() {
    use crate::ledger::ManualNote;
    let actor = Actor::cli("root");
    assert_eq!(
        ManualNote::new(actor.clone(), None).expect("valid").reason,
        "manual"
    );
    assert_eq!(
        ManualNote::new(actor.clone(), Some("  "))
            .expect("valid")
            .reason,
        "manual"
    );
    assert_eq!(
        ManualNote::new(actor.clone(), Some(" refund of #12 "))
            .expect("valid")
            .reason,
        "refund of #12"
    );
    assert!(ManualNote::new(actor.clone(), Some("a\nb")).is_err());
    assert!(ManualNote::new(actor, Some(&"x".repeat(501))).is_err());
}

#[test]
fn a_password_hash_is_argon2id_salted_and_verifies_only_its_password() {
    let first = hash_password("correct horse battery");
    let second = hash_password("correct horse battery");
    assert!(first.starts_with("$argon2id$"), "{first}");
    assert_ne!(first, second, "a fresh salt each time");
    assert!(verify_password(&first, "correct horse battery"));
    assert!(!verify_password(&first, "correct horse batterz"));
    assert!(!verify_password("not a hash", "correct horse battery"));
    assert!(check_password("short").is_err());
    assert!(check_password("twelve chars").is_ok());
}
