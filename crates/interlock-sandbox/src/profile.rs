//! What a server may reach: the `sandbox` setting of one server in
//! `gateway.toml` (and the API), as written.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A server's `sandbox` setting as written.
///
/// Absent means [`Setting::Default`]: the profile derived from the launch
/// ([`crate::defaults`]). `sandbox = "off"` runs the server unconfined, which
/// the review window shows as a warning and the approval leaf records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Setting {
    /// No `sandbox` entry: the derived profile alone.
    #[default]
    Default,
    /// `sandbox = { read = [...], write = [...], net = ..., limits = {...} }`:
    /// added to the derived profile.
    Profile(Box<Profile>),
    /// `sandbox = "off"`: the operator's explicit choice to run unconfined.
    Off,
}

impl Setting {
    /// Whether the server runs unconfined.
    pub fn is_off(&self) -> bool {
        matches!(self, Setting::Off)
    }

    /// The setting as pinned with the server's surface: `"default"`, `"off"`
    /// or the profile's members. Paths as written (the derived part is a
    /// function of the launch, which is pinned beside it).
    pub fn pinned(&self) -> serde_json::Value {
        match self {
            Setting::Default => serde_json::Value::from("default"),
            Setting::Off => serde_json::Value::from("off"),
            Setting::Profile(p) => serde_json::to_value(p).expect("a profile serializes"),
        }
    }
}

impl Serialize for Setting {
    /// As written: `"default"`, `"off"` or the profile's table.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Setting::Default => s.serialize_str("default"),
            Setting::Off => s.serialize_str("off"),
            Setting::Profile(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Setting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Setting, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Word(String),
            Table(Profile),
        }
        match Written::deserialize(d)? {
            Written::Word(w) if w == "off" => Ok(Setting::Off),
            Written::Word(w) if w == "default" => Ok(Setting::Default),
            Written::Word(w) => Err(serde::de::Error::custom(format!(
                "sandbox must be \"off\", \"default\" or a table {{ read, write, net, limits }}, not {w:?}"
            ))),
            Written::Table(p) => Ok(Setting::Profile(Box::new(p))),
        }
    }
}

/// Paths and network a server may use beyond its derived defaults, and its
/// resource limits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Paths it may read (a directory: everything under it).
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Paths it may read and write.
    #[serde(default)]
    pub write: Vec<PathBuf>,
    /// Where it may connect.
    #[serde(default)]
    pub net: Net,
    /// Its resource limits.
    #[serde(default)]
    pub limits: Limits,
}

/// Network reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Net {
    /// No network at all: a network namespace with only its own loopback.
    #[default]
    None,
    /// Only these `host:port` destinations, through the gateway's egress
    /// proxy.
    Allow(Vec<HostPort>),
}

impl Serialize for Net {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Net::None => s.serialize_str("none"),
            Net::Allow(list) => list.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Net {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Net, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Word(String),
            List(Vec<String>),
        }
        match Written::deserialize(d)? {
            Written::Word(w) if w == "none" => Ok(Net::None),
            Written::Word(w) => Err(serde::de::Error::custom(format!(
                "net must be \"none\" or a list of \"host:port\", not {w:?}"
            ))),
            Written::List(items) if items.is_empty() => Ok(Net::None),
            Written::List(items) => items
                .iter()
                .map(|i| HostPort::parse(i).map_err(serde::de::Error::custom))
                .collect::<Result<Vec<_>, _>>()
                .map(Net::Allow),
        }
    }
}

/// One allowed destination: a host name or address, and a port.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    /// Lower-case host name, or an IP address (IPv6 without brackets).
    pub host: String,
    /// The port.
    pub port: u16,
}

impl HostPort {
    /// `host:port` or `[v6]:port`.
    pub fn parse(text: &str) -> Result<HostPort, String> {
        let bad = || format!("{text:?} is not host:port");
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (h, p) = rest.split_once("]:").ok_or_else(bad)?;
            (h, p)
        } else {
            text.rsplit_once(':').ok_or_else(bad)?
        };
        let port: u16 = port.parse().map_err(|_| bad())?;
        let valid = !host.is_empty()
            && host.len() <= 253
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'));
        if !valid || port == 0 {
            return Err(bad());
        }
        Ok(HostPort {
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl Serialize for HostPort {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Resource limits, enforced by the kernel on the server's processes
/// (`setrlimit` through util-linux's `prlimit` inside the sandbox). A server
/// that exceeds one is stopped by the kernel; the gateway reports the exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Data memory (heap and private writable mappings) per process, in MiB
    /// (`RLIMIT_DATA`: address-space reservations that are never written,
    /// which V8 and the JVM make in gigabytes, do not count).
    pub memory_mb: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// CPU seconds per process over its life (`RLIMIT_CPU`); 0: none.
    pub cpu_secs: u64,
    /// Processes (`RLIMIT_NPROC`); 0: none. The kernel counts every process
    /// of the OS user, not only the server's: set it for a server run as a
    /// user of its own.
    pub processes: u64,
    /// The largest file it may write, in MiB (`RLIMIT_FSIZE`).
    pub file_size_mb: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_mb: 4096,
            open_files: 4096,
            cpu_secs: 0,
            processes: 0,
            file_size_mb: 4096,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(text: &str) -> Result<Setting, String> {
        #[derive(Deserialize)]
        struct Doc {
            sandbox: Setting,
        }
        serde_json::from_str::<Doc>(text)
            .map(|d| d.sandbox)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn off_default_and_a_profile_are_read() {
        assert_eq!(setting(r#"{"sandbox":"off"}"#).unwrap(), Setting::Off);
        assert_eq!(
            setting(r#"{"sandbox":"default"}"#).unwrap(),
            Setting::Default
        );
        let p = setting(
            r#"{"sandbox":{"read":["/srv/a"],"write":["/srv/b"],"net":["api.github.com:443","[::1]:8080"],"limits":{"memory_mb":512}}}"#,
        )
        .unwrap();
        let Setting::Profile(p) = p else { panic!() };
        assert_eq!(p.read, vec![PathBuf::from("/srv/a")]);
        assert_eq!(
            p.net,
            Net::Allow(vec![
                HostPort::parse("api.github.com:443").unwrap(),
                HostPort::parse("[::1]:8080").unwrap()
            ])
        );
        assert_eq!(p.limits.memory_mb, 512);
        assert_eq!(p.limits.open_files, Limits::default().open_files);
    }

    #[test]
    fn typos_are_refused_not_read_as_a_wider_sandbox() {
        assert!(setting(r#"{"sandbox":"of"}"#).is_err());
        assert!(setting(r#"{"sandbox":{"reads":["/"]}}"#).is_err());
        assert!(setting(r#"{"sandbox":{"net":"all"}}"#).is_err());
        assert!(setting(r#"{"sandbox":{"net":["github.com"]}}"#).is_err());
        assert!(setting(r#"{"sandbox":{"net":["a b:1"]}}"#).is_err());
        assert!(setting(r#"{"sandbox":{"limits":{"memory":1}}}"#).is_err());
    }

    #[test]
    fn the_pinned_form_names_every_member() {
        let p = Setting::Profile(Box::new(Profile {
            read: vec!["/a".into()],
            net: Net::Allow(vec![HostPort::parse("Example.org:443").unwrap()]),
            ..Profile::default()
        }));
        let v = p.pinned();
        assert_eq!(v["net"], serde_json::json!(["example.org:443"]));
        assert_eq!(v["read"], serde_json::json!(["/a"]));
        assert_eq!(v["limits"]["memory_mb"], 4096);
        assert_eq!(Setting::Off.pinned(), "off");
    }
}
