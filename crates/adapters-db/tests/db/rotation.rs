//! Merchant secrets: stored as versions, rotated in one transaction, seen by every process's
//! directory from its next lookup; the x-timestamp rule.

use std::collections::BTreeSet;
use std::time::Instant;

use adapters_db::SECRETS_TTL;

use domain::merchant::{KeyRing, Merchant, Secret, SigningKey, SigningRulesChange};
use domain::operator::NewMerchant;
use domain::ports::{MerchantDirectory, OperatorStore};
use domain::{Direction, MerchantId, Timestamp};

use crate::helpers::{
    all_at_once, each_backend, merchant_with_random_secrets, now, operator, random_secret,
    rotate_now, rotation, secret, TestDb,
};

/// Rotates `shop`'s deposit key to `secret` at `at`, the older ones ending `overlap_secs`
/// later at the latest: the key ring after it.
async fn rotate_deposit_key(
    t: &TestDb,
    shop: &Merchant,
    secret: &Secret,
    at: Timestamp,
    overlap_secs: i64,
) -> KeyRing {
    let rotation = rotation(shop, Direction::Deposit, secret.clone(), at, overlap_secs);
    let ring = t.db.rotate_key(&rotation).await.expect("rotate");
    ring.expect("known")
}

/// (version, end in millis) of every secret of the ring, newest first.
fn ends(ring: &KeyRing) -> Vec<(i32, Option<i64>)> {
    ring.keys()
        .iter()
        .map(|key| (key.version, key.expires_at.map(Timestamp::millis)))
        .collect()
}

/// The merchant as stored now, which must exist.
async fn stored(db: &adapters_db::Database, merchant: &Merchant) -> Merchant {
    db.find_merchant(&merchant.id)
        .await
        .expect("read")
        .expect("known")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_merchant_has_version_1_of_both_directions() {
    each_backend(|t| async move {
        let at = now();
        let created = operator(&t.db)
            .create_merchant(NewMerchant {
                id: Some(MerchantId::parse("shop").expect("id")),
                name: "shop".into(),
                access: domain::merchant::full_access(),
                deposit_secret: secret('d'),
                withdrawal_secret: secret('w'),
                require_timestamp: false,
                require_signature_v2: false,
            })
            .await
            .expect("create");
        for (direction, seed) in [("deposit", 'd'), ("withdrawal", 'w')] {
            let only = format!(
                "merchant_id = 'shop' AND direction = '{direction}' AND version = 1 \
                 AND secret = '{}' AND expires_at IS NULL AND created_at >= {}",
                seed.to_string().repeat(64),
                at.millis()
            );
            assert_eq!(t.rows_where("merchant_keys", &only), 1, "{direction}");
        }
        assert_eq!(t.rows("merchant_keys"), 2);
        let found = stored(&t.db, &created).await;
        assert_eq!(found, created);
        assert_eq!(ends(&found.deposit_keys), vec![(1, None)]);
        assert_eq!(found.deposit_keys.newest().secret, secret('d'));
        assert_eq!(found.withdrawal_keys.newest().secret, secret('w'));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotations_add_versions_and_end_older_secrets_at_the_earlier_end() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        let hour = 3_600;
        let t0 = now();
        let (s2, s3, s4) = (random_secret(), random_secret(), random_secret());

        // 1 → 2: version 1 ends a day later.
        let ring = rotate_deposit_key(&t, &shop, &s2, t0, 24 * hour).await;
        let day_end = t0.plus_seconds(24 * hour).millis();
        assert_eq!(ends(&ring), vec![(2, None), (1, Some(day_end))]);
        assert_eq!(ring.newest().secret, s2);
        assert_eq!(ring.newest().created_at, t0);
        let first = ring.version(1).expect("kept");
        let created = shop.deposit_keys.newest();
        assert_eq!(
            (&first.secret, first.created_at),
            (&created.secret, created.created_at)
        );

        // 2 → 3 an hour later with an hour's overlap: both older secrets end then (1's own
        // end was later).
        let t1 = t0.plus_seconds(hour);
        let ring = rotate_deposit_key(&t, &shop, &s3, t1, hour).await;
        let hour_end = t1.plus_seconds(hour).millis();
        assert_eq!(
            ends(&ring),
            vec![(3, None), (2, Some(hour_end)), (1, Some(hour_end))]
        );

        // 3 → 4 with a longer overlap: the older ends stay, version 3 ends later.
        let t2 = t1.plus_seconds(60);
        let ring = rotate_deposit_key(&t, &shop, &s4, t2, 48 * hour).await;
        let later = t2.plus_seconds(48 * hour).millis();
        assert_eq!(
            ends(&ring),
            vec![
                (4, None),
                (3, Some(later)),
                (2, Some(hour_end)),
                (1, Some(hour_end))
            ]
        );

        // 0s: every older secret still live ends at once (versions 1 and 2 were to end later).
        let t3 = t2.plus_seconds(60);
        let s5 = random_secret();
        let ring = rotate_deposit_key(&t, &shop, &s5, t3, 0).await;
        assert_eq!(
            ends(&ring),
            vec![
                (5, None),
                (4, Some(t3.millis())),
                (3, Some(t3.millis())),
                (2, Some(t3.millis())),
                (1, Some(t3.millis()))
            ]
        );
        let live: Vec<i32> = ring.live(t3).map(|key| key.version).collect();
        assert_eq!(live, vec![5]);
        let secrets: Vec<_> = ring.keys().iter().map(|k| k.secret.clone()).collect();
        assert_eq!(secrets[..4], [s5, s4, s3, s2]);

        // The other direction is untouched; the stored merchant has the ring returned.
        let found = stored(&t.db, &shop).await;
        assert_eq!(found.deposit_keys, ring);
        assert_eq!(found.withdrawal_keys, shop.withdrawal_keys);
        assert_eq!(t.db.merchant(&shop.id).await.expect("lookup"), Some(found));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotating_an_unknown_merchants_secret_writes_nothing() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        let nobody = Merchant {
            id: MerchantId::parse("nobody").expect("id"),
            ..shop
        };
        let rotated =
            t.db.rotate_key(&rotation(
                &nobody,
                Direction::Deposit,
                random_secret(),
                now(),
                0,
            ))
            .await
            .expect("rotate");
        assert_eq!(rotated, None);
        assert_eq!(t.rows("merchant_keys"), 2);
        assert_eq!(t.rows_where("merchant_keys", "expires_at IS NOT NULL"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_rotations_of_one_direction_get_distinct_versions() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        let processes = [t.db.clone(), t.second_process()];
        let answers = all_at_once(8, |i| {
            let db = processes[i % 2].clone();
            let rotation = rotation(&shop, Direction::Deposit, random_secret(), now(), 60);
            async move { db.rotate_key(&rotation).await }
        })
        .await;
        let newest: BTreeSet<i32> = answers
            .iter()
            .map(|answer| {
                let ring = answer.as_ref().expect("rotated").as_ref().expect("known");
                ring.newest().version
            })
            .collect();
        assert_eq!(newest, (2..=9).collect());
        let ring = stored(&t.db, &shop).await.deposit_keys;
        let versions: Vec<i32> = ring.keys().iter().map(|key| key.version).collect();
        assert_eq!(versions, (1..=9).rev().collect::<Vec<_>>());
        let unending: Vec<&SigningKey> = ring
            .keys()
            .iter()
            .filter(|k| k.expires_at.is_none())
            .collect();
        assert_eq!(unending.len(), 1);
        assert_eq!(unending[0].version, 9);
        assert_eq!(t.rows_where("merchant_keys", "direction = 'withdrawal'"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_directory_sees_another_process_rotation_from_its_next_lookup() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        // This process caches the merchant for a minute; another one rotates.
        let directory = t.long_cache();
        let before = directory.merchant(&shop.id).await.expect("lookup");
        assert_eq!(before.as_ref(), Some(&shop));
        let elsewhere = t.second_process();
        let at = now();
        let fresh = random_secret();
        elsewhere
            .rotate_key(&rotation(
                &shop,
                Direction::Withdrawal,
                fresh.clone(),
                at,
                0,
            ))
            .await
            .expect("rotate")
            .expect("known");

        let after = directory
            .merchant(&shop.id)
            .await
            .expect("lookup")
            .expect("known");
        let ring = &after.withdrawal_keys;
        assert_eq!(ring.newest().secret, fresh);
        assert_eq!(ring.newest().version, 2);
        // The revoked secret is there too, ended at the rotation.
        let revoked = ring.version(1).expect("kept");
        assert_eq!(revoked.secret, shop.withdrawal_keys.newest().secret);
        assert_eq!(revoked.expires_at, Some(at));
        assert_eq!(after.deposit_keys, shop.deposit_keys);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn secrets_are_kept_for_at_most_secrets_ttl_and_a_rotation_waits_that_out() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        let directory = t.long_cache();
        let started = Instant::now();
        let first = directory.merchant(&shop.id).await.expect("lookup");
        assert_eq!(first.as_ref(), Some(&shop));
        // Ended behind the directory's back (a rotation would have waited): until the time
        // runs out, the lookup is served from memory; after it, read again.
        t.exec(&format!(
            "UPDATE merchant_keys SET expires_at = 1 WHERE merchant_id = '{}' \
             AND direction = 'deposit'",
            shop.id.as_str()
        ));
        let cached = directory
            .merchant(&shop.id)
            .await
            .expect("lookup")
            .expect("known");
        if started.elapsed() < SECRETS_TTL {
            assert_eq!(cached, shop, "served from memory within SECRETS_TTL");
        } else {
            eprintln!("the machine paused past SECRETS_TTL: the cached lookup is not checked");
        }
        tokio::time::sleep(SECRETS_TTL).await;
        let read = directory
            .merchant(&shop.id)
            .await
            .expect("lookup")
            .expect("known");
        assert_eq!(ends(&read.deposit_keys), vec![(1, Some(1))]);

        // A rotation returns only once every process's copy has run out.
        let begun = Instant::now();
        let fresh = rotate_now(&t.second_process(), &shop, Direction::Withdrawal).await;
        assert!(begun.elapsed() >= SECRETS_TTL, "{:?}", begun.elapsed());
        let after = directory
            .merchant(&shop.id)
            .await
            .expect("lookup")
            .expect("known");
        assert_eq!(after.withdrawal_keys.newest().secret, fresh);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signing_rules_are_stored_and_seen_at_once() {
    each_backend(|t| async move {
        let shop = merchant_with_random_secrets(&t.db).await;
        assert!(!shop.require_timestamp && !shop.require_signature_v2);
        // Cached first: the change must still show at once here.
        assert_eq!(
            t.db.merchant(&shop.id).await.expect("lookup"),
            Some(shop.clone())
        );
        let change = |timestamp, v2| SigningRulesChange {
            require_timestamp: timestamp,
            require_signature_v2: v2,
        };
        assert!(t
            .db
            .change_signing_rules(&shop.id, change(Some(true), None))
            .await
            .expect("set"));
        let required =
            t.db.merchant(&shop.id)
                .await
                .expect("lookup")
                .expect("known");
        assert_eq!(
            required,
            Merchant {
                require_timestamp: true,
                ..shop.clone()
            }
        );
        assert!(stored(&t.db, &shop).await.require_timestamp);
        assert_eq!(t.rows_where("merchants", "require_timestamp = 1"), 1);

        // One rule changes; the other stays as it was.
        assert!(t
            .db
            .change_signing_rules(&shop.id, change(None, Some(true)))
            .await
            .expect("set"));
        let both =
            t.db.merchant(&shop.id)
                .await
                .expect("lookup")
                .expect("known");
        assert!(both.require_timestamp && both.require_signature_v2);
        assert_eq!(t.rows_where("merchants", "require_signature_v2 = 1"), 1);

        assert!(t
            .db
            .change_signing_rules(&shop.id, change(Some(false), Some(false)))
            .await
            .expect("set"));
        let neither = stored(&t.db, &shop).await;
        assert!(!neither.require_timestamp && !neither.require_signature_v2);
        // Nothing to change: only whether the merchant exists.
        assert!(t
            .db
            .change_signing_rules(&shop.id, change(None, None))
            .await
            .expect("known"));
        let nobody = MerchantId::parse("nobody").expect("id");
        for asked in [change(Some(true), None), change(None, None)] {
            assert!(!t
                .db
                .change_signing_rules(&nobody, asked)
                .await
                .expect("unknown"));
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lookups_made_together_each_get_their_own_merchant_and_secrets() {
    each_backend(|t| async move {
        let mut shops = Vec::new();
        for _ in 0..3 {
            shops.push(merchant_with_random_secrets(&t.db).await);
        }
        // Cached merchants: the lookups queue their reads of the secrets, served in groups.
        let directory = t.long_cache();
        for shop in &shops {
            assert_eq!(
                directory.merchant(&shop.id).await.expect("lookup").as_ref(),
                Some(shop)
            );
        }
        let found = all_at_once(90, |i| {
            let (directory, id) = (directory.clone(), shops[i % 3].id.clone());
            async move { (i, directory.merchant(&id).await) }
        })
        .await;
        for (i, lookup) in found {
            let merchant = lookup.expect("lookup").expect("known");
            assert_eq!(merchant, shops[i % 3], "lookup {i}");
        }

        // A rotation made before a group of lookups is seen by every one of them.
        let fresh = random_secret();
        t.second_process()
            .rotate_key(&rotation(
                &shops[1],
                Direction::Deposit,
                fresh.clone(),
                now(),
                0,
            ))
            .await
            .expect("rotate")
            .expect("known");
        let found = all_at_once(30, |_| {
            let (directory, id) = (directory.clone(), shops[1].id.clone());
            async move { directory.merchant(&id).await }
        })
        .await;
        for lookup in found {
            let merchant = lookup.expect("lookup").expect("known");
            assert_eq!(merchant.deposit_keys.newest().secret, fresh);
        }
    })
    .await;
}
