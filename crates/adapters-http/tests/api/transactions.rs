//! `GET /api/v1/balance/transactions`: a merchant's ledger movements, newest first, signed
//! with the withdrawal secret, keyset-paged with an opaque cursor.

use serde_json::Value;

use crate::helpers::{card_withdrawal, each_backend, Setup};

const PATH: &str = "/api/v1/balance/transactions";

/// Every transaction of the main merchant in RUB, newest first, `limit` a page.
async fn every_page(app: &crate::helpers::TestApp, limit: u32) -> Vec<Value> {
    let mut all = Vec::new();
    let mut query = format!("{PATH}?currency=RUB&limit={limit}");
    loop {
        let page = app.get(&query).await;
        page.assert_ok();
        let found = page.data()["transactions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(found.len() <= limit as usize);
        all.extend(found);
        match page.data()["next"].as_str() {
            Some(next) => query = format!("{PATH}?currency=RUB&limit={limit}&after={next}"),
            None => break,
        }
    }
    all
}

#[tokio::test]
async fn a_merchant_pages_back_through_its_movements_with_the_balance_each_left() {
    each_backend(Setup::default(), |app| async move {
        let empty = app.get(&format!("{PATH}?currency=RUB")).await;
        assert_eq!(
            empty.body,
            serde_json::json!({"data": {"transactions": []}})
        );

        app.credit("1000.00").await;
        let paid = app
            .withdraw(&card_withdrawal("100.00", "4242424242424242"))
            .await;
        paid.assert_ok();
        let declined = app
            .withdraw(&card_withdrawal("30.00", "4000000000000002"))
            .await;
        declined.assert_ok();
        app.settle_payouts().await;

        let all = every_page(&app, 2).await;
        let types: Vec<&str> = all
            .iter()
            .map(|t| t["type"].as_str().unwrap_or(""))
            .collect();
        // Newest first; the two payouts settle in either order after both holds.
        assert_eq!(types.len(), 5, "{all:?}");
        assert_eq!(types[2..], ["hold", "hold", "manual"]);
        let mut ends: Vec<&str> = types[..2].to_vec();
        ends.sort_unstable();
        assert_eq!(ends, ["release", "withdrawal"]);
        let newest = &all[0];
        assert_eq!(
            (
                newest["availableAfter"].as_str(),
                newest["heldAfter"].as_str()
            ),
            (Some("900.00"), Some("0.00")),
            "the newest left the balance GET /balance shows"
        );
        app.assert_balance("900.00", "0.00").await;
        let amounts: Vec<&str> = all
            .iter()
            .map(|t| t["amount"].as_str().unwrap_or(""))
            .collect();
        assert!(
            amounts.contains(&"-100.00") && amounts.contains(&"1000.00"),
            "{amounts:?}"
        );
        for hold in all.iter().filter(|t| t["type"] == "hold") {
            assert_eq!(
                hold["amount"], "0.00",
                "a hold moves money within the balance"
            );
            assert!(hold["operationId"].is_string());
        }
        assert!(
            all[4].get("operationId").is_none(),
            "a manual credit names no operation"
        );
        let ids: Vec<i64> = all.iter().filter_map(|t| t["id"].as_i64()).collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 5, "no transaction twice across pages");
        assert_eq!(
            every_page(&app, 200).await,
            all,
            "the same whatever the page size"
        );

        // Another merchant's movements are not this one's; nor another currency's.
        let other = app
            .get_as(&app.other, &format!("{PATH}?currency=RUB"))
            .await;
        assert_eq!(other.data()["transactions"], serde_json::json!([]));
        let usd = app.get(&format!("{PATH}?currency=USD")).await;
        assert_eq!(usd.data()["transactions"], serde_json::json!([]));
        // A time range ending before everything.
        let before = app
            .get(&format!("{PATH}?currency=RUB&to=2020-01-01T00:00:00Z"))
            .await;
        assert_eq!(before.data()["transactions"], serde_json::json!([]));
    })
    .await;
}

#[tokio::test]
async fn bad_parameters_are_400_naming_each_and_the_deposit_secret_is_401() {
    each_backend(Setup::default(), |app| async move {
        for (query, fields) in [
            ("", vec!["currency"]),
            ("?currency=RUB&limit=0", vec!["limit"]),
            ("?currency=RUB&limit=201", vec!["limit"]),
            ("?currency=RUB&after=nope", vec!["after"]),
            ("?currency=RUB&from=today", vec!["from"]),
            (
                "?currency=RUB&from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z",
                vec!["to"],
            ),
            ("?currency=rub&limit=x", vec!["currency", "limit"]),
        ] {
            let answer = app.get(&format!("{PATH}{query}")).await;
            answer.assert_error(400, "InvalidRequest");
            assert_eq!(answer.sorted_detail_fields(), fields, "{query}");
        }
        let signature = domain::signature::sign(
            app.shop.deposit_secret(),
            format!("{PATH}?currency=RUB").as_bytes(),
        );
        let headers = [
            ("merchant-id", app.shop.id()),
            ("x-signature", signature.as_str()),
        ];
        let path = format!("{PATH}?currency=RUB");
        let answer = app
            .raw(reqwest::Method::GET, &path, &headers, Vec::new())
            .await;
        answer.assert_error(401, "Unauthorized");
    })
    .await;
}
