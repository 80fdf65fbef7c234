//! Secrets that `Debug` does not print.

/// A secret string (API key, webhook secret).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for signing.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Compares with `candidate` in time independent of where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::str::FromStr for Secret {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if value.is_empty() {
            return Err("must not be empty".into());
        }
        Ok(Self(value.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_the_same_text_and_hides_it() {
        let secret: Secret = "k3y".parse().expect("not empty");
        assert!(secret.matches("k3y"));
        assert!(!secret.matches("k3z"));
        assert!(!secret.matches("k3"));
        assert_eq!(format!("{secret:?}"), "Secret(***)");
        assert!("".parse::<Secret>().is_err());
    }
}
