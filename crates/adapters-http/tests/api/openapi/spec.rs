//! `docs/openapi.yaml` as a checker of real exchanges: which response the document declares
//! for a path, method and status, whether an answer's headers and body match it, and which
//! parts of the document real exchanges have reached.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use boon::{Compiler, Draft, SchemaIndex, Schemas};
use serde_json::Value;

use crate::helpers::Answer;

/// Where the compiler files the document; nothing is fetched from it.
const BASE: &str = "https://gateway.invalid/openapi.json";

/// The HTTP methods an OpenAPI path item may document.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Documented responses for requests outside the operations, by status.
pub(super) const UNKNOWN_PATH: &str = "x-unknown-path-responses";
pub(super) const UNLISTED_METHOD: &str = "x-unlisted-method-responses";

/// The document, compiled schemas, and what real exchanges have reached so far.
pub struct Spec {
    pub(super) doc: Value,
    validator: RefCell<Validator>,
    /// (path template or extension, method, status) of every checked exchange.
    pub(super) reached: RefCell<BTreeSet<(String, String, String)>>,
}

struct Validator {
    compiler: Compiler,
    schemas: Schemas,
    compiled: BTreeMap<String, SchemaIndex>,
}

/// A JSON pointer token: `~` and `/` escaped.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

impl Spec {
    /// Reads `docs/openapi.yaml` from the workspace.
    pub fn load() -> Spec {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.yaml");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc: Value = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            doc["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3.1")),
            "the checker reads schemas as JSON Schema 2020-12, as OpenAPI 3.1 does"
        );
        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V2020_12);
        compiler.enable_format_assertions();
        compiler
            .add_resource(BASE, doc.clone())
            .unwrap_or_else(|e| panic!("{e:#}"));
        Spec {
            doc,
            validator: RefCell::new(Validator {
                compiler,
                schemas: Schemas::new(),
                compiled: BTreeMap::new(),
            }),
            reached: RefCell::new(BTreeSet::new()),
        }
    }

    /// The value at `pointer`, following `$ref`s; returns the pointer it ended at too.
    pub fn resolve(&self, pointer: &str) -> (String, &Value) {
        let mut pointer = pointer.to_string();
        for _ in 0..16 {
            let value = self
                .doc
                .pointer(&pointer)
                .unwrap_or_else(|| panic!("docs/openapi.yaml has nothing at #{pointer}"));
            match value.get("$ref").and_then(Value::as_str) {
                Some(target) => {
                    pointer = target
                        .strip_prefix('#')
                        .unwrap_or_else(|| panic!("only local $refs: {target}"))
                        .to_string();
                }
                None => return (pointer, value),
            }
        }
        panic!("a $ref cycle at #{pointer}")
    }

    /// Validates `instance` against the schema at `pointer`.
    pub fn validate(&self, pointer: &str, instance: &Value) -> Result<(), String> {
        let mut validator = self.validator.borrow_mut();
        let Validator {
            compiler,
            schemas,
            compiled,
        } = &mut *validator;
        let location = format!("{BASE}#{pointer}");
        let index = match compiled.get(&location) {
            Some(index) => *index,
            None => {
                let index = compiler
                    .compile(&location, schemas)
                    .unwrap_or_else(|e| panic!("the schema at #{pointer} does not compile: {e:#}"));
                compiled.insert(location, index);
                index
            }
        };
        schemas
            .validate(instance, index)
            .map_err(|e| format!("{e:#}"))
    }

    /// The documented path templates with their documented methods (lower case).
    pub fn operations(&self) -> Vec<(String, Vec<String>)> {
        let paths = self.doc["paths"].as_object().into_iter().flatten();
        paths
            .map(|(template, item)| {
                let methods = METHODS
                    .iter()
                    .filter(|m| item.get(**m).is_some())
                    .map(|m| m.to_string())
                    .collect();
                (template.clone(), methods)
            })
            .collect()
    }

    /// The operation object of `method` on `template`.
    pub fn operation(&self, template: &str, method: &str) -> &Value {
        &self.doc["paths"][template][method]
    }

    /// The documented template a request path (query string ignored) falls under.
    pub fn template_for(&self, path: &str) -> Option<String> {
        let path = path.split('?').next().unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        let templates = self.doc["paths"].as_object().into_iter().flatten();
        templates
            .map(|(t, _)| t)
            .find(|template| {
                let parts: Vec<&str> = template.split('/').collect();
                parts.len() == segments.len()
                    && parts.iter().zip(&segments).all(|(part, segment)| {
                        let variable = part.starts_with('{') && part.ends_with('}');
                        if variable {
                            !segment.is_empty()
                        } else {
                            part == segment
                        }
                    })
            })
            .cloned()
    }

    /// Checks a real answer to `method path` against the document and records what it reached.
    #[track_caller]
    pub fn check(&self, method: &str, path: &str, answer: &Answer) {
        let method = method.to_ascii_lowercase();
        let status = answer.status.to_string();
        let context = format!("{} {path} answered {status}", method.to_uppercase());
        let mut unlisted_on = None;
        let (scope, responses) = match self.template_for(path) {
            None => (UNKNOWN_PATH.to_string(), format!("/{UNKNOWN_PATH}")),
            Some(template) if self.operation(&template, &method).is_null() => {
                unlisted_on = Some(template);
                (UNLISTED_METHOD.to_string(), format!("/{UNLISTED_METHOD}"))
            }
            Some(template) => {
                let pointer = format!("/paths/{}/{method}/responses", escape(&template));
                (template, pointer)
            }
        };
        let declared = self.resolve(&responses).1;
        if declared.get(&status).is_none() {
            let known: Vec<&String> = declared
                .as_object()
                .into_iter()
                .flatten()
                .map(|(s, _)| s)
                .collect();
            panic!(
                "{context}, which docs/openapi.yaml does not declare for {} {scope} \
                 (declared: {known:?}): {}",
                method.to_uppercase(),
                answer.text
            );
        }
        if let Some(template) = unlisted_on {
            self.check_allow(&template, answer, &context);
        }
        self.check_response(&format!("{responses}/{status}"), answer, &context);
        self.reached.borrow_mut().insert((scope, method, status));
    }

    fn check_response(&self, pointer: &str, answer: &Answer, context: &str) {
        let (pointer, response) = self.resolve(pointer);
        let headers = response.get("headers").and_then(Value::as_object);
        for name in headers.into_iter().flatten().map(|(name, _)| name) {
            let (at, header) = self.resolve(&format!("{pointer}/headers/{}", escape(name)));
            let value = answer.headers.get(name.to_ascii_lowercase().as_str());
            let Some(value) = value else {
                let required = header["required"].as_bool().unwrap_or(false);
                assert!(!required, "{context} without its documented header {name}");
                continue;
            };
            let value = Value::String(value.to_str().unwrap_or_default().to_string());
            if let Err(e) = self.validate(&format!("{at}/schema"), &value) {
                panic!("{context}: header {name}: {value} does not match #{at}: {e}");
            }
        }
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            assert!(
                answer.text.is_empty(),
                "{context} with an undocumented body"
            );
            return;
        };
        let content_type = answer
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        let essence = essence.to_ascii_lowercase();
        assert!(
            content.contains_key(&essence),
            "{context} as {content_type:?}; documented: {:?}",
            content.keys().collect::<Vec<_>>()
        );
        let body = if essence == "application/json" {
            serde_json::from_str(&answer.text).unwrap_or_else(|e| {
                panic!(
                    "{context} with a body that is not JSON ({e}): {}",
                    answer.text
                )
            })
        } else {
            Value::String(answer.text.clone())
        };
        let schema = format!("{pointer}/content/{}/schema", escape(&essence));
        if let Err(e) = self.validate(&schema, &body) {
            panic!(
                "{context} with a body that does not match #{schema}:\n{e}\nbody: {}",
                answer.text
            );
        }
    }

    /// A 405's `Allow`, where given, lists exactly the documented methods of the path.
    fn check_allow(&self, template: &str, answer: &Answer, context: &str) {
        let documented: BTreeSet<String> = self.doc["paths"][template]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(key, _)| key.to_ascii_uppercase())
            .filter(|key| METHODS.contains(&key.to_ascii_lowercase().as_str()))
            .collect();
        match answer.headers.get("allow").and_then(|v| v.to_str().ok()) {
            Some(allow) => {
                let allowed = allow
                    .split(',')
                    .map(|m| m.trim().to_ascii_uppercase())
                    .collect();
                assert_eq!(documented, allowed, "{context}: Allow: {allow}");
            }
            // The sandbox's own 405 names no methods; the document says Allow is optional there.
            None => assert!(template.starts_with("/sandbox/"), "{context} without Allow"),
        }
    }

    /// Why the document's request schema refuses `body` for `method path`, if it does.
    pub fn request_problem(&self, method: &str, path: &str, body: &Value) -> Option<String> {
        let template = self.template_for(path)?;
        let method = method.to_ascii_lowercase();
        if self
            .operation(&template, &method)
            .get("requestBody")
            .is_none()
        {
            return Some(format!("{method} {template} documents no request body"));
        }
        let pointer = format!("/paths/{}/{method}/requestBody", escape(&template));
        let (pointer, _) = self.resolve(&pointer);
        self.validate(&format!("{pointer}/content/application~1json/schema"), body)
            .err()
    }

    /// Checks a callback the gateway really sent against the webhook `name`.
    pub fn check_callback(&self, name: &str, headers: &BTreeMap<String, String>, body: &str) {
        let (pointer, item) = self.resolve(&format!("/webhooks/{}", escape(name)));
        let parameters = item["post"]["parameters"].as_array().into_iter().flatten();
        for (index, _) in parameters.enumerate() {
            let (at, parameter) = self.resolve(&format!("{pointer}/post/parameters/{index}"));
            let header = parameter["name"]
                .as_str()
                .unwrap_or_default()
                .to_ascii_lowercase();
            match headers.get(&header) {
                None => assert!(
                    !parameter["required"].as_bool().unwrap_or(false),
                    "a callback without its documented header {header}: {headers:?}"
                ),
                Some(value) => {
                    if let Err(e) =
                        self.validate(&format!("{at}/schema"), &Value::String(value.clone()))
                    {
                        panic!("callback header {header}: {value} does not match #{at}: {e}");
                    }
                }
            }
        }
        let content_type = headers
            .get("content-type")
            .map(String::as_str)
            .unwrap_or_default();
        assert_eq!(
            content_type, "application/json",
            "the callback's Content-Type"
        );
        let body: Value = serde_json::from_str(body).expect("a JSON callback body");
        let schema = format!("{pointer}/post/requestBody/content/application~1json/schema");
        if let Err(e) = self.validate(&schema, &body) {
            panic!("a callback that does not match #{schema}:\n{e}\nbody: {body}");
        }
        let scope = format!("webhooks/{name}");
        self.reached
            .borrow_mut()
            .insert((scope, "post".into(), "2XX".into()));
    }
}
