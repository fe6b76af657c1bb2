//! Where a file an agent touches is: inside its project, in a temporary
//! directory, or elsewhere; and whether it is a file whose change gives
//! someone code execution or hides what the agent does (git hooks, CI
//! pipelines, agent and hook settings, shell start-up files).

use super::context::NativeContext;

/// `path` made absolute against the context's working directory, with `.`
/// and `..` resolved lexically and `~` expanded when the home is known.
pub(crate) fn resolve(path: &str, ctx: &NativeContext<'_>) -> String {
    let path = path.trim();
    let joined = if let Some(rest) =
        path.strip_prefix("~/")
            .or(if path == "~" { Some("") } else { None })
    {
        match ctx.home {
            Some(home) => format!("{home}/{rest}"),
            None => format!("~/{rest}"),
        }
    } else if let Some(rest) = path
        .strip_prefix("$HOME/")
        .or_else(|| path.strip_prefix("${HOME}/"))
    {
        format!("{}/{rest}", ctx.home.unwrap_or("~"))
    } else if path.starts_with('/') || path.starts_with('~') {
        path.to_owned()
    } else {
        format!("{}/{path}", ctx.cwd.trim_end_matches('/'))
    };
    let absolute = joined.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let body = parts.join("/");
    if absolute { format!("/{body}") } else { body }
}

/// Whether the absolute `path` is `root` or below it.
pub(crate) fn under(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    if root.is_empty() {
        return path.starts_with('/');
    }
    path == root || path.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
}

/// Whether the absolute `path` is inside the project.
pub(crate) fn inside_project(path: &str, ctx: &NativeContext<'_>) -> bool {
    ctx.projects().any(|root| under(path, root))
}

/// Places anything may write to: temporary directories and the null device.
pub(crate) fn scratch(path: &str) -> bool {
    ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .any(|r| under(path, r))
        || matches!(
            path,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
        )
        || path.starts_with("/dev/fd/")
}

/// Whether the absolute `path` is a system location (where a write changes
/// the machine, not a project).
pub(crate) fn system(path: &str) -> bool {
    [
        "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/var", "/root", "/opt",
        "/sys", "/proc", "/dev", "/srv", "/home",
    ]
    .iter()
    .any(|r| under(path, r))
        || path == "/"
}

/// The rule a write to `path` (absolute) breaks by what the file is, if any.
pub(crate) fn protected_rule(path: &str, ctx: &NativeContext<'_>) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    let has = |s: &str| lower.contains(s);
    let last = lower.rsplit('/').next().unwrap_or(&lower);
    if has("/.git/hooks/") || lower.ends_with("/.git/hooks") || has("/.husky/") {
        return Some("protected-git-hooks");
    }
    if lower.ends_with("/.git/config")
        || (last == ".gitconfig")
        || lower.ends_with("/.git/info/attributes")
    {
        return Some("protected-git-config");
    }
    if has("/.github/workflows/")
        || has("/.github/actions/")
        || has("/.circleci/")
        || has("/.buildkite/")
        || has("/.woodpecker")
        || matches!(
            last,
            ".gitlab-ci.yml"
                | "jenkinsfile"
                | "azure-pipelines.yml"
                | "bitbucket-pipelines.yml"
                | ".travis.yml"
                | ".drone.yml"
        )
    {
        return Some("protected-ci");
    }
    if has("/.claude/settings")
        || last == "managed-settings.json"
        || last == "managed-mcp.json"
        || lower.ends_with("/.cursor/hooks.json")
        || lower.ends_with("/.cursor/mcp.json")
        || lower.ends_with("/.gemini/settings.json")
        || has("/.codex/")
        || last == ".mcp.json"
        || lower.ends_with("/.vscode/mcp.json")
        || last == "claude_desktop_config.json"
        || has("/.config/interlock/")
        || has("/.local/share/interlock/")
        || has("/.claude/hooks/")
    {
        return Some("protected-agent-settings");
    }
    let startup = matches!(
        last,
        ".bashrc"
            | ".bash_profile"
            | ".bash_login"
            | ".bash_logout"
            | ".profile"
            | ".zshrc"
            | ".zprofile"
            | ".zshenv"
            | ".zlogin"
            | "authorized_keys"
    ) || has("/.config/fish/")
        || has("/.config/autostart/")
        || has("/.config/systemd/")
        || has("/etc/cron")
        || has("/var/spool/cron")
        || has("/etc/systemd/")
        || lower == "/etc/profile"
        || has("/etc/profile.d/")
        || has("/etc/sudoers");
    if startup {
        return Some("protected-startup-file");
    }
    // A dotfile or dot-directory in the home directory (its tools' settings).
    if let Some(home) = ctx.home
        && let Some(rest) = path.strip_prefix(home).and_then(|r| r.strip_prefix('/'))
        && rest.starts_with('.')
        && !inside_project(path, ctx)
    {
        return Some("protected-home-dotfile");
    }
    if path.starts_with("~/.") {
        return Some("protected-home-dotfile");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> NativeContext<'static> {
        NativeContext {
            cwd: "/home/dev/app/src",
            project: Some("/home/dev/app"),
            home: Some("/home/dev"),
        }
    }

    #[test]
    fn paths_resolve_against_the_working_directory() {
        let c = ctx();
        assert_eq!(resolve("../build", &c), "/home/dev/app/build");
        assert_eq!(resolve("~/.ssh/id_rsa", &c), "/home/dev/.ssh/id_rsa");
        assert_eq!(resolve("/etc/../etc/passwd", &c), "/etc/passwd");
        assert_eq!(resolve("../../../../..", &c), "/");
        assert!(inside_project(&resolve("lib/x.rs", &c), &c));
        assert!(!inside_project(&resolve("../../other", &c), &c));
        assert!(!under("/home/dev/application", "/home/dev/app"));
    }

    #[test]
    fn protected_files_are_named() {
        let c = ctx();
        for (p, rule) in [
            ("/home/dev/app/.git/hooks/pre-commit", "protected-git-hooks"),
            ("/home/dev/app/.github/workflows/ci.yml", "protected-ci"),
            (
                "/home/dev/app/.claude/settings.json",
                "protected-agent-settings",
            ),
            ("/home/dev/.bashrc", "protected-startup-file"),
            ("/home/dev/.config/nvim/init.lua", "protected-home-dotfile"),
        ] {
            assert_eq!(protected_rule(p, &c), Some(rule), "{p}");
        }
        for p in [
            "/home/dev/app/.gitignore",
            "/home/dev/app/src/main.rs",
            "/home/dev/app/.github/CODEOWNERS",
        ] {
            assert_eq!(protected_rule(p, &c), None, "{p}");
        }
    }
}
