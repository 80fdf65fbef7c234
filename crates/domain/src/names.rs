//! Enums whose every variant has a fixed name: the one it is stored, logged and asked for by.

/// Declares an enum whose every variant has a fixed name (`Variant = "name"`), with:
///
/// - `ALL`: every variant, in the order declared;
/// - `as_str`: the variant's name;
/// - `parse`: the variant with a name, `None` for any other; with `else "message"` after the
///   enum, `Result<Self, ValueError>` refusing any other name with that message.
///
/// The enum keeps its attributes and doc comments, and those of its variants.
///
/// ```text
/// names! {
///     /// Where a callback stands.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum CallbackState {
///         Pending = "pending",
///         Delivered = "delivered",
///     }
/// }
/// ```
macro_rules! names {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
        $(else $refusal:literal)?
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$variant_meta])* $variant),+
        }

        impl $name {
            /// Every variant, in the order declared.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The variant's name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            $crate::names::names!(@parse $($refusal)?);
        }
    };
    (@parse) => {
        /// The variant with this name; `None` for any other name.
        pub fn parse(text: &str) -> Option<Self> {
            Self::ALL.into_iter().find(|v| v.as_str() == text)
        }
    };
    (@parse $refusal:literal) => {
        /// The variant with this name; any other name is refused.
        pub fn parse(text: &str) -> Result<Self, $crate::ValueError> {
            Self::ALL
                .into_iter()
                .find(|v| v.as_str() == text)
                .ok_or_else(|| $crate::ValueError::new($refusal))
        }
    };
}

pub(crate) use names;

#[cfg(test)]
mod tests {
    names! {
        /// A test enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Light {
            /// Stop.
            Red = "red",
            Green = "green",
        }
    }

    names! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Side {
            Left = "left",
            Right = "right",
        }
        else "must be left or right"
    }

    #[test]
    fn every_variant_is_named_and_read_back_from_its_name() {
        assert_eq!(Light::ALL, [Light::Red, Light::Green]);
        assert_eq!(Light::Green.as_str(), "green");
        assert_eq!(Light::parse("red"), Some(Light::Red));
        assert_eq!(Light::parse("Red"), None);
    }

    #[test]
    fn with_a_refusal_any_other_name_is_refused_with_it() {
        assert_eq!(Side::parse("right"), Ok(Side::Right));
        assert_eq!(
            Side::parse("up"),
            Err(crate::ValueError::new("must be left or right"))
        );
    }
}
