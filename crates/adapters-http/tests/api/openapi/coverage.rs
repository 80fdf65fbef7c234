//! What the real exchanges reached of the document, and the document's own examples.

use serde_json::Value;

use super::spec::{escape, Spec, UNKNOWN_PATH, UNLISTED_METHOD};

/// Statuses the document declares but no test can provoke on a healthy server: `500` is a
/// bug and `503` an unreachable database.
const UNPROVOKED: [&str; 2] = ["500", "503"];

impl Spec {
    /// Validates every example in the document against its schema; returns how many.
    pub fn check_examples(&self) -> usize {
        let mut checked = 0;
        let mut failures = Vec::new();
        let mut visit = |pointer: &str, value: &Value| {
            let Some(object) = value.as_object() else {
                return;
            };
            let schema = format!("{pointer}/schema");
            // Media types and parameters: named examples beside a schema.
            if let (Some(_), Some(Value::Object(examples))) =
                (object.get("schema"), object.get("examples"))
            {
                for (name, example) in examples {
                    checked += 1;
                    if let Err(e) = self.validate(&schema, &example["value"]) {
                        failures.push(format!("#{pointer}/examples/{name}: {e}"));
                    }
                }
            }
        };
        walk(&self.doc, "", &mut visit);
        let schemas = self.doc["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten();
        for (name, schema) in schemas {
            for example in schema["examples"].as_array().into_iter().flatten() {
                checked += 1;
                let pointer = format!("/components/schemas/{}", escape(name));
                if let Err(e) = self.validate(&pointer, example) {
                    failures.push(format!("#{pointer}: example {example}: {e}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        checked
    }

    /// Every map of responses by status: (path template or extension, method or "", pointer).
    pub fn response_maps(&self) -> Vec<(String, String, String)> {
        let mut maps = Vec::new();
        for (template, methods) in self.operations() {
            for method in methods {
                let pointer = format!("/paths/{}/{method}/responses", escape(&template));
                maps.push((template.clone(), method, pointer));
            }
        }
        for extension in [UNKNOWN_PATH, UNLISTED_METHOD] {
            maps.push((extension.into(), String::new(), format!("/{extension}")));
        }
        maps
    }

    /// Every declared status of every operation, of the extensions and of the webhooks was
    /// reached by a real exchange (except [`UNPROVOKED`] ones).
    pub fn assert_all_reached(&self) {
        let reached = self.reached.borrow();
        let mut missing = Vec::new();
        for (scope, method, pointer) in self.response_maps() {
            let statuses = self.resolve(&pointer).1.as_object().into_iter().flatten();
            for (status, _) in statuses {
                let hit = reached.iter().any(|(s, m, st)| {
                    s == &scope && st == status && (method.is_empty() || m == &method)
                });
                if !hit && !UNPROVOKED.contains(&status.as_str()) {
                    missing.push(format!("{} {scope} {status}", method.to_uppercase()));
                }
            }
        }
        let webhooks = self.doc["webhooks"].as_object().into_iter().flatten();
        for (name, _) in webhooks {
            let scope = format!("webhooks/{name}");
            if !reached.iter().any(|(s, _, _)| *s == scope) {
                missing.push(scope);
            }
        }
        assert!(
            missing.is_empty(),
            "documented but never answered by the real server:\n{}",
            missing.join("\n")
        );
    }
}

/// Calls `visit` on every value of `value` with its JSON pointer.
fn walk(value: &Value, pointer: &str, visit: &mut impl FnMut(&str, &Value)) {
    visit(pointer, value);
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                walk(child, &format!("{pointer}/{}", escape(key)), visit);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                walk(child, &format!("{pointer}/{index}"), visit);
            }
        }
        _ => {}
    }
}
