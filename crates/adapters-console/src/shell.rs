//! The shell of a signed-in operator's page (header with navigation, the operator and
//! sign-out; footer with the time zone) and the forms that carry the session's CSRF token.

use maud::{html, Markup, DOCTYPE};

use super::auth::{csrf_field, Signed};
use super::i18n::texts;
use super::i18n::Texts;
use super::layout::{footer, head, role_name};
use super::paths::{DISPUTES, STATEMENTS, TARIFFS};

/// The console's pages, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Overview,
    Operations,
    Callbacks,
    Disputes,
    Merchants,
    Tariffs,
    Statements,
    Routes,
    Providers,
    Audit,
}

impl Nav {
    const ALL: [Nav; 10] = [
        Nav::Overview,
        Nav::Operations,
        Nav::Callbacks,
        Nav::Disputes,
        Nav::Merchants,
        Nav::Tariffs,
        Nav::Statements,
        Nav::Routes,
        Nav::Providers,
        Nav::Audit,
    ];

    fn path(self) -> &'static str {
        match self {
            Nav::Overview => "/admin",
            Nav::Operations => "/admin/operations",
            Nav::Callbacks => "/admin/callbacks",
            Nav::Disputes => DISPUTES,
            Nav::Merchants => "/admin/merchants",
            Nav::Tariffs => TARIFFS,
            Nav::Statements => STATEMENTS,
            Nav::Routes => "/admin/routes",
            Nav::Providers => "/admin/providers",
            Nav::Audit => "/admin/audit",
        }
    }

    fn label(self, t: &Texts) -> &'static str {
        match self {
            Nav::Overview => t.nav_overview,
            Nav::Operations => t.nav_operations,
            Nav::Callbacks => t.nav_callbacks,
            Nav::Disputes => t.nav_disputes,
            Nav::Merchants => t.nav_merchants,
            Nav::Tariffs => t.nav_tariffs,
            Nav::Statements => t.nav_statements,
            Nav::Routes => t.nav_routes,
            Nav::Providers => t.nav_providers,
            Nav::Audit => t.nav_audit,
        }
    }
}

/// A whole console page for a signed-in operator: the header (navigation, name, role,
/// sign-out), `body`, the footer naming the time zone.
pub(crate) fn shell(signed: &Signed, active: Nav, title: &str, body: Markup) -> Markup {
    let t = texts(signed.lang);
    html! {
        (DOCTYPE)
        html lang=(t.lang) {
            (head(t, title))
            body {
                header.top {
                    span.brand { (t.brand) }
                    nav {
                        @for item in Nav::ALL {
                            a class=[(item == active).then_some("on")] href=(item.path()) { (item.label(t)) }
                        }
                    }
                    div.who {
                        span { strong { (signed.name) } " · " (role_name(t, signed.role)) }
                        form method="post" action="/admin/logout" {
                            (csrf_field(&signed.csrf))
                            button type="submit" { (t.sign_out) }
                        }
                    }
                }
                main { (body) }
                (footer(t, Some(signed.state.zone().name())))
            }
        }
    }
}

/// A POST button form carrying the session's CSRF token and `hidden` fields.
pub(crate) fn action_button(
    signed: &Signed,
    action: &str,
    label: &str,
    hidden: &[(&str, &str)],
    danger: bool,
) -> Markup {
    html! {
        form.inline method="post" action=(action) {
            (csrf_field(&signed.csrf))
            @for (name, value) in hidden {
                input type="hidden" name=(name) value=(value);
            }
            button class=[danger.then_some("danger")] type="submit" { (label) }
        }
    }
}
