//! Processing routes and how one is chosen.

use crate::names::names;
use crate::{Amount, Currency, Direction, PaymentMethod};

names! {
    /// How a route's provider runs the operation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Flow {
        Redirect = "redirect",
        Qr = "qr",
        Requisites = "requisites",
        InputFields = "input_fields",
        Instruction = "instruction",
        Confirmation = "confirmation",
        Payout = "payout",
    }
    else "must be redirect, qr, requisites, input_fields, instruction, confirmation or payout"
}

impl Flow {
    /// The flow a fresh database gives each method and direction.
    pub fn default_for(direction: Direction, method: PaymentMethod) -> Flow {
        match (direction, method) {
            (Direction::Withdrawal, _) => Flow::Payout,
            (Direction::Deposit, PaymentMethod::SbpQr) => Flow::Qr,
            (Direction::Deposit, _) => Flow::Redirect,
        }
    }
}

/// Lifetime of a waiting deposit when its route names none, in seconds.
pub const DEFAULT_LIFETIME_SECS: i64 = 600;

/// A route: which provider handles a method, direction, currency and amount range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub id: i64,
    pub direction: Direction,
    pub method: PaymentMethod,
    pub currency: Currency,
    /// Inclusive bounds, in minor units.
    pub min_amount: i64,
    pub max_amount: i64,
    pub priority: i32,
    pub provider: String,
    pub flow: Flow,
    pub lifetime_secs: Option<i64>,
    pub enabled: bool,
}

impl Route {
    pub fn fits(
        &self,
        direction: Direction,
        method: PaymentMethod,
        currency: Currency,
        amount: Amount,
    ) -> bool {
        self.enabled
            && self.direction == direction
            && self.method == method
            && self.currency == currency
            && (self.min_amount..=self.max_amount).contains(&amount.minor())
    }

    /// Whether the route is the built-in sandbox's.
    pub fn is_sandbox(&self) -> bool {
        self.provider == crate::provider::SANDBOX
    }

    /// Seconds a waiting deposit on this route lives.
    pub fn lifetime(&self) -> i64 {
        self.lifetime_secs.unwrap_or(DEFAULT_LIFETIME_SECS)
    }
}

/// The routes an operation may be tried on, first tried first: every enabled route that fits,
/// of the same provider kind (the sandbox or an acquirer) and flow as the best one (highest
/// priority, lowest id on a tie), in that order. Empty when none fits. A provider may appear
/// more than once here; it is tried at most once per operation.
pub fn candidates(
    routes: &[Route],
    direction: Direction,
    method: PaymentMethod,
    currency: Currency,
    amount: Amount,
) -> Vec<&Route> {
    let mut fitting: Vec<&Route> = routes
        .iter()
        .filter(|r| r.fits(direction, method, currency, amount))
        .collect();
    fitting.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.id));
    let Some(best) = fitting.first().copied() else {
        return fitting;
    };
    fitting.retain(|r| r.is_sandbox() == best.is_sandbox() && r.flow == best.flow);
    fitting
}

/// The enabled route with the highest priority that fits (lowest id on a tie): the first
/// of the [`candidates`].
pub fn select_route(
    routes: &[Route],
    direction: Direction,
    method: PaymentMethod,
    currency: Currency,
    amount: Amount,
) -> Option<&Route> {
    candidates(routes, direction, method, currency, amount)
        .first()
        .copied()
}

/// A route to add (enabled), as the operator gives it. Amounts are inclusive bounds in minor
/// units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRoute {
    pub direction: Direction,
    pub method: PaymentMethod,
    pub currency: Currency,
    pub min_amount: i64,
    pub max_amount: i64,
    pub priority: i32,
    pub provider: String,
    pub flow: Flow,
    /// `None`: the domain default ([`DEFAULT_LIFETIME_SECS`]) applies.
    pub lifetime_secs: Option<i64>,
}

/// The rule a new route breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteRule {
    #[error("this method is not allowed in this direction")]
    MethodForDirection {
        direction: Direction,
        method: PaymentMethod,
    },
    /// Only an active ISO 4217 code has routes.
    #[error("the currency must be an active ISO 4217 code")]
    InactiveCurrency { currency: Currency },
    /// Only `card` moves money in a currency other than RUB.
    #[error("this method takes RUB only")]
    MethodCurrency {
        method: PaymentMethod,
        currency: Currency,
    },
    #[error("the minimum must be at least one minor unit and the maximum at least the minimum")]
    AmountBounds { min: i64, max: i64 },
    #[error("the lifetime must be a positive number of seconds")]
    Lifetime { secs: i64 },
    #[error("the provider must be named")]
    Provider,
    /// An acquirer route's flow is `redirect` (card, sbp, bank apps), `qr` (sbp_qr) or
    /// `payout`: the acquirer's page does the rest.
    #[error("an acquirer route's flow must be {expected}")]
    AcquirerFlow { expected: &'static str },
}

/// The only flow an acquirer route of this direction and method may have.
pub fn acquirer_flow(direction: Direction, method: PaymentMethod) -> Flow {
    Flow::default_for(direction, method)
}

/// Whether `method` may move money in `currency`: `card` in any active code, every other
/// method (SBP, its QR codes, the bank apps) in RUB only.
pub fn route_currency(method: PaymentMethod, currency: Currency) -> Result<(), RouteRule> {
    if !currency.is_active() {
        return Err(RouteRule::InactiveCurrency { currency });
    }
    if method != PaymentMethod::Card && currency != Currency::RUB {
        return Err(RouteRule::MethodCurrency { method, currency });
    }
    Ok(())
}

/// A route's bounds when none are given: one minor unit to 10,000,000 major units of its
/// currency.
pub fn default_route_bounds(currency: Currency) -> (i64, i64) {
    (1, 10_000_000 * currency.minor_per_major())
}

/// A route's amount bounds: the minimum at least one minor unit, the maximum at least the
/// minimum.
pub fn route_amounts(min: i64, max: i64) -> Result<(), RouteRule> {
    if min < 1 || max < min {
        return Err(RouteRule::AmountBounds { min, max });
    }
    Ok(())
}

/// A route's lifetime for waiting deposits: none (the default) or a positive number of
/// seconds.
pub fn route_lifetime(secs: Option<i64>) -> Result<(), RouteRule> {
    match secs {
        Some(secs) if secs <= 0 => Err(RouteRule::Lifetime { secs }),
        _ => Ok(()),
    }
}

/// A route that passed the rules; only [`NewRoute::check`] makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRoute(NewRoute);

impl NewRoute {
    /// The route to store, or the first rule it breaks (in the order: method, currency,
    /// amounts, lifetime, provider).
    pub fn check(self) -> Result<CheckedRoute, RouteRule> {
        if !self.direction.methods().contains(&self.method) {
            return Err(RouteRule::MethodForDirection {
                direction: self.direction,
                method: self.method,
            });
        }
        route_currency(self.method, self.currency)?;
        route_amounts(self.min_amount, self.max_amount)?;
        route_lifetime(self.lifetime_secs)?;
        if self.provider.trim().is_empty() {
            return Err(RouteRule::Provider);
        }
        Ok(CheckedRoute(self))
    }
}

impl CheckedRoute {
    /// The route's values, for storage.
    pub fn get(&self) -> &NewRoute {
        &self.0
    }

    /// The route as stored under `id`, enabled.
    pub fn into_route(self, id: i64) -> Route {
        let new = self.0;
        Route {
            id,
            direction: new.direction,
            method: new.method,
            currency: new.currency,
            min_amount: new.min_amount,
            max_amount: new.max_amount,
            priority: new.priority,
            provider: new.provider,
            flow: new.flow,
            lifetime_secs: new.lifetime_secs,
            enabled: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(id: i64, priority: i32, min: i64, max: i64) -> Route {
        Route {
            id,
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            currency: Currency::RUB,
            min_amount: min,
            max_amount: max,
            priority,
            provider: "sandbox".into(),
            flow: Flow::Redirect,
            lifetime_secs: None,
            enabled: true,
        }
    }

    fn amount(minor: i64) -> Amount {
        Amount::from_minor(minor).expect("positive")
    }

    #[test]
    fn highest_priority_fitting_route_wins() {
        let routes = vec![
            route(1, 100, 1, 1_000),
            route(2, 200, 1, 1_000),
            route(3, 300, 5_000, 9_000),
        ];
        let chosen = select_route(
            &routes,
            Direction::Deposit,
            PaymentMethod::Card,
            Currency::RUB,
            amount(500),
        );
        assert_eq!(chosen.map(|r| r.id), Some(2));
    }

    #[test]
    fn bounds_are_inclusive() {
        let routes = vec![route(1, 100, 100, 200)];
        for (minor, fits) in [(99, false), (100, true), (200, true), (201, false)] {
            let chosen = select_route(
                &routes,
                Direction::Deposit,
                PaymentMethod::Card,
                Currency::RUB,
                amount(minor),
            );
            assert_eq!(chosen.is_some(), fits, "{minor}");
        }
    }

    #[test]
    fn disabled_routes_other_currencies_and_methods_do_not_fit() {
        let mut disabled = route(1, 100, 1, 1_000);
        disabled.enabled = false;
        let routes = vec![disabled, route(2, 1, 1, 1_000)];
        let usd = Currency::parse("USD").expect("valid");
        assert!(select_route(
            &routes,
            Direction::Deposit,
            PaymentMethod::Card,
            usd,
            amount(5)
        )
        .is_none());
        assert!(select_route(
            &routes,
            Direction::Deposit,
            PaymentMethod::Sbp,
            Currency::RUB,
            amount(5)
        )
        .is_none());
        assert!(select_route(
            &routes,
            Direction::Withdrawal,
            PaymentMethod::Card,
            Currency::RUB,
            amount(5)
        )
        .is_none());
        assert_eq!(
            select_route(
                &routes,
                Direction::Deposit,
                PaymentMethod::Card,
                Currency::RUB,
                amount(5)
            )
            .map(|r| r.id),
            Some(2)
        );
    }

    #[test]
    fn candidates_keep_the_best_routes_kind_and_flow_in_priority_order() {
        let at = |id, priority, provider: &str, flow| Route {
            provider: provider.into(),
            flow,
            ..route(id, priority, 1, 1_000)
        };
        let routes = vec![
            at(1, 100, "sandbox", Flow::Redirect),
            at(2, 300, "bank", Flow::Redirect),
            at(3, 200, "other", Flow::Redirect),
            at(4, 300, "other", Flow::Redirect),
            at(5, 250, "third", Flow::Qr),
            at(6, 200, "bank", Flow::Redirect),
        ];
        // Ids of the candidates for a 5.00 card deposit.
        let chosen = |routes: &[Route]| -> Vec<i64> {
            candidates(
                routes,
                Direction::Deposit,
                PaymentMethod::Card,
                Currency::RUB,
                amount(500),
            )
            .iter()
            .map(|r| r.id)
            .collect()
        };
        assert_eq!(chosen(&routes), vec![2, 4, 3, 6]);
        let sandbox_first = vec![
            at(1, 900, "sandbox", Flow::Redirect),
            at(2, 300, "bank", Flow::Redirect),
        ];
        assert_eq!(chosen(&sandbox_first), vec![1]);
    }

    #[test]
    fn default_flows_follow_the_contract() {
        assert_eq!(
            Flow::default_for(Direction::Deposit, PaymentMethod::SbpQr),
            Flow::Qr
        );
        assert_eq!(
            Flow::default_for(Direction::Deposit, PaymentMethod::BankBPay),
            Flow::Redirect
        );
        assert_eq!(
            Flow::default_for(Direction::Withdrawal, PaymentMethod::Card),
            Flow::Payout
        );
        assert_eq!(route(1, 1, 1, 1).lifetime(), 600);
    }

    #[test]
    fn card_takes_any_active_currency_and_the_other_methods_rub_only() {
        let code = |text| Currency::parse(text).expect("three letters");
        for currency in ["RUB", "USD", "EUR", "KZT", "JPY", "KWD"] {
            assert_eq!(route_currency(PaymentMethod::Card, code(currency)), Ok(()));
        }
        let others = Direction::Deposit.methods().iter().copied();
        for method in others.filter(|m| *m != PaymentMethod::Card) {
            assert_eq!(route_currency(method, Currency::RUB), Ok(()));
            assert_eq!(
                route_currency(method, code("USD")),
                Err(RouteRule::MethodCurrency {
                    method,
                    currency: code("USD")
                })
            );
        }
        assert_eq!(
            route_currency(PaymentMethod::Card, code("XXX")),
            Err(RouteRule::InactiveCurrency {
                currency: code("XXX")
            })
        );
    }

    #[test]
    fn default_bounds_are_ten_million_major_units_of_the_currency() {
        let code = |text| Currency::parse(text).expect("three letters");
        assert_eq!(default_route_bounds(Currency::RUB), (1, 1_000_000_000));
        assert_eq!(default_route_bounds(code("JPY")), (1, 10_000_000));
        assert_eq!(default_route_bounds(code("KWD")), (1, 10_000_000_000));
    }
}
