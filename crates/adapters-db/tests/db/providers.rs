//! Acquirer providers: the operator's writes, the directory the gateway routes with.

use std::time::Duration;

use adapters_db::{Database, DbOptions};
use domain::ports::{OperatorStore, ProviderDirectory, ProviderInsertError};
use domain::provider::{AcquirerProvider, Credentials, ProtocolName, ProviderUrl};

use crate::helpers::{acquirer, all_at_once, each_backend, now, tally};
use crate::migrations::{
    recorded_in, revert_newest_async, revert_through_async, reverts_through, Recorded,
    PROVIDER_PROTOCOLS,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn providers_are_inserted_updated_and_listed_by_name() {
    each_backend(|t| async move {
        let at = now();
        let (bank_b, bank_a) = (acquirer("bank-b", "b"), acquirer("bank-a", "a"));
        t.db.insert_provider(&bank_b, at).await.expect("insert b");
        t.db.insert_provider(&bank_a, at).await.expect("insert a");
        assert_eq!(
            t.db.list_providers().await.expect("list"),
            vec![bank_a.clone(), bank_b.clone()]
        );

        // A taken name, the sandbox's included, writes nothing.
        let again = acquirer("bank-a", "other");
        assert!(matches!(
            t.db.insert_provider(&again, at).await,
            Err(ProviderInsertError::NameTaken)
        ));
        assert!(matches!(
            t.db.insert_provider(&acquirer("sandbox", "s"), at).await,
            Err(ProviderInsertError::NameTaken)
        ));
        assert_eq!(t.rows("providers"), 2);
        assert_eq!(
            t.db.list_providers().await.expect("list")[0],
            bank_a.clone()
        );

        let changed = AcquirerProvider {
            url: ProviderUrl::parse("http://10.0.0.7:9100", true).expect("url"),
            credentials: Credentials::new("key-new", "whsec-new").expect("credentials"),
            timeout: Duration::from_secs(55),
            allow_insecure: true,
            enabled: false,
            ..bank_a.clone()
        };
        let later = at.plus_seconds(60);
        assert!(t.db.update_provider(&changed, later).await.expect("update"));
        assert_eq!(
            t.db.list_providers().await.expect("list"),
            vec![changed, bank_b]
        );
        let times = format!(
            "name = 'bank-a' AND created_at = {} AND updated_at = {}",
            at.millis(),
            later.millis()
        );
        assert_eq!(t.rows_where("providers", &times), 1);
        let unknown = acquirer("bank-z", "z");
        assert!(!t.db.update_provider(&unknown, later).await.expect("update"));
        assert_eq!(t.rows("providers"), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_provider_keeps_the_protocol_it_speaks() {
    each_backend(|t| async move {
        let other = AcquirerProvider {
            protocol: ProtocolName::parse("other-api").expect("a protocol"),
            ..acquirer("bank-o", "o")
        };
        t.db.insert_provider(&other, now()).await.expect("insert");
        assert_eq!(t.db.list_providers().await.expect("list"), vec![other]);
        assert_eq!(
            t.rows_where("providers", "name = 'bank-o' AND kind = 'other-api'"),
            1
        );
        // Only names of the pattern are stored, whatever writes them.
        for bad in ["", "Upper", "1st", "a b", "far-too-long-a-protocol-name-for-it"] {
            let sql = format!(
                "INSERT INTO providers (name, kind, url, api_key, webhook_secret, timeout_ms, \
                 created_at, updated_at) VALUES ('bank-x', '{bad}', 'http://x', 'k', 's', 5000, 0, 0)"
            );
            assert!(t.try_exec(&sql).is_err(), "{bad:?} stored");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_inserts_of_one_name_store_one_provider() {
    each_backend(|t| async move {
        let processes = [t.db.clone(), t.second_process()];
        let answers = all_at_once(8, |i| {
            let db = processes[i % 2].clone();
            async move {
                db.insert_provider(&acquirer("bank-a", &i.to_string()), now())
                    .await
            }
        })
        .await;
        let name_taken = |e: &ProviderInsertError| matches!(e, ProviderInsertError::NameTaken);
        let (stored, taken) = tally(&answers, name_taken);
        assert_eq!((stored, taken), (1, 7), "{answers:?}");
        assert_eq!(t.rows("providers"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_directory_sees_changes_here_at_once_and_elsewhere_within_its_ttl() {
    each_backend(|t| async move {
        let short = DbOptions {
            cache_ttl: Duration::from_millis(300),
            ..DbOptions::default()
        };
        let elsewhere = Database::connect_with(&t.url, short).expect("a second process");
        // Both cache "no providers" first.
        assert_eq!(t.db.acquirer("bank-a").await.expect("lookup"), None);
        assert!(elsewhere.acquirers().await.expect("list").is_empty());

        let bank_a = acquirer("bank-a", "a");
        t.db.insert_provider(&bank_a, now()).await.expect("insert");
        assert_eq!(
            t.db.acquirer("bank-a").await.expect("lookup"),
            Some(bank_a.clone())
        );
        assert_eq!(t.db.acquirers().await.expect("list"), vec![bank_a.clone()]);

        let disabled = AcquirerProvider {
            enabled: false,
            ..bank_a.clone()
        };
        t.db.update_provider(&disabled, now())
            .await
            .expect("update");
        assert_eq!(
            t.db.acquirer("bank-a").await.expect("lookup"),
            Some(disabled.clone())
        );

        tokio::time::sleep(Duration::from_millis(350)).await;
        assert_eq!(elsewhere.acquirers().await.expect("list"), vec![disabled]);
        assert_eq!(elsewhere.acquirer("bank-b").await.expect("lookup"), None);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_oldest_processing_operation_is_found_per_provider_and_direction() {
    use domain::operation::{Decline, DeclineCode, Outcome};
    use domain::Direction::{Deposit, Withdrawal};

    each_backend(|t| async move {
        let shop = crate::helpers::merchant(&t.db).await;
        let base = now();
        let at = |ms: i64| base.plus_millis(ms);
        let declined = Outcome::Decline(Decline::new(DeclineCode::PaymentRejected));
        // (provider, direction, created after base, still processing)
        let rows = [
            ("sandbox", Deposit, 1_000, true),
            ("sandbox", Deposit, 500, true),
            ("sandbox", Deposit, 100, false),
            ("bank-a", Withdrawal, 700, true),
            ("bank-a", Deposit, 50, false),
            ("bank-b", Deposit, 900, true),
            ("bank-b", Deposit, 950, true),
        ];
        for (provider, direction, ms, processing) in rows {
            let op = crate::helpers::operation_builder(&shop, direction, 1_00)
                .created(at(ms))
                .build();
            let mut op = crate::helpers::at_provider(op, provider);
            if !processing {
                op = op.finish(&declined, at(ms)).expect("processing");
            }
            crate::helpers::insert_plain(&t.db, &op).await;
        }
        let signals = t.db.provider_signals().await.expect("signals");
        let expected = [
            ("bank-a", "withdrawal", at(700)),
            ("bank-b", "deposit", at(900)),
            ("sandbox", "deposit", at(500)),
        ]
        .map(|(p, d, at)| (p.to_string(), d.to_string(), at));
        assert_eq!(signals.oldest_processing, expected.to_vec());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_protocols_migration_reverts_only_while_every_provider_speaks_the_acquirer_api() {
    each_backend(|t| async move {
        let other = AcquirerProvider {
            protocol: ProtocolName::parse("other-api").expect("a protocol"),
            ..acquirer("bank-o", "o")
        };
        let bank = acquirer("bank-a", "a");
        t.db.insert_provider(&other, now()).await.expect("insert");
        t.db.insert_provider(&bank, now()).await.expect("insert");

        // Reverting would lose what bank-o speaks: it fails, and changes nothing.
        let url = t.url.clone();
        let answers = revert_through_async(&url, PROVIDER_PROTOCOLS).await;
        let expected = reverts_through(PROVIDER_PROTOCOLS);
        let (last, before) = answers.split_last().expect("an answer");
        assert_eq!(before, &expected[..expected.len() - 1]);
        assert!(last.is_err(), "{last:?}");
        assert!(recorded_in(&t).has(PROVIDER_PROTOCOLS));
        assert_eq!(
            t.db.list_providers().await.expect("list"),
            vec![bank.clone(), other.clone()]
        );

        // Once only Acquirer API providers are left, it reverts and keeps them (the later
        // migrations were reverted above).
        t.exec("DELETE FROM providers WHERE name = 'bank-o'");
        let answer = revert_newest_async(&url).await;
        assert_eq!(Some(&answer), expected.last());
        assert_eq!(recorded_in(&t), Recorded::before(PROVIDER_PROTOCOLS));
        assert_eq!(
            t.rows_where("providers", "name = 'bank-a' AND kind = 'acquirer'"),
            1
        );
        assert!(t
            .try_exec("UPDATE providers SET kind = 'other-api'")
            .is_err());

        t.db.migrate().expect("upgrade again");
        assert_eq!(recorded_in(&t), Recorded::all());
        assert_eq!(t.db.list_providers().await.expect("list"), vec![bank]);
    })
    .await;
}
