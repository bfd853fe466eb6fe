//! The server's settings: the `--web.*` flags and the config file's `[web]` section (flags
//! win), checked. Where to listen, the telemetry path, how many requests are answered at once,
//! and the web config file (TLS, basic auth, headers), read.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::web_config::WebConfigHandle;
use crate::config_error::ConfigError;

pub const DEFAULT_LISTEN_ADDRESS: &str = "0.0.0.0:3913";
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// The config file's `[web]` section, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSection {
    listen_address: Option<String>,
    max_connections: Option<usize>,
    telemetry_path: Option<String>,
    /// `--web.config.file`.
    config_file: Option<PathBuf>,
}

/// The `--web.*` flags, as given.
#[derive(Debug, Default, Clone, Copy)]
pub struct WebFlags<'a> {
    pub listen_address: Option<&'a str>,
    pub max_connections: Option<usize>,
    pub telemetry_path: Option<&'a str>,
    pub config_file: Option<&'a Path>,
}

/// The server's settings, checked.
#[derive(Debug)]
pub struct WebSettings {
    pub listen_address: SocketAddr,
    pub max_connections: usize,
    pub telemetry_path: String,
    pub web_config: WebConfigHandle,
}

impl WebSettings {
    /// The flags, else the `[web]` section, else the defaults; the web config file read.
    pub fn read(flags: WebFlags<'_>, section: &WebSection) -> Result<WebSettings, ConfigError> {
        let listen = flags
            .listen_address
            .or(section.listen_address.as_deref())
            .unwrap_or(DEFAULT_LISTEN_ADDRESS);
        let telemetry_path = flags
            .telemetry_path
            .or(section.telemetry_path.as_deref())
            .unwrap_or("/metrics");
        let max_connections = flags
            .max_connections
            .or(section.max_connections)
            .unwrap_or(DEFAULT_MAX_CONNECTIONS);
        if max_connections == 0 {
            return Err(ConfigError(
                "--web.max-connections: 0 would serve nobody\n  fix: leave it at 64, or give a positive number".into(),
            ));
        }
        let config_file = flags.config_file.or(section.config_file.as_deref());
        Ok(WebSettings {
            listen_address: listen_address(listen)?,
            max_connections,
            telemetry_path: checked_telemetry_path(telemetry_path)?,
            web_config: WebConfigHandle::load(config_file)?,
        })
    }
}

/// `HOST:PORT`, where HOST is an address or a name that resolves (`localhost:3913`), or
/// `:PORT`, every interface, as Prometheus' exporters take it (`0.0.0.0:PORT`, the default's
/// host: IPv4 everywhere, where `[::]` would depend on the host's IPv6 settings).
fn listen_address(listen: &str) -> Result<SocketAddr, ConfigError> {
    use std::net::ToSocketAddrs;
    if let Ok(address) = listen.parse() {
        return Ok(address);
    }
    if let Some(port) = listen.strip_prefix(':') {
        if let Ok(port) = port.parse::<u16>() {
            return Ok(SocketAddr::from(([0, 0, 0, 0], port)));
        }
    }
    let resolved = listen.to_socket_addrs().map_err(|e| {
        ConfigError(format!("--web.listen-address: {listen:?} is not HOST:PORT ({e})\n  fix: e.g. --web.listen-address 127.0.0.1:3913, localhost:3913 or [::]:3913"))
    })?;
    // IPv4 first: `localhost` resolves to ::1 too, and a scraper asking for it by name
    // commonly tries 127.0.0.1.
    let resolved: Vec<SocketAddr> = resolved.collect();
    resolved
        .iter()
        .find(|a| a.is_ipv4())
        .or(resolved.first())
        .copied()
        .ok_or_else(|| {
            ConfigError(format!(
                "--web.listen-address: {listen:?} resolves to no address\n  fix: e.g. --web.listen-address 127.0.0.1:3913"
            ))
        })
}

/// `--web.telemetry-path`: an absolute path that is not the landing page nor under `/-/`.
fn checked_telemetry_path(telemetry_path: &str) -> Result<String, ConfigError> {
    if !telemetry_path.starts_with('/')
        || telemetry_path == "/"
        || telemetry_path.starts_with("/-/")
    {
        return Err(ConfigError(format!(
            "--web.telemetry-path: {telemetry_path:?} must start with '/' and not be '/' or under '/-/'\n  fix: e.g. --web.telemetry-path /metrics"
        )));
    }
    Ok(telemetry_path.to_string())
}
