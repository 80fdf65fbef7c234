//! The operation store on its own: round trips, duplicates, guards and sweeps.

use domain::ledger::{hold_for, moves_on_finish};
use domain::operation::OperationUrls;
use domain::operation::{Action, Decline, DeclineCode, InputField, Outcome, SelectOption};
use domain::ports::{
    Completion, FinishError, InsertError, ManualMoveError, NewOperation, OperationStore,
    OperatorStore,
};
use domain::service::callbacks::callback_for;
use domain::signature::Fingerprint;
use domain::testkit::DebugCallbackFormat;
use domain::{Direction, HttpUrl, KeptObject, PaymentMethod, Status, UserData};
use serde_json::json;

use crate::helpers::{
    assert_nobody_is_refused, balance, credit, deposit_expiring, each_backend, funded_merchant,
    merchant, now, operation, operation_builder, payout_due, rub_move,
};

/// `op` under its own id with no merchantOperationId.
fn first_without_moid(op: &domain::operation::Operation) -> domain::operation::Operation {
    domain::operation::Operation::restore(
        domain::operation::Opening {
            merchant_operation_id: None,
            ..op.opening().clone()
        },
        op.part().clone(),
        op.state().clone(),
        op.updated_at(),
    )
    .expect("the same kind")
}

/// A required select of one bank.
fn bank_field() -> InputField {
    let (name, label, kind) = ("bank".to_string(), "Bank".to_string(), "select".to_string());
    let bank_a = SelectOption {
        value: "a".into(),
        label: "A".into(),
    };
    InputField {
        name,
        label,
        kind,
        required: true,
        options: Some(vec![bank_a]),
    }
}

fn url(text: &str) -> Option<HttpUrl> {
    Some(HttpUrl::parse(text).expect("url"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_operation_round_trips_with_every_field() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let built = operation_builder(&shop, Direction::Deposit, 123_45).build();
        let requisites: KeptObject = serde_json::from_value(
            json!({"qr": "data:image/png;base64,AAAA", "card": {"pan": "424242******4242", "n": [1, 2.5, null, true]}}),
        )
        .expect("requisites");
        let entries = [
            ("email", "a@b.example"),
            ("ipAddress", "2001:db8::1"),
            ("country", "RU"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let urls = OperationUrls {
            success: url("https://shop.example/ok?x=1"),
            fail: url("https://shop.example/fail"),
            processing: url("http://shop.example/wait"),
            ..built.urls().clone()
        };
        let op = operation_builder(&shop, Direction::Deposit, 123_45)
            .id(built.id())
            .route(3)
            .user("пользователь-1")
            .merchant_operation_id("order-1!~")
            .urls(urls)
            .requisites(requisites)
            .user_data(UserData::parse(&entries.into_iter().collect()).expect("user data"))
            .action(Action::InputFields {
                fields: vec![bank_field()],
            })
            .expires(now().plus_seconds(600))
            .build();
        assert_eq!(op.method(), PaymentMethod::Card);
        let fingerprint = Fingerprint::of(shop.deposit_keys.newest(), b"{\"amount\":\"123.45\"}");
        let new = NewOperation {
            operation: op.clone(),
            fingerprint: Some(fingerprint.clone()),
            moves: Vec::new(),
            callback: None,
            attempts: Vec::new(),
        };
        t.db.insert(&new).await.expect("insert");
        assert_eq!(t.db.get(op.id()).await.expect("get"), Some(op.clone()));
        let moid = op.merchant_operation_id().cloned().expect("moid");
        let found =
            t.db.find_by_merchant_operation_id(&shop.id, Direction::Deposit, &moid)
                .await;
        assert_eq!(found.expect("find"), Some((op.clone(), Some(fingerprint))));
        let other_direction =
            t.db.find_by_merchant_operation_id(&shop.id, Direction::Withdrawal, &moid);
        assert_eq!(other_direction.await.expect("find"), None);
        let unknown = domain::OperationId::from_uuid(uuid::Uuid::new_v4());
        assert_eq!(t.db.get(unknown).await.expect("get"), None);
    })
    .await;
}

/// A payout declined at creation: hold, release and callback in one insert.
fn declined_payout(shop: &domain::merchant::Merchant, moid: &str) -> NewOperation {
    let op = operation_builder(shop, Direction::Withdrawal, 10_05)
        .merchant_operation_id(moid)
        .build();
    let hold = hold_for(&op);
    let done = op
        .finish(
            &Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            op.created_at(),
        )
        .expect("processing");
    let mut moves = vec![hold];
    moves.extend(moves_on_finish(&done));
    NewOperation {
        callback: callback_for(&done, &DebugCallbackFormat),
        operation: done,
        fingerprint: Some(Fingerprint::of(
            shop.withdrawal_keys.newest(),
            moid.as_bytes(),
        )),
        moves,
        attempts: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_duplicate_insert_is_refused_and_writes_nothing() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 100_00).await;
        let first = declined_payout(&shop, "dup-1");
        t.db.insert(&first).await.expect("first insert");
        assert_eq!(balance(&t.db, &shop).await, (100_00, 0));
        let ledger_rows = t.rows("ledger");
        assert_eq!(ledger_rows, 3);

        // Same merchantOperationId, another operation id, a hold that would fit.
        let mut second = declined_payout(&shop, "dup-1");
        second.moves.truncate(1);
        let result = t.db.insert(&second).await;
        assert!(matches!(result, Err(InsertError::Duplicate)), "{result:?}");
        // Same operation id again (no merchantOperationId involved).
        let mut again = first.clone();
        again.operation = first_without_moid(&first.operation);
        again.fingerprint = None;
        assert!(matches!(
            t.db.insert(&again).await,
            Err(InsertError::Duplicate)
        ));

        assert_eq!(t.rows("operations"), 1);
        assert_eq!(t.rows("ledger"), ledger_rows);
        assert_eq!(t.rows("callback_outbox"), 1);
        assert_eq!(balance(&t.db, &shop).await, (100_00, 0));
        assert!(t
            .db
            .get(second.operation.id())
            .await
            .expect("get")
            .is_none());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_uncovered_hold_writes_nothing() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let op = operation(&shop, Direction::Withdrawal, 1_00);
        let new = NewOperation {
            moves: vec![hold_for(&op)],
            operation: op.clone(),
            fingerprint: None,
            callback: None,
            attempts: Vec::new(),
        };
        // No balance row at all, then one that is too small.
        assert!(matches!(
            t.db.insert(&new).await,
            Err(InsertError::InsufficientBalance)
        ));
        credit(&t.db, &shop, 99).await;
        assert!(matches!(
            t.db.insert(&new).await,
            Err(InsertError::InsufficientBalance)
        ));
        assert!(t.db.get(op.id()).await.expect("get").is_none());
        assert_eq!(balance(&t.db, &shop).await, (99, 0));
        credit(&t.db, &shop, 1).await;
        t.db.insert(&new).await.expect("now covered");
        assert_eq!(balance(&t.db, &shop).await, (0, 1_00));
        let debit = rub_move(shop.id.clone(), 1, false);
        assert!(matches!(
            t.db.apply_manual_move(&debit, &domain::testkit::note())
                .await,
            Err(ManualMoveError::InsufficientBalance)
        ));
        assert_nobody_is_refused(&t.db).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_final_status_is_written_once_with_its_moves_and_callback() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let op = operation(&shop, Direction::Deposit, 50_00);
        crate::helpers::insert_plain(&t.db, &op).await;
        let done = op.finish(&Outcome::Approve, now()).expect("processing");
        let completion = Completion {
            moves: moves_on_finish(&done),
            callback: callback_for(&done, &DebugCallbackFormat),
            operation: done.clone(),
            from_attempt: None,
        };
        t.db.finish(&completion).await.expect("finish");
        assert_eq!(t.db.get(op.id()).await.expect("get"), Some(done.clone()));
        assert_eq!(balance(&t.db, &shop).await, (50_00, 0));

        let declined = op
            .finish(&Outcome::Decline(Decline::new(DeclineCode::Expired)), now())
            .expect("processing in memory");
        let late = Completion {
            moves: moves_on_finish(&declined),
            callback: callback_for(&declined, &DebugCallbackFormat),
            operation: declined,
            from_attempt: None,
        };
        assert!(matches!(
            t.db.finish(&late).await,
            Err(FinishError::NotProcessing)
        ));
        assert!(matches!(
            t.db.finish(&completion).await,
            Err(FinishError::NotProcessing)
        ));
        assert_eq!(
            t.db.get(op.id()).await.expect("get").map(|o| o.status()),
            Some(Status::Approved)
        );
        assert_eq!(t.rows_where("ledger", "kind = 'deposit_approved'"), 1);
        assert_eq!(t.rows("callback_outbox"), 1);
        assert_eq!(balance(&t.db, &shop).await, (50_00, 0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_action_is_replaced_only_while_it_is_the_expected_one() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let ask = |left| Action::Confirmation {
            channels: vec!["sms".into()],
            attempts_left: left,
        };
        let op = operation_builder(&shop, Direction::Deposit, 10_00)
            .action(ask(3))
            .build();
        crate::helpers::insert_plain(&t.db, &op).await;
        let at = now();
        t.db.replace_action(op.id(), &ask(3), &ask(2), at)
            .await
            .expect("replace");
        let stored = t.db.get(op.id()).await.expect("get").expect("found");
        assert_eq!((stored.action(), stored.updated_at()), (Some(&ask(2)), at));
        let stale = t.db.replace_action(op.id(), &ask(3), &ask(2), at).await;
        assert!(matches!(stale, Err(FinishError::NotProcessing)));
        let done = op.finish(&Outcome::Approve, now()).expect("processing");
        let completion = Completion {
            moves: moves_on_finish(&done),
            callback: None,
            operation: done,
            from_attempt: None,
        };
        t.db.finish(&completion).await.expect("finish");
        let final_op = t.db.replace_action(op.id(), &ask(2), &ask(1), at).await;
        assert!(matches!(final_op, Err(FinishError::NotProcessing)));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_providers_answer_advances_only_a_processing_operation() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let payout = operation(&shop, Direction::Withdrawal, 10_00);
        let deposit = operation(&shop, Direction::Deposit, 10_00);
        crate::helpers::insert_plain(&t.db, &payout).await;
        crate::helpers::insert_plain(&t.db, &deposit).await;

        let state = domain::operation::ProviderState::new(r#"{"acquirerId":"a-1"}"#);
        let accepted = payout
            .accepted(Some(state), now().plus_seconds(30))
            .expect("processing");
        t.db.advance(&accepted).await.expect("advance");
        let action = Action::Redirect {
            url: "https://acquirer.example/pay/1".into(),
        };
        let waiting = deposit
            .wait_for(action, now().plus_seconds(1))
            .expect("processing");
        t.db.advance(&waiting).await.expect("advance");
        assert_eq!(
            t.db.get(payout.id()).await.expect("get"),
            Some(accepted.clone())
        );
        assert_eq!(
            t.db.get(deposit.id()).await.expect("get"),
            Some(waiting.clone())
        );

        let done = waiting
            .finish(&Outcome::Approve, now())
            .expect("processing");
        let completion = Completion {
            moves: moves_on_finish(&done),
            callback: None,
            operation: done,
            from_attempt: None,
        };
        t.db.finish(&completion).await.expect("finish");
        let late = t.db.advance(&waiting).await;
        assert!(matches!(late, Err(FinishError::NotProcessing)), "{late:?}");
        assert_eq!(
            t.db.get(deposit.id())
                .await
                .expect("get")
                .map(|o| o.status()),
            Some(Status::Approved)
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sweeps_find_expired_deposits_and_due_payouts() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 100_00).await;
        let at = now();
        let expired = deposit_expiring(&shop, at.plus_seconds(-1));
        let waiting = deposit_expiring(&shop, at.plus_seconds(600));
        let due = operation_builder(&shop, Direction::Withdrawal, 1_00)
            .due(at.plus_seconds(-2))
            .provider_state(r#"{"plan":["approve",1,null]}"#)
            .build();
        let later = payout_due(&shop, at.plus_seconds(60));
        for op in [&expired, &waiting, &due, &later] {
            crate::helpers::insert_plain(&t.db, op).await;
        }
        assert_eq!(
            t.db.expired_deposits(at, 10).await.expect("sweep"),
            vec![expired.id()]
        );
        assert_eq!(t.db.expired_deposits(at, 0).await.expect("sweep"), vec![]);
        let payouts = t.db.due_payouts(at, 10).await.expect("due");
        assert_eq!(
            payouts.iter().map(|p| p.id()).collect::<Vec<_>>(),
            vec![due.id()]
        );
        assert_eq!(payouts[0], due);

        t.db.postpone(due.id(), at.plus_seconds(30))
            .await
            .expect("postpone");
        assert!(t.db.due_payouts(at, 10).await.expect("due").is_empty());
        let all =
            t.db.due_payouts(at.plus_seconds(90), 10)
                .await
                .expect("due");
        assert_eq!(all.len(), 2);

        let done = expired
            .finish(&Outcome::Decline(Decline::new(DeclineCode::Expired)), at)
            .expect("processing");
        let completion = Completion {
            moves: vec![],
            callback: None,
            operation: done,
            from_attempt: None,
        };
        t.db.finish(&completion).await.expect("finish");
        assert!(t
            .db
            .expired_deposits(at, 10)
            .await
            .expect("sweep")
            .is_empty());
    })
    .await;
}

/// Rows written by earlier versions, whose rules were looser than today's (a TAB in a user
/// id or a user data value, a URL with a space or a Cyrillic host), stay readable: the rules
/// of the day apply to requests, never to what is already kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rows_kept_under_older_rules_stay_readable() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let op = operation(&shop, Direction::Deposit, 10_00);
        crate::helpers::insert_plain(&t.db, &op).await;
        let tab = match t.backend() {
            adapters_db::Backend::Sqlite => "char(9)",
            adapters_db::Backend::Postgres => "chr(9)",
        };
        t.exec(&format!(
            "UPDATE operations SET user_id = 'user' || {tab} || '1', \
             callback_url = 'http://магазин.example/a b', \
             user_data = '{{\"note\":\"line\\ttwo\"}}' WHERE id = '{}'",
            op.id()
        ));

        let read = t.db_get(op.id()).await;

        assert_eq!(read.user_id().as_str(), "user\t1");
        assert_eq!(
            read.urls().callback.as_ref().map(HttpUrl::as_str),
            Some("http://магазин.example/a b")
        );
        assert_eq!(
            read.user_data().extra.get("note").map(String::as_str),
            Some("line\ttwo")
        );
    })
    .await;
}

/// A decline code written by a later version is read back as it is, never as an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_decline_code_from_a_later_version_reads_as_it_is() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let op = operation(&shop, Direction::Deposit, 10_00);
        crate::helpers::insert_plain(&t.db, &op).await;
        t.exec(&format!(
            "UPDATE operations SET status = 2, error_code = 'FraudSuspected', \
             error_message = 'Declined by the fraud check' WHERE id = '{}'",
            op.id()
        ));

        let read = t.db_get(op.id()).await;

        let decline = read.decline().expect("declined");
        assert_eq!(decline.code.as_str(), "FraudSuspected");
        assert_eq!(decline.message, "Declined by the fraud check");
    })
    .await;
}
