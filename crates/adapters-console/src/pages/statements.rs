//! `GET /admin/statements?merchant=M&currency=C&from=YYYY-MM-DD&to=YYYY-MM-DD`: a merchant's
//! statement in one currency over local days of the console's zone (the form alone until it
//! is sent), and `GET /admin/statements.csv?...`: the same statement as CSV,
//! audited as `statement.export` like the operations export.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpRequest, HttpResponse};
use domain::merchant::Merchant;
use domain::service::StatementError;
use domain::statement::{Day, Held, Statement, MAX_DAYS};
use domain::{format_minor, Currency, MerchantId};
use maud::{html, Markup};

use crate::auth::Signed;
use crate::filters::{encode_query, strict_pairs};
use crate::i18n::{texts, Texts};
use crate::layout::respond;
use crate::paths::STATEMENTS;
use crate::shell::{shell, Nav};
use crate::{Answer, Failure, Problem};

mod table;

/// The parameters, in the order links carry them.
const KEYS: [&str; 4] = ["merchant", "currency", "from", "to"];

/// The parameters as typed, the defaults filled in: RUB, and today in the console's zone.
struct Given {
    /// Whether any parameter was given (the form was sent).
    sent: bool,
    merchant: String,
    currency: String,
    from: String,
    to: String,
}

impl Given {
    /// Reads the query strictly (an unknown or repeated parameter is an error naming it).
    fn read(signed: &Signed, req: &HttpRequest) -> Result<Given, Failure> {
        let pairs = strict_pairs(req.query_string(), &KEYS, "a statement parameter")
            .map_err(|message| signed.fail(Problem::BadRequest(message)))?;
        let value = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
        };
        let today = signed.state.zone().date(signed.state.now());
        Ok(Given {
            sent: !pairs.is_empty(),
            merchant: value("merchant").unwrap_or_default(),
            currency: value("currency").unwrap_or_else(|| Currency::RUB.as_str().to_string()),
            from: value("from").unwrap_or_else(|| today.clone()),
            to: value("to").unwrap_or(today),
        })
    }

    /// The canonical query (for the CSV link and the export's audit target).
    fn query(&self) -> String {
        let values = [&self.merchant, &self.currency, &self.from, &self.to];
        encode_query(KEYS.iter().copied().zip(values.map(String::as_str)))
    }

    /// The merchant, the currency and the local days asked for; a bad value is a `400`
    /// naming it.
    fn asked(&self, signed: &Signed) -> Result<(MerchantId, Currency, Vec<Day>), Failure> {
        let bad = |field: &str, why: &dyn std::fmt::Display| {
            signed.fail(Problem::BadRequest(format!("{field}: {why}")))
        };
        let merchant = match self.merchant.as_str() {
            "" => return Err(bad("merchant", &"is required")),
            id => MerchantId::parse(id).map_err(|e| bad("merchant", &e))?,
        };
        let currency = Currency::parse_active(&self.currency).map_err(|e| bad("currency", &e))?;
        let days = signed
            .state
            .zone()
            .days_between(&self.from, &self.to, MAX_DAYS)
            .map_err(|(field, why)| bad(field, &why))?;
        Ok((merchant, currency, days))
    }

    /// The statement asked for; an unknown merchant is `404`.
    async fn statement(&self, signed: &Signed) -> Result<Statement, Failure> {
        let (merchant, currency, days) = self.asked(signed)?;
        let ports = &signed.state.ports;
        if signed
            .ask(ports.operator.merchant(&merchant))
            .await?
            .is_none()
        {
            return Err(signed.fail(Problem::NotFound));
        }
        let made = ports
            .gateway
            .statements()
            .statement(&merchant, currency, &days)
            .await;
        made.map_err(|error| {
            signed.fail(match error {
                StatementError::Days => Problem::BadRequest(format!("to: {error}")),
                StatementError::Unbalanced(broken) => {
                    Problem::internal(&anyhow::Error::new(broken))
                }
                StatementError::Store(error) => error.into(),
            })
        })
    }
}

pub(crate) async fn show(signed: Signed, req: HttpRequest) -> Answer {
    let given = Given::read(&signed, &req)?;
    let statement = if given.sent {
        Some(given.statement(&signed).await?)
    } else {
        None
    };
    let merchants = signed.ask(signed.state.ports.operator.merchants()).await?;
    let replica = signed.replica_note().await?;
    let t = texts(signed.lang);
    let body = html! {
        h1 { (t.nav_statements) }
        (replica)
        div.box { (form(t, &given, &merchants)) }
        div.box {
            @match &statement {
                Some(statement) => (shown(&signed, t, &given, statement)),
                None => p.muted { (t.pick_merchant) },
            }
        }
    };
    Ok(respond(
        StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Statements, t.nav_statements, body),
    ))
}

/// The form (GET): merchant, currency, first and last day.
fn form(t: &Texts, given: &Given, merchants: &[Merchant]) -> Markup {
    html! {
        form.filters method="get" action=(STATEMENTS) {
            label { (t.col_merchant)
                select name="merchant" required {
                    @for m in merchants {
                        option value=(m.id.as_str()) selected[m.id.as_str() == given.merchant] { (m.id.as_str()) " · " (m.name) }
                    }
                }
            }
            label { (t.currency) input type="text" name="currency" value=(given.currency) size="3" maxlength="3" required; }
            label { (t.date_from) input type="date" name="from" value=(given.from) required; }
            label { (t.date_to) input type="date" name="to" value=(given.to) required; }
            button type="submit" { (t.show) }
        }
    }
}

/// The statement: its heading, the CSV link, the opening and closing balances, a row a day.
fn shown(signed: &Signed, t: &Texts, given: &Given, statement: &Statement) -> Markup {
    let c = statement.currency;
    let balance = |h: Held| {
        format!(
            "{} {} · {} {}",
            t.available,
            format_minor(h.available, c),
            t.held,
            format_minor(h.held, c)
        )
    };
    html! {
        h2 { (t.statement_of) " " span.mono { (statement.merchant_id.as_str()) } ", " (c.as_str()) ", " (given.from) " – " (given.to) }
        div.pager {
            a.button.plain href=(format!("{STATEMENTS}.csv?{}", given.query())) { (t.download_csv) }
        }
        dl.fields {
            dt { (t.opening) } dd { (balance(statement.opening)) }
            dt { (t.closing) } dd { (balance(statement.closing)) }
            dt { (t.days_in) } dd { (signed.state.zone().name()) }
        }
        (table::days(t, statement))
    }
}

/// `GET /admin/statements.csv?merchant=M&currency=C&from=...&to=...`: audited as
/// `statement.export` (its target the query), then [`Statement::csv`] as a download named
/// `statement-{merchant}-{currency}-{from}-{to}.csv`.
pub(crate) async fn export(signed: Signed, req: HttpRequest) -> Answer {
    let given = Given::read(&signed, &req)?;
    let statement = given.statement(&signed).await?;
    let state = &signed.state;
    let target = given.query();
    signed
        .ask(state.audit(&signed.name, "statement.export", &target, None, None))
        .await?;
    let name = format!(
        "statement-{}-{}-{}-{}.csv",
        statement.merchant_id,
        statement.currency.as_str(),
        given.from,
        given.to
    );
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!(r#"attachment; filename="{name}""#),
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .body(statement.csv()))
}
