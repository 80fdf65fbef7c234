//! Card numbers inside free text, found and masked wherever they stand.
//!
//! * A *digit group* is a maximal run of ASCII digits.
//! * Two groups are *joined* when only separators stand between them: whitespace, `.`, `/`,
//!   `-` or another dash (U+2010 to U+2015, U+2212), one or more of them.
//! * A *window* is one group, or several consecutive groups each joined to the next. A window
//!   of 13 to 19 digits that passes the Luhn check is a card number. Windows never cut a
//!   group, so a single group of more than 19 digits is in no window.
//!
//! Masking keeps, of every card number, its first six and last four digits and writes `*` for
//! each digit between; the separators inside it are dropped (`4242.4242.4242.4242` becomes
//! `424242******4242`). Where card numbers overlap (`4242 4242 4242 4242 4242` holds two), a
//! digit is starred if it stands between the first six and the last four of any of them, and
//! the stretch they cover is written as one. The result is scanned again, until it holds no
//! card number: the six digits left at the start of a masked stretch may make one with the
//! groups joined before them, the four at its end with the groups after. So no window of 13
//! to 19 digits passing the Luhn check is left in clear, and masking a masked text changes
//! nothing.
//!
//! Each round looks only at the windows that hold a group the round before changed (every
//! other window was looked at already), so the work stays linear in the text.

use std::borrow::Cow;

use super::luhn::luhn_check;

/// The fewest and most digits of a card number.
const SHORTEST: usize = 13;
const LONGEST: usize = 19;

/// How many digits masking keeps at the start and at the end of a card number.
const KEPT_FIRST: usize = 6;
const KEPT_LAST: usize = 4;

/// `text` with every card number in it masked (see the module docs); borrowed when it holds
/// none.
pub fn mask_card_numbers(text: &str) -> Cow<'_, str> {
    if text.bytes().filter(u8::is_ascii_digit).count() < SHORTEST {
        return Cow::Borrowed(text);
    }
    let mut scan = Scan::new(text);
    let mut found = scan.every_card();
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    while !found.is_empty() {
        let changed = scan.mask(&mut found);
        found = scan.cards_holding(&changed);
    }
    Cow::Owned(scan.render())
}

/// Whether `c` may stand between the digit groups of one card number.
pub(crate) fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '.' | '/' | '-' | '\u{2010}'..='\u{2015}' | '\u{2212}')
}

/// What stands between one digit of the text and the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gap {
    /// Nothing: both are in one group.
    Nothing,
    /// Separators only: their groups are joined.
    Separators,
    /// Separators that masking dropped: the digits now read as one group.
    Dropped,
    /// Other text: their groups are not joined.
    Text,
}

/// A window or a group: the positions of its first and last digit among the text's digits.
type Span = (usize, usize);

/// The digits of a text, what stands between them, and which of them masking starred.
struct Scan<'t> {
    text: &'t str,
    /// The byte offset of each digit.
    at: Vec<usize>,
    /// Each digit's value, 0 to 9.
    value: Vec<u8>,
    starred: Vec<bool>,
    /// `gap[i]` stands between digit `i` and digit `i + 1`.
    gap: Vec<Gap>,
}

impl<'t> Scan<'t> {
    fn new(text: &'t str) -> Self {
        let at: Vec<usize> = text
            .bytes()
            .enumerate()
            .filter(|(_, b)| b.is_ascii_digit())
            .map(|(i, _)| i)
            .collect();
        let value = at.iter().map(|&i| text.as_bytes()[i] - b'0').collect();
        let gap = at
            .windows(2)
            .map(|pair| {
                let between = &text[pair[0] + 1..pair[1]];
                if between.is_empty() {
                    Gap::Nothing
                } else if between.chars().all(is_separator) {
                    Gap::Separators
                } else {
                    Gap::Text
                }
            })
            .collect();
        Self {
            text,
            starred: vec![false; at.len()],
            at,
            value,
            gap,
        }
    }

    /// Whether digits `i` and `i + 1` are both clear and in one group.
    fn linked(&self, i: usize) -> bool {
        matches!(self.gap[i], Gap::Nothing | Gap::Dropped) && self.clear_pair(i)
    }

    /// Whether digit `i` ends a group joined to the group that digit `i + 1` starts.
    fn joined(&self, i: usize) -> bool {
        self.gap[i] == Gap::Separators && self.clear_pair(i)
    }

    fn clear_pair(&self, i: usize) -> bool {
        !self.starred[i] && !self.starred[i + 1]
    }

    /// Whether the digits `start..=end` are a card number's.
    fn is_card(&self, (start, end): Span) -> bool {
        let length = end + 1 - start;
        (SHORTEST..=LONGEST).contains(&length) && luhn_check(&self.value[start..=end])
    }

    /// Every card number of the text as it was given (nothing starred yet).
    fn every_card(&self) -> Vec<Span> {
        let mut groups: Vec<Span> = Vec::new();
        for i in 0..self.value.len() {
            match groups.last_mut() {
                Some(last) if last.1 + 1 == i && self.linked(last.1) => last.1 = i,
                _ => groups.push((i, i)),
            }
        }
        let mut cards = Vec::new();
        for (first, &(start, _)) in groups.iter().enumerate() {
            for (n, &(_, end)) in groups[first..].iter().enumerate() {
                let previous_end = (n > 0).then(|| groups[first + n - 1].1);
                if previous_end.is_some_and(|p| !self.joined(p)) || end + 1 - start > LONGEST {
                    break;
                }
                if self.is_card((start, end)) {
                    cards.push((start, end));
                }
            }
        }
        cards
    }

    /// The card numbers that hold one of `groups`.
    fn cards_holding(&self, groups: &[Span]) -> Vec<Span> {
        let mut cards = Vec::new();
        for &(start, end) in groups {
            let starts = self.starts_before(start, end);
            let ends = self.ends_after(start, end);
            for &from in &starts {
                for &to in &ends {
                    if self.is_card((from, to)) {
                        cards.push((from, to));
                    }
                }
            }
        }
        cards.sort_unstable();
        cards.dedup();
        cards
    }

    /// `start`, then the first digit of each group joined before it in turn, while a window
    /// from there to `end` may still be short enough.
    fn starts_before(&self, start: usize, end: usize) -> Vec<usize> {
        let mut starts = vec![start];
        let mut first = start;
        while first > 0 && self.joined(first - 1) {
            let mut next = first - 1;
            while next > 0 && self.linked(next - 1) && end + 1 - next <= LONGEST {
                next -= 1;
            }
            if end + 1 - next > LONGEST {
                break;
            }
            starts.push(next);
            first = next;
        }
        starts
    }

    /// `end`, then the last digit of each group joined after it in turn, while a window from
    /// `start` to there may still be short enough.
    fn ends_after(&self, start: usize, end: usize) -> Vec<usize> {
        let last_digit = self.value.len() - 1;
        let mut ends = vec![end];
        let mut last = end;
        while last < last_digit && self.joined(last) {
            let mut next = last + 1;
            while next < last_digit && self.linked(next) && next + 1 - start <= LONGEST {
                next += 1;
            }
            if next + 1 - start > LONGEST {
                break;
            }
            ends.push(next);
            last = next;
        }
        ends
    }

    /// Masks `cards` (all found in one round); returns the groups of clear digits left inside
    /// the stretches they cover, which are all the groups that changed.
    fn mask(&mut self, cards: &mut [Span]) -> Vec<Span> {
        cards.sort_unstable();
        for &(start, end) in cards.iter() {
            for starred in &mut self.starred[start + KEPT_FIRST..=end - KEPT_LAST] {
                *starred = true;
            }
            for gap in &mut self.gap[start..end] {
                if *gap == Gap::Separators {
                    *gap = Gap::Dropped;
                }
            }
        }
        let mut stretches: Vec<Span> = Vec::new();
        for &(start, end) in cards.iter() {
            match stretches.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => stretches.push((start, end)),
            }
        }
        let mut changed = Vec::new();
        for (start, end) in stretches {
            let mut run: Option<Span> = None;
            for i in start..=end {
                match (self.starred[i], &mut run) {
                    (false, Some(open)) => open.1 = i,
                    (false, None) => run = Some((i, i)),
                    (true, open) => changed.extend(open.take()),
                }
            }
            changed.extend(run);
        }
        changed
    }

    /// The text with the starred digits as `*` and the dropped separators left out.
    fn render(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        let (Some(&first), Some(&last)) = (self.at.first(), self.at.last()) else {
            return self.text.to_string();
        };
        out.push_str(&self.text[..first]);
        for (i, &at) in self.at.iter().enumerate() {
            out.push(if self.starred[i] {
                '*'
            } else {
                char::from(b'0' + self.value[i])
            });
            if let (Some(&next), Some(gap)) = (self.at.get(i + 1), self.gap.get(i)) {
                if *gap != Gap::Dropped {
                    out.push_str(&self.text[at + 1..next]);
                }
            }
        }
        out.push_str(&self.text[last + 1..]);
        out
    }
}

#[cfg(test)]
mod tests;
