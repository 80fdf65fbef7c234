use std::borrow::Cow;

use proptest::prelude::*;

use super::*;
use crate::luhn_valid;

fn masked(text: &str) -> String {
    mask_card_numbers(text).into_owned()
}

#[test]
fn a_card_number_inside_text_is_masked_with_its_separators() {
    for (given, expected) in [
        ("pay 4242.4242.4242.4242 now", "pay 424242******4242 now"),
        ("4242 4242 4242 4242", "424242******4242"),
        ("4242-4242-4242-4242", "424242******4242"),
        ("4242/4242/4242/4242", "424242******4242"),
        ("4242 - 4242 - 4242 - 4242", "424242******4242"),
        ("4242\u{a0}4242\u{2013}4242/4242", "424242******4242"),
        ("card#4242424242424242!", "card#424242******4242!"),
        ("3782 822463 10005", "378282*****0005"),
        ("4222222222222", "422222***2222"),
        ("4242424242424242428", "424242*********2428"),
    ] {
        assert_eq!(masked(given), expected, "{given:?}");
    }
}

#[test]
fn several_card_numbers_in_one_text_are_each_masked() {
    assert_eq!(
        masked("a 4000 0566 5566 5556 b 3056 9309 0259 04 c 6011111111111117"),
        "a 400005******5556 b 305693****5904 c 601111******1117"
    );
    assert_eq!(
        masked("two: 4242 4242 4242 4242 and 5555-5555-5555-4444."),
        "two: 424242******4242 and 555555******4444."
    );
}

#[test]
fn an_expiry_joined_to_the_number_does_not_hide_it() {
    assert_eq!(
        masked("4242 4242 4242 4242 12/28"),
        "424242******4242 12/28"
    );
}

#[test]
fn overlapping_card_numbers_are_masked_as_one_stretch() {
    // Digits 1-16 and 5-20 are both card numbers: no digit between the first six of the
    // first and the last four of the second stays.
    assert_eq!(masked("4242 4242 4242 4242 4242"), "424242**********4242");
}

#[test]
fn digits_left_in_clear_that_make_a_new_card_number_are_masked_in_turn() {
    // `1234566 424242` (the first six left by masking) passes the Luhn check.
    assert_eq!(
        masked("1234566 4242424242424242"),
        "123456***4242******4242"
    );
    // `4242 123456786` (the last four and the group after) does too.
    assert_eq!(
        masked("4242 4242 4242 4242 123456786"),
        "424242******424212***6786"
    );
}

#[test]
fn text_without_a_card_number_is_returned_as_it_is() {
    for given in [
        "",
        "no digits",
        "4242424242424241",
        "424242424242",
        "42424242424242424242",
        "4242424242424242424242",
        "+7 900 123-45-67",
        "424242******4242",
        "order 12345, 2026-12-03",
    ] {
        assert!(
            matches!(mask_card_numbers(given), Cow::Borrowed(text) if text == given),
            "{given:?}"
        );
    }
}

#[test]
fn a_long_chain_of_overlapping_card_numbers_is_masked_in_one_round() {
    let text = "4242 ".repeat(20_000);
    let out = masked(&text);
    assert_eq!(out, format!("424242{}4242 ", "*".repeat(79_990)));
}

/// `groups` seven-digit groups, then a card number, each joined to the next by a space, such
/// that masking takes one round per group: each group makes a card number only with the six
/// digits the round before left in clear at the start of its stretch.
fn cascade(groups: usize) -> String {
    let card = "4242424242424242".to_string();
    let mut chain = vec![card.clone()];
    let mut clear_start = card[..6].to_string();
    let mut seed: u64 = 7;
    while chain.len() <= groups {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let free = format!("{:06}", seed % 1_000_000);
        let Some(group) = (0..=9)
            .map(|d| format!("{free}{d}"))
            .find(|g| luhn_valid(&format!("{g}{clear_start}")))
        else {
            continue;
        };
        // Not a card number with the group after it either, as the text is given.
        let next = &chain[chain.len() - 1];
        if next.len() == 7 && luhn_valid(&format!("{group}{next}")) {
            continue;
        }
        clear_start = group[..6].to_string();
        chain.push(group);
    }
    chain.reverse();
    chain.join(" ")
}

#[test]
fn a_cascade_of_rounds_costs_one_look_per_round() {
    let short = cascade(3);
    assert_eq!(masked(&short), reference(&short));
    assert_eq!(masked(&short).matches('*').count(), 6 + 3 * 3, "{short}");

    // 3,000 rounds: each looks at a few windows, not at the whole text again.
    let long = cascade(3_000);
    let start = std::time::Instant::now();
    let out = masked(&long);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(card_windows(&out).is_empty());
    assert_eq!(out.chars().nth(6), Some('*'), "the first group was reached");
}

/// The text's digit groups as (first byte, end byte, digits).
fn groups(text: &str) -> Vec<(usize, usize, String)> {
    let mut groups: Vec<(usize, usize, String)> = Vec::new();
    for (i, c) in text.char_indices() {
        match groups.last_mut() {
            Some(last) if c.is_ascii_digit() && last.1 == i => {
                last.1 = i + 1;
                last.2.push(c);
            }
            _ if c.is_ascii_digit() => groups.push((i, i + 1, c.to_string())),
            _ => {}
        }
    }
    groups
}

/// Every card-number window of `text`, found by brute force: (first group, last group).
fn card_windows(text: &str) -> Vec<(usize, usize)> {
    let groups = groups(text);
    let mut found = Vec::new();
    for a in 0..groups.len() {
        let mut digits = String::new();
        for b in a..groups.len() {
            if b > a && !text[groups[b - 1].1..groups[b].0].chars().all(is_separator) {
                break;
            }
            digits.push_str(&groups[b].2);
            if digits.len() > 19 {
                break;
            }
            if digits.len() >= 13 && luhn_valid(&digits) {
                found.push((a, b));
            }
        }
    }
    found
}

/// The rule read literally: star the middle of every card-number window, drop the
/// separators inside them, and start again on the result until none is left.
fn reference(text: &str) -> String {
    let mut text = text.to_string();
    loop {
        let windows = card_windows(&text);
        if windows.is_empty() {
            return text;
        }
        let groups = groups(&text);
        let mut starred = std::collections::BTreeSet::new();
        let mut dropped = std::collections::BTreeSet::new();
        for (a, b) in windows {
            let digits: Vec<usize> = groups[a..=b]
                .iter()
                .flat_map(|(start, end, _)| *start..*end)
                .collect();
            starred.extend(digits[6..digits.len() - 4].iter().copied());
            for k in a..b {
                dropped.extend(groups[k].1..groups[k + 1].0);
            }
        }
        text = text
            .char_indices()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(i, c)| if starred.contains(&i) { '*' } else { c })
            .collect();
    }
}

/// A Luhn-valid number of `body.len() + 1` digits.
fn with_check_digit(body: &[u8]) -> String {
    let digits: String = body.iter().map(|d| char::from(b'0' + d)).collect();
    (0..=9)
        .map(|check| format!("{digits}{check}"))
        .find(|number| luhn_valid(number))
        .unwrap_or_default()
}

/// Text of words, digit runs, separators and card numbers split by separators.
fn text_with_cards() -> impl Strategy<Value = String> {
    let card = (
        prop::collection::vec(0u8..10, 12..=18),
        prop::collection::vec((1usize..19, "[ ./\\-\u{a0}\u{2013}]{1,3}"), 0..4),
    )
        .prop_map(|(body, cuts)| {
            let number = with_check_digit(&body);
            let mut out = String::new();
            let mut cut_at: Vec<(usize, String)> = cuts;
            cut_at.sort();
            let mut from = 0;
            for (at, separators) in cut_at {
                if at > from && at < number.len() {
                    out.push_str(&number[from..at]);
                    out.push_str(&separators);
                    from = at;
                }
            }
            out.push_str(&number[from..]);
            out
        });
    let piece = prop_oneof![
        3 => card,
        2 => "[0-9]{1,8}",
        2 => "[ ./\\-]{1,2}",
        1 => "[a-z*,]{1,4}",
        1 => "[\u{a0}\u{2010}\u{2212}ж]",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        text_with_cards(),
        "[0-9 ./\\-x*]{0,80}",
        "[0-9]{10,30}",
        any::<String>(),
    ]
}

/// The text without its digits, `*` and separators: what masking never touches.
fn other_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_ascii_digit() && *c != '*' && !is_separator(*c))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// The rounds that look only at changed groups find what the literal rule finds.
    #[test]
    fn masking_is_the_rule_read_literally(text in any_text()) {
        prop_assert_eq!(masked(&text), reference(&text));
    }

    /// No window of 13 to 19 clear digits passing the Luhn check survives.
    #[test]
    fn no_card_number_survives(text in any_text()) {
        let out = masked(&text);
        prop_assert!(card_windows(&out).is_empty(), "{:?} -> {:?}", text, out);
    }

    #[test]
    fn masking_is_idempotent(text in any_text()) {
        let once = masked(&text);
        prop_assert_eq!(masked(&once), once.clone());
        prop_assert!(matches!(mask_card_numbers(&once), Cow::Borrowed(_)));
    }

    #[test]
    fn text_without_card_numbers_is_unchanged(text in any_text()) {
        if card_windows(&text).is_empty() {
            prop_assert!(matches!(mask_card_numbers(&text), Cow::Borrowed(t) if t == text));
        }
    }

    /// Only digits become `*` and only separators are dropped; no digit is added or moved.
    #[test]
    fn masking_only_stars_digits_and_drops_separators(text in any_text()) {
        let out = masked(&text);
        prop_assert_eq!(other_text(&out), other_text(&text));
        let kept: String = out.chars().filter(char::is_ascii_digit).collect();
        let mut given = text.chars().filter(char::is_ascii_digit);
        prop_assert!(kept.chars().all(|d| given.any(|g| g == d)), "{:?} -> {:?}", text, out);
        let digits_and_stars =
            |t: &str| t.chars().filter(|c| c.is_ascii_digit() || *c == '*').count();
        prop_assert_eq!(digits_and_stars(&out), digits_and_stars(&text));
    }
}
