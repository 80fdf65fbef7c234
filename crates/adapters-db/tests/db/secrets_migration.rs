//! The secrets migration: each merchant's two secrets become version 1 of their directions
//! and every stored fingerprint is taken as keyed by version 1; its revert restores the old
//! columns, and refuses a database with a rotated or an encrypted secret.

use domain::merchant::{KeyRing, Secret};
use domain::ports::{MerchantDirectory, OperationStore, OperatorStore};
use domain::signature::{authenticate, sign, Binding, Fingerprint, SignedRequest};
use domain::Timestamp;
use domain::{Direction, MerchantId, MerchantOperationId, OperationId, RefundId};

use crate::helpers::{
    acquirer, by_merchant_refund_id, each_backend, merchant_with_random_secrets, now,
    random_key_text, random_secret, rotate_now,
};
use crate::migrations::{
    assert_revert_refused, assert_reverts_through, recorded_in, Recorded, CONSOLE, REFUNDS, SECRETS,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn existing_secrets_become_version_1_and_fingerprints_key_1() {
    each_backend(|t| async move {
        assert_reverts_through(&t.url, SECRETS).await;
        // Rows as the version before wrote them: a merchant with its two secrets, a deposit
        // and a refund of it, each with a fingerprint made with the deposit secret.
        let (deposit_secret, withdrawal_secret) = ("d".repeat(64), "w".repeat(64));
        let keyed = Secret::new(deposit_secret.clone());
        let (op_print, refund_print) = (sign(&keyed, b"deposit"), sign(&keyed, b"refund"));
        let op = OperationId::from_uuid(uuid::Uuid::new_v4());
        let refund = RefundId::from_uuid(uuid::Uuid::new_v4());
        t.exec(&format!(
            "INSERT INTO merchants (id, name, deposit_secret, withdrawal_secret, enabled, \
             created_at) VALUES ('shop', 'shop', '{deposit_secret}', '{withdrawal_secret}', 1, \
             1000); \
             INSERT INTO operations (id, merchant_id, direction, method, status, amount, \
             currency, user_id, merchant_operation_id, route_id, created_at, updated_at, \
             fingerprint) VALUES ('{op}', 'shop', 'deposit', 'card', 1, 100000, 'RUB', \
             'user-1', 'order-1', 1, 2000, 3000, '{op_print}'); \
             INSERT INTO refunds (id, operation_id, merchant_id, merchant_refund_id, \
             fingerprint, amount, currency, status, provider, check_at, created_at, \
             updated_at) VALUES ('{refund}', '{op}', 'shop', 'refund-1', '{refund_print}', \
             100, 'RUB', 3, 'sandbox', 5000, 4000, 4000)"
        ));

        t.db.migrate().expect("upgrade");
        assert_eq!(recorded_in(&t), Recorded::all());
        assert!(t.try_exec("SELECT deposit_secret FROM merchants").is_err());
        assert!(t
            .try_exec("SELECT withdrawal_secret FROM merchants")
            .is_err());

        let id = MerchantId::parse("shop").expect("id");
        let shop = t.db.merchant(&id).await.expect("lookup").expect("kept");
        let first =
            |secret: &str| KeyRing::single(Secret::new(secret), Timestamp::from_millis(1000));
        assert_eq!(shop.deposit_keys, first(&deposit_secret));
        assert_eq!(shop.withdrawal_keys, first(&withdrawal_secret));
        assert!(!shop.require_timestamp);
        assert_eq!(
            t.db.find_merchant(&id).await.expect("read"),
            Some(shop.clone())
        );

        // Its secrets still authenticate its requests.
        let body = br#"{"amount":"1.00"}"#;
        let request = SignedRequest {
            signature: &sign(&keyed, body),
            timestamp: None,
            version: None,
            method: "POST",
            target: "/api/v1/deposits",
            body,
            binding: Binding::Any,
        };
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &request, now()),
            Ok(())
        );

        // Its fingerprints were keyed by version 1, and still match their requests.
        let moid = MerchantOperationId::parse("order-1").expect("moid");
        let (_, print) =
            t.db.find_by_merchant_operation_id(&id, Direction::Deposit, &moid)
                .await
                .expect("read")
                .expect("kept");
        let print = print.expect("a fingerprint");
        assert_eq!(print, Fingerprint::from_stored(op_print, 1));
        assert!(print.matches(&shop.deposit_keys, b"deposit"));
        let (kept, print) = by_merchant_refund_id(&t.db, &id, "refund-1").await;
        assert_eq!(kept.id, refund);
        assert_eq!(print, Some(Fingerprint::from_stored(refund_print, 1)));

        // A rotation then takes version 2.
        let rotated = rotate_now(&t.db, &shop, Direction::Deposit).await;
        let after = t.db.merchant(&id).await.expect("lookup").expect("kept");
        assert_eq!(after.deposit_keys.newest().secret, rotated);
        assert_eq!(after.deposit_keys.newest().version, 2);
        assert_eq!(
            after.deposit_keys.version(1).map(|k| k.created_at),
            Some(Timestamp::from_millis(1000))
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_secrets_migration_reverts_unless_a_secret_was_rotated_or_encrypted() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        let op_columns = "SELECT fingerprint_key FROM operations";

        // One clear secret per direction: the old columns come back with them.
        assert_reverts_through(&t.url, SECRETS).await;
        assert_eq!(recorded_in(&t), Recorded::through(REFUNDS));
        let restored = format!(
            "id = '{}' AND deposit_secret = '{}' AND withdrawal_secret = '{}'",
            shop.id,
            shop.deposit_keys.newest().secret.expose(),
            shop.withdrawal_keys.newest().secret.expose()
        );
        assert_eq!(t.rows_where("merchants", &restored), 1);
        assert!(t.try_exec("SELECT version FROM merchant_keys").is_err());
        assert!(t.try_exec("SELECT name FROM gateway_settings").is_err());
        assert!(t
            .try_exec("SELECT require_timestamp FROM merchants")
            .is_err());
        assert!(t.try_exec(op_columns).is_err());
        t.db.migrate().expect("upgrade again");
        assert_eq!(
            t.db.find_merchant(&shop.id).await.expect("read"),
            Some(shop.clone())
        );

        // An encrypted secret is refused, changing nothing (the console's migration, newer,
        // reverts first).
        let keyed = t.with_key(&random_key_text());
        keyed
            .insert_provider(&acquirer("bank-a", "a"), now())
            .await
            .expect("insert");
        assert_reverts_through(&t.url, CONSOLE).await;
        assert_revert_refused(&t, SECRETS, "no_encrypted_secrets", "secrets are encrypted").await;
        assert!(t.try_exec(op_columns).is_ok());
        t.exec("DELETE FROM providers");

        // So is a rotated one.
        rotate_now(&t.db, &shop, Direction::Withdrawal).await;
        let rule = "one_secret_per_direction";
        assert_revert_refused(&t, SECRETS, rule, "more than one secret").await;
        // Read in SQL: this schema is older than the merchant rows the code reads now.
        let kept = t.count(&format!(
            "SELECT COUNT(*) AS n FROM merchant_keys \
             WHERE merchant_id = '{}' AND direction = 'withdrawal'",
            shop.id
        ));
        assert_eq!(kept, 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upgraded_database_is_encrypted_without_a_clear_copy_of_the_old_columns() {
    each_backend(|t| async move {
        assert_reverts_through(&t.url, SECRETS).await;
        let (deposit, withdrawal) = (random_secret(), random_secret());
        let secrets = [
            deposit.expose().to_string(),
            withdrawal.expose().to_string(),
        ];
        t.exec(&format!(
            "INSERT INTO merchants (id, name, deposit_secret, withdrawal_secret, enabled, \
             created_at) VALUES ('shop', 'shop', '{}', '{}', 1, 1000)",
            secrets[0], secrets[1]
        ));
        t.db.migrate().expect("upgrade");
        assert_eq!(t.clear_copies(&secrets).len(), 2, "clear until encrypted");

        let keyed = t.with_key(&random_key_text());
        assert_eq!(keyed.encrypt_secrets().expect("encrypt"), 2);
        assert_eq!(t.clear_copies(&secrets), Vec::<String>::new());
        let id = MerchantId::parse("shop").expect("id");
        let shop = keyed.merchant(&id).await.expect("lookup").expect("kept");
        assert_eq!(shop.deposit_keys.newest().secret, deposit);
        assert_eq!(shop.withdrawal_keys.newest().secret, withdrawal);
    })
    .await;
}
