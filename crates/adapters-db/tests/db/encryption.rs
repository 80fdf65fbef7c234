//! Secrets at rest: the master key, what a keyed database writes, the check at start and the
//! conversion of a database written without a key.

use adapters_db::{DbOptions, MasterKey, SecretsState};
use domain::ports::{MerchantDirectory, OperatorStore, ProviderDirectory};
use domain::provider::{AcquirerProvider, Credentials};
use domain::Direction;

use crate::helpers::{
    acquirer, each_backend, merchant_with_random_secrets, now, random_key_text, rotate_now,
};

fn state(encrypted: u64, clear: u64) -> SecretsState {
    SecretsState { encrypted, clear }
}

/// The text of every secret of `merchants`' rings and of `providers`' credentials.
fn secret_texts(
    merchants: &[domain::merchant::Merchant],
    providers: &[AcquirerProvider],
) -> Vec<String> {
    let mut all: Vec<String> = merchants
        .iter()
        .flat_map(|m| m.deposit_keys.keys().iter().chain(m.withdrawal_keys.keys()))
        .map(|key| key.secret.expose().to_string())
        .collect();
    for provider in providers {
        all.push(provider.credentials.api_key.expose().to_string());
        all.push(provider.credentials.webhook_secret.expose().to_string());
    }
    all
}

/// An acquirer with random credentials.
fn random_acquirer(name: &str) -> AcquirerProvider {
    acquirer(name, &uuid::Uuid::new_v4().simple().to_string())
}

#[test]
fn a_master_key_is_64_hex_characters_and_a_refusal_never_repeats_it() {
    let key = random_key_text();
    assert!(MasterKey::parse(&key).is_ok());
    assert!(MasterKey::parse(&key.to_uppercase()).is_ok());
    let mixed: String = key
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    assert!(MasterKey::parse(&mixed).is_ok());

    let refused = [
        key[..63].to_string(),
        format!("{key}0"),
        format!("{}g", &key[..63]),
        format!("{}-", &key[..63]),
        format!("{} ", &key[..63]),
        format!("{key}\n"),
        format!("{}é", &key[..63]),
        String::new(),
    ];
    for bad in refused {
        let error = MasterKey::parse(&bad).expect_err("refused");
        let message = error.to_string();
        assert!(message.contains("GATEWAY_MASTER_KEY"), "{message}");
        assert!(!message.contains(&key[..16]), "{message}");
        assert!(!format!("{error:?}").contains(&key[..16]));
    }

    let parsed = MasterKey::parse(&key).expect("valid");
    assert!(!format!("{parsed:?}").contains(&key[..16]));
    let options = DbOptions {
        master_key: Some(parsed),
        ..DbOptions::default()
    };
    assert!(!format!("{options:?}").contains(&key[..16]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_a_key_no_secret_is_written_in_clear() {
    each_backend(|t| async move {
        let keyed = t.with_key(&random_key_text());
        // A fresh database used with a key gets its check value.
        assert_eq!(keyed.check_secrets().expect("check"), state(0, 0));
        let check = "name = 'master_key_check' AND value LIKE 'enc:v1:%'";
        assert_eq!(t.rows_where("gateway_settings", check), 1);

        let shop = merchant_with_random_secrets(&keyed).await;
        let other = merchant_with_random_secrets(&keyed).await;
        let rotated = rotate_now(&keyed, &shop, Direction::Deposit).await;
        let bank = random_acquirer("bank-a");
        keyed.insert_provider(&bank, now()).await.expect("insert");
        let changed = AcquirerProvider {
            credentials: Credentials::new(
                &format!("key-{}", uuid::Uuid::new_v4().simple()),
                &format!("whsec-{}", uuid::Uuid::new_v4().simple()),
            )
            .expect("credentials"),
            ..bank.clone()
        };
        assert!(keyed
            .update_provider(&changed, now())
            .await
            .expect("update"));

        // Everything reads back as written.
        let found = keyed
            .find_merchant(&shop.id)
            .await
            .expect("read")
            .expect("known");
        assert_eq!(found.deposit_keys.newest().secret, rotated);
        let first = found.deposit_keys.version(1).map(|key| &key.secret);
        assert_eq!(first, Some(&shop.deposit_keys.newest().secret));
        assert_eq!(found.withdrawal_keys, shop.withdrawal_keys);
        assert_eq!(
            keyed.merchant(&other.id).await.expect("lookup"),
            Some(other.clone())
        );
        assert_eq!(
            keyed.list_providers().await.expect("list"),
            vec![changed.clone()]
        );
        assert_eq!(
            keyed.acquirer("bank-a").await.expect("lookup"),
            Some(changed.clone())
        );

        // Neither the tables nor (SQLite) the file and its WAL hold any of them in clear,
        // the replaced credentials included.
        let merchants = [found, other.clone()];
        let mut secrets = secret_texts(&merchants, &[changed.clone(), bank]);
        secrets.sort();
        secrets.dedup();
        assert_eq!(secrets.len(), 9);
        assert_eq!(t.clear_copies(&secrets), Vec::<String>::new());
        assert_eq!(
            t.rows_where("merchant_keys", "secret NOT LIKE 'enc:v1:%'"),
            0
        );
        assert_eq!(
            t.rows_where(
                "providers",
                "api_key NOT LIKE 'enc:v1:%' OR webhook_secret NOT LIKE 'enc:v1:%'"
            ),
            0
        );
        assert_eq!(keyed.check_secrets().expect("check"), state(7, 0));

        // A sealed secret copied into another row does not open there.
        t.exec(&format!(
            "UPDATE merchant_keys SET secret = (SELECT secret FROM merchant_keys \
             WHERE merchant_id = '{id}' AND direction = 'withdrawal') \
             WHERE merchant_id = '{id}' AND direction = 'deposit'",
            id = other.id
        ));
        let moved = keyed.find_merchant(&other.id).await.expect_err("moved");
        assert!(moved.to_string().contains("GATEWAY_MASTER_KEY"), "{moved}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_check_at_start_refuses_a_wrong_key_and_a_missing_one() {
    each_backend(|t| async move {
        // Without a key, clear secrets pass and are counted; nothing is written.
        let shop = merchant_with_random_secrets(&t.db).await;
        t.db.insert_provider(&random_acquirer("bank-a"), now())
            .await
            .expect("insert");
        assert_eq!(t.db.check_secrets().expect("no key"), state(0, 4));
        assert_eq!(t.rows("gateway_settings"), 0);

        // The first start with a key writes its check value; clear secrets are still read.
        let key = random_key_text();
        let keyed = t.with_key(&key);
        assert_eq!(keyed.check_secrets().expect("the key"), state(0, 4));
        assert_eq!(t.rows("gateway_settings"), 1);
        assert_eq!(
            keyed.find_merchant(&shop.id).await.expect("read"),
            Some(shop.clone())
        );
        assert_eq!(keyed.check_secrets().expect("again"), state(0, 4));
        assert_eq!(
            t.with_key(&key.to_uppercase()).check_secrets().ok(),
            Some(state(0, 4))
        );

        // From then on, a process without the key or with another one is stopped.
        let wrong = t.with_key(&random_key_text());
        let refused = wrong.check_secrets().expect_err("a wrong key");
        assert_eq!(
            refused.to_string(),
            "GATEWAY_MASTER_KEY does not decrypt this database's secrets (a different key?)"
        );
        let refused = t.db.check_secrets().expect_err("no key");
        assert!(
            refused.to_string().contains("GATEWAY_MASTER_KEY"),
            "{refused}"
        );

        // Encrypted secrets without the check value (removed by hand): a wrong key is still
        // told by them, no key by their prefix; the right key writes the check value again.
        let sealed = merchant_with_random_secrets(&keyed).await;
        t.exec("DELETE FROM gateway_settings");
        let refused = wrong.check_secrets().expect_err("a wrong key");
        assert!(
            refused.to_string().contains("GATEWAY_MASTER_KEY"),
            "{refused}"
        );
        assert_eq!(t.rows("gateway_settings"), 0);
        let refused = t.db.check_secrets().expect_err("no key");
        assert_eq!(
            refused.to_string(),
            "this database's secrets are encrypted: set GATEWAY_MASTER_KEY to its key"
        );
        assert_eq!(keyed.check_secrets().expect("the key"), state(2, 4));
        assert_eq!(t.rows("gateway_settings"), 1);

        // Reading an encrypted secret without the key fails the same way.
        let unread = t.db.find_merchant(&sealed.id).await.expect_err("no key");
        assert!(
            unread.to_string().contains("GATEWAY_MASTER_KEY"),
            "{unread}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_written_without_a_key_is_encrypted_in_place_once() {
    each_backend(|t| async move {
        let first = merchant_with_random_secrets(&t.db).await;
        merchant_with_random_secrets(&t.db).await;
        rotate_now(&t.db, &first, Direction::Deposit).await;
        t.db.insert_provider(&random_acquirer("bank-a"), now())
            .await
            .expect("insert");
        let merchants = t.db.list_merchants().await.expect("list");
        let providers = t.db.list_providers().await.expect("list");
        let secrets = secret_texts(&merchants, &providers);
        assert_eq!(secrets.len(), 7);
        // The scan sees them while they are clear.
        assert_eq!(t.clear_copies(&secrets).len(), 7);

        let refused = t.db.encrypt_secrets().expect_err("no key");
        assert!(
            refused.to_string().contains("GATEWAY_MASTER_KEY"),
            "{refused}"
        );
        // A key other than the one the database was first used with changes nothing.
        t.with_key(&random_key_text())
            .check_secrets()
            .expect("a first key");
        let refused = t.with_key(&random_key_text()).encrypt_secrets();
        let refused = refused.expect_err("another key than the check value's");
        assert!(
            refused.to_string().contains("GATEWAY_MASTER_KEY"),
            "{refused}"
        );
        assert_eq!(t.rows_where("merchant_keys", "secret LIKE 'enc:%'"), 0);
        t.exec("DELETE FROM gateway_settings");

        let keyed = t.with_key(&random_key_text());
        assert_eq!(keyed.encrypt_secrets().expect("encrypt"), 7);
        assert_eq!(t.clear_copies(&secrets), Vec::<String>::new());
        assert_eq!(keyed.list_merchants().await.expect("list"), merchants);
        assert_eq!(keyed.list_providers().await.expect("list"), providers);
        assert_eq!(
            keyed.merchant(&first.id).await.expect("lookup").as_ref(),
            merchants.iter().find(|m| m.id == first.id)
        );
        assert_eq!(keyed.check_secrets().expect("check"), state(7, 0));
        assert_eq!(t.rows("gateway_settings"), 1, "the check value only");

        // Again: nothing to encrypt, nothing changed.
        let rows = t.secret_rows();
        assert_eq!(keyed.encrypt_secrets().expect("again"), 0);
        assert_eq!(t.secret_rows(), rows);
        assert_eq!(t.clear_copies(&secrets), Vec::<String>::new());

        // A process without the key can no longer start or read them.
        assert!(t.db.check_secrets().is_err());
        assert!(t.db.list_merchants().await.is_err());
    })
    .await;
}
