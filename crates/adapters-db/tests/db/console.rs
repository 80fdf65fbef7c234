//! The operator console's storage (`ConsoleStore`): accounts and sessions shared by every
//! process, failed sign-ins, the audit log, the operations search, each operation's events,
//! the per-minute counters, the health figures, callbacks sent now, notes on manual ledger
//! entries, and the console migration's round trip.

use std::collections::{BTreeMap, HashSet};

use adapters_db::Database;
use domain::attempt::{Attempt, AttemptState, Discrepancy};
use domain::callback::CallbackState;
use domain::console::{
    Actor, AuditEntry, ConsoleAccount, Cursor, EventDetail, Health, LedgerCheck, Listed,
    MinuteCount, OperationFilter, Role, Session,
};
use domain::ledger::{moves_on_finish, ManualNote};
use domain::merchant::Merchant;
use domain::operation::{Action, Operation, Outcome};
use domain::ports::{
    AttemptResult, CallbackOutbox, Completion, ConsoleStore, ManualMoveError, NewOperation,
    OperationStore, OperatorStore,
};
use domain::signature::Fingerprint;
use domain::testkit::{OperationBuilder, T0};
use domain::{Direction, MerchantId, OperationId, PaymentMethod, Status, Timestamp};

use crate::helpers::{
    all_at_once, approved_deposit, at_provider, callback_attempt, credit, declined, deposit,
    each_backend, finish_refund, first_attempt, funded_merchant, gateway, insert_plain,
    insert_with_attempt, merchant, now, operation, queue_callbacks, refunded, rub_move, withdrawal,
    TestDb,
};
use crate::migrations::{
    assert_migrates_again, assert_reverts_through, recorded_in, Recorded, CONSOLE, SECRETS,
};

fn account(name: &str, role: Role, enabled: bool) -> ConsoleAccount {
    ConsoleAccount {
        name: name.to_string(),
        role,
        password_hash: format!("$argon2id$v=19$m=19456,t=2,p=1$salt-of-{name}$hash"),
        enabled,
        created_at: Timestamp::from_millis(1_000),
    }
}

/// The password hash [`account`] gives `name`.
fn hash_of(name: &str) -> String {
    account(name, Role::Viewer, true).password_hash
}

/// A session of `operator` with id `id`, made at `at`; its role says viewer (the stored
/// account's role is what a read answers).
fn session(id: &str, operator: &str, at: Timestamp) -> Session {
    Session {
        id: id.to_string(),
        operator: operator.to_string(),
        role: Role::Viewer,
        csrf: format!("csrf-{id}"),
        created_at: at,
        last_seen_at: at,
    }
}

/// Finishes `op` with `outcome` a second after its creation, with its moves; the operation as
/// finished.
async fn finish(db: &Database, op: &Operation, outcome: &Outcome) -> Operation {
    let done = op
        .finish(outcome, op.created_at().plus_seconds(1))
        .expect("processing");
    let completion = Completion {
        moves: moves_on_finish(&done),
        operation: done.clone(),
        callback: None,
        from_attempt: None,
    };
    db.finish(&completion).await.expect("finish");
    done
}

/// A processing operation of `shop` by `method`, created at `at`, with a random id.
fn made(
    shop: &Merchant,
    direction: Direction,
    method: PaymentMethod,
    at: Timestamp,
) -> OperationBuilder {
    let (builder, route) = match direction {
        Direction::Deposit => (OperationBuilder::deposit(method), 1),
        Direction::Withdrawal => (OperationBuilder::payout(method), 7),
    };
    builder
        .route(route)
        .id(OperationId::from_uuid(uuid::Uuid::new_v4()))
        .merchant(shop.id.as_str())
        .created(at)
}

/// Stores `op` with no moves and no callback, with a fingerprint if it has a
/// merchantOperationId.
async fn insert(db: &Database, op: &Operation) {
    let new = NewOperation {
        operation: op.clone(),
        fingerprint: op
            .merchant_operation_id()
            .map(|moid| Fingerprint::from_stored(format!("fp-{}", moid.as_str()), 1)),
        moves: Vec::new(),
        callback: None,
        attempts: Vec::new(),
    };
    db.insert(&new).await.expect("insert");
}

/// The per-minute counters as a map: (minute, direction, method, status, currency) to
/// (count, amount).
type Figures = BTreeMap<(i64, &'static str, &'static str, u8, String), (i64, i64)>;

fn figures_of_counts(counts: &[MinuteCount]) -> Figures {
    let mut figures = Figures::new();
    for c in counts {
        let key = (
            c.minute,
            c.direction.as_str(),
            c.method.as_str(),
            c.status.number(),
            c.currency.as_str().to_string(),
        );
        assert!(
            figures.insert(key, (c.count, c.amount)).is_none(),
            "{c:?} twice"
        );
        assert_ne!(c.count, 0, "{c:?}");
    }
    figures
}

/// The same figures computed from the operations as they are stored now.
async fn figures_of_operations(db: &Database, ids: &[OperationId]) -> Figures {
    let mut figures = Figures::new();
    for id in ids {
        let op = db.get(*id).await.expect("read").expect("stored");
        let key = (
            op.created_at().millis().div_euclid(60_000),
            op.direction().as_str(),
            op.method().as_str(),
            op.status().number(),
            op.currency().as_str().to_string(),
        );
        let figure = figures.entry(key).or_insert((0, 0));
        figure.0 += 1;
        figure.1 += op.amount().minor();
    }
    figures
}

/// Every counter, from the epoch to 2096.
async fn all_counts(db: &Database) -> Figures {
    let counts = db
        .minute_counts(
            Timestamp::from_millis(0),
            Timestamp::from_millis(4_000_000_000_000),
        )
        .await
        .expect("counts");
    figures_of_counts(&counts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn accounts_are_stored_once_and_a_disabled_one_signs_no_one_in() {
    each_backend(|t| async move {
        let db = &t.db;
        assert!(db
            .insert_account(&account("bob", Role::Operator, true))
            .await
            .expect("insert"));
        assert!(db
            .insert_account(&account("alice", Role::Admin, true))
            .await
            .expect("insert"));
        // A taken name writes nothing.
        assert!(!db
            .insert_account(&account("alice", Role::Viewer, false))
            .await
            .expect("insert"));
        assert_eq!(
            db.account("alice").await.expect("read"),
            Some(account("alice", Role::Admin, true))
        );
        assert_eq!(db.account("carol").await.expect("read"), None);
        let names: Vec<String> = db
            .accounts()
            .await
            .expect("list")
            .into_iter()
            .map(|a| a.name)
            .collect();
        assert_eq!(names, ["alice", "bob"]);

        // A session answers with its account's role.
        let at = Timestamp::from_millis(5_000);
        assert!(db
            .insert_session(&session("s-alice", "alice", at), &hash_of("alice"))
            .await
            .expect("session"));
        assert!(db
            .insert_session(&session("s-alice-2", "alice", at), &hash_of("alice"))
            .await
            .expect("session"));
        assert!(db
            .insert_session(&session("s-bob", "bob", at), &hash_of("bob"))
            .await
            .expect("session"));
        let found = db.session("s-alice").await.expect("read").expect("live");
        assert_eq!(found.role, Role::Admin);
        assert_eq!(
            found,
            Session {
                role: Role::Admin,
                ..session("s-alice", "alice", at)
            }
        );
        assert_eq!(db.session("s-nobody").await.expect("read"), None);

        // Disabling deletes the account's sessions, and only its.
        assert!(db.disable_account("alice").await.expect("disable"));
        assert!(!db.disable_account("carol").await.expect("disable"));
        assert_eq!(db.session("s-alice").await.expect("read"), None);
        assert_eq!(t.rows_where("console_sessions", "operator = 'alice'"), 0);
        assert!(db.session("s-bob").await.expect("read").is_some());
        assert!(
            !db.account("alice")
                .await
                .expect("read")
                .expect("kept")
                .enabled
        );

        // A session of a disabled account signs no one in, even if one was stored.
        assert!(
            !db.insert_session(&session("s-late", "alice", at), &hash_of("alice"))
                .await
                .expect("session"),
            "a disabled account opens no session"
        );
        assert_eq!(t.rows_where("console_sessions", "id = 's-late'"), 0);
        t.exec(
            "INSERT INTO console_sessions (id, operator, csrf, created_at, last_seen_at) \
             VALUES ('s-late', 'alice', 'c', 5000, 5000)",
        );
        assert_eq!(t.rows_where("console_sessions", "id = 's-late'"), 1);
        assert_eq!(db.session("s-late").await.expect("read"), None);

        // A new password leaves a disabled account disabled, and ends its sessions.
        assert!(db
            .set_password("alice", "$argon2id$new")
            .await
            .expect("set"));
        assert!(!db
            .set_password("carol", "$argon2id$new")
            .await
            .expect("set"));
        let alice = db.account("alice").await.expect("read").expect("kept");
        assert_eq!(
            (alice.enabled, alice.password_hash.as_str()),
            (false, "$argon2id$new")
        );
        assert_eq!(t.rows_where("console_sessions", "operator = 'alice'"), 0);
    })
    .await;
}

/// A session is opened only on the hash its password was checked against: after a password
/// change (or for an unknown account) nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_opens_only_on_the_hash_its_password_was_checked_against() {
    each_backend(|t| async move {
        let db = &t.db;
        assert!(db
            .insert_account(&account("alice", Role::Admin, true))
            .await
            .expect("insert"));
        let at = Timestamp::from_millis(5_000);
        let checked = hash_of("alice");
        assert!(db
            .set_password("alice", "$argon2id$v=19$changed")
            .await
            .expect("set"));
        assert!(!db
            .insert_session(&session("s-old", "alice", at), &checked)
            .await
            .expect("session"));
        assert!(!db
            .insert_session(&session("s-nobody", "nobody", at), &checked)
            .await
            .expect("session"));
        assert_eq!(t.rows("console_sessions"), 0);
        assert!(db
            .insert_session(&session("s-new", "alice", at), "$argon2id$v=19$changed")
            .await
            .expect("session"));
        assert!(db.session("s-new").await.expect("read").is_some());
    })
    .await;
}

/// A new password ends every session of its account, and only its, in the transaction that
/// changes the hash; an unknown name changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_password_ends_every_session_of_its_account_and_only_its() {
    each_backend(|t| async move {
        let db = &t.db;
        for name in ["alice", "bob"] {
            assert!(db
                .insert_account(&account(name, Role::Operator, true))
                .await
                .expect("insert"));
        }
        let at = Timestamp::from_millis(5_000);
        for (id, operator) in [("a-1", "alice"), ("a-2", "alice"), ("b-1", "bob")] {
            assert!(db
                .insert_session(&session(id, operator, at), &hash_of(operator))
                .await
                .expect("session"));
        }
        // Seen from a second process on the database: the sessions it shares end too.
        let other = t.second_process();
        assert!(other.session("a-1").await.expect("read").is_some());

        assert!(db
            .set_password("alice", "$argon2id$v=19$new")
            .await
            .expect("set"));

        for id in ["a-1", "a-2"] {
            assert_eq!(db.session(id).await.expect("read"), None, "{id}");
            assert_eq!(other.session(id).await.expect("read"), None, "{id}");
        }
        assert_eq!(t.rows_where("console_sessions", "operator = 'alice'"), 0);
        let bob = db.session("b-1").await.expect("read").expect("bob's kept");
        assert_eq!(
            bob,
            Session {
                role: Role::Operator,
                ..session("b-1", "bob", at)
            }
        );
        let alice = db.account("alice").await.expect("read").expect("kept");
        assert_eq!(
            (alice.enabled, alice.password_hash.as_str()),
            (true, "$argon2id$v=19$new")
        );
        assert_eq!(
            db.account("bob").await.expect("read"),
            Some(account("bob", Role::Operator, true)),
            "bob's hash unchanged"
        );

        // An unknown name: nothing written, every session kept.
        assert!(!db
            .set_password("carol", "$argon2id$v=19$other")
            .await
            .expect("set"));
        assert_eq!(t.rows_where("console_sessions", "1 = 1"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_are_shared_by_every_process_on_the_database() {
    each_backend(|t| async move {
        let (one, other) = (t.db.clone(), t.second_process());
        assert!(one
            .insert_account(&account("alice", Role::Operator, true))
            .await
            .expect("insert"));
        let at = Timestamp::from_millis(10_000);
        assert!(one
            .insert_session(&session("s-1", "alice", at), &hash_of("alice"))
            .await
            .expect("session"));

        let seen = other.session("s-1").await.expect("read").expect("shared");
        assert_eq!(
            (seen.operator.as_str(), seen.role),
            ("alice", Role::Operator)
        );
        let later = at.plus_seconds(90);
        other.touch_session("s-1", later).await.expect("touch");
        let touched = one.session("s-1").await.expect("read").expect("kept");
        assert_eq!((touched.created_at, touched.last_seen_at), (at, later));

        other.delete_session("s-1").await.expect("delete");
        assert_eq!(one.session("s-1").await.expect("read"), None);
    })
    .await;
}

/// Attempts for one name sent at once reserve one after another: each sees every attempt
/// reserved before it, so their counts are 1 to N, each once, and never all "first".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_sign_in_reservations_each_count_the_ones_before() {
    each_backend(|t| async move {
        let t0 = Timestamp::from_millis(200_000_000);
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let db = t.db.clone();
                tokio::spawn(async move {
                    db.reserve_signin("alice", t0.plus_millis(i), t0)
                        .await
                        .expect("reserve")
                })
            })
            .collect();
        let mut counts = Vec::new();
        let mut ids = HashSet::new();
        for task in tasks {
            let (id, count) = task.await.expect("joined");
            counts.push(count);
            ids.insert(id);
        }
        counts.sort_unstable();
        assert_eq!(counts, (1..=16).collect::<Vec<u32>>());
        assert_eq!(ids.len(), 16);
        // A success forgets its own reservation only.
        let first = *ids.iter().next().expect("an id");
        t.db.forget_signin(first).await.expect("forget");
        assert_eq!(t.db.failed_signins("alice", t0).await.expect("count"), 15);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failed_sign_ins_are_counted_from_since_and_forgotten_after_a_day() {
    each_backend(|t| async move {
        let db = &t.db;
        let t0 = Timestamp::from_millis(100_000_000);
        for seconds in [0, 10, 20] {
            db.record_failed_signin("alice", t0.plus_seconds(seconds))
                .await
                .expect("record");
        }
        db.record_failed_signin("nobody", t0).await.expect("record");
        assert_eq!(db.failed_signins("alice", t0).await.expect("count"), 3);
        // `since` is inclusive.
        assert_eq!(
            db.failed_signins("alice", t0.plus_seconds(10))
                .await
                .expect("count"),
            2
        );
        assert_eq!(
            db.failed_signins("alice", t0.plus_millis(20_001))
                .await
                .expect("count"),
            0
        );
        assert_eq!(db.failed_signins("bob", t0).await.expect("count"), 0);

        // A failure more than a day later forgets every name's failures older than a day
        // (names tried once would otherwise stay for ever).
        let next_day = t0.plus_seconds(24 * 3600 + 15);
        db.record_failed_signin("alice", next_day)
            .await
            .expect("record");
        assert_eq!(t.rows_where("signin_failures", "name = 'alice'"), 2);
        assert_eq!(t.rows_where("signin_failures", "name = 'nobody'"), 0);
        let epoch = Timestamp::from_millis(0);
        assert_eq!(db.failed_signins("alice", epoch).await.expect("count"), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_audit_log_reads_newest_first_and_pages_before_an_entry() {
    each_backend(|t| async move {
        let db = &t.db;
        let entries: Vec<AuditEntry> = (0..5)
            .map(|i| AuditEntry {
                actor: if i % 2 == 0 {
                    Actor::operator("alice")
                } else {
                    Actor::cli("root")
                },
                action: format!("merchant.disable-{i}"),
                target: format!("shop-{i}"),
                before: (i != 3).then(|| format!(r#"{{"enabled":{i}}}"#)),
                after: (i != 1).then(|| r#"{"enabled":false}"#.to_string()),
                at: Timestamp::from_millis(1_000 * i),
            })
            .collect();
        for entry in &entries {
            db.audit(entry).await.expect("audit");
        }
        let all = db.audit_log(None, 10).await.expect("read");
        let newest_first: Vec<AuditEntry> = entries.iter().rev().cloned().collect();
        assert_eq!(
            all.iter().map(|r| r.entry.clone()).collect::<Vec<_>>(),
            newest_first
        );
        assert!(all.windows(2).all(|w| w[0].id > w[1].id));

        let first_page = db.audit_log(None, 2).await.expect("read");
        assert_eq!(first_page, all[..2]);
        let next = db.audit_log(Some(first_page[1].id), 2).await.expect("read");
        assert_eq!(next, all[2..4]);
        let last = db.audit_log(Some(next[1].id), 2).await.expect("read");
        assert_eq!(last, all[4..]);
        assert_eq!(
            db.audit_log(Some(all[4].id), 2).await.expect("read"),
            vec![]
        );
    })
    .await;
}

/// The search's operations, as stored at the end of [`searched`], with what each has
/// refunded.
struct Searched {
    a: Merchant,
    b: Merchant,
    listed: Vec<Listed>,
}

impl Searched {
    /// The stored operations `keep` keeps, newest first (`createdAt`, then the id, both
    /// descending).
    fn expect(&self, keep: impl Fn(&Operation) -> bool) -> Vec<Listed> {
        let mut kept: Vec<Listed> = self
            .listed
            .iter()
            .filter(|l| keep(&l.operation))
            .cloned()
            .collect();
        kept.sort_by_key(|l| std::cmp::Reverse((l.operation.created_at(), l.operation.id())));
        kept
    }
}

/// Nine operations of two merchants: both directions, several methods, statuses and
/// providers, three created at one time and two at another, a merchantOperationId used by
/// both merchants, and a deposit with an approved, a processing and a declined refund.
async fn searched(db: &Database) -> Searched {
    let (a, b) = (merchant(db).await, merchant(db).await);
    credit(db, &b, 1_000_00).await;
    let at = |seconds| T0.plus_seconds(seconds);
    use Direction::{Deposit, Withdrawal};
    use PaymentMethod::{BankAPay, Card, Sbp, SbpQr};
    let plan = [
        (made(&a, Deposit, Card, at(0)).minor(100_00), None),
        (
            made(&a, Deposit, Sbp, at(1))
                .minor(200_00)
                .merchant_operation_id("order-1"),
            Some(Outcome::Approve),
        ),
        (
            made(&b, Deposit, Card, at(1))
                .minor(300_00)
                .merchant_operation_id("order-1"),
            Some(declined()),
        ),
        (made(&a, Withdrawal, Card, at(1)).minor(50_00), None),
        (
            made(&b, Deposit, Card, at(2))
                .minor(70_00)
                .provider("bank-a"),
            None,
        ),
        (
            made(&a, Withdrawal, Sbp, at(3))
                .minor(80_00)
                .status(Status::Declined),
            None,
        ),
        (
            made(&b, Deposit, SbpQr, at(3)).minor(90_00),
            Some(Outcome::Approve),
        ),
        (
            made(&a, Deposit, Card, at(4))
                .minor(110_00)
                .provider("bank-a"),
            Some(Outcome::Approve),
        ),
        (made(&b, Deposit, BankAPay, at(5)).minor(120_00), None),
    ];
    let mut listed = Vec::new();
    for (builder, outcome) in plan {
        let op = builder.build();
        insert(db, &op).await;
        let operation = match outcome {
            Some(outcome) => finish(db, &op, &outcome).await,
            None => op,
        };
        listed.push(Listed {
            operation,
            refunded: 0,
        });
    }
    // The sbp_qr deposit: 10.00 refunded and approved, 5.00 processing, 3.00 declined.
    let refunded_one = &mut listed[6];
    let deposit = refunded_one.operation.clone();
    let approved = refunded(db, &deposit, 10_00).await;
    finish_refund(db, &approved, &Outcome::Approve).await;
    refunded(db, &deposit, 5_00).await;
    let refused = refunded(db, &deposit, 3_00).await;
    finish_refund(db, &refused, &declined()).await;
    refunded_one.refunded = 10_00;
    Searched { a, b, listed }
}

async fn search(db: &Database, filter: &OperationFilter) -> Vec<Listed> {
    db.search_operations(filter, None, 200)
        .await
        .expect("search")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_filter_of_the_search_alone() {
    each_backend(|t| async move {
        let s = searched(&t.db).await;
        let db = &t.db;
        let everything = OperationFilter::default();
        assert_eq!(search(db, &everything).await, s.expect(|_| true));
        assert_eq!(s.expect(|_| true).len(), 9);

        let by = |f: OperationFilter| async move { search(db, &f).await };
        assert_eq!(
            by(OperationFilter {
                direction: Some(Direction::Withdrawal),
                ..everything.clone()
            })
            .await,
            s.expect(|op| op.direction() == Direction::Withdrawal)
        );
        assert_eq!(
            by(OperationFilter {
                method: Some(PaymentMethod::Card),
                ..everything.clone()
            })
            .await,
            s.expect(|op| op.method() == PaymentMethod::Card)
        );
        for status in [Status::Approved, Status::Declined, Status::Processing] {
            let found = by(OperationFilter {
                status: Some(status),
                ..everything.clone()
            })
            .await;
            assert_eq!(found, s.expect(|op| op.status() == status), "{status:?}");
            assert!(!found.is_empty());
        }
        for shop in [&s.a, &s.b] {
            let found = by(OperationFilter {
                merchant: Some(shop.id.clone()),
                ..everything.clone()
            })
            .await;
            assert_eq!(found, s.expect(|op| op.merchant_id() == &shop.id));
        }
        assert_eq!(
            by(OperationFilter {
                provider: Some("bank-a".into()),
                ..everything.clone()
            })
            .await,
            s.expect(|op| op.provider() == "bank-a")
        );
        assert_eq!(
            by(OperationFilter {
                provider: Some("bank-z".into()),
                ..everything.clone()
            })
            .await,
            vec![]
        );

        // The creation range is half-open: from included, to excluded.
        let (from, to) = (T0.plus_seconds(1), T0.plus_seconds(3));
        let ranged = by(OperationFilter {
            created_from: Some(from),
            created_to: Some(to),
            ..everything.clone()
        })
        .await;
        assert_eq!(
            ranged,
            s.expect(|op| op.created_at() >= from && op.created_at() < to)
        );
        assert_eq!(ranged.len(), 4);
        assert_eq!(
            by(OperationFilter {
                created_from: Some(T0.plus_seconds(4)),
                ..everything.clone()
            })
            .await,
            s.expect(|op| op.created_at() >= T0.plus_seconds(4))
        );
        assert_eq!(
            by(OperationFilter {
                created_to: Some(T0.plus_seconds(1)),
                ..everything.clone()
            })
            .await,
            s.expect(|op| op.created_at() < T0.plus_seconds(1))
        );

        // The refunded amount counts approved refunds only.
        let refunded: Vec<i64> = search(db, &everything)
            .await
            .iter()
            .map(|l| l.refunded)
            .collect();
        assert_eq!(refunded.iter().sum::<i64>(), 10_00);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_search_finds_an_operation_by_its_id_or_merchant_operation_id_exactly() {
    each_backend(|t| async move {
        let s = searched(&t.db).await;
        let db = &t.db;
        let text = |text: &str| OperationFilter {
            search: Some(text.to_string()),
            ..OperationFilter::default()
        };
        let one = s.listed[4].operation.id();
        assert_eq!(
            search(db, &text(&one.to_string())).await,
            s.expect(|op| op.id() == one)
        );
        // A UUID is one however it is written.
        let upper = one.to_string().to_uppercase();
        assert_eq!(
            search(db, &text(&upper)).await,
            s.expect(|op| op.id() == one)
        );
        // Across merchants.
        let both = search(db, &text("order-1")).await;
        assert_eq!(
            both,
            s.expect(|op| op.merchant_operation_id().map(|m| m.as_str()) == Some("order-1"))
        );
        assert_eq!(both.len(), 2);
        // Exactly: no prefix, no other case.
        assert_eq!(search(db, &text("order")).await, vec![]);
        assert_eq!(search(db, &text("ORDER-1")).await, vec![]);
        assert_eq!(search(db, &text(&one.to_string()[..8])).await, vec![]);
        // With another filter, both must match.
        let of_a = OperationFilter {
            merchant: Some(s.a.id.clone()),
            ..text("order-1")
        };
        assert_eq!(
            search(db, &of_a).await,
            s.expect(|op| op.merchant_id() == &s.a.id
                && op.merchant_operation_id().map(|m| m.as_str()) == Some("order-1"))
        );
    })
    .await;
}

/// Every page of `filter`, `size` at a time, following the cursor.
async fn pages(db: &Database, filter: &OperationFilter, size: u32) -> Vec<Vec<Listed>> {
    let mut pages: Vec<Vec<Listed>> = Vec::new();
    let mut cursor: Option<Cursor> = None;
    loop {
        let page = db
            .search_operations(filter, cursor.as_ref(), size)
            .await
            .expect("page");
        assert!(page.len() <= size as usize);
        let Some(last) = page.last() else { break };
        // The cursor goes to the browser as a token and comes back.
        let token = Cursor {
            created_at: last.operation.created_at(),
            id: last.operation.id(),
        }
        .encode();
        cursor = Some(Cursor::decode(&token).expect("a cursor this console made"));
        pages.push(page);
        assert!(pages.len() <= 20, "the cursor goes on");
    }
    pages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_follow_the_cursor_through_ties_visiting_each_operation_once() {
    each_backend(|t| async move {
        let s = searched(&t.db).await;
        let everything = OperationFilter::default();
        for size in [1, 2, 3, 4, 9, 10] {
            let seen: Vec<Listed> = pages(&t.db, &everything, size).await.concat();
            assert_eq!(seen, s.expect(|_| true), "pages of {size}");
            let ids: HashSet<OperationId> = seen.iter().map(|l| l.operation.id()).collect();
            assert_eq!(ids.len(), 9, "each once, pages of {size}");
        }
        // The three created at one time come by id, descending.
        let tied: Vec<OperationId> = s
            .expect(|op| op.created_at() == T0.plus_seconds(1))
            .iter()
            .map(|l| l.operation.id())
            .collect();
        let mut by_id = tied.clone();
        by_id.sort_by(|x, y| y.cmp(x));
        assert_eq!(tied, by_id);
        assert_eq!(tied.len(), 3);
        // With a filter.
        let of_a = OperationFilter {
            merchant: Some(s.a.id.clone()),
            ..everything
        };
        let seen = pages(&t.db, &of_a, 2).await;
        assert_eq!(seen.len(), 3);
        assert_eq!(seen.concat(), s.expect(|op| op.merchant_id() == &s.a.id));
        let of_b = OperationFilter {
            merchant: Some(s.b.id.clone()),
            ..OperationFilter::default()
        };
        assert_eq!(
            pages(&t.db, &of_b, 2).await.concat(),
            s.expect(|op| op.merchant_id() == &s.b.id)
        );
    })
    .await;
}

fn details(events: &[domain::console::OperationEvent]) -> Vec<EventDetail> {
    events.iter().map(|e| e.detail.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deposits_timeline_holds_its_creation_status_callbacks_and_refunds_in_order() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 1_000_00).await;
        let deposit = approved_deposit(db, &shop, 100_00).await;
        let id = deposit.id();

        // The timeline places callback attempts (read from their log) by time among the
        // events written with each change: this history happens in order, a millisecond
        // or more apart.
        let at = now();
        let claimed = db
            .claim_due("w", at, at.plus_seconds(30), 10)
            .await
            .expect("claim");
        assert_eq!(claimed.len(), 1);
        let tried = callback_attempt(&claimed[0], at, 503);
        assert!(db
            .record_attempt("w", &tried, &AttemptResult::RetryAt(at.plus_seconds(60)))
            .await
            .expect("record"));
        // A record after the lease ended writes no event either.
        assert!(!db
            .record_attempt("w", &tried, &AttemptResult::Delivered)
            .await
            .expect("record"));

        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let refund = refunded(db, &deposit, 40_00).await;
        let settled = finish_refund(db, &refund, &Outcome::Approve).await;
        let later = settled.updated_at.plus_seconds(1);
        let claimed = db
            .claim_due("w", later, later.plus_seconds(30), 10)
            .await
            .expect("claim");
        let refund_call = claimed
            .iter()
            .find(|c| c.refund_id == Some(refund.id))
            .expect("the refund's callback");
        let delivered = callback_attempt(refund_call, later, 200);
        assert!(db
            .record_attempt("w", &delivered, &AttemptResult::Delivered)
            .await
            .expect("record"));

        let events = db.operation_events(id).await.expect("events");
        assert_eq!(
            details(&events),
            vec![
                EventDetail::Created { status: 3 },
                EventDetail::Status {
                    from: 3,
                    to: 1,
                    error_code: None,
                    action: None
                },
                EventDetail::Callback {
                    refund_id: None,
                    dispute_id: None,
                    attempt: 1,
                    http_status: Some(503),
                    latency_ms: 37,
                    error: Some("server error".into()),
                },
                EventDetail::Refund {
                    refund_id: refund.id.to_string(),
                    status: 3,
                    amount: 40_00
                },
                EventDetail::Refund {
                    refund_id: refund.id.to_string(),
                    status: 1,
                    amount: 40_00
                },
                EventDetail::Callback {
                    refund_id: Some(refund.id.to_string()),
                    dispute_id: None,
                    attempt: 1,
                    http_status: Some(200),
                    latency_ms: 37,
                    error: None,
                },
            ]
        );
        assert!(events.iter().all(|e| e.operation_id == id));
        assert!(events.windows(2).all(|w| w[0].id < w[1].id));
        let refund_ids: Vec<_> = events.iter().map(|e| e.refund_id).collect();
        let r = Some(refund.id);
        assert_eq!(refund_ids, vec![None, None, None, r, r, r]);
        let times: Vec<Timestamp> = events.iter().map(|e| e.at).collect();
        assert_eq!(
            times,
            vec![
                deposit.created_at(),
                deposit.updated_at(),
                at,
                refund.created_at,
                settled.updated_at,
                later
            ]
        );
        // A callback event written by an earlier version, when attempts were also written
        // as events, is not shown twice: the attempts' log holds every attempt.
        let legacy = serde_json::to_string(&EventDetail::Callback {
            refund_id: None,
            dispute_id: None,
            attempt: 1,
            http_status: Some(503),
            latency_ms: 37,
            error: Some("server error".into()),
        })
        .expect("json");
        t.exec(&format!(
            "INSERT INTO operation_events (operation_id, at, detail) VALUES ('{id}', {}, '{legacy}')",
            at.millis()
        ));
        assert_eq!(db.operation_events(id).await.expect("events"), events);

        // Another operation's events are its own.
        assert_eq!(
            db.operation_events(OperationId::from_uuid(uuid::Uuid::new_v4()))
                .await
                .expect("events"),
            vec![]
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attempts_steps_declines_and_discrepancies_are_on_the_timeline_once_each() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = merchant(db).await;
        let op = at_provider(operation(&shop, Direction::Deposit, 100_00), "bank-a");
        let start = op.created_at();
        let first = first_attempt(&op, start, start.plus_seconds(30));
        insert_with_attempt(db, &op, &first).await;

        // The first attempt is heard unavailable; the operation moves on to bank-b.
        let gave_up = Attempt {
            state: AttemptState::Unavailable,
            updated_at: start.plus_seconds(1),
            next_check_at: None,
            ..first.clone()
        };
        let second = Attempt::sent(
            op.id(),
            2,
            1,
            "bank-b",
            start.plus_seconds(1),
            start.plus_seconds(60),
        );
        assert!(db
            .add_attempts(&gave_up, std::slice::from_ref(&second))
            .await
            .expect("move on"));
        // Saves: a new state is an event; more reads or a stale state are not.
        let answered = Attempt {
            state: AttemptState::Ok,
            acquirer_id: Some("pay-2".into()),
            updated_at: start.plus_seconds(2),
            ..second.clone()
        };
        db.save_attempt(&answered).await.expect("save");
        db.save_attempt(&Attempt {
            reads: 3,
            ..answered.clone()
        })
        .await
        .expect("save");
        db.save_attempt(&second).await.expect("a stale copy");

        // Its step, then a decline from the attempt that answered.
        let waiting = OperationBuilder::deposit(PaymentMethod::Card)
            .id(op.id())
            .merchant(shop.id.as_str())
            .minor(100_00)
            .callback("https://shop.example/cb")
            .provider("bank-a")
            .created(start)
            .updated(start.plus_seconds(3))
            .action(Action::Redirect {
                url: "https://bank-b.example/pay".into(),
            })
            .build();
        db.advance(&waiting).await.expect("advance");
        let done = waiting
            .finish(&declined(), start.plus_seconds(4))
            .expect("processing");
        let completion = Completion {
            moves: vec![],
            operation: done.clone(),
            callback: None,
            from_attempt: Some(2),
        };
        db.finish(&completion).await.expect("finish");
        // The acquirer reports it paid, twice: one discrepancy.
        let report = Discrepancy {
            operation_id: op.id(),
            provider: "bank-b".into(),
            reported: "succeeded".into(),
            at: start.plus_seconds(5),
        };
        db.record_discrepancy(&report).await.expect("record");
        db.record_discrepancy(&report).await.expect("record again");

        let attempt = |number, provider: &str, state: &str| EventDetail::Attempt {
            number,
            provider: provider.into(),
            state: state.into(),
        };
        let events = db.operation_events(op.id()).await.expect("events");
        assert_eq!(
            details(&events),
            vec![
                EventDetail::Created { status: 3 },
                attempt(1, "bank-a", "sent"),
                attempt(1, "bank-a", "unavailable"),
                attempt(2, "bank-b", "sent"),
                attempt(2, "bank-b", "ok"),
                EventDetail::Status {
                    from: 3,
                    to: 3,
                    error_code: None,
                    action: Some("redirect".into())
                },
                EventDetail::Status {
                    from: 3,
                    to: 2,
                    error_code: Some("ProviderDeclined".into()),
                    action: None
                },
                EventDetail::Discrepancy {
                    provider: "bank-b".into(),
                    note: "reported succeeded".into()
                },
            ]
        );
        assert_eq!(events[4].at, start.plus_seconds(2));
        assert_eq!(events[7].at, start.plus_seconds(5));
        assert_eq!(t.rows("provider_discrepancies"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replaced_action_and_a_payouts_new_step_are_events() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = merchant(db).await;
        let confirm = |left| Action::Confirmation {
            channels: vec!["sms".into()],
            attempts_left: left,
        };
        let op = made(&shop, Direction::Deposit, PaymentMethod::Card, now())
            .minor(10_00)
            .action(confirm(3))
            .build();
        insert_plain(db, &op).await;
        let at = now().plus_seconds(5);
        db.replace_action(op.id(), &confirm(3), &confirm(2), at)
            .await
            .expect("replace");
        // A refused replacement writes nothing.
        assert!(db
            .replace_action(op.id(), &confirm(3), &confirm(1), at)
            .await
            .is_err());

        let payout = made(&shop, Direction::Withdrawal, PaymentMethod::Card, now())
            .minor(10_00)
            .build();
        insert_plain(db, &payout).await;
        let moved = made(
            &shop,
            Direction::Withdrawal,
            PaymentMethod::Card,
            payout.created_at(),
        )
        .id(payout.id())
        .minor(10_00)
        .provider_state("sent")
        .due(at)
        .updated(at)
        .build();
        db.advance(&moved).await.expect("advance");

        let step = |action: Option<&str>| EventDetail::Status {
            from: 3,
            to: 3,
            error_code: None,
            action: action.map(str::to_string),
        };
        let events = db.operation_events(op.id()).await.expect("events");
        assert_eq!(
            details(&events),
            vec![
                EventDetail::Created { status: 3 },
                step(Some("confirmation"))
            ]
        );
        assert_eq!(events[1].at, at);
        let events = db.operation_events(payout.id()).await.expect("events");
        assert_eq!(
            details(&events),
            vec![EventDetail::Created { status: 3 }, step(None)]
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn the_counters_match_the_operations_after_a_mixed_concurrent_workload() {
    each_backend(|t| async move {
        let db = t.db.clone();
        let shop = funded_merchant(&db, 1_000_000_00).await;
        let gw = gateway(&db);
        // Through the gateway, all at once (PostgreSQL's batches): deposits waiting for their
        // users and payouts with their holds; amounts ending in 05 are declined at creation.
        let deposits = all_at_once(24, |i| {
            let (gw, shop) = (gw.clone(), shop.clone());
            async move {
                let minor = 100_00 + i as i64 * 100 + if i % 4 == 0 { 5 } else { 0 };
                let moid = format!("d-{i}");
                gw.creation()
                    .create_deposit(&shop, deposit(minor, Some(&moid)), moid.as_bytes())
                    .await
                    .expect("created")
                    .operation
            }
        })
        .await;
        let payouts = all_at_once(16, |i| {
            let (gw, shop) = (gw.clone(), shop.clone());
            async move {
                let minor = 10_00 + i as i64 * 100 + if i % 5 == 0 { 5 } else { 0 };
                let moid = format!("w-{i}");
                gw.creation()
                    .create_withdrawal(&shop, withdrawal(minor, Some(&moid)), moid.as_bytes())
                    .await
                    .expect("created")
                    .operation
            }
        })
        .await;
        // Written directly, created in earlier minutes.
        let mut older = Vec::new();
        for (i, seconds) in [0, 30, 61, 62, 150].into_iter().enumerate() {
            let op = made(
                &shop,
                Direction::Deposit,
                PaymentMethod::Sbp,
                T0.plus_seconds(seconds),
            )
            .minor(1_00 + i as i64)
            .build();
            insert_plain(&db, &op).await;
            older.push(op);
        }
        assert!(deposits.iter().any(|op| op.status() == Status::Declined));
        assert!(payouts.iter().any(|op| op.status() == Status::Declined));

        // Every processing operation finished at once: approved or declined, and some raced
        // by both (one wins).
        let processing: Vec<Operation> = deposits
            .iter()
            .chain(&payouts)
            .chain(&older)
            .filter(|op| op.status() == Status::Processing)
            .cloned()
            .collect();
        let raced = 4;
        let finishes = all_at_once(processing.len() + raced, |i| {
            let db = db.clone();
            let op = processing[i % processing.len()].clone();
            let outcome = if i % 3 == 0 || i >= processing.len() {
                declined()
            } else {
                Outcome::Approve
            };
            async move {
                let done = op.finish(&outcome, now()).expect("processing");
                let completion = Completion {
                    moves: moves_on_finish(&done),
                    operation: done,
                    callback: None,
                    from_attempt: None,
                };
                db.finish(&completion).await.is_ok()
            }
        })
        .await;
        assert_eq!(
            finishes.iter().filter(|won| **won).count(),
            processing.len()
        );

        let ids: Vec<OperationId> = deposits
            .iter()
            .chain(&payouts)
            .chain(&older)
            .map(|op| op.id())
            .collect();
        let counted = all_counts(&db).await;
        assert_eq!(counted, figures_of_operations(&db, &ids).await);
        // Nothing is processing any more: those counters sum to nothing and are left out.
        assert!(!processing.is_empty());
        assert!(counted.keys().all(|k| k.3 != 3), "{counted:?}");
        // One creation event per operation, one status event per finish that won.
        assert_eq!(
            t.rows_where("operation_events", "detail LIKE '%\"kind\":\"created\"%'"),
            ids.len() as i64
        );
        assert_eq!(
            t.rows_where("operation_events", "detail LIKE '%\"kind\":\"status\"%'"),
            processing.len() as i64
        );
        t.assert_ledger_verifies().await;

        // A range reads only its minutes: [T0 + 60 s, T0 + 120 s) holds two of the older.
        let minute = T0.millis().div_euclid(60_000);
        let start = Timestamp::from_millis((minute + 1) * 60_000);
        let range = db
            .minute_counts(start, start.plus_seconds(60))
            .await
            .expect("counts");
        assert_eq!(
            range.iter().map(|c| c.minute).collect::<HashSet<_>>(),
            HashSet::from([minute + 1])
        );
        assert_eq!(range.iter().map(|c| c.count).sum::<i64>(), 2);
        assert_eq!(range.iter().map(|c| c.amount).sum::<i64>(), 1_02 + 1_03);

        // Each unit of work added to one slot, within the backend's range: on PostgreSQL its
        // connection's (0 to 63, numbered by the pool; `conn`'s unit test checks that 64 in a
        // row get 64 slots), on SQLite one of eight drawn at random.
        let range = if t.url.starts_with("sqlite://") {
            "slot NOT BETWEEN 0 AND 7"
        } else {
            "slot NOT BETWEEN 0 AND 63"
        };
        assert_eq!(t.rows_where("operation_counts", range), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn health_counts_open_callbacks_stuck_operations_discrepancies_and_the_last_check() {
    each_backend(|t| async move {
        let db = &t.db;
        let at = now();
        let day_ago = at.plus_seconds(-24 * 3600);
        assert_eq!(db.health(day_ago).await.expect("health"), Health::default());

        let shop = merchant(db).await;
        // Three callbacks: one failed, one delivered, one pending.
        let ids = queue_callbacks(db, &shop, 3, at).await;
        let claimed = db
            .claim_due("w", at, at.plus_seconds(30), 2)
            .await
            .expect("claim");
        assert_eq!(claimed.len(), 2);
        let results = [
            AttemptResult::Failed("gave up".into()),
            AttemptResult::Delivered,
        ];
        for (call, result) in claimed.iter().zip(results) {
            let tried = callback_attempt(call, at, 500);
            assert!(db
                .record_attempt("w", &tried, &result)
                .await
                .expect("record"));
        }
        // Processing: one since more than a day, one for less.
        let stuck = made(
            &shop,
            Direction::Deposit,
            PaymentMethod::Card,
            day_ago.plus_seconds(-1),
        )
        .build();
        let fresh = made(
            &shop,
            Direction::Deposit,
            PaymentMethod::Card,
            day_ago.plus_seconds(1),
        )
        .build();
        insert_plain(db, &stuck).await;
        insert_plain(db, &fresh).await;
        // Two discrepancies (one reported twice).
        for (op, reported) in [
            (ids[0], "succeeded"),
            (ids[0], "succeeded"),
            (ids[1], "failed"),
        ] {
            let report = Discrepancy {
                operation_id: op,
                provider: "bank-a".into(),
                reported: reported.into(),
                at,
            };
            db.record_discrepancy(&report).await.expect("record");
        }
        let check = |seconds, actor: Actor, mismatches| LedgerCheck {
            at: at.plus_seconds(seconds),
            actor,
            mismatches,
        };
        db.record_ledger_check(&check(10, Actor::cli("root"), 0))
            .await
            .expect("check");
        db.record_ledger_check(&check(20, Actor::operator("alice"), 2))
            .await
            .expect("check");
        // Recorded later, but of an earlier run.
        db.record_ledger_check(&check(15, Actor::cli("cron"), 0))
            .await
            .expect("check");

        assert_eq!(
            db.health(day_ago).await.expect("health"),
            Health {
                callbacks_pending: 1,
                callbacks_held: 0,
                callbacks_failed: 1,
                stuck_processing: 1,
                open_discrepancies: 2,
                last_check: Some(check(20, Actor::operator("alice"), 2)),
            }
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn open_callbacks_are_the_pending_and_failed_ones_newest_first() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = merchant(db).await;
        let at = Timestamp::from_millis(1_000_000);
        let older = queue_callbacks(db, &shop, 2, at).await;
        let newer = queue_callbacks(db, &shop, 2, at.plus_seconds(10)).await;
        // The oldest is delivered, one of the newer fails.
        let later = at.plus_seconds(20);
        let claimed = db
            .claim_due("w", later, later.plus_seconds(30), 10)
            .await
            .expect("claim");
        for call in &claimed {
            let result = if call.operation_id == older[0] {
                AttemptResult::Delivered
            } else if call.operation_id == newer[1] {
                AttemptResult::Failed("gave up".into())
            } else {
                continue;
            };
            let tried = callback_attempt(call, later, 500);
            assert!(db
                .record_attempt("w", &tried, &result)
                .await
                .expect("record"));
        }
        db.release("w").await.expect("release");

        let open = db.open_callbacks(10).await.expect("open");
        let mut newest_first = newer.clone();
        newest_first.sort_by(|x, y| y.cmp(x));
        newest_first.push(older[1]);
        assert_eq!(
            open.iter().map(|c| c.operation_id).collect::<Vec<_>>(),
            newest_first
        );
        let failed = open
            .iter()
            .find(|c| c.operation_id == newer[1])
            .expect("listed");
        assert_eq!(failed.state, CallbackState::Failed);
        assert!(open
            .iter()
            .filter(|c| c.operation_id != newer[1])
            .all(|c| c.state == CallbackState::Pending));
        assert_eq!(db.open_callbacks(1).await.expect("open").len(), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sending_a_callback_now_changes_only_when_it_is_due() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = merchant(db).await;
        let at = Timestamp::from_millis(2_000_000);
        let ids = queue_callbacks(db, &shop, 2, at).await;
        // The first failed once and waits for an hour; the second failed for good.
        let claimed = db
            .claim_due("w", at, at.plus_seconds(30), 2)
            .await
            .expect("claim");
        for call in &claimed {
            let result = if call.operation_id == ids[0] {
                AttemptResult::RetryAt(at.plus_seconds(3_600))
            } else {
                AttemptResult::Failed("gave up".into())
            };
            let tried = callback_attempt(call, at, 500);
            assert!(db
                .record_attempt("w", &tried, &result)
                .await
                .expect("record"));
        }
        let stored = |id: OperationId| async move {
            let all = db.list(None, 10).await.expect("list");
            all.into_iter()
                .find(|c| c.operation_id == id)
                .expect("listed")
        };
        let before = stored(ids[0]).await;
        let row = format!("id = '{}' AND updated_at = {}", ids[0], at.millis());
        assert_eq!(t.rows_where("callback_outbox", &row), 1);

        let soon = at.plus_seconds(5);
        assert!(db
            .send_callback_now(ids[0].as_uuid(), soon)
            .await
            .expect("send now"));
        let after = stored(ids[0]).await;
        assert_eq!(after.next_attempt_at, Some(soon));
        assert_eq!(
            after,
            domain::ports::CallbackStatus {
                next_attempt_at: Some(soon),
                ..before
            }
        );
        assert_eq!(t.rows_where("callback_outbox", &row), 1, "updated_at kept");
        assert_eq!(
            t.rows_where(
                "callback_outbox",
                &format!("id = '{}' AND failures_in_run = 1", ids[0])
            ),
            1
        );
        let due = db
            .claim_due("w", soon, soon.plus_seconds(30), 10)
            .await
            .expect("claim");
        assert_eq!(
            due.iter()
                .map(|c| (c.operation_id, c.attempt))
                .collect::<Vec<_>>(),
            vec![(ids[0], 2)]
        );

        // Not a failed one (that is a retry), nor an unknown id.
        assert!(!db
            .send_callback_now(ids[1].as_uuid(), soon)
            .await
            .expect("send now"));
        assert!(!db
            .send_callback_now(uuid::Uuid::new_v4(), soon)
            .await
            .expect("send now"));
        assert_eq!(stored(ids[1]).await.state, CallbackState::Failed);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refunds_pending_callback_is_sent_now_by_the_refunds_id() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 1_000_00).await;
        let deposit = approved_deposit(db, &shop, 100_00).await;
        let refund = refunded(db, &deposit, 10_00).await;
        finish_refund(db, &refund, &Outcome::Approve).await;
        let key = format!("id = '{}' AND refund_id = '{}'", refund.id, refund.id);
        t.exec(&format!(
            "UPDATE callback_outbox SET next_attempt_at = 9000000000000 WHERE {key}"
        ));
        let soon = now().plus_seconds(7);
        assert!(db
            .send_callback_now(refund.id.as_uuid(), soon)
            .await
            .expect("send now"));
        let due = format!("{key} AND next_attempt_at = {}", soon.millis());
        assert_eq!(t.rows_where("callback_outbox", &due), 1);
        // The deposit's own callback is another one, still pending as it was.
        let own = format!(
            "id = '{}' AND next_attempt_at = {}",
            deposit.id(),
            soon.millis()
        );
        assert_eq!(t.rows_where("callback_outbox", &own), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_manual_move_keeps_who_made_it_and_why() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = merchant(db).await;
        let note = ManualNote::new(Actor::operator("alice"), Some("  goodwill, ticket 42 ")).expect("note");
        db.apply_manual_move(&rub_move(shop.id.clone(), 50_00, true), &note)
            .await
            .expect("credit");
        let plain = ManualNote::new(Actor::cli("root"), None).expect("note");
        db.apply_manual_move(&rub_move(shop.id.clone(), 20_00, false), &plain)
            .await
            .expect("debit");
        assert!(matches!(
            db.apply_manual_move(&rub_move(shop.id.clone(), 31_00, false), &plain).await,
            Err(ManualMoveError::InsufficientBalance)
        ));
        approved_deposit(db, &shop, 10_00).await;

        let m = shop.id.as_str();
        let noted = |kind: &str, actor: &str, reason: &str| {
            t.rows_where(
                "ledger",
                &format!("merchant_id = '{m}' AND kind = '{kind}' AND actor = '{actor}' AND reason = '{reason}'"),
            )
        };
        assert_eq!(noted("manual_credit", "operator:alice", "goodwill, ticket 42"), 1);
        assert_eq!(noted("manual_debit", "cli:root", "manual"), 1);
        assert_eq!(t.rows_where("ledger", &format!("merchant_id = '{m}'")), 3);
        let unnoted = format!("merchant_id = '{m}' AND kind = 'deposit_approved' AND actor IS NULL AND reason IS NULL");
        assert_eq!(t.rows_where("ledger", &unnoted), 1);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_disabled_merchant_is_enabled_again() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = merchant(db).await;
        assert!(db.disable_merchant(&shop.id).await.expect("disable"));
        assert!(
            !db.find_merchant(&shop.id)
                .await
                .expect("read")
                .expect("kept")
                .enabled
        );
        assert_eq!(
            db.enable_merchant(&shop.id, now()).await.expect("enable"),
            Some(0),
            "nothing was held"
        );
        assert!(
            db.find_merchant(&shop.id)
                .await
                .expect("read")
                .expect("kept")
                .enabled
        );
        // The directory sees it at once.
        use domain::ports::MerchantDirectory;
        assert!(
            db.merchant(&shop.id)
                .await
                .expect("read")
                .expect("kept")
                .enabled
        );
        let nobody = MerchantId::parse("nobody").expect("id");
        assert_eq!(
            db.enable_merchant(&nobody, now()).await.expect("enable"),
            None
        );
    })
    .await;
}

fn gone(t: &TestDb) -> bool {
    [
        "SELECT name FROM console_accounts",
        "SELECT id FROM console_sessions",
        "SELECT id FROM signin_failures",
        "SELECT id FROM audit_log",
        "SELECT id FROM operation_events",
        "SELECT slot FROM operation_counts",
        "SELECT id FROM ledger_checks",
        "SELECT actor FROM ledger",
        "SELECT reason FROM ledger",
    ]
    .iter()
    .all(|sql| t.try_exec(sql).is_err())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_migration_reverts_and_its_counters_are_rebuilt_from_the_operations() {
    each_backend(|t| async move {
        // On a database with nothing in it.
        assert_reverts_through(&t.url, CONSOLE).await;
        assert!(gone(&t));
        assert_eq!(recorded_in(&t), Recorded::through(SECRETS));
        t.db.migrate().expect("upgrade");
        assert_eq!(recorded_in(&t), Recorded::all());

        // With operations, accounts, events and noted entries in it.
        let db = &t.db;
        let shop = funded_merchant(db, 100_00).await;
        let mut ids = Vec::new();
        for (i, seconds) in [0, 10, 70, 200].into_iter().enumerate() {
            let op = made(
                &shop,
                Direction::Deposit,
                PaymentMethod::Card,
                T0.plus_seconds(seconds),
            )
            .minor(5_00 + i as i64)
            .build();
            insert_plain(db, &op).await;
            if i % 2 == 0 {
                finish(db, &op, &Outcome::Approve).await;
            }
            ids.push(op.id());
        }
        ids.push(approved_deposit(db, &shop, 7_00).await.id());
        assert!(db
            .insert_account(&account("alice", Role::Admin, true))
            .await
            .expect("insert"));
        assert!(db
            .insert_session(&session("s", "alice", now()), &hash_of("alice"))
            .await
            .expect("session"));
        let expected = figures_of_operations(db, &ids).await;
        assert_eq!(all_counts(db).await, expected);

        assert_reverts_through(&t.url, CONSOLE).await;
        assert!(gone(&t));
        assert_eq!(t.rows("operations"), ids.len() as i64);
        t.assert_ledger_verifies().await;
        assert_migrates_again(&t);
        // The counters are rebuilt (in slot 0); the rest starts empty.
        assert_eq!(all_counts(db).await, expected);
        assert_eq!(t.rows_where("operation_counts", "slot <> 0"), 0);
        assert_eq!(t.rows("operation_events"), 0);
        assert_eq!(t.rows("console_accounts"), 0);
        assert_eq!(t.rows_where("ledger", "actor IS NOT NULL"), 0);
        t.assert_ledger_verifies().await;
    })
    .await;
}
