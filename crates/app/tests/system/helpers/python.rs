//! A Python with the official Standard Webhooks verifier (`standardwebhooks` from PyPI),
//! installed by the tests themselves into a virtual environment of their own.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The verifier's version the tests install.
const PACKAGE: &str = "standardwebhooks==1.1.0";

/// One installer at a time: tests that ask together share one environment.
static INSTALLING: Mutex<()> = Mutex::new(());

/// The environment's `python`, with `standardwebhooks` importable: made under the test
/// run's temporary directory the first time, then reused. Fails the test, saying why, when
/// the package cannot be installed (no `python3 -m venv`, PyPI unreachable).
pub fn standard_webhooks_python() -> PathBuf {
    let _one = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("standardwebhooks-venv");
    let python = venv.join("bin").join("python");
    if imports(&python) {
        return python;
    }
    run(Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv));
    run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--quiet",
        PACKAGE,
    ]));
    assert!(imports(&python), "{PACKAGE} installed but not importable");
    python
}

fn imports(python: &PathBuf) -> bool {
    python.exists()
        && Command::new(python)
            .args(["-c", "import standardwebhooks.webhooks"])
            .output()
            .is_ok_and(|out| out.status.success())
}

#[track_caller]
fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} did not start: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed (the Standard Webhooks test installs {PACKAGE} from PyPI itself):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
