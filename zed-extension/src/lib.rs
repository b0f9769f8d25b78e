//! The Zed extension for buckley-lsp: registers the server for every language, finds it (see
//! `resolve`), installs the npm package when needed (reporting the installation status), and
//! passes the user's `initialization_options` and `settings` through.
//!
//! Zed builds this crate to wasm itself; the pure logic lives in `resolve` and is tested on the
//! host with `cargo test`.

pub mod resolve;

use resolve::{
    choose_source, managed_arguments, needs_install, not_found_advice, ServerSource, PACKAGE,
    SERVER_ID,
};
use zed_extension_api::{
    self as zed, serde_json, settings::LspSettings, LanguageServerId,
    LanguageServerInstallationStatus, Result,
};

struct BuckleyExtension {
    /// The npm package is checked once per Zed session.
    installed: bool,
}

impl BuckleyExtension {
    fn ensure_npm_package(&mut self, id: &LanguageServerId) -> Result<()> {
        if self.installed {
            return Ok(());
        }
        zed::set_language_server_installation_status(
            id,
            &LanguageServerInstallationStatus::CheckingForUpdate,
        );
        let installed = zed::npm_package_installed_version(PACKAGE)?;
        let latest = match zed::npm_package_latest_version(PACKAGE) {
            Ok(latest) => latest,
            // Offline with a version already installed: use it.
            Err(_) if installed.is_some() => {
                self.installed = true;
                zed::set_language_server_installation_status(
                    id,
                    &LanguageServerInstallationStatus::None,
                );
                return Ok(());
            }
            Err(error) => {
                return Err(self.failed(
                    id,
                    not_found_advice(&format!("cannot look up {PACKAGE} on npm: {error}")),
                ))
            }
        };
        if needs_install(installed.as_deref(), &latest) {
            zed::set_language_server_installation_status(
                id,
                &LanguageServerInstallationStatus::Downloading,
            );
            if let Err(error) = zed::npm_install_package(PACKAGE, &latest) {
                if installed.is_none() {
                    return Err(self.failed(
                        id,
                        not_found_advice(&format!("cannot install {PACKAGE}@{latest}: {error}")),
                    ));
                }
            }
        }
        self.installed = true;
        zed::set_language_server_installation_status(id, &LanguageServerInstallationStatus::None);
        Ok(())
    }

    fn failed(&self, id: &LanguageServerId, message: String) -> String {
        zed::set_language_server_installation_status(
            id,
            &LanguageServerInstallationStatus::Failed(message.clone()),
        );
        message
    }
}

impl zed::Extension for BuckleyExtension {
    fn new() -> Self {
        Self { installed: false }
    }

    fn language_server_command(
        &mut self,
        id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = lsp_settings(worktree).and_then(|settings| settings.binary);
        let (path, arguments, env) = match binary {
            Some(binary) => (binary.path, binary.arguments, binary.env),
            None => (None, None, None),
        };
        let env: Vec<(String, String)> =
            env.map(|env| env.into_iter().collect()).unwrap_or_default();
        match choose_source(path, arguments, worktree.which(PACKAGE)) {
            ServerSource::UserBinary { path, arguments } => Ok(zed::Command {
                command: path,
                args: arguments,
                env,
            }),
            ServerSource::OnPath { path } => Ok(zed::Command {
                command: path,
                args: resolve::stdio_arguments(),
                env: worktree.shell_env(),
            }),
            ServerSource::ManagedNpm => {
                self.ensure_npm_package(id)?;
                let work_dir = std::env::current_dir()
                    .map(|dir| dir.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Ok(zed::Command {
                    command: zed::node_binary_path()?,
                    args: managed_arguments(&work_dir),
                    env,
                })
            }
        }
    }

    fn language_server_initialization_options(
        &mut self,
        _id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(lsp_settings(worktree).and_then(|settings| settings.initialization_options))
    }

    fn language_server_workspace_configuration(
        &mut self,
        _id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        // The server reads the `buckley` section of workspace/configuration.
        Ok(lsp_settings(worktree)
            .and_then(|settings| settings.settings)
            .map(|settings| serde_json::json!({ "buckley": settings })))
    }
}

/// The user's `lsp.buckley-lsp` settings for this worktree, if any.
fn lsp_settings(worktree: &zed::Worktree) -> Option<LspSettings> {
    LspSettings::for_worktree(SERVER_ID, worktree).ok()
}

zed::register_extension!(BuckleyExtension);
