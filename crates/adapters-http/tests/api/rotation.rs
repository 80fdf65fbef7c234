//! Secret rotation and signed timestamps: several live secrets per direction, the overlap, a
//! replay across a rotation, and `x-timestamp` at the edges of its window. Time moves on a test
//! clock shared by the gateway and the operator, never by sleeping.

use std::sync::Arc;

use domain::merchant::Secret;
use domain::ports::Clock;
use domain::testkit::TestClock;
use domain::{Direction, Timestamp};
use reqwest::Method;

use crate::helpers::{
    card_deposit, deposit_body, each_backend, signed_headers, Answer, Setup, Shop, TestApp,
};

/// A test clock at a whole second of the wall clock's now.
fn clock() -> Arc<TestClock> {
    let now = domain::testkit::WallClock.now().millis();
    Arc::new(TestClock::at(Timestamp::from_millis(now - now % 1000)))
}

fn on_a_test_clock() -> Setup {
    Setup {
        clock: Some(clock()),
        ..Setup::default()
    }
}

/// Moves the app's test clock `seconds` forward (both backends' apps share it; each test
/// works from wherever it stands).
fn advance(setup: &Setup, seconds: i64) {
    setup.clock.as_ref().expect("a test clock").advance(seconds);
}

fn unix_now(app: &TestApp) -> i64 {
    app.clock.now().millis() / 1000
}

/// Rotates `shop`'s `direction` with an overlap of `overlap_secs` and returns the new secret.
async fn rotate(app: &TestApp, shop: &Shop, direction: Direction, overlap_secs: i64) -> Secret {
    let rotated = app
        .operator()
        .rotate_secret(
            &shop.merchant.id,
            direction,
            Secret::new(format!("{}", uuid::Uuid::new_v4().simple()).repeat(2)),
            overlap_secs,
        )
        .await
        .expect("rotated")
        .expect("a known merchant");
    rotated.keys.newest().secret.clone()
}

async fn deposit_with(app: &TestApp, secret: &Secret) -> Answer {
    let body = deposit_body("card", "10.00").to_string();
    app.post_signed(&app.shop, "/api/v1/deposits", &body, secret)
        .await
}

async fn balance_with(app: &TestApp, secret: &Secret) -> Answer {
    let path = "/api/v1/balance";
    let signature = domain::signature::sign(secret, path.as_bytes());
    let headers = [
        ("merchant-id", app.shop.id()),
        ("x-signature", signature.as_str()),
    ];
    app.raw(Method::GET, path, &headers, Vec::new()).await
}

#[tokio::test]
async fn both_secrets_work_during_the_overlap_and_the_old_one_is_refused_after_it() {
    let setup = on_a_test_clock();
    let clock = setup.clone();
    each_backend(setup, |app| {
        let clock = clock.clone();
        async move {
            let old = app.shop.deposit_secret().clone();
            let new = rotate(&app, &app.shop, Direction::Deposit, 3600).await;
            assert_eq!(deposit_with(&app, &old).await.status, 200);
            assert_eq!(deposit_with(&app, &new).await.status, 200);
            advance(&clock, 3599);
            assert_eq!(
                deposit_with(&app, &old).await.status,
                200,
                "one second left"
            );
            advance(&clock, 1);
            deposit_with(&app, &old)
                .await
                .assert_error(401, "Unauthorized");
            assert_eq!(deposit_with(&app, &new).await.status, 200);
            // The other direction's secret is untouched.
            let withdrawal = app.shop.withdrawal_secret().clone();
            assert_eq!(balance_with(&app, &withdrawal).await.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn a_zero_overlap_revokes_the_old_secret_at_once_and_a_rotation_never_extends_one() {
    each_backend(on_a_test_clock(), |app| async move {
        let old = app.shop.withdrawal_secret().clone();
        let new = rotate(&app, &app.shop, Direction::Withdrawal, 0).await;
        balance_with(&app, &old)
            .await
            .assert_error(401, "Unauthorized");
        assert_eq!(balance_with(&app, &new).await.status, 200);

        // A rotation with a long overlap right after one with a short overlap does not bring
        // the short one's secret back or make it last longer.
        let first = app.shop.deposit_secret().clone();
        let second = rotate(&app, &app.shop, Direction::Deposit, 60).await;
        let third = rotate(&app, &app.shop, Direction::Deposit, 7200).await;
        for secret in [&first, &second, &third] {
            assert_eq!(deposit_with(&app, secret).await.status, 200);
        }
        let keys = app
            .gateway
            .merchants()
            .merchant(&app.shop.merchant.id)
            .await
            .expect("read")
            .expect("known")
            .deposit_keys;
        let now = app.clock.now();
        assert_eq!(keys.live(now).count(), 3);
        assert_eq!(
            keys.old_secret_expires_at(now),
            Some(now.plus_seconds(7200))
        );
        assert_eq!(
            keys.version(1).and_then(|k| k.expires_at),
            Some(now.plus_seconds(60)),
            "the first secret keeps its earlier end"
        );
    })
    .await;
}

#[tokio::test]
async fn a_replay_of_a_request_made_before_a_rotation_still_answers_as_before() {
    each_backend(on_a_test_clock(), |app| async move {
        let old = app.shop.deposit_secret().clone();
        let mut body = card_deposit("25.00", "before-rotation");
        let text = body.to_string();
        let created = app
            .post_signed(&app.shop, "/api/v1/deposits", &text, &old)
            .await;
        created.assert_ok();
        let id = created.data()["operationId"].clone();

        let new = rotate(&app, &app.shop, Direction::Deposit, 0).await;
        let replay = app
            .post_signed(&app.shop, "/api/v1/deposits", &text, &new)
            .await;
        replay.assert_ok();
        assert_eq!(replay.data()["operationId"], id, "the original operation");

        // Same id, another request: a duplicate, checked with the revoked secret too.
        body["amount"] = "26.00".into();
        app.post_signed(&app.shop, "/api/v1/deposits", &body.to_string(), &new)
            .await
            .assert_error(409, "DuplicateOperation");
        // The revoked secret itself authenticates nothing, replays included.
        app.post_signed(&app.shop, "/api/v1/deposits", &text, &old)
            .await
            .assert_error(401, "Unauthorized");
    })
    .await;
}

#[tokio::test]
async fn a_timestamp_within_300_seconds_is_accepted_and_beyond_it_refused() {
    each_backend(on_a_test_clock(), |app| async move {
        let secret = app.shop.deposit_secret().clone();
        let now = unix_now(&app);
        for (offset, status) in [(-300, 200), (0, 200), (300, 200), (-301, 401), (301, 401)] {
            let body = deposit_body("card", "10.00").to_string();
            let stamp = (now + offset).to_string();
            let answer = app
                .post_stamped(&app.shop, "/api/v1/deposits", &body, &secret, &stamp)
                .await;
            assert_eq!(answer.status, status, "offset {offset}: {}", answer.text);
            let get = app.get_stamped(&app.shop, "/api/v1/balance", &stamp).await;
            assert_eq!(get.status, status, "GET at offset {offset}: {}", get.text);
        }
        // The bare body's signature does not fit once a timestamp is sent.
        let body = deposit_body("card", "10.00").to_string();
        let bare = domain::signature::sign(&secret, body.as_bytes());
        let stamp = now.to_string();
        let mut headers = signed_headers(&app.shop, &bare, "application/json").to_vec();
        headers.push(("x-timestamp", stamp.as_str()));
        app.raw(Method::POST, "/api/v1/deposits", &headers, body)
            .await
            .assert_error(401, "Unauthorized");
    })
    .await;
}

#[tokio::test]
async fn a_malformed_timestamp_is_the_same_401_as_any_other() {
    each_backend(on_a_test_clock(), |app| async move {
        let secret = app.shop.deposit_secret().clone();
        let body = deposit_body("card", "10.00").to_string();
        let wrong = app
            .post_signed(&app.shop, "/api/v1/deposits", &body, &Secret::new("nope"))
            .await;
        wrong.assert_error(401, "Unauthorized");
        let now = unix_now(&app);
        for stamp in [
            String::new(),
            "-1".into(),
            format!("+{now}"),
            format!("{now}.0"),
            format!(" {now}"),
            "1e9".into(),
            "9999999999999999".into(),
        ] {
            let answer = app
                .post_stamped(&app.shop, "/api/v1/deposits", &body, &secret, &stamp)
                .await;
            answer.assert_error(401, "Unauthorized");
            assert_eq!(answer.body, wrong.body, "{stamp:?}: the same message");
        }
    })
    .await;
}

#[tokio::test]
async fn a_merchant_that_requires_timestamps_is_refused_without_one() {
    each_backend(on_a_test_clock(), |app| async move {
        let strict = app.new_shop("strict", true).await;
        let secret = strict.deposit_secret().clone();
        let body = deposit_body("card", "10.00").to_string();
        app.post_signed(&strict, "/api/v1/deposits", &body, &secret)
            .await
            .assert_error(401, "Unauthorized");
        app.get_as(&strict, "/api/v1/balance")
            .await
            .assert_error(401, "Unauthorized");
        let stamp = unix_now(&app).to_string();
        let answer = app
            .post_stamped(&strict, "/api/v1/deposits", &body, &secret, &stamp)
            .await;
        answer.assert_ok();
        assert_eq!(
            app.get_stamped(&strict, "/api/v1/balance", &stamp)
                .await
                .status,
            200
        );
        // Other merchants may still leave it out.
        assert_eq!(app.get("/api/v1/balance").await.status, 200);
    })
    .await;
}

#[tokio::test]
async fn the_timestamp_is_not_part_of_the_replay_comparison() {
    each_backend(on_a_test_clock(), |app| async move {
        let secret = app.shop.deposit_secret().clone();
        let text = card_deposit("10.00", "stamped").to_string();
        let now = unix_now(&app);
        let first = app
            .post_stamped(
                &app.shop,
                "/api/v1/deposits",
                &text,
                &secret,
                &now.to_string(),
            )
            .await;
        first.assert_ok();
        let later = (now + 5).to_string();
        let again = app
            .post_stamped(&app.shop, "/api/v1/deposits", &text, &secret, &later)
            .await;
        again.assert_ok();
        assert_eq!(again.data()["operationId"], first.data()["operationId"]);
        let unstamped = app.post("/api/v1/deposits", &text).await;
        assert_eq!(unstamped.data()["operationId"], first.data()["operationId"]);
    })
    .await;
}
