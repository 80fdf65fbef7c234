//! One-shot `gateway` commands (the operator's CLI) as child processes.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::db::TestDb;

/// The binary under test.
pub const GATEWAY: &str = env!("CARGO_BIN_EXE_gateway");

/// A `gateway` command on `db`, with no other `GATEWAY_*` setting leaking in from the caller.
pub fn command(db: &TestDb) -> Command {
    let mut command = Command::new(GATEWAY);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GATEWAY_") {
            command.env_remove(key);
        }
    }
    command
        .env("GATEWAY_DATABASE_URL", &db.url)
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

/// What a finished command printed and returned.
#[derive(Debug)]
pub struct Output {
    /// The exit code (-1 if killed by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// stdout as JSON; fails the test if it is not.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self}"))
    }

    /// Fails the test unless the command exited with `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code:\n{self}");
        self
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `gateway ARGS...` on `db` to the end.
pub fn gateway(db: &TestDb, args: &[&str]) -> Output {
    run(command(db).args(args))
}

/// Runs `gateway ARGS` with `input` on stdin.
pub fn with_stdin(db: &TestDb, args: &[&str], input: &str) -> Output {
    let mut child = command(db)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gateway");
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes());
    // A command that refuses its arguments may exit before it reads its input: what it
    // answered is then checked by its exit code, like any other.
    if let Err(error) = written {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "write stdin");
    }
    let out = child.wait_with_output().expect("wait for gateway");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `gateway COMMAND list --json FLAGS...` on `db` (exit 0): the array it prints.
pub fn json_list(db: &TestDb, command: &str, flags: &[&str]) -> Vec<serde_json::Value> {
    let args = [&[command, "list", "--json"][..], flags].concat();
    let out = gateway(db, &args);
    out.expect_code(0);
    out.json().as_array().cloned().unwrap_or_default()
}

/// The keys of the JSON object `json`, in the order it keeps them (sorted).
pub fn keys_of(json: &serde_json::Value) -> Vec<&str> {
    let object = json.as_object().expect("an object");
    object.keys().map(String::as_str).collect()
}

/// Runs `gateway` on `db` with `line` split at white space into its arguments (for
/// arguments without spaces of their own).
pub fn gateway_line(db: &TestDb, line: &str) -> Output {
    gateway(db, &line.split_whitespace().collect::<Vec<_>>())
}

/// Runs a prepared command to the end.
pub fn run(command: &mut Command) -> Output {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {GATEWAY}: {e}"));
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs a command that should end by itself (e.g. a `serve` that must refuse to start); kills
/// it and fails the test if it is still running after `deadline`.
pub fn run_bounded(command: &mut Command, deadline: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {GATEWAY}: {e}"));
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let until = Instant::now() + deadline;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{GATEWAY} still running after {deadline:?}: {command:?}");
            }
        }
    };
    Output {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

fn read_all(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// `merchant rotate-secret ID --direction D --overlap O --json`: what it printed (the new
/// secret among it).
#[track_caller]
pub fn rotate(db: &TestDb, id: &str, direction: &str, overlap: &str) -> serde_json::Value {
    let out = gateway(
        db,
        &[
            "merchant",
            "rotate-secret",
            id,
            "--direction",
            direction,
            "--overlap",
            overlap,
            "--json",
        ],
    );
    out.expect_code(0);
    out.json()
}
