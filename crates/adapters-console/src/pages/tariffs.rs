//! `GET /admin/tariffs`: every merchant's tariffs. Admins set a whole tariff
//! (`POST /admin/tariffs`) and remove one (`POST /admin/tariffs/remove`), by the same rules as
//! `gateway tariff set` and `remove`, audited as they are (`tariff.set`, `tariff.remove`).

use actix_web::HttpRequest;
use domain::console::Need;
use domain::fee::{parse_fee_amount, FeeDirection, FeeTerms, Percent, Tariff};
use domain::merchant::Merchant;
use domain::ports::TariffKey;
use domain::tariffs::TariffError;
use domain::{format_minor, Currency, MerchantId, PaymentMethod};
use maud::{html, Markup};

use super::actions::{audit, back, list_page};
use crate::auth::{csrf_field, Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::{fee_direction_name, rows_table};
use crate::paths::TARIFFS;
use crate::shell::{action_button, Nav};
use crate::{tariff_json, tariff_target, Answer, Failure, Problem};

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let ports = &signed.state.ports;
    let tariffs = signed.ask(ports.tariffs.list(None)).await?;
    let t = texts(signed.lang);
    let admin = signed.role.allows(Need::Administer);
    let table = rows_table(
        tariffs.is_empty(),
        t.no_tariffs,
        html! {
            th { (t.col_merchant) } th { (t.col_direction) } th { (t.col_method) }
            th { (t.currency) } th.num { (t.percent) } th.num { (t.fixed) }
            th.num { (t.min_amount) } th.num { (t.max_amount) }
            @if admin { th { (t.col_actions) } }
        },
        html! {
            @for tariff in &tariffs {
                @let money = |units: Option<i64>| units.map_or_else(|| "—".to_string(), |u| format_minor(u, tariff.currency));
                tr {
                    td.mono { (tariff.merchant_id.as_str()) }
                    td { (fee_direction_name(t, tariff.direction)) }
                    td { (tariff.method.as_str()) }
                    td { (tariff.currency.as_str()) }
                    td.num { (tariff.terms.percent.format()) "%" }
                    td.num { (money(Some(tariff.terms.fixed))) }
                    td.num { (money(tariff.terms.min)) }
                    td.num { (money(tariff.terms.max)) }
                    @if admin { td { (remove_button(&signed, t, &tariff.key())) } }
                }
            }
        },
    );
    let body = if admin {
        let merchants = signed.ask(ports.operator.merchants()).await?;
        html! { (table) (set_form(&signed, t, &merchants)) }
    } else {
        table
    };
    Ok(list_page(&signed, &req, Nav::Tariffs, t.nav_tariffs, body))
}

/// The key of a tariff as the remove form's hidden fields.
fn remove_button(signed: &Signed, t: &Texts, key: &TariffKey) -> Markup {
    let hidden = [
        ("merchant", key.merchant_id.as_str()),
        ("direction", key.direction.as_str()),
        ("method", key.method.as_str()),
        ("currency", key.currency.as_str()),
    ];
    let path = format!("{TARIFFS}/remove");
    action_button(signed, &path, t.remove, &hidden, true)
}

/// The form that sets a whole tariff (admins).
fn set_form(signed: &Signed, t: &Texts, merchants: &[Merchant]) -> Markup {
    html! {
        h2 { (t.set_tariff) }
        p.muted { (t.set_tariff_hint) }
        form.filters method="post" action=(TARIFFS) {
            (csrf_field(&signed.csrf))
            label { (t.col_merchant)
                select name="merchant" required {
                    @for m in merchants { option value=(m.id.as_str()) { (m.id.as_str()) " · " (m.name) } }
                }
            }
            label { (t.col_direction)
                select name="direction" {
                    @for d in FeeDirection::ALL { option value=(d.as_str()) { (fee_direction_name(t, d)) } }
                }
            }
            label { (t.col_method)
                select name="method" {
                    @for m in PaymentMethod::ALL { option value=(m.as_str()) { (m.as_str()) } }
                }
            }
            label { (t.currency) input type="text" name="currency" value="RUB" size="3" maxlength="3" required; }
            label { (t.percent) input.short type="text" name="percent" placeholder="2.50" inputmode="decimal"; }
            label { (t.fixed) input.short type="text" name="fixed" placeholder="10.00" inputmode="decimal"; }
            label { (t.min_amount) input.short type="text" name="min" inputmode="decimal"; }
            label { (t.max_amount) input.short type="text" name="max" inputmode="decimal"; }
            button type="submit" { (t.set) }
        }
    }
}

/// A `400` naming the form field at fault.
fn refused(posted: &Posted, field: &str, why: &dyn std::fmt::Display) -> Failure {
    posted.fail(Problem::BadRequest(format!("{field}: {why}")))
}

/// The tariff key the form's `merchant`, `direction`, `method` and `currency` name.
fn key_of(posted: &Posted) -> Result<TariffKey, Failure> {
    let field = |name: &str| posted.field(name).map(str::trim);
    let bad = |name: &'static str| move |e: domain::ValueError| refused(posted, name, &e);
    Ok(TariffKey {
        merchant_id: MerchantId::parse(field("merchant")?).map_err(bad("merchant"))?,
        direction: FeeDirection::parse(field("direction")?).map_err(bad("direction"))?,
        method: PaymentMethod::parse(field("method")?).map_err(bad("method"))?,
        currency: Currency::parse_active(field("currency")?).map_err(bad("currency"))?,
    })
}

/// The terms the form's `percent`, `fixed`, `min` and `max` give in `currency`: a field left
/// empty or out is 0 (`percent`, `fixed`) or absent (`min`, `max`).
fn terms_of(posted: &Posted, currency: Currency) -> Result<FeeTerms, Failure> {
    let given = |name: &str| -> Result<Option<&str>, Failure> {
        Ok(posted
            .optional(name)?
            .map(str::trim)
            .filter(|v| !v.is_empty()))
    };
    let amount = |name: &str| -> Result<Option<i64>, Failure> {
        given(name)?
            .map(|text| parse_fee_amount(text, currency))
            .transpose()
            .map_err(|e| refused(posted, name, &e))
    };
    let percent = match given("percent")? {
        Some(text) => Percent::parse(text).map_err(|e| refused(posted, "percent", &e))?,
        None => Percent::ZERO,
    };
    let (fixed, min, max) = (amount("fixed")?, amount("min")?, amount("max")?);
    FeeTerms::new(percent, fixed.unwrap_or(0), min, max).map_err(|e| refused(posted, "min", &e))
}

/// The tariff under `key` with `terms`.
fn tariff_of(key: &TariffKey, terms: FeeTerms) -> Tariff {
    Tariff {
        merchant_id: key.merchant_id.clone(),
        direction: key.direction,
        method: key.method,
        currency: key.currency,
        terms,
    }
}

/// `POST /admin/tariffs` with `merchant`, `direction`, `method`, `currency` and optional
/// `percent`, `fixed`, `min`, `max` (admin): sets the whole tariff, replacing one there.
pub(crate) async fn set(posted: Posted) -> Answer {
    posted.need(Need::Administer)?;
    let key = key_of(&posted)?;
    let tariff = tariff_of(&key, terms_of(&posted, key.currency)?);
    let replaced = match posted.signed.state.ports.tariffs.set(&tariff).await {
        Ok(replaced) => replaced,
        Err(TariffError::UnknownMerchant) => {
            return Err(refused(&posted, "merchant", &"no such merchant"))
        }
        Err(wrong @ TariffError::Method(..)) => return Err(refused(&posted, "method", &wrong)),
        Err(TariffError::Currency(rule)) => return Err(refused(&posted, "currency", &rule)),
        Err(TariffError::Store(error)) => return Err(posted.fail(error)),
    };
    let before = replaced.map(|terms| tariff_json(&tariff_of(&key, terms)));
    let after = Some(tariff_json(&tariff));
    audit(&posted, "tariff.set", &tariff_target(&key), before, after).await?;
    Ok(back(TARIFFS, true, "tariff_set"))
}

/// `POST /admin/tariffs/remove` with the tariff's `merchant`, `direction`, `method` and
/// `currency` (admin); one that is not there changes nothing and says so.
pub(crate) async fn remove(posted: Posted) -> Answer {
    posted.need(Need::Administer)?;
    let key = key_of(&posted)?;
    let signed = &posted.signed;
    let Some(removed) = signed.ask(signed.state.ports.tariffs.remove(&key)).await? else {
        return Ok(back(TARIFFS, false, "no_such_tariff"));
    };
    let before = Some(tariff_json(&tariff_of(&key, removed)));
    audit(&posted, "tariff.remove", &tariff_target(&key), before, None).await?;
    Ok(back(TARIFFS, true, "tariff_removed"))
}
