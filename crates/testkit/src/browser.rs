//! Headless Chromium driven over WebDriver (chromedriver), for the tests of pages a person
//! uses: the card page and the operator console.
//!
//! Needs `chromedriver` and `chromium` on the PATH (Debian: `chromium chromium-driver`).
//! [`Driver::start_or_skip`] says so and returns `None` without them, unless
//! `GATEWAY_REQUIRE_BROWSER=1`, when it fails the test.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;

/// chromedriver, stopped when dropped.
pub struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // chromedriver leads its own process group, so the browsers it started (left open
        // when a test fails before closing its session) end with it.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Driver {
    /// chromedriver on a free port, or `None` (after a `SKIPPED` line naming `test`) when it
    /// is not installed; a panic instead with `GATEWAY_REQUIRE_BROWSER=1`.
    pub fn start_or_skip(test: &str) -> Option<Driver> {
        let driver = Driver::start();
        if driver.is_none() {
            assert!(
                !crate::required("GATEWAY_REQUIRE_BROWSER"),
                "GATEWAY_REQUIRE_BROWSER=1 but chromedriver is not available"
            );
            crate::report_skipped(&format!(
                "{test} did not run: chromedriver is not on the PATH \
                 (install chromium and chromium-driver)"
            ));
        }
        driver
    }

    fn start() -> Option<Driver> {
        let port = free_port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(driver)
    }

    /// A new headless browser session with a `width`×`height` window and English as its
    /// language.
    pub async fn browser(&self, width: u32, height: u32) -> Client {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", format!("--window-size={width},{height}"),
                         "--lang=en-US"]
            }),
        );
        // chromedriver is on loopback: plain HTTP, no TLS stack needed.
        ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a browser session")
    }
}

/// `GATEWAY_SCREENSHOT_DIR`, where browser tests save their screenshots, if set.
pub fn screenshot_dir() -> Option<PathBuf> {
    std::env::var_os("GATEWAY_SCREENSHOT_DIR").map(PathBuf::from)
}
