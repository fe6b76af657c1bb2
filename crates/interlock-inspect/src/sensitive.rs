//! Sensitive files (issue 24 item 1): files whose contents are credentials.
//!
//! Path traversal asks *where* a path points (outside the roots, into `/etc`);
//! this asks *what* the file is, so `/workspace/.env` is flagged even though the
//! workspace is an allowed root, and `environment.md`, `.env.example` or
//! `id_rsa.pub` are not. A value is read as paths when it is one token (or its
//! key names a path); a command line (`cat ~/.aws/credentials`) is split into
//! tokens and each token with a `/` is checked.

/// Rule for the sensitive file `s` names (a value of an argument keyed `key`).
pub(crate) fn sensitive_file_rule(s: &str, path_key: bool) -> Option<&'static str> {
    let t = s.trim();
    if t.len() < 4 || t.len() > 4096 {
        return None;
    }
    // Cheap gate: every rule below needs one of these.
    if !t.contains(['.', '/', '\\']) && !path_key {
        return None;
    }
    if !names().is_match(t) {
        return None;
    }
    if path_key || !t.contains(char::is_whitespace) {
        return file_rule(t);
    }
    let reader = t.split_whitespace().next().is_some_and(|w| {
        READERS.contains(&w.trim_start_matches("sudo").to_ascii_lowercase().as_str())
    });
    t.split(|c: char| c.is_whitespace() || "'\"`;|&<>(),=".contains(c))
        .filter(|tok| tok.contains(['/', '\\']) || (reader && tok.starts_with('.')))
        .find_map(file_rule)
}

/// Every rule below needs one of these (ASCII case-insensitive): one pass rejects
/// the ordinary path.
fn names() -> &'static aho_corasick::AhoCorasick {
    static NAMES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build([
                ".env",
                "env ",
                "id_",
                ".ssh",
                ".aws",
                ".azure",
                "gcloud",
                ".kube",
                ".docker",
                ".oci",
                "terraform",
                "/gh/",
                "/hub",
                "secrets",
                "/etc/",
                "environ",
                "system32",
                "repair",
                "ntds",
                "netrc",
                ".npmrc",
                ".pypirc",
                "credentials",
                ".pgpass",
                ".my.cnf",
                ".htpasswd",
                ".vault",
                ".boto",
                ".s3cfg",
                "client_secret",
                "_history",
                "master.key",
                "service-account",
                ".key",
                ".p12",
                ".pfx",
                ".ppk",
                ".jks",
                ".keystore",
                ".kdbx",
                ".gpg",
                ".pem",
                ".gnupg",
                "chrome",
                "chromium",
                "brave",
                "edge",
                "firefox",
                "mozilla",
                "opera",
                "vivaldi",
                "keychain",
                "secrets.y",
                "admin.conf",
            ])
            .expect("sensitive names")
    })
}

/// Programs whose arguments are files even without a `/` (`cat .env`).
const READERS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "cp",
    "scp",
    "base64",
    "xxd",
    "strings",
    "type",
    "get-content",
    "gc",
    "tar",
    "zip",
    "open",
    "source",
    ".",
    "grep",
    "od",
    "nl",
    "tac",
    "bat",
];

fn file_rule(p: &str) -> Option<&'static str> {
    let lower = p.replace('\\', "/").to_ascii_lowercase();
    let lower = lower.trim_end_matches('/');
    let last = lower.rsplit('/').next().unwrap_or(lower);
    let has_dir = |d: &str| {
        lower.contains(&format!("/{d}/"))
            || lower.starts_with(&format!("{d}/"))
            || lower.starts_with(&format!("~/{d}/"))
    };

    // `.env` and its environment variants (not the committed templates).
    if last == ".env"
        || last.strip_prefix(".env.").is_some_and(|v| {
            !matches!(
                v,
                "example" | "sample" | "template" | "dist" | "defaults" | "schema" | "tpl" | "md"
            )
        })
        || (last.ends_with(".env") && last.len() > 4 && !last.contains(' '))
    {
        return Some("sensitive-file-dotenv");
    }
    // SSH private keys and the .ssh directory (public keys and known_hosts are public).
    if matches!(
        last,
        "id_rsa" | "id_dsa" | "id_ecdsa" | "id_ed25519" | "id_ecdsa_sk" | "id_ed25519_sk"
    ) || (has_dir(".ssh") && !last.ends_with(".pub") && last != "known_hosts" && last != ".ssh")
        || lower.ends_with("/.ssh")
        || lower == ".ssh"
    {
        return Some("sensitive-file-ssh-key");
    }
    // Cloud and tool credential stores.
    const CLOUD: &[&str] = &[
        ".aws/credentials",
        ".aws/config",
        ".aws/sso/cache",
        ".azure/",
        ".config/gcloud/",
        ".kube/config",
        ".docker/config.json",
        ".oci/config",
        ".terraform.d/credentials",
        ".config/gh/hosts.yml",
        ".config/hub",
        "/var/run/secrets/",
        "/run/secrets/",
        "/etc/kubernetes/admin.conf",
    ];
    if CLOUD.iter().any(|c| lower.contains(c)) || lower.ends_with("/.azure") {
        return Some("sensitive-file-cloud-credentials");
    }
    if matches!(
        last,
        ".netrc"
            | "_netrc"
            | ".npmrc"
            | ".pypirc"
            | ".git-credentials"
            | ".pgpass"
            | ".my.cnf"
            | ".htpasswd"
            | ".vault-token"
            | ".boto"
            | ".s3cfg"
            | "credentials.json"
            | "client_secret.json"
            | "application_default_credentials.json"
            | "terraform.tfstate"
            | "terraform.tfstate.backup"
            | ".bash_history"
            | ".zsh_history"
            | ".psql_history"
            | ".mysql_history"
            | ".python_history"
            | "secrets.yml"
            | "secrets.yaml"
            | "master.key"
            | "credentials.yml.enc"
    ) || (last.starts_with("service-account") && last.ends_with(".json"))
    {
        return Some("sensitive-file-credentials");
    }
    // Key material by extension.
    let ext = last.rsplit_once('.').map(|(_, e)| e);
    if matches!(
        ext,
        Some("key" | "p12" | "pfx" | "ppk" | "jks" | "keystore" | "kdbx" | "gpg")
    ) || (ext == Some("pem") && (last.contains("key") || last.contains("priv")))
        || has_dir(".gnupg")
        || lower.ends_with("/.gnupg")
    {
        return Some("sensitive-file-key");
    }
    // System secrets.
    const SYSTEM: &[&str] = &[
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/master.passwd",
        "/etc/security/opasswd",
        "/etc/ssl/private",
        "/proc/self/environ",
        "/system32/config/sam",
        "/system32/config/system",
        "/system32/config/security",
        "/repair/sam",
        "ntds.dit",
    ];
    if SYSTEM.iter().any(|x| lower.contains(x))
        || (lower.starts_with("/proc/") && last == "environ")
    {
        return Some("sensitive-file-system");
    }
    // Browser profiles: saved passwords, cookies, keychains.
    let browser = [
        "google/chrome/",
        "google-chrome/",
        "chromium/",
        "bravesoftware/",
        "microsoft/edge/",
        ".mozilla/firefox/",
        "firefox/profiles/",
        "opera software/",
        "vivaldi/",
    ]
    .iter()
    .any(|b| lower.contains(b));
    if browser
        && matches!(
            last,
            "login data"
                | "cookies"
                | "web data"
                | "local state"
                | "logins.json"
                | "key4.db"
                | "key3.db"
                | "cookies.sqlite"
                | "signons.sqlite"
                | "login data for account"
        )
        || lower.contains("library/keychains/")
        || last.ends_with(".keychain-db")
        || last.ends_with(".keychain")
    {
        return Some("sensitive-file-browser");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_look_alikes() {
        for p in [
            ".env",
            "/workspace/.env",
            "/workspace/.env.production",
            "~/.ssh/id_ed25519",
            "/home/u/.aws/credentials",
            "/etc/shadow",
            "C:\\Users\\me\\AppData\\Local\\Google\\Chrome\\User Data\\Default\\Login Data",
        ] {
            assert!(sensitive_file_rule(p, true).is_some(), "{p}");
        }
        assert!(sensitive_file_rule("cat ~/.aws/credentials", false).is_some());
        for p in [
            "environment.md",
            ".env.example",
            "/workspace/docs/env.md",
            "~/.ssh/id_rsa.pub",
            "/workspace/src/keys.rs",
            "Add DATABASE_URL to your .env file",
        ] {
            assert!(sensitive_file_rule(p, false).is_none(), "{p}");
        }
    }
}
