//! `gateway serve` as a child process behind a guard that kills it on drop, so a failing test
//! leaves no process behind.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::cli::{command, GATEWAY};
use super::db::TestDb;

/// How long a gateway may take to start listening, or to stop after SIGTERM.
const START_DEADLINE: Duration = Duration::from_secs(60);
const STOP_DEADLINE: Duration = Duration::from_secs(60);

/// `gateway serve` running as a child process; killed (SIGKILL) on drop if still running.
pub struct GatewayProcess {
    child: Child,
    /// Short name used in messages (`a`, `b`, ...).
    pub name: String,
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    exited: Option<ExitStatus>,
}

/// What a served gateway is started with, beyond the database.
#[derive(Debug, Clone)]
pub struct Serve {
    pub env: Vec<(String, String)>,
    pub log_filter: String,
}

impl Default for Serve {
    fn default() -> Self {
        Self {
            env: vec![
                ("GATEWAY_CALLBACK_ALLOW_PRIVATE".into(), "true".into()),
                (
                    "GATEWAY_CALLBACK_SCHEDULE".into(),
                    "200ms,200ms,200ms".into(),
                ),
                ("GATEWAY_SANDBOX_SETTLE_MS".into(), "200".into()),
            ],
            log_filter: "info".into(),
        }
    }
}

impl Serve {
    /// Sets (or replaces) one `GATEWAY_*` variable.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets `RUST_LOG` of the served gateway (its `gateway listening` line must stay visible).
    pub fn log(mut self, filter: &str) -> Self {
        self.log_filter = filter.into();
        self
    }
}

impl GatewayProcess {
    /// Starts `gateway serve` on `127.0.0.1:0` and waits until it listens and is ready.
    pub fn start(name: &str, db: &TestDb, serve: &Serve) -> GatewayProcess {
        Self::start_with_args(name, db, serve, &[])
    }

    /// As [`GatewayProcess::start`], with more `serve` arguments (e.g. `--demo`).
    pub fn start_with_args(
        name: &str,
        db: &TestDb,
        serve: &Serve,
        args: &[&str],
    ) -> GatewayProcess {
        let mut command = command(db);
        command
            .arg("serve")
            .args(args)
            .env("GATEWAY_BIND", "127.0.0.1:0")
            .env("RUST_LOG", &serve.log_filter)
            .envs(serve.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {GATEWAY} serve: {e}"));
        let (log, port_rx) = collect_output(&mut child, gateway_port);
        let mut process = GatewayProcess {
            child,
            name: name.to_string(),
            port: 0,
            log,
            exited: None,
        };
        match port_rx.recv_timeout(START_DEADLINE) {
            Ok(port) => process.port = port,
            Err(_) => panic!(
                "gateway {name} did not start listening within {START_DEADLINE:?}; exit: {:?}\n{}",
                process.child.try_wait(),
                process.log_text()
            ),
        }
        process.wait_ready();
        process
    }

    /// `http://127.0.0.1:PORT{path}`
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + START_DEADLINE;
        let address = format!("127.0.0.1:{}", self.port);
        loop {
            if let Some(body) = http_get(&address, "/readyz") {
                if body.starts_with("HTTP/1.1 200") {
                    return;
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "gateway {} exited ({status}) before it was ready\n{}",
                    self.name,
                    self.log_text()
                );
            }
            self.fail_after(
                deadline,
                format_args!("not ready within {START_DEADLINE:?}"),
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Fails the test once `until` has passed, naming the gateway, what it `did not` do and
    /// its log so far.
    fn fail_after(&self, until: Instant, did_not: std::fmt::Arguments<'_>) {
        assert!(
            Instant::now() < until,
            "gateway {} {did_not}\n{}",
            self.name,
            self.log_text()
        );
    }

    /// Sends SIGTERM (a graceful stop) and waits for the exit; fails the test unless it exits 0.
    pub fn terminate(&mut self) {
        self.send_term();
        self.wait_stopped();
    }

    /// Sends SIGTERM and returns at once.
    pub fn send_term(&self) {
        // The shell's built-in kill: no extra binary, no unsafe code (the workspace forbids it).
        let sent = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", self.pid())])
            .status()
            .expect("run sh -c 'kill -TERM PID'");
        assert!(sent.success(), "kill -TERM {} failed", self.pid());
    }

    /// Waits for the exit after [`GatewayProcess::send_term`]; fails the test unless it is 0.
    pub fn wait_stopped(&mut self) {
        let status = self.wait_exit(STOP_DEADLINE);
        assert!(
            status.success(),
            "gateway {} exited with {status} after SIGTERM\n{}",
            self.name,
            self.log_text()
        );
    }

    /// Kills the process at once (SIGKILL), as a crash would.
    pub fn crash(&mut self) {
        let _ = self.child.kill();
        self.wait_exit(STOP_DEADLINE);
    }

    fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        let until = Instant::now() + deadline;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.exited = Some(status);
                    return status;
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(50)),
                Ok(None) => {
                    let _ = self.child.kill();
                    panic!(
                        "gateway {} did not exit within {deadline:?}\n{}",
                        self.name,
                        self.log_text()
                    );
                }
                Err(e) => panic!("waiting for gateway {}: {e}", self.name),
            }
        }
    }

    /// Everything the process wrote so far (stdout and stderr, colour codes removed).
    pub fn log_text(&self) -> String {
        self.log.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// Waits until a log line contains `needle`; fails the test after `deadline`.
    pub fn wait_for_log(&self, needle: &str, deadline: Duration) {
        let until = Instant::now() + deadline;
        while self.log_lines(needle) == 0 {
            self.fail_after(
                until,
                format_args!("never logged {needle:?} within {deadline:?}"),
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Lines of the log containing `needle`.
    pub fn log_lines(&self, needle: &str) -> usize {
        self.log
            .lock()
            .map(|l| l.iter().filter(|line| line.contains(needle)).count())
            .unwrap_or(0)
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        if self.exited.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            let log = self.log_text();
            let tail: Vec<&str> = log.lines().rev().take(80).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            eprintln!(
                "--- last lines of gateway {} (pid {}):\n{}\n---",
                self.name,
                self.child.id(),
                tail.join("\n")
            );
        }
    }
}

/// Collects a child's stdout and stderr into one log, line by line, each without its
/// terminal colours; the first line on either that `announces` reads a value from is sent on
/// the receiver.
pub fn collect_output<T: Send + 'static>(
    child: &mut Child,
    announces: fn(&str) -> Option<T>,
) -> (Arc<Mutex<Vec<String>>>, mpsc::Receiver<T>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (announced, receiver) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    collect_lines(stdout, log.clone(), announced.clone(), announces);
    collect_lines(stderr, log.clone(), announced, announces);
    (log, receiver)
}

/// Collects `pipe` into `log` on a thread of its own (see [`collect_output`]).
fn collect_lines<T: Send + 'static>(
    pipe: impl Read + Send + 'static,
    log: Arc<Mutex<Vec<String>>>,
    announced: mpsc::Sender<T>,
    announces: fn(&str) -> Option<T>,
) {
    std::thread::spawn(move || {
        let mut announced = Some(announced);
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let line = strip_ansi(&line);
            if announced.is_some() {
                if let Some(found) = announces(&line) {
                    if let Some(tx) = announced.take() {
                        let _ = tx.send(found);
                    }
                }
            }
            if let Ok(mut log) = log.lock() {
                log.push(line);
            }
        }
    });
}

/// The port of a `gateway listening ... port=N` line.
fn gateway_port(line: &str) -> Option<u16> {
    if line.contains("gateway listening") {
        listening_port(line)
    } else {
        None
    }
}

fn listening_port(line: &str) -> Option<u16> {
    let at = line.find("port=")? + "port=".len();
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Removes terminal colour sequences (`ESC [ ... m`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for next in chars.by_ref() {
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A minimal blocking `GET` (for readiness, before any async client is involved).
fn http_get(address: &str, path: &str) -> Option<String> {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(address).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}
