//! Where the buckley-lsp server comes from, in a fixed order, as pure functions (unit-tested on
//! the host; `lib.rs` feeds them what Zed says):
//!
//! 1. the user's `lsp.buckley-lsp.binary` setting (path and arguments);
//! 2. `buckley-lsp` on the worktree's PATH;
//! 3. the npm package `buckley-lsp`, installed by the extension and run with Zed's Node.

/// The npm package and the server id in `extension.toml`.
pub const PACKAGE: &str = "buckley-lsp";
pub const SERVER_ID: &str = "buckley-lsp";
/// The bundled server inside the installed npm package.
pub const SERVER_SCRIPT: &str = "node_modules/buckley-lsp/dist/buckley-lsp.js";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSource {
    /// The user's own binary; arguments default to `--stdio`.
    UserBinary {
        path: String,
        arguments: Vec<String>,
    },
    /// `buckley-lsp` found on the worktree's PATH.
    OnPath { path: String },
    /// Install (or reuse) the npm package and run it with Zed's Node.
    ManagedNpm,
}

/// Chooses the source from the binary setting and what `which buckley-lsp` found.
pub fn choose_source(
    binary_path: Option<String>,
    binary_arguments: Option<Vec<String>>,
    on_path: Option<String>,
) -> ServerSource {
    if let Some(path) = binary_path.filter(|path| !path.trim().is_empty()) {
        return ServerSource::UserBinary {
            path,
            arguments: binary_arguments.unwrap_or_else(stdio_arguments),
        };
    }
    match on_path {
        Some(path) => ServerSource::OnPath { path },
        None => ServerSource::ManagedNpm,
    }
}

pub fn stdio_arguments() -> Vec<String> {
    vec!["--stdio".to_string()]
}

/// Whether to install the latest version: nothing installed, or an older one.
pub fn needs_install(installed: Option<&str>, latest: &str) -> bool {
    installed != Some(latest)
}

/// `node <script> --stdio` for the managed install: the script path relative to the
/// extension's work directory, made absolute by the caller.
pub fn managed_arguments(work_dir: &str) -> Vec<String> {
    let script = if work_dir.is_empty() {
        SERVER_SCRIPT.to_string()
    } else {
        format!("{}/{}", work_dir.trim_end_matches('/'), SERVER_SCRIPT)
    };
    vec![script, "--stdio".to_string()]
}

/// What Zed shows when the npm package cannot be had (it is not published yet, or Zed is
/// offline): what failed, and the two ways to give Zed the server.
pub fn not_found_advice(what_failed: &str) -> String {
    format!(
        "{what_failed}. Install buckley-lsp from its checkout (npm ci && npm pack && \
         npm install -g ./buckley-lsp-*.tgz) so that `buckley-lsp` is on your PATH, or set its \
         path in Zed's settings.json: \"lsp\": {{ \"{SERVER_ID}\": {{ \"binary\": {{ \"path\": \
         \"/path/to/buckley-lsp\" }} }} }}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_how_to_give_zed_the_server_when_npm_cannot() {
        let advice = not_found_advice("cannot look up buckley-lsp on npm: 404 Not Found");
        assert!(advice.starts_with("cannot look up buckley-lsp on npm: 404 Not Found. "));
        assert!(advice.contains("npm install -g ./buckley-lsp-*.tgz"));
        assert!(advice.contains(
            r#""lsp": { "buckley-lsp": { "binary": { "path": "/path/to/buckley-lsp" } } }"#
        ));
    }

    #[test]
    fn the_binary_setting_wins_and_defaults_to_stdio() {
        assert_eq!(
            choose_source(
                Some("/opt/buckley-lsp".into()),
                None,
                Some("/usr/bin/buckley-lsp".into())
            ),
            ServerSource::UserBinary {
                path: "/opt/buckley-lsp".into(),
                arguments: vec!["--stdio".into()]
            }
        );
        assert_eq!(
            choose_source(
                Some("/opt/b".into()),
                Some(vec!["--stdio".into(), "--log-level".into(), "debug".into()]),
                None
            ),
            ServerSource::UserBinary {
                path: "/opt/b".into(),
                arguments: vec!["--stdio".into(), "--log-level".into(), "debug".into()]
            }
        );
    }

    #[test]
    fn an_empty_binary_setting_is_ignored() {
        assert_eq!(
            choose_source(Some("  ".into()), None, None),
            ServerSource::ManagedNpm
        );
    }

    #[test]
    fn then_the_worktree_path_then_npm() {
        assert_eq!(
            choose_source(None, None, Some("/home/me/.local/bin/buckley-lsp".into())),
            ServerSource::OnPath {
                path: "/home/me/.local/bin/buckley-lsp".into()
            }
        );
        assert_eq!(choose_source(None, None, None), ServerSource::ManagedNpm);
    }

    #[test]
    fn installs_when_missing_or_outdated() {
        assert!(needs_install(None, "0.2.0"));
        assert!(needs_install(Some("0.1.0"), "0.2.0"));
        assert!(!needs_install(Some("0.2.0"), "0.2.0"));
    }

    #[test]
    fn runs_the_bundled_script_from_the_work_directory() {
        assert_eq!(
            managed_arguments("/ext/work/buckley/"),
            vec![
                "/ext/work/buckley/node_modules/buckley-lsp/dist/buckley-lsp.js".to_string(),
                "--stdio".to_string()
            ]
        );
        assert_eq!(
            managed_arguments(""),
            vec![SERVER_SCRIPT.to_string(), "--stdio".to_string()]
        );
    }
}
