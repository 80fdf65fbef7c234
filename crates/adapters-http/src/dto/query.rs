//! The query strings of the paged reads (`/balance/transactions`, `/callbacks`): each known
//! parameter at most once, and a page's `limit`.

use std::collections::HashMap;

use domain::{ValidationErrors, ValueError};

/// The parameters of `known` that `query` gives; one given twice is reported, once. Unknown
/// ones are left alone.
pub fn given_once(
    query: &str,
    known: &[&'static str],
    errors: &mut ValidationErrors,
) -> HashMap<&'static str, String> {
    let mut given = HashMap::new();
    let mut repeated: Vec<&str> = Vec::new();
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let Some(name) = known.iter().copied().find(|p| *p == key) else {
            continue;
        };
        if given.insert(name, value.into_owned()).is_some() && !repeated.contains(&name) {
            repeated.push(name);
            errors.push(name, "must be given once");
        }
    }
    given
}

/// A page's `limit`: a whole number from 1 to `max`, digits only.
pub fn limit(text: &str, max: u32) -> Result<u32, ValueError> {
    let refused = || ValueError::new(format!("must be a whole number from 1 to {max}"));
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 3 {
        return Err(refused());
    }
    match text.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(refused()),
    }
}
