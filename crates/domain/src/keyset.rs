//! Keyset pages, newest first: a store reads one row more than a page holds, and that row's
//! presence says a next page starts after the page's last row.

/// The page of at most `limit` rows out of `found` (up to one more), and the cursor of its
/// last row when more follow.
pub fn page_of<T, C>(
    limit: u32,
    mut found: Vec<T>,
    cursor: impl Fn(&T) -> C,
) -> (Vec<T>, Option<C>) {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let more = found.len() > limit;
    found.truncate(limit);
    let next = match more {
        true => found.last().map(cursor),
        false => None,
    };
    (found, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_more_than_the_limit_names_the_next_page() {
        assert_eq!(page_of(2, vec![5, 4, 3], |n| *n), (vec![5, 4], Some(4)));
        assert_eq!(page_of(2, vec![5, 4], |n| *n), (vec![5, 4], None));
        assert_eq!(page_of(2, Vec::<i32>::new(), |n| *n), (vec![], None));
    }
}
