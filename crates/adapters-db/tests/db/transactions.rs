//! Balance transactions and statements through the store: every merchant entry records the
//! balance it left, on every path that writes one (a manual entry, a deposit's approval with
//! its fee, payouts' holds one by one and batched, a payout's end, a refund), the pages go
//! back through all of them with no gap and no repeat, and a day's book adds up.

use domain::fee::{FeeDirection, FeeTerms, Percent, Tariff};
use domain::ledger::EntryKind;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::ports::{LedgerReader, OperatorStore, TariffStore};
use domain::statement::{Day, Held};
use domain::transactions::{BalanceTransaction, TransactionType};
use domain::{Currency, PaymentMethod, Timestamp};

use crate::helpers::{
    all_at_once, approve, balance, credit, deposit, each_backend, gateway, merchant, now,
    rub_transactions, withdrawal, TestDb,
};
use crate::migrations::{
    assert_migrates_again, revert_through_async, reverts_through, BALANCE_TRANSACTIONS,
};

/// Every transaction of `shop`, oldest first, read a page of `limit` at a time.
async fn every_transaction(
    t: &TestDb,
    shop: &domain::merchant::Merchant,
    limit: u32,
) -> Vec<BalanceTransaction> {
    let mut all = Vec::new();
    let mut q = rub_transactions(shop, limit);
    loop {
        let found = t.db.transactions(&q).await.expect("a page");
        let page = domain::transactions::TransactionPage::of(&q, found);
        assert!(page.transactions.len() <= limit as usize);
        all.extend(page.transactions);
        match page.next {
            Some(next) => q.after = Some(next),
            None => break,
        }
    }
    all.reverse();
    all
}

/// Each entry leaves the balance the one before it left plus its own change, no entry is
/// dated before the one before it, and the last leaves the balance the store holds.
async fn assert_chained(
    t: &TestDb,
    shop: &domain::merchant::Merchant,
    entries: &[BalanceTransaction],
) {
    let mut left = Held::default();
    let mut at = Timestamp::from_millis(0);
    for entry in entries {
        left.available += entry.available_delta;
        left.held += entry.held_delta;
        assert_eq!(
            (entry.available_after, entry.held_after),
            (left.available, left.held),
            "entry {} ({:?}) records the balance it left",
            entry.id,
            entry.kind
        );
        assert!(
            entry.created_at >= at,
            "entry {} is dated in order",
            entry.id
        );
        at = entry.created_at;
    }
    assert_eq!(balance(&t.db, shop).await, (left.available, left.held));
}

fn one_percent(shop: &domain::merchant::Merchant, direction: FeeDirection) -> Tariff {
    Tariff {
        merchant_id: shop.id.clone(),
        direction,
        method: PaymentMethod::Card,
        currency: Currency::RUB,
        terms: FeeTerms::new(Percent::parse("1").expect("1 %"), 0, None, None).expect("terms"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_entry_records_the_balance_it_left_on_every_path_that_writes_one() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        for direction in [FeeDirection::Deposit, FeeDirection::Withdrawal] {
            t.db.put_tariff(&one_percent(&shop, direction), now())
                .await
                .expect("tariff");
        }
        let gw = gateway(&t.db);
        credit(&t.db, &shop, 1_000_00).await;
        let created = gw
            .creation()
            .create_deposit(&shop, deposit(500_00, None), b"d")
            .await
            .expect("deposit");
        approve(&gw, created.operation.id()).await;
        // Twelve payouts at once: on PostgreSQL several share one batched hold.
        let payouts = all_at_once(12, |i| {
            let gw = gw.clone();
            let shop = shop.clone();
            async move {
                gw.creation()
                    .create_withdrawal(&shop, withdrawal(10_00 + 100 * i as i64, None), b"w")
                    .await
                    .expect("payout")
            }
        })
        .await;
        for (i, payout) in payouts.iter().enumerate() {
            let outcome = match i % 2 {
                0 => Outcome::Approve,
                _ => Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            };
            gw.answers()
                .complete(payout.operation.id(), outcome)
                .await
                .expect("finish");
        }

        let entries = every_transaction(&t, &shop, 5).await;
        assert_chained(&t, &shop, &entries).await;
        let count = |kind: EntryKind| entries.iter().filter(|e| e.kind == kind).count();
        assert_eq!(count(EntryKind::ManualCredit), 1);
        assert_eq!(count(EntryKind::DepositApproved), 1);
        assert_eq!(count(EntryKind::WithdrawalHold), 12);
        assert_eq!(count(EntryKind::WithdrawalPaid), 6);
        assert_eq!(count(EntryKind::WithdrawalReleased), 6);
        assert_eq!(count(EntryKind::Fee), 7, "the deposit's and six payouts'");
        assert_eq!(count(EntryKind::FeeIncome), 0, "not the merchant's");
        assert!(entries
            .iter()
            .all(|e| TransactionType::of(e.kind).is_some()));
        t.assert_ledger_verifies().await;
        // Money at the edge: 1,000.00 credited and a 500.00 deposit in; the six approved
        // payouts (10.00, 12.00, ... 20.00) out; their 1 % and the deposit's 5.00 earned.
        let paid: i64 = (0..12)
            .filter(|i| i % 2 == 0)
            .map(|i| 10_00 + 100 * i)
            .sum();
        let fees = 5_00 + paid / 100;
        let (available, held) = balance(&t.db, &shop).await;
        let rub = t.db.ledger_flows().await.expect("flows");
        assert_eq!(
            rub,
            vec![domain::ledger::Flows {
                currency: Currency::RUB,
                merchants: available + held,
                fees,
                came_in: 1_500_00,
                went_out: paid,
            }]
        );
        assert!(rub[0].balanced());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_run_newest_first_within_the_time_range_without_gaps_or_repeats() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let other = merchant(&t.db).await;
        credit(&t.db, &other, 1_00).await;
        for n in 1..=7 {
            credit(&t.db, &shop, n * 1_00).await;
        }
        let all = every_transaction(&t, &shop, 3).await;
        let amounts: Vec<i64> = all.iter().map(BalanceTransaction::amount).collect();
        assert_eq!(amounts, vec![1_00, 2_00, 3_00, 4_00, 5_00, 6_00, 7_00]);
        assert_eq!(every_transaction(&t, &shop, 200).await, all);
        assert_eq!(every_transaction(&t, &shop, 1).await, all);

        // The time range: [from, to).
        let third = all[2].created_at;
        let mut ranged = rub_transactions(&shop, 200);
        ranged.from = Some(third);
        let since = t.db.transactions(&ranged).await.expect("a page");
        assert!(since.iter().all(|e| e.created_at >= third));
        assert!(since.iter().any(|e| e.id == all[2].id));
        assert!(since.len() >= 5);
        ranged.from = None;
        ranged.to = Some(third);
        let before = t.db.transactions(&ranged).await.expect("a page");
        assert!(before.iter().all(|e| e.created_at < third));
        ranged.to = Some(Timestamp::from_millis(0));
        assert!(t.db.transactions(&ranged).await.expect("a page").is_empty());

        let mut yen = rub_transactions(&shop, 200);
        yen.currency = Currency::parse("JPY").expect("JPY");
        assert!(t.db.transactions(&yen).await.expect("a page").is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_days_book_opens_with_the_day_before_and_closes_with_its_last_entry() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let start = now().plus_millis(-1);
        credit(&t.db, &shop, 1_000_00).await;
        t.db.put_tariff(&one_percent(&shop, FeeDirection::Withdrawal), now())
            .await
            .expect("tariff");
        let gw = gateway(&t.db);
        let payout = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(100_00, None), b"w")
            .await
            .expect("payout");
        approve(&gw, payout.operation.id()).await;
        let held = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(50_00, None), b"w")
            .await
            .expect("payout");
        assert_eq!(held.operation.status(), domain::Status::Processing);

        let day = |date: &str, from: Timestamp, hours: i64| Day {
            date: date.to_string(),
            start: from,
            end: from.plus_seconds(hours * 3600),
        };
        let yesterday = day("yesterday", start.plus_seconds(-86_400), 24);
        let today = day("today", start, 24);
        let days = [yesterday, today];
        let book =
            t.db.book(&shop.id, Currency::RUB, &days)
                .await
                .expect("a book");
        assert_eq!(book.opening, Held::default());
        assert_eq!(book.days[0], (Vec::new(), Held::default()));
        let (sums, closing) = &book.days[1];
        assert_eq!(
            *closing,
            Held {
                available: 1_000_00 - 101_00 - 50_50,
                held: 50_50
            }
        );
        let of = |kind: EntryKind, from_held: bool| {
            sums.iter()
                .find(|s| s.kind == kind && s.from_held == from_held)
                .map(|s| (s.count, s.available, s.held))
        };
        assert_eq!(of(EntryKind::ManualCredit, false), Some((1, 1_000_00, 0)));
        assert_eq!(
            of(EntryKind::WithdrawalHold, true),
            Some((2, -151_50, 151_50))
        );
        assert_eq!(of(EntryKind::WithdrawalPaid, true), Some((1, 0, -100_00)));
        assert_eq!(of(EntryKind::Fee, true), Some((1, 0, -1_00)));
        assert_eq!(
            balance(&t.db, &shop).await,
            (closing.available, closing.held)
        );

        let statement =
            domain::statement::Statement::build(shop.id.clone(), Currency::RUB, &days, book)
                .expect("it adds up");
        let line = &statement.days[1];
        assert_eq!(
            (
                line.withdrawals.count,
                line.withdrawals.amount,
                line.withdrawals.fee
            ),
            (1, 100_00, 1_00)
        );
        assert_eq!(line.manual, 1_000_00);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_migration_gives_earlier_entries_their_balances_in_order_and_reverts() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 10_00).await;
        assert_eq!(
            revert_through_async(&t.url, BALANCE_TRANSACTIONS).await,
            reverts_through(BALANCE_TRANSACTIONS)
        );
        // Entries as the gateway wrote them before: no balance recorded, and the second
        // dated before the first (two processes' clocks), then the fee account's.
        let id = &shop.id;
        t.exec(&format!(
            "INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at) \
             VALUES ('{id}', 'RUB', 'withdrawal_hold', -400, 400, 9000000000000), \
                    ('{id}', 'RUB', 'withdrawal_paid', 0, -400, 8000000000000), \
                    ('{id}', 'RUB', 'fee_income', 100, 0, 7000000000000)"
        ));
        t.exec(&format!(
            "UPDATE balances SET available = available - 400 WHERE merchant_id = '{id}'"
        ));
        assert_migrates_again(&t);

        let entries = every_transaction(&t, &shop, 2).await;
        assert_eq!(entries.len(), 3, "the fee account's entry is not the merchant's");
        assert_chained(&t, &shop, &entries).await;
        assert_eq!(
            entries[2].created_at,
            Timestamp::from_millis(9_000_000_000_000),
            "dated no earlier than the entry before it"
        );
        let left = t.count(&format!(
            "SELECT COUNT(*) AS n FROM ledger WHERE kind = 'fee_income' AND available_after IS NULL AND merchant_id = '{id}'"
        ));
        assert_eq!(left, 1);
        // Written after the migration, dated after the entries before it.
        credit(&t.db, &shop, 1_00).await;
        let entries = every_transaction(&t, &shop, 10).await;
        assert_chained(&t, &shop, &entries).await;
        assert_eq!(balance(&t.db, &shop).await, (7_00, 0));
        // (The flows do not balance: the raw entries above have no payout behind them.)
        assert_eq!(t.db.verify_ledger().await.expect("sums"), vec![]);
        assert_eq!(t.db.broken_entries(10).await.expect("chain"), vec![]);

        // Entries that do not record their balance are refused now; the fee account's may not.
        let refused = [
            format!("INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at) \
                     VALUES ('{id}', 'RUB', 'manual_credit', 1, 0, 0)"),
            format!("INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at, \
                     available_after, held_after) VALUES ('{id}', 'RUB', 'fee_income', 1, 0, 0, 1, 0)"),
            format!("INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at, \
                     available_after) VALUES ('{id}', 'RUB', 'manual_credit', 1, 0, 0, 1)"),
        ];
        for sql in &refused {
            assert!(t.try_exec(sql).is_err(), "refused: {sql}");
        }
        // One that records a wrong balance: its sums still match, its chain does not.
        t.exec(&format!(
            "INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at, \
             available_after, held_after) VALUES ('{id}', 'RUB', 'manual_credit', 1, 0, 9000000000001, 999, 0)"
        ));
        t.exec(&format!("UPDATE balances SET available = available + 1 WHERE merchant_id = '{id}'"));
        assert_eq!(t.db.verify_ledger().await.expect("sums"), vec![]);
        let broken = t.db.broken_entries(10).await.expect("chain");
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert_eq!((&broken[0].merchant_id, broken[0].currency), (&shop.id, Currency::RUB));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_entry_is_dated_no_later_than_a_second_ahead_of_the_database_clock() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        // A process whose clock runs a day ahead.
        let ahead = domain::ledger::manual_move(
            shop.id.clone(),
            Currency::RUB,
            domain::Amount::from_minor(1_00).expect("amount"),
            true,
            now().plus_seconds(86_400),
        );
        t.db.apply_manual_move(&ahead, &domain::testkit::note())
            .await
            .expect("credit");
        credit(&t.db, &shop, 1_00).await;
        let entries = every_transaction(&t, &shop, 10).await;
        let latest = now().plus_seconds(2);
        assert!(
            entries.iter().all(|e| e.created_at <= latest),
            "{entries:?}"
        );
        assert_chained(&t, &shop, &entries).await;
    })
    .await;
}
