//! A person at the operator console without a browser: one cookie jar over plain HTTP
//! (redirects not followed, so a 303 is seen as one).

use std::collections::BTreeMap;

use super::cli::{with_stdin, Output};
use super::db::TestDb;

/// `gateway ARGS` on `db` with the line `password` written to its stdin.
fn with_password(db: &TestDb, args: &[&str], password: &str) -> Output {
    with_stdin(db, args, &format!("{password}\n"))
}

/// Creates a console account with `password` and `role` on `db` (exit 0 or the test fails).
pub fn create_operator(db: &TestDb, name: &str, role: &str, password: &str) {
    let flags = ["--name", name, "--role", role, "--password-stdin"];
    let out = with_password(
        db,
        &[&["operator", "create"][..], &flags].concat(),
        password,
    );
    assert_eq!(out.code, 0, "{out:?}");
}

/// `gateway operator set-password NAME --password-stdin` with `password` on stdin.
pub fn set_operator_password(db: &TestDb, name: &str, password: &str) -> Output {
    let args = ["operator", "set-password", name, "--password-stdin"];
    with_password(db, &args, password)
}

/// A console answer.
#[derive(Debug)]
pub struct Page {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub location: Option<String>,
    pub set_cookies: Vec<String>,
    pub body: String,
}

/// One browser-less visitor of a console at `base` (`http://HOST:PORT`).
pub struct Visitor {
    base: String,
    client: reqwest::Client,
    cookies: BTreeMap<String, String>,
}

impl Visitor {
    pub fn new(base: &str) -> Visitor {
        Visitor {
            base: base.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("an HTTP client"),
            cookies: BTreeMap::new(),
        }
    }

    /// The same visitor's cookies on another gateway (a second process on one database).
    pub fn at(&self, base: &str) -> Visitor {
        let mut other = Visitor::new(base);
        other.cookies = self.cookies.clone();
        other
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let request = if self.cookies.is_empty() {
            request
        } else {
            request.header("cookie", self.cookie_header())
        };
        let response = request.send().await.expect("the console answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let set_cookies: Vec<String> = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        for cookie in &set_cookies {
            let pair = cookie.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() || cookie.to_ascii_lowercase().contains("max-age=0") {
                    self.cookies.remove(name.trim());
                } else {
                    self.cookies.insert(name.trim().into(), value.trim().into());
                }
            }
        }
        let body = response.text().await.expect("a body");
        Page {
            status,
            headers,
            location,
            set_cookies,
            body,
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    pub async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Page {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .form(fields);
        self.send(request).await
    }

    /// Signs in as a person would: the form (for its token), then the POST. Returns the
    /// POST's answer.
    pub async fn sign_in(&mut self, name: &str, password: &str) -> Page {
        let form = self.get("/admin/login").await;
        assert_eq!(form.status, 200, "{form:?}");
        let token = csrf_of(&form.body);
        self.post(
            "/admin/login",
            &[("name", name), ("password", password), ("csrf", &token)],
        )
        .await
    }

    /// The CSRF token of a page this visitor is signed in to.
    pub async fn token(&mut self, path: &str) -> String {
        let page = self.get(path).await;
        assert_eq!(page.status, 200, "{page:?}");
        csrf_of(&page.body)
    }
}

/// The value of the first `name="csrf"` hidden field of `html`.
pub fn csrf_of(html: &str) -> String {
    let start = html
        .find(r#"name="csrf" value=""#)
        .unwrap_or_else(|| panic!("no CSRF field in:\n{html}"))
        + r#"name="csrf" value=""#.len();
    html[start..]
        .split('"')
        .next()
        .expect("a token")
        .to_string()
}
