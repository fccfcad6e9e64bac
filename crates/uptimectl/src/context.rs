//! Where the API is and which key to use: flags, then `UPTIME_API_URL` /
//! `UPTIME_API_KEY`, then the config file's current (or named) context.
//!
//! The file (`$UPTIMECTL_CONFIG`, else `$XDG_CONFIG_HOME/uptimectl/config.yaml`,
//! else `~/.config/uptimectl/config.yaml`) holds named contexts like
//! kubectl's:
//!
//! ```yaml
//! current-context: prod
//! contexts:
//!   prod: { api-url: https://uptime.example.com, api-key: uk_... }
//!   local: { api-url: http://127.0.0.1:8080, api-key: uk_... }
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid config file: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("no context named {0:?} in the config file")]
    UnknownContext(String),
    #[error("no API URL: pass --api-url, set UPTIME_API_URL, or add a context to the config file")]
    NoUrl,
    #[error("no API key: pass --api-key, set UPTIME_API_KEY, or add one to the context")]
    NoKey,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct ConfigFile {
    current_context: Option<String>,
    #[serde(default)]
    contexts: BTreeMap<String, ContextEntry>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct ContextEntry {
    api_url: Option<String>,
    api_key: Option<String>,
}

/// What the commands talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub api_url: String,
    pub api_key: String,
}

/// What the command line said (flags and environment, as clap read them).
#[derive(Debug, Default, Clone)]
pub struct Given {
    pub api_url: Option<String>,
    pub api_key: Option<String>,
    pub context: Option<String>,
    pub config: Option<PathBuf>,
}

impl Given {
    /// Flags and environment win over the file's context.
    pub fn resolve(&self) -> Result<Target, ContextError> {
        let entry = self.context_entry()?;
        let api_url = self
            .api_url
            .clone()
            .or(entry.api_url)
            .ok_or(ContextError::NoUrl)?;
        let api_key = self
            .api_key
            .clone()
            .or(entry.api_key)
            .ok_or(ContextError::NoKey)?;
        Ok(Target {
            api_url: api_url.trim_end_matches('/').to_string(),
            api_key,
        })
    }

    fn context_entry(&self) -> Result<ContextEntry, ContextError> {
        let Some(path) = self.config.clone().or_else(default_path) else {
            return Ok(ContextEntry::default());
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            // No file is no context; a named context must then be missing.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return match &self.context {
                    Some(name) => Err(ContextError::UnknownContext(name.clone())),
                    None => Ok(ContextEntry::default()),
                };
            }
            Err(source) => return Err(ContextError::Read { path, source }),
        };
        let file: ConfigFile = serde_norway::from_str(&text).map_err(|e| ContextError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let name = self.context.clone().or(file.current_context);
        match name {
            None => Ok(ContextEntry::default()),
            Some(name) => file
                .contexts
                .get(&name)
                .cloned()
                .ok_or(ContextError::UnknownContext(name)),
        }
    }
}

fn default_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("UPTIMECTL_CONFIG") {
        return Some(PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("uptimectl").join("config.yaml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const FILE: &str = "current-context: prod\ncontexts:\n  prod: { api-url: 'https://p.example/', api-key: pk }\n  local: { api-url: 'http://127.0.0.1:8080', api-key: lk }\n";

    #[test]
    fn the_current_context_then_a_named_one_then_flags_win() {
        let (_dir, path) = file(FILE);
        let given = Given {
            config: Some(path),
            ..Given::default()
        };
        assert_eq!(
            given.resolve().unwrap(),
            Target {
                api_url: "https://p.example".into(),
                api_key: "pk".into()
            }
        );
        let local = Given {
            context: Some("local".into()),
            ..given.clone()
        };
        assert_eq!(local.resolve().unwrap().api_key, "lk");
        let flagged = Given {
            api_key: Some("flag".into()),
            ..local.clone()
        };
        assert_eq!(flagged.resolve().unwrap().api_key, "flag");
        let unknown = Given {
            context: Some("staging".into()),
            ..given
        };
        assert!(matches!(
            unknown.resolve(),
            Err(ContextError::UnknownContext(_))
        ));
    }

    #[test]
    fn without_a_file_flags_must_say_everything() {
        let dir = tempfile::tempdir().unwrap();
        let given = Given {
            config: Some(dir.path().join("absent.yaml")),
            api_url: Some("http://x".into()),
            ..Given::default()
        };
        assert!(matches!(given.resolve(), Err(ContextError::NoKey)));
    }
}
