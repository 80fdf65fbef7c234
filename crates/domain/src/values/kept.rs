//! Free-form data the gateway keeps as it was given: a deposit's requisites, the requisites a
//! provider shows the user. JSON-shaped, but not JSON: each adapter encodes it in its own
//! format (with the `serde` feature, through serde's data model).

use std::collections::BTreeMap;

/// One kept value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    Null,
    Bool(bool),
    /// A number, as text: an integer's digits, or a fraction's shortest form that reads back
    /// as the same double (`2.0`, `0.1`, `1e16`), so that it is written out as it came in.
    Number(String),
    Text(String),
    List(Vec<Kept>),
    Object(KeptObject),
}

/// Kept values by key, in key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptObject(BTreeMap<String, Kept>);

impl KeptObject {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key`, returning the object (for building literals).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Kept>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Kept>) {
        self.0.insert(key.into(), value.into());
    }

    pub fn get(&self, key: &str) -> Option<&Kept> {
        self.0.get(key)
    }

    /// The text under `key`, if it is text.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.0.get(key) {
            Some(Kept::Text(text)) => Some(text),
            _ => None,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Kept)> {
        self.0.iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, Kept)> for KeptObject {
    fn from_iter<I: IntoIterator<Item = (String, Kept)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl IntoIterator for KeptObject {
    type Item = (String, Kept);
    type IntoIter = std::collections::btree_map::IntoIter<String, Kept>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl From<&str> for Kept {
    fn from(text: &str) -> Self {
        Kept::Text(text.to_string())
    }
}

impl From<String> for Kept {
    fn from(text: String) -> Self {
        Kept::Text(text)
    }
}

impl From<bool> for Kept {
    fn from(value: bool) -> Self {
        Kept::Bool(value)
    }
}

impl From<KeptObject> for Kept {
    fn from(object: KeptObject) -> Self {
        Kept::Object(object)
    }
}

impl From<Vec<Kept>> for Kept {
    fn from(items: Vec<Kept>) -> Self {
        Kept::List(items)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    //! Kept values through serde's data model, so that each adapter can write them in its own
    //! format. Numbers are carried as their decimal text, exactly.

    use std::fmt;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

    use super::{Kept, KeptObject};

    impl Serialize for Kept {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            match self {
                Kept::Null => serializer.serialize_unit(),
                Kept::Bool(value) => serializer.serialize_bool(*value),
                Kept::Number(text) if text.contains(['.', 'e', 'E']) => {
                    let value = text.parse::<f64>().map_err(serde::ser::Error::custom)?;
                    serializer.serialize_f64(value)
                }
                Kept::Number(text) => {
                    if let Ok(value) = text.parse::<i64>() {
                        serializer.serialize_i64(value)
                    } else if let Ok(value) = text.parse::<u64>() {
                        serializer.serialize_u64(value)
                    } else {
                        let value = text.parse::<f64>().map_err(serde::ser::Error::custom)?;
                        serializer.serialize_f64(value)
                    }
                }
                Kept::Text(text) => serializer.serialize_str(text),
                Kept::List(items) => {
                    let mut seq = serializer.serialize_seq(Some(items.len()))?;
                    for item in items {
                        seq.serialize_element(item)?;
                    }
                    seq.end()
                }
                Kept::Object(object) => object.serialize(serializer),
            }
        }
    }

    impl Serialize for KeptObject {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(self.len()))?;
            for (key, value) in self.iter() {
                map.serialize_entry(key, value)?;
            }
            map.end()
        }
    }

    struct KeptVisitor;

    impl<'de> Visitor<'de> for KeptVisitor {
        type Value = Kept;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON-shaped value")
        }

        fn visit_unit<E: de::Error>(self) -> Result<Kept, E> {
            Ok(Kept::Null)
        }

        fn visit_none<E: de::Error>(self) -> Result<Kept, E> {
            Ok(Kept::Null)
        }

        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Kept, D::Error> {
            Kept::deserialize(deserializer)
        }

        fn visit_bool<E: de::Error>(self, value: bool) -> Result<Kept, E> {
            Ok(Kept::Bool(value))
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<Kept, E> {
            Ok(Kept::Number(value.to_string()))
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<Kept, E> {
            Ok(Kept::Number(value.to_string()))
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<Kept, E> {
            // `Debug` keeps the fraction mark (`2.0`, `-0.0`) and the exponent (`1e16`).
            Ok(Kept::Number(format!("{value:?}")))
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Kept, E> {
            Ok(Kept::Text(value.to_string()))
        }

        fn visit_string<E: de::Error>(self, value: String) -> Result<Kept, E> {
            Ok(Kept::Text(value))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kept, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(Kept::List(items))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kept, A::Error> {
            let mut object = KeptObject::new();
            while let Some((key, value)) = map.next_entry::<String, Kept>()? {
                object.insert(key, value);
            }
            Ok(Kept::Object(object))
        }
    }

    impl<'de> Deserialize<'de> for Kept {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(KeptVisitor)
        }
    }

    impl<'de> Deserialize<'de> for KeptObject {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            match Kept::deserialize(deserializer)? {
                Kept::Object(object) => Ok(object),
                _ => Err(de::Error::custom("expected an object")),
            }
        }
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn kept_values_are_written_out_as_json_values_were() {
        let given = r#"{"a":2.0,"b":-0.0,"c":1e16,"d":2.5,"e":4242424242424242,"f":-7,"g":18446744073709551615,"h":[1,0.1,null,true,"x"]}"#;
        let kept: KeptObject = serde_json::from_str(given).expect("JSON");
        assert_eq!(kept.get("a"), Some(&Kept::Number("2.0".into())));
        // Exactly what a JSON value read from the same text writes (as stored before kept
        // values existed).
        let as_json: serde_json::Value = serde_json::from_str(given).expect("JSON");
        assert_eq!(
            serde_json::to_string(&kept).expect("JSON"),
            serde_json::to_string(&as_json).expect("JSON")
        );
    }

    #[test]
    fn only_objects_are_kept_objects() {
        for other in ["[]", "1", "\"x\"", "null"] {
            assert!(
                serde_json::from_str::<KeptObject>(other).is_err(),
                "{other}"
            );
        }
    }
}
