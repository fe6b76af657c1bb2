//! A shell command line's rules: what destroys (outside the project, or
//! past undoing), what runs code fetched from the network, what sends local
//! data away, what reads credentials, what writes where it should not, and
//! secrets written into the line itself.

use super::context::NativeContext;
use super::findings::{Findings, read_rules, write_rules};
use super::words::{self, Script, Simple};
use super::{fetch, paths};
use crate::args::{ArgContext, has_secret};
use crate::ssrf::{HostClass, classify_host};
use crate::{Category, Severity};

/// Programs that fetch a URL.
const FETCHERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "http",
    "https",
    "xh",
    "aria2c",
    "lwp-request",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
];

/// Programs that run the code they are given on standard input or as a
/// script argument.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "deno",
    "bun",
    "php",
    "pwsh",
    "powershell",
    "iex",
    "invoke-expression",
    "source",
    ".",
    "eval",
    "osascript",
];

/// Programs that hand a socket the data they are given.
const SOCKETS: &[&str] = &["nc", "ncat", "netcat", "socat", "telnet", "openssl"];

/// Programs whose output is what they read (so a credential they read
/// reaches the model's transcript).
const READERS: &[&str] = &[
    "cat", "less", "more", "head", "tail", "bat", "tac", "nl", "xxd", "od", "hexdump", "strings",
    "base64", "grep", "rg", "awk", "sed", "cut", "sort", "uniq", "diff", "cp", "scp", "rsync",
    "tar", "zip", "gzip", "openssl", "gpg", "jq", "yq", "curl", "wget", "nc", "ncat",
];

/// Programs that only wrap another command line (their own flags first).
const WRAPPERS: &[&str] = &[
    "sudo",
    "doas",
    "env",
    "nohup",
    "time",
    "nice",
    "ionice",
    "command",
    "builtin",
    "exec",
    "stdbuf",
    "timeout",
    "xargs",
    "caffeinate",
    "unbuffer",
];

/// Branches a force-push or a deletion must not reach unreviewed.
const PROTECTED_BRANCHES: &[&str] = &[
    "main",
    "master",
    "trunk",
    "develop",
    "production",
    "prod",
    "release",
    "stable",
];

pub(crate) fn inspect(command: &str, ctx: &NativeContext<'_>, out: &mut Findings) {
    if command.len() > 64 * 1024 {
        out.add(
            Category::Shell,
            "command-too-long-to-inspect",
            Severity::High,
        );
        return;
    }
    let script = words::parse(command, 0);
    if script.unreadable == Some("substitutions nest too deeply to inspect") {
        out.add(Category::Shell, "command-nests-too-deeply", Severity::High);
    }
    inspect_script(&script, ctx, out, 0);
    if has_secret(command, &ArgContext::default())
        && script
            .commands()
            .iter()
            .flat_map(|c| c.words.iter())
            .any(|w| has_secret(w, &ArgContext::default()))
    {
        out.add(Category::Secret, "secret-in-command", Severity::High);
    }
}

/// Whether `line` fetches code and runs it (for scripts an agent writes).
pub(crate) fn fetch_and_run(line: &str) -> bool {
    let script = words::parse(line, 0);
    script.pipelines.iter().any(|p| pipe_runs_fetched(p)) || script.any(runs_substituted_fetch)
}

fn inspect_script(script: &Script, ctx: &NativeContext<'_>, out: &mut Findings, depth: usize) {
    for pipeline in &script.pipelines {
        if pipe_runs_fetched(pipeline) {
            out.add(
                Category::RemoteCode,
                "download-and-execute",
                Severity::Critical,
            );
        }
        pipe_exfiltrates(pipeline, ctx, out);
        for cmd in pipeline {
            simple(cmd, ctx, out, depth);
            for nested in &cmd.nested {
                inspect_script(nested, ctx, out, depth + 1);
            }
        }
    }
}

/// A command's program and its arguments, past assignments and wrappers
/// (`sudo -u x env A=b nohup rm …` is `rm …`).
pub(crate) fn program(words: &[String]) -> (Option<String>, &[String]) {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if is_assignment(w) {
            i += 1;
            continue;
        }
        let name = base(w);
        if WRAPPERS.contains(&name.as_str()) {
            i += 1;
            // The wrapper's own flags (and `-u user`, `-n 10`, `timeout 5`).
            while i < words.len() {
                let a = &words[i];
                if a.starts_with('-') {
                    let takes_value = matches!(
                        a.as_str(),
                        "-u" | "-g" | "-n" | "-p" | "-C" | "-I" | "-s" | "-k" | "-L" | "-P" | "-d"
                    );
                    i += if takes_value { 2 } else { 1 };
                } else if is_assignment(a)
                    || (name == "timeout" && a.chars().next().is_some_and(|c| c.is_ascii_digit()))
                    || (name == "nice" && a.parse::<i32>().is_ok())
                {
                    i += 1;
                } else {
                    break;
                }
            }
            continue;
        }
        return (Some(name), &words[i + 1..]);
    }
    (None, &[])
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// A program's name without its directory, lowercased (`/bin/RM` → `rm`).
fn base(word: &str) -> String {
    word.rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .trim_end_matches(".exe")
        .to_ascii_lowercase()
}

fn is_fetcher(cmd: &Simple) -> bool {
    program(&cmd.words)
        .0
        .is_some_and(|p| FETCHERS.contains(&p.as_str()))
}

/// An interpreter reading its program from standard input (no script file
/// argument, or `-`, `-s`).
fn interprets_stdin(cmd: &Simple) -> bool {
    let (Some(p), args) = program(&cmd.words) else {
        return false;
    };
    if !INTERPRETERS.contains(&p.as_str()) {
        return false;
    }
    let script_arg = args.iter().find(|a| !a.starts_with('-'));
    script_arg.is_none()
        || args
            .iter()
            .any(|a| a == "-" || a == "-s" || a == "/dev/stdin")
}

/// `curl … | sh`: a fetcher earlier in the pipeline feeding an interpreter.
fn pipe_runs_fetched(pipeline: &[Simple]) -> bool {
    pipeline
        .iter()
        .position(is_fetcher)
        .is_some_and(|at| pipeline[at + 1..].iter().any(interprets_stdin))
}

/// `bash -c "$(curl …)"`, `sh <(curl …)`, `eval "$(wget -O- …)"`,
/// `python3 -c "$(curl …)"`: an interpreter given fetched text.
fn runs_substituted_fetch(cmd: &Simple) -> bool {
    let Some(p) = program(&cmd.words).0 else {
        return false;
    };
    INTERPRETERS.contains(&p.as_str())
        && cmd
            .nested
            .iter()
            .any(|s| s.pipelines.iter().flatten().any(is_fetcher))
}

fn simple(cmd: &Simple, ctx: &NativeContext<'_>, out: &mut Findings, depth: usize) {
    let (program, args) = program(&cmd.words);
    let program = program.unwrap_or_default();
    if runs_substituted_fetch(cmd) {
        out.add(
            Category::RemoteCode,
            "download-and-execute",
            Severity::Critical,
        );
    }
    // `bash -c '…'`, `sh -c`, `eval …`: the script it runs.
    let inline = match program.as_str() {
        "sh" | "bash" | "zsh" | "dash" | "ksh" => args
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
            .and_then(|i| args.get(i + 1))
            .cloned(),
        "eval" => Some(args.join(" ")),
        _ => None,
    };
    if let Some(script) = inline {
        let nested = words::parse(&script, depth + 1);
        if nested.unreadable == Some("substitutions nest too deeply to inspect") {
            out.add(Category::Shell, "command-nests-too-deeply", Severity::High);
        }
        if depth < words::MAX_DEPTH {
            inspect_script(&nested, ctx, out, depth + 1);
        }
    }
    // A here-document run by an interpreter is a script too.
    if let Some(text) = &cmd.stdin_text
        && interprets_stdin(cmd)
        && matches!(program.as_str(), "sh" | "bash" | "zsh" | "dash" | "ksh")
        && depth < words::MAX_DEPTH
    {
        inspect_script(&words::parse(text, depth + 1), ctx, out, depth + 1);
    }
    for r in &cmd.redirects {
        let target = r.target.as_str();
        if target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") {
            out.add(
                Category::Exfiltration,
                "shell-network-redirect",
                Severity::Critical,
            );
            continue;
        }
        if r.writes() {
            if block_device(target) {
                out.add(
                    Category::Destructive,
                    "overwrite-block-device",
                    Severity::Critical,
                );
            } else {
                write_rules(&paths::resolve(target, ctx), ctx, out);
            }
        } else if r.reads() {
            read_rules(&paths::resolve(target, ctx), ctx, out);
        }
    }
    if program.is_empty() {
        return;
    }
    mining(&program, args, out);
    destructive(&program, args, ctx, out);
    writes(&program, args, ctx, out);
    reads(&program, args, ctx, out);
    network(&program, args, out);
}

fn block_device(target: &str) -> bool {
    [
        "/dev/sd",
        "/dev/nvme",
        "/dev/hd",
        "/dev/vd",
        "/dev/xvd",
        "/dev/mmcblk",
        "/dev/disk",
        "/dev/mapper/",
        "/dev/md",
    ]
    .iter()
    .any(|d| target.starts_with(d))
}

fn mining(program: &str, args: &[String], out: &mut Findings) {
    const MINERS: &[&str] = &[
        "xmrig",
        "minerd",
        "cpuminer",
        "cgminer",
        "bfgminer",
        "ethminer",
        "nbminer",
        "t-rex",
        "lolminer",
        "phoenixminer",
        "xmr-stak",
    ];
    if MINERS.contains(&program)
        || args.iter().any(|a| {
            a.to_ascii_lowercase().contains("stratum+tcp://")
                || a.to_ascii_lowercase().contains("stratum+ssl://")
        })
    {
        out.add(Category::Cryptomining, "mining-program", Severity::Critical);
    }
}

/// Whether `arg` (a path argument) names everything, the home directory,
/// the root, a system location or a place outside the project.
fn sweeping(arg: &str, ctx: &NativeContext<'_>) -> Option<&'static str> {
    let a = arg.trim();
    if matches!(
        a,
        "/" | "/*"
            | "~"
            | "~/"
            | "~/*"
            | "$HOME"
            | "${HOME}"
            | "$HOME/"
            | "$HOME/*"
            | "${HOME}/*"
            | "*"
            | "."
            | "./"
            | "./*"
            | ".."
            | "../"
            | "../*"
    ) || a.starts_with("/*")
    {
        return Some(if matches!(a, "*" | "." | "./" | "./*") {
            "delete-whole-working-directory"
        } else {
            "delete-root-or-home"
        });
    }
    if a.contains('$') {
        // `rm -rf "$DIR/"`: where it points is decided at run time.
        if a.starts_with('$')
            && !a.starts_with("$HOME/")
            && !a.starts_with("${HOME}/")
            && !a.starts_with("$PWD")
        {
            return Some("delete-unresolved-path");
        }
    }
    let abs = paths::resolve(a, ctx);
    if let Some(home) = ctx.home
        && (abs == home || abs.trim_end_matches('/') == home)
    {
        return Some("delete-root-or-home");
    }
    if paths::scratch(&abs) {
        return None;
    }
    if ctx.projects().any(|p| abs == p.trim_end_matches('/')) {
        return Some("delete-whole-project");
    }
    if paths::inside_project(&abs, ctx) {
        return None;
    }
    if paths::system(&abs) || abs.starts_with('~') || !paths::inside_project(&abs, ctx) {
        return Some("delete-outside-project");
    }
    None
}

fn has_flag(args: &[String], short: char, long: &[&str]) -> bool {
    args.iter().any(|a| {
        long.contains(&a.as_str())
            || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short))
    })
}

fn operands(args: &[String]) -> impl Iterator<Item = &String> {
    let mut past = false;
    args.iter().filter(move |a| {
        if past {
            return true;
        }
        if a.as_str() == "--" {
            past = true;
            return false;
        }
        !a.starts_with('-')
    })
}

fn destructive(program: &str, args: &[String], ctx: &NativeContext<'_>, out: &mut Findings) {
    match program {
        "rm" | "rmdir" | "shred" | "unlink" => {
            let recursive = has_flag(args, 'r', &["--recursive"])
                || has_flag(args, 'R', &[])
                || program == "shred";
            if args.iter().any(|a| a == "--no-preserve-root") {
                out.add(
                    Category::Destructive,
                    "delete-root-or-home",
                    Severity::Critical,
                );
            }
            for a in operands(args) {
                if let Some(rule) = sweeping(a, ctx) {
                    let recursive_rule = recursive || rule == "delete-outside-project";
                    if !recursive_rule {
                        continue;
                    }
                    let severity = if rule == "delete-root-or-home" {
                        Severity::Critical
                    } else {
                        Severity::High
                    };
                    out.add(Category::Destructive, rule, severity);
                } else if crate::sensitive::sensitive_file_rule(&paths::resolve(a, ctx), true)
                    .is_some()
                {
                    out.add(Category::Destructive, "delete-credentials", Severity::High);
                }
                let abs = paths::resolve(a, ctx);
                if paths::protected_rule(&abs, ctx).is_some() && !paths::scratch(&abs) {
                    out.add(
                        Category::ProtectedFile,
                        "delete-protected-file",
                        Severity::High,
                    );
                }
            }
        }
        "find" => {
            if (args.iter().any(|a| a == "-delete")
                || args
                    .windows(2)
                    .any(|w| w[0] == "-exec" && matches!(base(&w[1]).as_str(), "rm" | "shred")))
                && let Some(root) = args.first().filter(|a| !a.starts_with('-'))
                && let Some(rule) = sweeping(root, ctx)
                && rule != "delete-whole-working-directory"
            {
                let severity = if rule == "delete-root-or-home" {
                    Severity::Critical
                } else {
                    Severity::High
                };
                out.add(Category::Destructive, rule, severity);
            }
        }
        "mkfs" | "wipefs" | "fdisk" | "sfdisk" | "parted" | "mkswap" | "blkdiscard" => {
            out.add(Category::Destructive, "wipe-disk", Severity::Critical)
        }
        p if p.starts_with("mkfs.") => {
            out.add(Category::Destructive, "wipe-disk", Severity::Critical)
        }
        "dd" if args
            .iter()
            .any(|a| a.strip_prefix("of=").is_some_and(block_device)) =>
        {
            out.add(
                Category::Destructive,
                "overwrite-block-device",
                Severity::Critical,
            );
        }
        "chmod" | "chown" | "chgrp" => {
            let recursive = has_flag(args, 'R', &["--recursive"]);
            if recursive
                && operands(args).skip(1).any(|a| {
                    sweeping(a, ctx).is_some_and(|r| r != "delete-whole-working-directory")
                })
            {
                out.add(
                    Category::Destructive,
                    "permissions-outside-project",
                    Severity::High,
                );
            }
            if program == "chmod"
                && args
                    .iter()
                    .any(|a| a.contains("777") || a == "u+s" || a.contains("+s"))
                && operands(args).skip(1).any(|a| {
                    let abs = paths::resolve(a, ctx);
                    paths::system(&abs) && !paths::inside_project(&abs, ctx)
                })
            {
                out.add(
                    Category::Destructive,
                    "permissions-outside-project",
                    Severity::High,
                );
            }
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" => {
            out.add(Category::Destructive, "stop-the-machine", Severity::High)
        }
        "kill" | "pkill" | "killall"
            if args.iter().any(|a| a == "-1" || a == "1") && program == "kill" =>
        {
            out.add(Category::Destructive, "kill-every-process", Severity::High);
        }
        "systemctl" | "service"
            if args.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "stop" | "disable" | "mask" | "poweroff" | "reboot" | "halt"
                )
            }) =>
        {
            out.add(Category::Destructive, "stop-system-service", Severity::High);
        }
        "git" => git(args, out),
        "docker" | "podman" => {
            let joined = args.join(" ");
            if (joined.contains("system prune")
                || joined.contains("volume prune")
                || joined.contains("volume rm"))
                && (has_flag(args, 'a', &["--all"]) || joined.contains("volume"))
            {
                out.add(
                    Category::Destructive,
                    "delete-container-data",
                    Severity::High,
                );
            }
        }
        "kubectl" => {
            let joined = args.join(" ");
            if joined.starts_with("delete")
                && (joined.contains("--all")
                    || joined.contains("namespace")
                    || joined.contains(" ns "))
            {
                out.add(
                    Category::Destructive,
                    "delete-cluster-resources",
                    Severity::High,
                );
            }
        }
        "terraform" | "tofu" | "pulumi"
            if (args.iter().any(|a| a == "destroy")
                || (args.first().is_some_and(|a| a == "apply")
                    && args.iter().any(|a| a == "-destroy"))) =>
        {
            out.add(
                Category::Destructive,
                "destroy-infrastructure",
                Severity::High,
            );
        }
        "aws" => {
            let joined = args.join(" ");
            if (joined.starts_with("s3 rm") && joined.contains("--recursive"))
                || joined.starts_with("s3 rb")
                || joined.contains("delete-db-instance")
                || joined.contains("terminate-instances")
            {
                out.add(
                    Category::Destructive,
                    "delete-cloud-resources",
                    Severity::High,
                );
            }
        }
        "gcloud" | "az" if args.iter().any(|a| a == "delete") => {
            out.add(
                Category::Destructive,
                "delete-cloud-resources",
                Severity::High,
            );
        }
        "psql" | "mysql" | "sqlite3" | "mongosh" | "redis-cli" => {
            let joined = args.join(" ").to_ascii_lowercase();
            if joined.contains("drop database")
                || joined.contains("drop table")
                || joined.contains("drop schema")
                || joined.contains("truncate ")
                || joined.contains("flushall")
                || joined.contains("dropdatabase")
            {
                out.add(Category::Destructive, "drop-database", Severity::High);
            }
        }
        "crontab" if !args.iter().any(|a| a == "-l") => {
            out.add(
                Category::ProtectedFile,
                "protected-startup-file",
                Severity::High,
            );
        }
        _ => {}
    }
    // A fork bomb: a function that pipes itself into itself in the background.
    if program.starts_with(':') || args.iter().any(|a| a.contains(":|:")) {
        out.add(Category::Destructive, "fork-bomb", Severity::Critical);
    }
}

fn git(args: &[String], out: &mut Findings) {
    let Some(sub) = args.iter().position(|a| !a.starts_with('-')) else {
        return;
    };
    let rest = &args[sub + 1..];
    match args[sub].as_str() {
        "push" => {
            let force = rest.iter().any(|a| {
                a == "--force"
                    || a == "-f"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
                    || a == "--mirror"
            }) || rest
                .iter()
                .filter(|a| !a.starts_with('-'))
                .skip(1)
                .any(|r| r.starts_with('+'));
            let delete = rest.iter().any(|a| a == "--delete" || a == "-d")
                || rest
                    .iter()
                    .filter(|a| !a.starts_with('-'))
                    .skip(1)
                    .any(|r| r.starts_with(':'));
            let refs: Vec<&String> = rest
                .iter()
                .filter(|a| !a.starts_with('-'))
                .skip(1)
                .collect();
            let protected = refs.is_empty()
                || refs.iter().any(|r| {
                    let name = r.trim_start_matches(['+', ':']);
                    let dest = name
                        .rsplit(':')
                        .next()
                        .unwrap_or(name)
                        .trim_start_matches("refs/heads/");
                    PROTECTED_BRANCHES.iter().any(|b| {
                        dest == *b
                            || dest.starts_with(&format!("{b}/"))
                            || dest.starts_with(&format!("{b}-"))
                    }) || dest == "HEAD"
                });
            if (force || delete) && protected {
                out.add(
                    Category::Destructive,
                    "git-rewrite-protected-branch",
                    Severity::High,
                );
            } else if force || delete {
                out.add(Category::Destructive, "git-force-push", Severity::Medium);
            }
        }
        "config"
            if rest.iter().any(|a| {
                let a = a.to_ascii_lowercase();
                a == "core.hookspath"
                    || a == "core.sshcommand"
                    || a == "core.fsmonitor"
                    || a.starts_with("credential.")
                    || a == "core.pager"
                    || a.starts_with("alias.")
            }) && rest.len() >= 2 =>
        {
            out.add(
                Category::ProtectedFile,
                "protected-git-config",
                Severity::High,
            );
        }
        "reset" if rest.iter().any(|a| a == "--hard") => {
            out.add(Category::Destructive, "git-discard-work", Severity::Medium)
        }
        "clean" if has_flag(rest, 'f', &["--force"]) => {
            out.add(Category::Destructive, "git-discard-work", Severity::Medium)
        }
        "filter-branch" | "filter-repo" => {
            out.add(Category::Destructive, "git-rewrite-history", Severity::High)
        }
        _ => {}
    }
}

/// Files a command writes through its arguments (`cp`/`mv`/`tee`/`sed -i`
/// and friends); redirections are handled with the command.
fn writes(program: &str, args: &[String], ctx: &NativeContext<'_>, out: &mut Findings) {
    let targets: Vec<&String> = match program {
        "cp" | "mv" | "install" | "ln" | "rsync" => operands(args).last().into_iter().collect(),
        "tee" | "touch" | "truncate" => operands(args).collect(),
        "sed" | "perl"
            if args
                .iter()
                .any(|a| a.starts_with("-i") || a == "--in-place") =>
        {
            operands(args).skip(1).collect()
        }
        "chmod" if args.iter().any(|a| a.contains('x')) => operands(args).skip(1).collect(),
        _ => Vec::new(),
    };
    for t in targets {
        if t.contains(':') && matches!(program, "rsync") {
            continue;
        }
        let abs = paths::resolve(t, ctx);
        // A copied-in credentials file (`cp .env.example .env`) is set-up
        // work; where it lands and what it is named otherwise still count.
        if let Some(rule) = paths::protected_rule(&abs, ctx) {
            out.add(Category::ProtectedFile, rule, Severity::High);
        }
        if !paths::scratch(&abs) && !paths::inside_project(&abs, ctx) {
            let severity = if paths::system(&abs) || abs.starts_with('~') {
                Severity::High
            } else {
                Severity::Medium
            };
            out.add(Category::OutsideProject, "write-outside-project", severity);
        }
    }
}

/// Credentials a command reads and shows (or copies, or sends).
fn reads(program: &str, args: &[String], ctx: &NativeContext<'_>, out: &mut Findings) {
    if !READERS.contains(&program) {
        return;
    }
    let sources: Vec<&String> = match program {
        "cp" | "scp" | "rsync" => {
            let ops: Vec<&String> = operands(args).collect();
            ops[..ops.len().saturating_sub(1)].to_vec()
        }
        _ => args.iter().collect(),
    };
    for s in sources {
        let s = s.strip_prefix('@').unwrap_or(s);
        let s = s
            .split_once('=')
            .filter(|(k, _)| k.starts_with("--"))
            .map_or(s, |(_, v)| v);
        if s.starts_with('-') || s.contains("://") {
            continue;
        }
        if let Some(rule) = crate::sensitive::sensitive_file_rule(&paths::resolve(s, ctx), true) {
            out.add(Category::SensitiveFile, rule, Severity::High);
        }
    }
}

/// What a command sends or fetches over the network.
fn network(program: &str, args: &[String], out: &mut Findings) {
    let fetcher = FETCHERS.contains(&program);
    if !fetcher
        && !SOCKETS.contains(&program)
        && !matches!(program, "scp" | "rsync" | "sftp" | "ssh")
    {
        return;
    }
    for a in args {
        if let Some((_, host)) = fetch::scheme_and_host(a) {
            if classify_host(&host) == HostClass::Metadata {
                out.add(
                    Category::Ssrf,
                    HostClass::Metadata.rule(),
                    Severity::Critical,
                );
            }
            if fetch::collector(&host) {
                out.add(
                    Category::Exfiltration,
                    "exfiltration-collector-host",
                    Severity::High,
                );
            }
        } else if classify_host(a.split(['/', ':']).next().unwrap_or(a)) == HostClass::Metadata {
            out.add(
                Category::Ssrf,
                HostClass::Metadata.rule(),
                Severity::Critical,
            );
        }
        if secret_variable(a) {
            out.add(
                Category::Exfiltration,
                "secret-variable-sent",
                Severity::High,
            );
        }
    }
    if SOCKETS.contains(&program)
        && args
            .iter()
            .any(|a| a == "-e" || a == "-c" || a.starts_with("exec:") || a.starts_with("EXEC:"))
    {
        out.add(
            Category::RemoteCode,
            "shell-over-socket",
            Severity::Critical,
        );
    }
}

/// `$AWS_SECRET_ACCESS_KEY`, `${GITHUB_TOKEN}`: a secret's variable
/// expanded into what is sent.
fn secret_variable(arg: &str) -> bool {
    let mut rest = arg;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let name: String = rest
            .trim_start_matches('{')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let upper = name.to_ascii_uppercase();
        if [
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "APIKEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIAL",
        ]
        .iter()
        .any(|s| upper.contains(s))
        {
            return true;
        }
    }
    false
}

/// A pipeline that sends data away: something read or dumped earlier in it
/// (a credentials file, the environment) and a fetcher or socket taking it,
/// or a fetcher uploading a local credentials file.
fn pipe_exfiltrates(pipeline: &[Simple], ctx: &NativeContext<'_>, out: &mut Findings) {
    let sends = |c: &Simple| {
        let (p, args) = program(&c.words);
        let p = p.unwrap_or_default();
        SOCKETS.contains(&p.as_str())
            || (FETCHERS.contains(&p.as_str())
                && args.iter().any(|a| {
                    a.starts_with("-d")
                        || a.starts_with("--data")
                        || a.starts_with("-F")
                        || a.starts_with("--form")
                        || a == "-T"
                        || a.starts_with("--upload-file")
                        || a.starts_with("--post-file")
                        || a.starts_with("--body-file")
                        || a == "@-"
                }))
    };
    let dumps_secrets = |c: &Simple| {
        let first = c.words.first().map(|w| base(w)).unwrap_or_default();
        let (p, args) = program(&c.words);
        let p = p.unwrap_or_default();
        (matches!(first.as_str(), "env" | "printenv" | "set" | "export") && p.is_empty())
            || matches!(p.as_str(), "printenv" | "set" | "export")
            || (READERS.contains(&p.as_str())
                && args.iter().any(|a| {
                    crate::sensitive::sensitive_file_rule(&paths::resolve(a, ctx), true).is_some()
                }))
            || c.redirects.iter().any(|r| {
                r.reads()
                    && crate::sensitive::sensitive_file_rule(&paths::resolve(&r.target, ctx), true)
                        .is_some()
            })
    };
    for (i, cmd) in pipeline.iter().enumerate() {
        if !sends(cmd) {
            continue;
        }
        let (_, args) = program(&cmd.words);
        let uploads_credentials = args.iter().any(|a| {
            let file = a
                .split_once('@')
                .map(|(_, f)| f)
                .filter(|f| !f.is_empty() && *f != "-");
            file.is_some_and(|f| {
                crate::sensitive::sensitive_file_rule(&paths::resolve(f, ctx), true).is_some()
            })
        }) || args.windows(2).any(|w| {
            (w[0] == "-T" || w[0] == "--upload-file")
                && crate::sensitive::sensitive_file_rule(&paths::resolve(&w[1], ctx), true)
                    .is_some()
        });
        let fed = pipeline[..i].iter().any(dumps_secrets)
            || cmd.redirects.iter().any(|r| {
                r.reads()
                    && crate::sensitive::sensitive_file_rule(&paths::resolve(&r.target, ctx), true)
                        .is_some()
            });
        if uploads_credentials || fed {
            out.add(
                Category::Exfiltration,
                "send-credentials",
                Severity::Critical,
            );
        }
    }
}
