//! Tariffs: written whole, replaced, removed, listed, and read by every creation from a copy
//! that another process's change reaches within its TTL.

use std::time::Duration;

use adapters_db::{Database, DbOptions};
use domain::fee::{FeeDirection, FeeTerms, Percent, Tariff};
use domain::ports::{TariffKey, TariffStore};
use domain::{Currency, MerchantId, PaymentMethod};

use crate::helpers::{all_at_once, each_backend, merchant, now};
use crate::migrations::{recorded_in, revert_through_async, reverts_through, Recorded, FEES};

fn terms(percent: &str, fixed: i64, min: Option<i64>, max: Option<i64>) -> FeeTerms {
    FeeTerms::new(Percent::parse(percent).expect("a percent"), fixed, min, max).expect("terms")
}

fn tariff(
    merchant: &MerchantId,
    direction: FeeDirection,
    currency: &str,
    terms: FeeTerms,
) -> Tariff {
    Tariff {
        merchant_id: merchant.clone(),
        direction,
        method: PaymentMethod::Card,
        currency: Currency::parse(currency).expect("a code"),
        terms,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tariffs_are_set_whole_replaced_removed_and_listed_by_key() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await.id;
        let other = merchant(&t.db).await.id;
        let card = tariff(
            &shop,
            FeeDirection::Deposit,
            "RUB",
            terms("2.5", 1_000, Some(1_500), None),
        );
        let payout = tariff(
            &shop,
            FeeDirection::Withdrawal,
            "RUB",
            terms("1", 0, None, None),
        );
        let theirs = tariff(
            &other,
            FeeDirection::Refund,
            "USD",
            terms("0", 50, None, Some(50)),
        );

        assert_eq!(t.db.put_tariff(&card, now()).await.expect("put"), None);
        assert_eq!(t.db.put_tariff(&payout, now()).await.expect("put"), None);
        assert_eq!(t.db.put_tariff(&theirs, now()).await.expect("put"), None);
        assert_eq!(
            t.db.terms(&card.key()).await.expect("read"),
            Some(card.terms)
        );

        // `set` replaces the whole tariff: what it does not give is gone.
        let replaced = Tariff {
            terms: terms("3", 0, None, None),
            ..card.clone()
        };
        assert_eq!(
            t.db.put_tariff(&replaced, now()).await.expect("put"),
            Some(card.terms)
        );
        assert_eq!(
            t.db.terms(&card.key()).await.expect("read"),
            Some(replaced.terms)
        );
        assert_eq!(t.rows("tariffs"), 3);

        let mut mine = vec![replaced.clone(), payout.clone()];
        mine.sort_by_key(|t| t.direction);
        assert_eq!(t.db.tariffs(Some(&shop)).await.expect("list"), mine);
        assert_eq!(t.db.tariffs(None).await.expect("list").len(), 3);

        assert_eq!(
            t.db.remove_tariff(&payout.key()).await.expect("remove"),
            Some(payout.terms)
        );
        assert_eq!(
            t.db.remove_tariff(&payout.key()).await.expect("remove"),
            None
        );
        assert_eq!(t.db.terms(&payout.key()).await.expect("read"), None);
        let absent = TariffKey {
            currency: Currency::parse("EUR").expect("EUR"),
            ..card.key()
        };
        assert_eq!(t.db.terms(&absent).await.expect("read"), None);
        assert_eq!(t.rows("tariffs"), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tariff_change_reaches_another_process_within_its_ttl() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await.id;
        let short = DbOptions {
            cache_ttl: Duration::from_millis(300),
            ..DbOptions::default()
        };
        let elsewhere = Database::connect_with(&t.url, short).expect("a second process");
        let card = tariff(
            &shop,
            FeeDirection::Deposit,
            "RUB",
            terms("2.5", 0, None, None),
        );
        // Both hold "no tariff" first.
        assert_eq!(t.db.terms(&card.key()).await.expect("read"), None);
        assert_eq!(elsewhere.terms(&card.key()).await.expect("read"), None);

        t.db.put_tariff(&card, now()).await.expect("put");

        // The writer sees it at once; the other process once its copy has run out.
        assert_eq!(
            t.db.terms(&card.key()).await.expect("read"),
            Some(card.terms)
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(
            elsewhere.terms(&card.key()).await.expect("read"),
            Some(card.terms)
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_refuses_tariffs_the_rules_refuse() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await.id;
        let insert = |direction: &str, method: &str, percent: i64, min: &str, max: &str| {
            format!(
                "INSERT INTO tariffs (merchant_id, direction, method, currency, \
                 percent_hundredths, fixed_fee, min_fee, max_fee, updated_at) VALUES \
                 ('{shop}', '{direction}', '{method}', 'RUB', {percent}, 0, {min}, {max}, 0)"
            )
        };
        for bad in [
            insert("payout", "card", 0, "NULL", "NULL"),
            insert("deposit", "cash", 0, "NULL", "NULL"),
            insert("deposit", "card", 10_001, "NULL", "NULL"),
            insert("deposit", "card", 0, "5", "4"),
            insert("deposit", "card", 0, "-1", "NULL"),
        ] {
            assert!(t.try_exec(&bad).is_err(), "{bad}");
        }
        assert_eq!(t.rows("tariffs"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tariffs_migration_reverts() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await.id;
        let card = tariff(
            &shop,
            FeeDirection::Deposit,
            "RUB",
            terms("2.5", 0, None, None),
        );
        t.db.put_tariff(&card, now()).await.expect("put");

        assert_eq!(
            revert_through_async(&t.url, FEES).await,
            reverts_through(FEES)
        );
        assert_eq!(recorded_in(&t), Recorded::before(FEES));
        t.db.migrate().expect("upgrade again");
        assert_eq!(t.rows("tariffs"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_of_one_tariff_each_see_the_one_before() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await.id;
        // Eight sets of one new key at once, each with its own fixed part: every one is
        // stored in turn, and the terms each replaced are the previous one's.
        let answers = all_at_once(8, |i| {
            let db = t.db.clone();
            let fixed = i64::try_from(i).expect("small") + 1;
            let card = tariff(
                &shop,
                FeeDirection::Deposit,
                "RUB",
                terms("0", fixed, None, None),
            );
            async move { (fixed, db.put_tariff(&card, now()).await) }
        })
        .await;
        let mut replaced: Vec<Option<i64>> = Vec::new();
        for (fixed, answer) in &answers {
            let before = answer
                .as_ref()
                .unwrap_or_else(|e| panic!("set {fixed}: {e}"));
            replaced.push(before.map(|terms| terms.fixed));
        }
        assert_eq!(
            replaced.iter().filter(|r| r.is_none()).count(),
            1,
            "{replaced:?}"
        );
        let mut seen: Vec<i64> = replaced.into_iter().flatten().collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 7, "each stored value is replaced at most once");
        assert_eq!(t.rows("tariffs"), 1);
    })
    .await;
}
