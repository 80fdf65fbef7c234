//! `GET /admin/merchants`: every merchant with its methods, state and balances (never a
//! secret). Admins enable and disable merchants and credit or debit balances with a reason,
//! optionally naming the operation the entry is about.

use actix_web::{web, HttpRequest};
use domain::console::{Actor, Need};
use domain::ledger::ManualNote;
use domain::merchant::Merchant;
use domain::operator::{BalanceError, ManualAdjustment, ManualMove};
use domain::{format_minor, Amount, Currency, Direction, MerchantId, OperationId};
use maud::{html, Markup};
use serde_json::json;

use super::actions::{audit, back, list_page, toggled};
use crate::auth::{csrf_field, Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::{direction_name, enabled_badge, money, rows_table};
use crate::shell::action_button;
use crate::shell::Nav;
use crate::{Answer, Failure, Problem};

const LIST: &str = "/admin/merchants";

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let state = &signed.state;
    let merchants = signed.ask(state.ports.operator.merchants()).await?;
    let mut rows = Vec::with_capacity(merchants.len());
    for merchant in merchants {
        let balances = signed
            .ask(state.ports.gateway.reads().balances(&merchant.id))
            .await?;
        rows.push((merchant, balances));
    }
    let t = texts(signed.lang);
    let admin = signed.role.allows(Need::Administer);
    let table = rows_table(
        rows.is_empty(),
        t.nothing_found,
        html! {
            th { (t.col_merchant) } th { (t.col_name) } th { (t.col_state) } th { (t.col_methods) }
            th.num { (t.available) } th.num { (t.held) }
            @if admin { th { (t.col_actions) } }
        },
        html! {
            @for (merchant, balances) in &rows {
                tr {
                    td.mono { (merchant.id.as_str()) }
                    td { (merchant.name) }
                    td { (enabled_badge(t, merchant.enabled)) }
                    td { (methods(t, merchant)) }
                    td.num {
                        @for b in balances { div { (money(b.available, b.currency)) } }
                    }
                    td.num {
                        @for b in balances { div { (money(b.held, b.currency)) } }
                    }
                    @if admin {
                        td { (admin_forms(&signed, t, merchant)) }
                    }
                }
            }
        },
    );
    Ok(list_page(
        &signed,
        &req,
        Nav::Merchants,
        t.nav_merchants,
        table,
    ))
}

/// The merchant's methods, per direction.
fn methods(t: &Texts, merchant: &Merchant) -> Markup {
    html! {
        @for direction in Direction::ALL {
            @let names: Vec<&str> = merchant.access.iter().filter(|(d, _)| *d == direction).map(|(_, m)| m.as_str()).collect();
            @if !names.is_empty() {
                div { span.muted { (direction_name(t, direction)) ": " } (names.join(", ")) }
            }
        }
    }
}

fn admin_forms(signed: &Signed, t: &Texts, merchant: &Merchant) -> Markup {
    let base = format!("{LIST}/{}", merchant.id.as_str());
    html! {
        @if merchant.enabled {
            (action_button(signed, &format!("{base}/disable"), t.disable, &[], true))
        } @else {
            (action_button(signed, &format!("{base}/enable"), t.enable, &[], false))
        }
        form.inline method="post" action=(format!("{base}/balance")) {
            (csrf_field(&signed.csrf))
            select name="kind" aria-label=(t.col_kind) {
                option value="credit" { (t.credit) }
                option value="debit" { (t.debit) }
            }
            input.short type="text" name="amount" placeholder="100.00" inputmode="decimal" required aria-label=(t.col_amount);
            input type="text" name="currency" value="RUB" size="3" maxlength="3" required aria-label=(t.currency);
            input type="text" name="reason" placeholder=(t.reason) maxlength="500" required aria-label=(t.reason);
            input type="text" name="operation" placeholder=(t.operation_optional) maxlength="36" aria-label=(t.operation_optional);
            button type="submit" { (t.apply) }
        }
    }
}

/// The merchant a path names, as stored now; unknown or malformed is 404.
async fn find(signed: &Signed, text: &str) -> Result<Merchant, Failure> {
    let id = MerchantId::parse(text).map_err(|_| signed.fail(Problem::NotFound))?;
    signed
        .ask_found(signed.state.ports.operator.merchant(&id))
        .await
}

/// `POST /admin/merchants/{id}/enable` (admin): its requests are taken again and its held
/// callbacks go out on their schedule (audited with how many were held).
pub(crate) async fn enable(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let merchant = find(signed, &path).await?;
    let released = signed
        .ask_found(signed.state.ports.operator.enable_merchant(&merchant.id))
        .await?;
    audit(
        &posted,
        "merchant.enable",
        merchant.id.as_str(),
        Some(json!({ "enabled": merchant.enabled })),
        Some(json!({ "enabled": true, "heldCallbacksReleased": released })),
    )
    .await?;
    Ok(back(LIST, true, "merchant_enabled"))
}

/// `POST /admin/merchants/{id}/disable` (admin): its requests are refused and its callbacks
/// held from then on.
pub(crate) async fn disable(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let merchant = find(signed, &path).await?;
    let done = signed
        .ask(signed.state.ports.operator.disable_merchant(&merchant.id))
        .await?;
    if !done {
        return Err(signed.fail(Problem::NotFound));
    }
    let id = merchant.id.as_str();
    toggled(&posted, "merchant", id, merchant.enabled, false, LIST).await
}

/// `POST /admin/merchants/{id}/balance` with `kind` (`credit` or `debit`), `amount`
/// (`100.00`), `currency` (`RUB`), `reason` and an optional `operation` (an operationId of the
/// merchant's, in that currency) (admin): a manual ledger move by the operator; one that
/// names an operation resolves its open discrepancies.
pub(crate) async fn balance(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let bad = |field: &str, rule: &dyn std::fmt::Display| {
        posted.fail(Problem::BadRequest(format!("{field}: {rule}")))
    };
    let id = MerchantId::parse(&path).map_err(|_| signed.fail(Problem::NotFound))?;
    let kind = match posted.field("kind")? {
        "credit" => ManualMove::Credit,
        "debit" => ManualMove::Debit,
        _ => return Err(bad("kind", &"must be credit or debit")),
    };
    let currency = Currency::parse_active(posted.field("currency")?.trim())
        .map_err(|e| bad("currency", &e))?;
    let amount =
        Amount::parse(posted.field("amount")?.trim(), currency).map_err(|e| bad("amount", &e))?;
    let reason = posted.optional("reason")?;
    let note =
        ManualNote::new(Actor::operator(&signed.name), reason).map_err(|e| bad("reason", &e))?;
    let operation = match posted.optional("operation")?.map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(OperationId::parse(text).map_err(|e| bad("operation", &e))?),
    };
    let adjustment = ManualAdjustment {
        merchant: id.clone(),
        currency,
        amount,
        kind,
        operation,
    };
    let result = signed
        .state
        .ports
        .operator
        .adjust_balance(&adjustment, &note)
        .await;
    let written = match result {
        Ok(written) => written,
        Err(BalanceError::UnknownMerchant { .. }) => return Err(signed.fail(Problem::NotFound)),
        Err(BalanceError::UnknownOperation { .. }) => {
            return Ok(back(LIST, false, "unknown_operation"))
        }
        Err(BalanceError::NotTheOperations { .. }) => {
            return Ok(back(LIST, false, "not_the_operations"))
        }
        Err(BalanceError::InsufficientBalance { .. }) => {
            return Ok(back(LIST, false, "insufficient_balance"))
        }
        Err(BalanceError::Store(e)) => return Err(signed.fail(e)),
    };
    let after = written.balance;
    let (action, delta) = match kind {
        ManualMove::Credit => ("balance.credit", amount.minor()),
        ManualMove::Debit => ("balance.debit", -amount.minor()),
    };
    let mut noted = json!({
        "currency": currency.as_str(),
        "available": format_minor(after.available, currency),
        "held": format_minor(after.held, currency),
        "amount": amount.format(currency),
        "reason": note.reason,
        "ledgerEntry": written.entry_id,
    });
    if let Some(operation) = operation {
        noted["operationId"] = json!(operation.to_string());
        noted["resolvedDiscrepancies"] = json!(written.resolved);
    }
    audit(
        &posted,
        action,
        id.as_str(),
        Some(json!({
            "currency": currency.as_str(),
            "available": format_minor(after.available - delta, currency),
            "held": format_minor(after.held, currency),
        })),
        Some(noted),
    )
    .await?;
    Ok(back(LIST, true, "balance_changed"))
}
