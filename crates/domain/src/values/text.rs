//! The rule for free text the gateway keeps: no control characters.
//!
//! Every identifier, name and free-text value a request carries (`userId`, names in
//! requisites, `userData` keys and values, deposit requisites at any depth, input-field
//! values) is refused when it holds a character from U+0000 to U+001F or U+007F. Both
//! databases can then store whatever is accepted (PostgreSQL cannot store U+0000 at all),
//! and no value can smuggle line breaks into logs, CSV exports or headers.

use super::ValueError;

/// What a merchant is told when a value holds a control character.
pub const CONTROL_CHARACTERS: &str =
    "must not contain control characters (U+0000 to U+001F or U+007F)";

/// Whether `c` is a control character the gateway refuses.
pub fn is_refused_control(c: char) -> bool {
    c <= '\u{1f}' || c == '\u{7f}'
}

/// `Err` when `text` holds a refused control character.
pub fn no_control_characters(text: &str) -> Result<(), ValueError> {
    if text.chars().any(is_refused_control) {
        Err(ValueError::new(CONTROL_CHARACTERS))
    } else {
        Ok(())
    }
}

/// Free text of 1 to `max` characters without control characters.
pub fn bounded_text(text: &str, max: usize) -> Result<String, ValueError> {
    no_control_characters(text)?;
    if (1..=max).contains(&text.chars().count()) {
        Ok(text.to_string())
    } else {
        Err(ValueError::new(format!("must be 1 to {max} characters")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_c0_control_and_delete_is_refused() {
        for code in (0..=0x1f).chain([0x7f]) {
            let c = char::from_u32(code).expect("a char");
            let text = format!("a{c}b");
            assert!(no_control_characters(&text).is_err(), "U+{code:04X}");
            assert!(bounded_text(&text, 10).is_err(), "U+{code:04X}");
        }
    }

    #[test]
    fn printable_text_of_any_script_passes() {
        for ok in [
            "Ivan Ivanov",
            "Иван Иванов",
            "李",
            "a\u{80}b",
            "emoji 🙂",
            " spaced ",
        ] {
            assert_eq!(no_control_characters(ok), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn length_is_counted_in_characters() {
        assert!(bounded_text(&"ж".repeat(128), 128).is_ok());
        assert!(bounded_text(&"ж".repeat(129), 128).is_err());
        assert!(bounded_text("", 128).is_err());
    }
}
