//! The operations search's query: its filters, page size and cursor, read strictly (a
//! malformed value is an error naming it, never a silent default), and written back as a
//! canonical query string for links, the export and the audit log.

use actix_web::web;
use domain::console::{Cursor, OperationFilter, PAGE_DEFAULT, PAGE_MAX};
use domain::provider::ProviderName;
use domain::{Direction, MerchantId, MerchantOperationId, PaymentMethod, Status};

use super::zone::Zone;

/// The filter parameters, in the order links carry them.
pub(crate) const FILTER_KEYS: [&str; 8] = [
    "direction",
    "method",
    "status",
    "merchant",
    "provider",
    "from",
    "to",
    "q",
];

/// The page parameters of the operations page.
const PAGING_KEYS: [&str; 2] = ["limit", "after"];

/// A search as asked: the filter, the page and the values as typed (for the form and links).
#[derive(Debug, Clone)]
pub(crate) struct Search {
    pub filter: OperationFilter,
    pub limit: u32,
    pub after: Option<Cursor>,
    /// Each filter parameter that was given (non-empty), in [`FILTER_KEYS`] order.
    pub given: Vec<(&'static str, String)>,
    /// Whether `limit` was given (links then carry it).
    pub limit_given: bool,
}

impl Search {
    /// The value typed for `key`, or "".
    pub fn value(&self, key: &str) -> &str {
        self.given
            .iter()
            .find(|(k, _)| *k == key)
            .map_or("", |(_, v)| v.as_str())
    }

    /// The filter as a query string (`direction=deposit&status=1`), without paging.
    pub fn filter_query(&self) -> String {
        encode_query(self.given.iter().map(|(k, v)| (*k, v.as_str())))
    }

    /// The query of the page after `cursor`: the filters, the limit if given, the cursor.
    pub fn next_query(&self, cursor: &Cursor) -> String {
        let limit = self.limit.to_string();
        let token = cursor.encode();
        let mut pairs: Vec<(&str, &str)> =
            self.given.iter().map(|(k, v)| (*k, v.as_str())).collect();
        if self.limit_given {
            pairs.push(("limit", &limit));
        }
        pairs.push(("after", &token));
        encode_query(pairs)
    }
}

/// Reads a query string. `paging` allows `limit` and `after` (the page; the export has
/// none). Empty values are not set; an unknown or repeated parameter is an error.
pub(crate) fn parse(query: &str, zone: &Zone, paging: bool) -> Result<Search, String> {
    let paging_keys: &[&'static str] = if paging { &PAGING_KEYS } else { &[] };
    let known: Vec<&'static str> = FILTER_KEYS.iter().chain(paging_keys).copied().collect();
    let pairs = strict_pairs(query, &known, "a filter")?;
    let mut search = Search {
        filter: OperationFilter::default(),
        limit: PAGE_DEFAULT,
        after: None,
        given: Vec::new(),
        limit_given: false,
    };
    for (key, value) in &pairs {
        let (key, value) = (*key, value.as_str());
        let refused = |rule: &dyn std::fmt::Display| format!("{key}: {rule}");
        let filter = &mut search.filter;
        match key {
            "direction" => {
                filter.direction = Some(Direction::parse(value).map_err(|e| refused(&e))?)
            }
            "method" => filter.method = Some(PaymentMethod::parse(value).map_err(|e| refused(&e))?),
            "status" => {
                filter.status = Some(match value {
                    "1" => Status::Approved,
                    "2" => Status::Declined,
                    "3" => Status::Processing,
                    _ => return Err(refused(&"must be 1, 2 or 3")),
                })
            }
            "merchant" => {
                filter.merchant = Some(MerchantId::parse(value).map_err(|e| refused(&e))?)
            }
            "provider" => {
                let name = ProviderName::parse(value).map_err(|e| refused(&e))?;
                filter.provider = Some(name.as_str().to_string());
            }
            "from" => filter.created_from = Some(zone.parse_local(value).map_err(|e| refused(&e))?),
            "to" => filter.created_to = Some(zone.parse_local(value).map_err(|e| refused(&e))?),
            "q" => {
                let text = MerchantOperationId::parse(value).map_err(|e| refused(&e))?;
                filter.search = Some(text.as_str().to_string());
            }
            "limit" => {
                search.limit = value
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=PAGE_MAX).contains(n))
                    .ok_or_else(|| {
                        refused(&format!("must be a whole number from 1 to {PAGE_MAX}"))
                    })?;
                search.limit_given = true;
            }
            "after" => search.after = Some(Cursor::decode(value).map_err(|e| refused(&e))?),
            _ => {}
        }
        if FILTER_KEYS.contains(&key) {
            search.given.push((key, value.to_string()));
        }
    }
    search
        .given
        .sort_by_key(|(key, _)| FILTER_KEYS.iter().position(|k| k == key));
    if let (Some(from), Some(to)) = (search.filter.created_from, search.filter.created_to) {
        if from >= to {
            return Err("from: must be before to".to_string());
        }
    }
    Ok(search)
}

/// A query string's parameters, each one of `known` and given at most once, their values
/// trimmed; empty values are left out. An unknown parameter is an error saying it is not
/// `what`; a repeated one an error too, both naming it.
pub(crate) fn strict_pairs(
    query: &str,
    known: &[&'static str],
    what: &str,
) -> Result<Vec<(&'static str, String)>, String> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(query)
        .map_err(|_| "the query could not be read".to_string())?
        .into_inner();
    let mut seen: Vec<&'static str> = Vec::new();
    let mut given = Vec::new();
    for (key, value) in pairs {
        let name = known
            .iter()
            .copied()
            .find(|k| *k == key)
            .ok_or_else(|| format!("{key}: is not {what}"))?;
        if seen.contains(&name) {
            return Err(format!("{key}: is given more than once"));
        }
        seen.push(name);
        let value = value.trim();
        if !value.is_empty() {
            given.push((name, value.to_string()));
        }
    }
    Ok(given)
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub(crate) fn encode_query<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    pairs
        .into_iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// One component: letters, digits and `-._*` as they are, a space as `+`, the rest `%XX`.
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use domain::{OperationId, Timestamp};

    use super::*;

    fn zone() -> Zone {
        Zone::parse("Europe/Moscow").expect("known")
    }

    #[test]
    fn every_filter_is_read_and_written_back_in_order() {
        let query = "q=order-7&status=3&direction=deposit&method=card&merchant=m-1&provider=sandbox&from=2026-11-23&to=2026-11-24T10:30";
        let search = parse(query, &zone(), true).expect("valid");
        let filter = &search.filter;
        assert_eq!(filter.direction, Some(Direction::Deposit));
        assert_eq!(filter.method, Some(PaymentMethod::Card));
        assert_eq!(filter.status, Some(Status::Processing));
        assert_eq!(filter.merchant.as_ref().map(|m| m.as_str()), Some("m-1"));
        assert_eq!(filter.provider.as_deref(), Some("sandbox"));
        assert_eq!(filter.search.as_deref(), Some("order-7"));
        assert_eq!(
            filter.created_from.map(Timestamp::to_rfc3339).as_deref(),
            Some("2026-11-22T21:00:00Z")
        );
        assert_eq!(
            filter.created_to.map(Timestamp::to_rfc3339).as_deref(),
            Some("2026-11-24T07:30:00Z")
        );
        assert_eq!(search.limit, PAGE_DEFAULT);
        assert_eq!(
            search.filter_query(),
            "direction=deposit&method=card&status=3&merchant=m-1&provider=sandbox&from=2026-11-23&to=2026-11-24T10%3A30&q=order-7"
        );
    }

    #[test]
    fn empty_values_are_not_set() {
        let search =
            parse("direction=&method=&status=&q=&limit=&after=", &zone(), true).expect("valid");
        assert_eq!(search.filter, OperationFilter::default());
        assert_eq!(search.filter_query(), "");
        assert_eq!(search.limit, PAGE_DEFAULT);
        assert!(parse("", &zone(), true).is_ok());
    }

    #[test]
    fn malformed_values_are_errors_that_name_the_parameter() {
        for (query, named) in [
            ("direction=sideways", "direction:"),
            ("method=cash", "method:"),
            ("status=4", "status:"),
            ("status=approved", "status:"),
            ("merchant=a%20b", "merchant:"),
            ("provider=Big", "provider:"),
            ("from=23.11.2026", "from:"),
            ("to=2026-11-31", "to:"),
            ("q=a%20b", "q:"),
            ("limit=0", "limit:"),
            ("limit=201", "limit:"),
            ("limit=ten", "limit:"),
            ("limit=-5", "limit:"),
            ("after=xyz", "after:"),
            ("colour=red", "colour:"),
            ("status=1&status=2", "status:"),
            ("from=2026-11-24&to=2026-11-23", "from:"),
        ] {
            let error = parse(query, &zone(), true).expect_err(query);
            assert!(error.starts_with(named), "{query}: {error}");
        }
        let error = parse("limit=10", &zone(), false).expect_err("no paging in the export");
        assert!(error.starts_with("limit:"), "{error}");
    }

    #[test]
    fn the_next_page_carries_the_filters_the_limit_and_the_cursor() {
        let search = parse("status=1&limit=20&merchant=m-1", &zone(), true).expect("valid");
        assert_eq!(search.limit, 20);
        let cursor = Cursor {
            created_at: Timestamp::from_millis(1_795_255_200_000),
            id: OperationId::parse("6f1c0000-0000-4000-8000-000000000001").expect("uuid"),
        };
        let next = search.next_query(&cursor);
        assert_eq!(
            next,
            format!("status=1&merchant=m-1&limit=20&after={}", cursor.encode())
        );
        let again = parse(&next, &zone(), true).expect("a link the console made reads back");
        assert_eq!(again.after, Some(cursor));
        assert_eq!(again.filter, search.filter);
    }

    #[test]
    fn components_are_form_encoded() {
        assert_eq!(encode("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(encode("order-1_x.y*"), "order-1_x.y*");
    }
}
