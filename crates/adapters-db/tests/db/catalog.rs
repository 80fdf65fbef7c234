//! Migrations, the default routes, merchants and routes.

use domain::merchant::full_access;
use domain::operator::{AddRouteError, CreateMerchantError, NewMerchant};
use domain::ports::{MerchantDirectory, OperatorStore, RouteTable};
use domain::route::Flow;
use domain::route::NewRoute;
use domain::{Currency, Direction, MerchantId, PaymentMethod};

use crate::helpers::{each_backend, merchant, operator, secret};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fresh_database_has_one_sandbox_route_per_method_and_direction() {
    each_backend(|t| async move {
        let routes = t.db.list_routes().await.expect("routes");
        assert_eq!(routes.len(), 8);
        for direction in Direction::ALL {
            for method in direction.methods() {
                let route = routes
                    .iter()
                    .find(|r| r.direction == direction && r.method == *method)
                    .unwrap_or_else(|| panic!("no route for {direction} {method}"));
                assert_eq!(route.currency, Currency::RUB);
                assert_eq!((route.min_amount, route.max_amount), (1, 1_000_000_000));
                assert_eq!(route.priority, 100);
                assert_eq!(route.provider, "sandbox");
                assert_eq!(route.flow, Flow::default_for(direction, *method));
                assert_eq!(route.lifetime_secs, None);
                assert!(route.enabled);
            }
        }
        assert_eq!(t.db.routes().await.expect("cached routes"), routes);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrating_again_changes_nothing() {
    each_backend(|t| async move {
        t.db.migrate().expect("second migrate");
        t.db.migrate().expect("third migrate");
        assert_eq!(t.db.list_routes().await.expect("routes").len(), 8);
        assert!(t.db.ping().await);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn merchants_are_created_found_listed_and_disabled() {
    each_backend(|t| async move {
        let id = MerchantId::parse("demo").expect("id");
        // Cached as unknown first: creating it must still show at once.
        assert_eq!(t.db.merchant(&id).await.expect("lookup"), None);
        let access = domain::merchant::parse_access("deposit:card,withdrawal:sbp").expect("access");
        let created = operator(&t.db)
            .create_merchant(NewMerchant {
                id: Some(id.clone()),
                name: "demo".into(),
                access: access.clone(),
                deposit_secret: secret('a'),
                withdrawal_secret: secret('b'),
                require_timestamp: true,
                require_signature_v2: false,
            })
            .await
            .expect("create");
        assert!(created.enabled);
        assert_eq!(
            t.db.merchant(&id).await.expect("lookup"),
            Some(created.clone())
        );
        assert_eq!(
            t.db.merchant_by_name("demo").await.expect("by name"),
            Some(created.clone())
        );
        assert_eq!(
            t.db.merchant_by_name("nobody").await.expect("by name"),
            None
        );

        let another = |id: Option<MerchantId>, name: &str| NewMerchant {
            id,
            name: name.into(),
            access: full_access(),
            deposit_secret: secret('c'),
            withdrawal_secret: secret('d'),
            require_timestamp: false,
            require_signature_v2: false,
        };
        assert!(matches!(
            operator(&t.db).create_merchant(another(None, "demo")).await,
            Err(CreateMerchantError::NameTaken)
        ));
        assert!(matches!(
            operator(&t.db)
                .create_merchant(another(Some(id.clone()), "other"))
                .await,
            Err(CreateMerchantError::IdTaken)
        ));

        let generated = merchant(&t.db).await;
        assert!(uuid::Uuid::parse_str(generated.id.as_str()).is_ok());
        assert_eq!(generated.access, full_access());
        let listed = t.db.list_merchants().await.expect("list");
        assert_eq!(listed.len(), 2);
        assert!(listed.contains(&created) && listed.contains(&generated));

        assert!(t.db.disable_merchant(&id).await.expect("disable"));
        let disabled =
            t.db.merchant(&id)
                .await
                .expect("lookup")
                .expect("still known");
        assert!(!disabled.enabled);
        let unknown = MerchantId::parse("nobody").expect("id");
        assert!(!t
            .db
            .disable_merchant(&unknown)
            .await
            .expect("disable unknown"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn routes_are_added_and_disabled_and_seen_at_once() {
    each_backend(|t| async move {
        let before = t.db.routes().await.expect("routes");
        let new = NewRoute {
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            currency: Currency::RUB,
            min_amount: 100,
            max_amount: 500_00,
            priority: 200,
            provider: "sandbox".into(),
            flow: Flow::Confirmation,
            lifetime_secs: Some(120),
        };
        let added = operator(&t.db).add_route(new.clone()).await.expect("add");
        assert!(before.iter().all(|r| r.id != added.id));
        let after = t.db.routes().await.expect("routes");
        assert_eq!(after.len(), 9);
        assert!(after.contains(&added));

        assert!(t.db.disable_route(added.id).await.expect("disable"));
        let route =
            t.db.routes()
                .await
                .expect("routes")
                .into_iter()
                .find(|r| r.id == added.id);
        assert_eq!(route.map(|r| r.enabled), Some(false));
        assert!(!t.db.disable_route(9_999).await.expect("disable unknown"));

        let bad = NewRoute {
            method: PaymentMethod::SbpQr,
            direction: Direction::Withdrawal,
            ..new.clone()
        };
        assert!(matches!(
            operator(&t.db).add_route(bad).await,
            Err(AddRouteError::Invalid(_))
        ));
        let bad = NewRoute {
            min_amount: 10,
            max_amount: 5,
            ..new
        };
        assert!(matches!(
            operator(&t.db).add_route(bad).await,
            Err(AddRouteError::Invalid(_))
        ));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn routes_are_enabled_and_reprioritised_and_seen_at_once() {
    each_backend(|t| async move {
        let route = |routes: Vec<domain::route::Route>| {
            routes.into_iter().find(|r| r.id == 3).expect("route 3")
        };
        // Cached before each change: the change must still show at once.
        assert!(route(t.db.routes().await.expect("routes")).enabled);
        assert!(t.db.disable_route(3).await.expect("disable"));
        assert!(!route(t.db.routes().await.expect("routes")).enabled);
        assert!(t.db.enable_route(3).await.expect("enable"));
        assert!(route(t.db.routes().await.expect("routes")).enabled);

        assert!(t.db.set_route_priority(3, -5).await.expect("priority"));
        let changed = route(t.db.routes().await.expect("routes"));
        assert_eq!((changed.priority, changed.enabled), (-5, true));
        assert_eq!(route(t.db.list_routes().await.expect("list")), changed);
        assert_eq!(t.rows_where("routes", "priority = 100"), 7);

        assert!(!t.db.enable_route(9_999).await.expect("enable unknown"));
        assert!(!t.db.set_route_priority(9_999, 1).await.expect("unknown"));
    })
    .await;
}
