//! The languages the pages and the console speak, Russian or English, chosen from
//! `Accept-Language`.

use actix_web::http::header;
use actix_web::HttpRequest;
use domain::{Amount, Currency};

/// A language the pages and the console speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Ru,
}

impl Lang {
    /// The language of a request's `Accept-Language` header.
    pub fn of(req: &HttpRequest) -> Self {
        negotiate(
            req.headers()
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok()),
        )
    }

    /// An amount as people write it in this language, in its currency's digits
    /// (`1234.50 RUB`, `1234,50 RUB`, `1500 JPY`).
    pub fn money(self, amount: Amount, currency: Currency) -> String {
        let number = amount.format(currency);
        match self {
            Lang::En => format!("{number} {currency}"),
            Lang::Ru => format!("{} {currency}", number.replace('.', ",")),
        }
    }
}

/// The supported language the client prefers most (q-values honoured, `q=0` refused, ties to
/// the earlier entry, `*` meaning English); English when nothing fits.
pub fn negotiate(header: Option<&str>) -> Lang {
    let mut best: Option<(u16, Lang)> = None;
    for item in header.unwrap_or("").split(',') {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or("").trim();
        let primary = tag.split('-').next().unwrap_or("");
        let lang = if primary.eq_ignore_ascii_case("ru") {
            Lang::Ru
        } else if primary.eq_ignore_ascii_case("en") || primary == "*" {
            Lang::En
        } else {
            continue;
        };
        let quality = parts
            .map(str::trim)
            .find_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
            .map_or(Some(1000), parse_quality);
        let Some(quality) = quality.filter(|q| *q > 0) else {
            continue;
        };
        let better = match best {
            Some((q, _)) => quality > q,
            None => true,
        };
        if better {
            best = Some((quality, lang));
        }
    }
    best.map_or(Lang::En, |(_, lang)| lang)
}

/// A q-value (`0` to `1` with at most three decimals) in thousandths; `None` if malformed.
fn parse_quality(text: &str) -> Option<u16> {
    let (whole, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u16 = match whole {
        "0" => 0,
        "1" => 1000,
        _ => return None,
    };
    let fraction: u16 = format!("{fraction:0<3}").parse().ok()?;
    let quality = whole + fraction;
    (quality <= 1000).then_some(quality)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn russian_when_preferred() {
        for header in [
            "ru",
            "ru-RU",
            "RU-ru",
            "ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7",
            "en;q=0.5, ru",
            "fr, ru;q=0.4, de;q=0.9",
            "en;q=0, ru;q=0.1",
            "ru;q=1.000, en;q=0.999",
            "ru;q=0.8, en;q=0.8",
        ] {
            assert_eq!(negotiate(Some(header)), Lang::Ru, "{header}");
        }
    }

    #[test]
    fn english_otherwise() {
        for header in [
            "",
            "en",
            "en-GB,en;q=0.9,ru;q=0.8",
            "de, fr",
            "ru;q=0",
            "ru;q=0.5, *",
            "en;q=0.8, ru;q=0.8",
            "ru;q=2",
            "ru;q=abc",
            "ru;q=0.1234",
            ";;,,",
        ] {
            assert_eq!(negotiate(Some(header)), Lang::En, "{header}");
        }
        assert_eq!(negotiate(None), Lang::En);
    }

    #[test]
    fn quality_values_parse_strictly() {
        assert_eq!(parse_quality("1"), Some(1000));
        assert_eq!(parse_quality("1.0"), Some(1000));
        assert_eq!(parse_quality("0.5"), Some(500));
        assert_eq!(parse_quality("0.05"), Some(50));
        assert_eq!(parse_quality("0"), Some(0));
        for bad in ["1.001", "2", "", ".5", "0.5x", "-1"] {
            assert_eq!(parse_quality(bad), None, "{bad}");
        }
    }

    #[test]
    fn money_uses_the_language_decimal_mark() {
        let amount = Amount::parse("1234.50", Currency::RUB).expect("valid");
        assert_eq!(Lang::En.money(amount, Currency::RUB), "1234.50 RUB");
        assert_eq!(Lang::Ru.money(amount, Currency::RUB), "1234,50 RUB");
        let yen = Currency::parse("JPY").expect("valid");
        let amount = Amount::parse("1500", yen).expect("valid");
        assert_eq!(Lang::En.money(amount, yen), "1500 JPY");
        assert_eq!(Lang::Ru.money(amount, yen), "1500 JPY");
    }
}
