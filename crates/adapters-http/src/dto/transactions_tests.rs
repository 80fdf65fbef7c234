use domain::ledger::EntryKind;
use domain::transactions::{BalanceTransaction, Cursor, TransactionPage, TransactionQuery};
use domain::{Currency, MerchantId, OperationId, Timestamp};

use super::{read_query, TransactionsView};

fn merchant() -> MerchantId {
    MerchantId::parse("m-1").expect("valid")
}

fn fields(query: &str) -> Vec<(String, String)> {
    let refused = read_query(&merchant(), query).expect_err("refused");
    refused
        .0
        .iter()
        .map(|e| (e.field.clone(), e.message.clone()))
        .collect()
}

#[test]
fn a_query_names_its_currency_and_may_bound_time_cursor_and_limit() {
    let cursor = Cursor {
        created_at: Timestamp::from_millis(5),
        id: 7,
    };
    let text = format!(
        "currency=JPY&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00%2B03:00&after={}&limit=200&other=1",
        cursor.encode()
    );
    let query = read_query(&merchant(), &text).expect("valid");
    assert_eq!(query.currency, Currency::parse("JPY").expect("JPY"));
    assert_eq!(
        query.from.map(Timestamp::to_rfc3339).as_deref(),
        Some("2026-12-01T00:00:00Z")
    );
    assert_eq!(
        query.to.map(Timestamp::to_rfc3339).as_deref(),
        Some("2026-12-01T21:00:00Z")
    );
    assert_eq!((query.after, query.limit), (Some(cursor), 200));
    let plain = read_query(&merchant(), "currency=RUB").expect("valid");
    assert_eq!(
        (plain.from, plain.to, plain.after, plain.limit),
        (None, None, None, TransactionQuery::DEFAULT_LIMIT)
    );
}

#[test]
fn every_bad_parameter_is_named() {
    let named =
        |query: &str| -> Vec<String> { fields(query).into_iter().map(|(f, _)| f).collect() };
    assert_eq!(named(""), vec!["currency"]);
    assert_eq!(named("currency=rub"), vec!["currency"]);
    assert_eq!(named("currency=RUB&currency=USD"), vec!["currency"]);
    assert_eq!(
        named("limit=1&limit=2&limit=3&currency=RUB"),
        vec!["limit"],
        "once however often"
    );
    assert_eq!(
        named("currency=XXX"),
        vec!["currency"],
        "not an active ISO 4217 code"
    );
    for limit in ["0", "201", "-1", "1.5", "abc", "", "0010", "99999999999"] {
        assert_eq!(
            named(&format!("currency=RUB&limit={limit}")),
            vec!["limit"],
            "{limit:?}"
        );
    }
    assert_eq!(named("currency=RUB&after=xyz"), vec!["after"]);
    assert_eq!(
        named("currency=RUB&from=yesterday&to=2026-12-01"),
        vec!["from", "to"]
    );
    assert_eq!(
        named("currency=RUB&from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z"),
        vec!["to"]
    );
    assert_eq!(
        fields("currency=RUB&limit=0")[0].1,
        "must be a whole number from 1 to 200"
    );
}

#[test]
fn transactions_are_written_signed_in_their_currency_and_the_last_page_has_no_next() {
    let id = OperationId::from_uuid(uuid::Uuid::from_u128(1));
    let hold = BalanceTransaction {
        id: 41,
        kind: EntryKind::WithdrawalHold,
        operation_id: Some(id),
        refund_id: None,
        dispute_id: None,
        available_delta: -101_000,
        held_delta: 101_000,
        available_after: 0,
        held_after: 101_000,
        created_at: Timestamp::from_millis(1_795_255_200_000),
    };
    let paid = BalanceTransaction {
        id: 42,
        kind: EntryKind::WithdrawalPaid,
        available_delta: 0,
        held_delta: -100_000,
        held_after: 1_000,
        ..hold.clone()
    };
    let page = TransactionPage {
        transactions: vec![paid, hold],
        next: None,
    };
    let json = serde_json::to_value(TransactionsView::new(&page, Currency::RUB)).expect("json");
    assert_eq!(
        json,
        serde_json::json!({"transactions": [
            {"id": 42, "type": "withdrawal", "operationId": id.to_string(), "amount": "-1000.00",
             "availableAfter": "0.00", "heldAfter": "10.00", "createdAt": "2026-11-21T10:00:00Z"},
            {"id": 41, "type": "hold", "operationId": id.to_string(), "amount": "0.00",
             "availableAfter": "0.00", "heldAfter": "1010.00", "createdAt": "2026-11-21T10:00:00Z"},
        ]})
    );
    let more = TransactionPage {
        next: Some(Cursor {
            created_at: Timestamp::from_millis(1),
            id: 41,
        }),
        ..page
    };
    let json = serde_json::to_value(TransactionsView::new(&more, Currency::RUB)).expect("json");
    assert_eq!(json["next"], "00000000000000010000000000000029");
}
