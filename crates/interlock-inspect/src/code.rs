//! Rules for the argument categories issue 24 added: destructive SQL, code
//! execution in interpreted languages, and cryptomining. Each is `(rule, regex)`;
//! [`args`](crate::args) compiles them into its one-pass set.
//!
//! Like the older rules they key on *structure*, not on a word: a `DELETE` is
//! destructive when its statement ends without a `WHERE`, an `eval` when it is
//! called with something to evaluate (not `model.eval()`, not prose about
//! `eval()`), a miner when it is run (flags, a path, a release archive) or pointed
//! at a pool, not when it is named.

/// Destructive SQL: statements that destroy data or reach the file system.
/// `UPDATE … SET` without `WHERE` needs a negative check the regex crate cannot
/// express; [`update_without_where`] does it.
pub(crate) const SQL_DESTRUCTIVE: &[(&str, &str)] = &[
    (
        "sql-delete-without-where",
        r#"(?i)(?:^|[;\n])\s*delete\s+(?:from\s+)?[\w."\x60\[\]]+(?:\s+(?:as\s+)?[a-z_]\w*)?\s*(?:;|--|#|$|returning(?-u:\b))"#,
    ),
    (
        "sql-where-tautology",
        r#"(?i)(?:^|[;\n])\s*(?:delete\s+from|update)\s+[\w."\x60\[\]]+\s+(?:set\s+[^;]*?\s)?where\s+(?:1\s*=\s*1|true|'1'\s*=\s*'1'|1|0\s*=\s*0)\s*(?:;|--|#|$)"#,
    ),
    (
        "sql-drop",
        r#"(?i)(?:^|[;\n])\s*drop\s+(?:table|database|schema|view|index|user|role|function|procedure|trigger|collection|keyspace)(?:\s+if\s+exists)?\s+[\w."\x60\[\]]+(?:\s*,\s*[\w."\x60\[\]]+)*\s*(?:;|--|#|$|cascade|restrict|purge)"#,
    ),
    (
        "sql-truncate",
        r#"(?i)(?:^|[;\n])\s*truncate\s+(?:table\s+)?[\w."\x60\[\]]+\s*(?:;|--|#|$|cascade|restart|continue)"#,
    ),
    (
        "sql-alter-drop",
        r#"(?i)(?:^|[;\n])\s*alter\s+table\s+[\w."\x60\[\]]+\s+drop\s+(?:column\s+|constraint\s+)?[\w."\x60\[\]]+"#,
    ),
    (
        "sql-file-write",
        r#"(?i)(?-u:\b)into\s+(?:out|dump)file\s+['"]"#,
    ),
    (
        "sql-file-read",
        r#"(?i)(?-u:\b)(?:load_file\s*\(\s*['"0]|load\s+data\s+(?:local\s+)?infile\s+['"]|pg_read_(?:binary_)?file\s*\(|lo_(?:import|export)\s*\(|copy\s+\S+\s+(?:from|to)\s+(?:program\s+'|'/))"#,
    ),
    (
        "sql-nosql-drop",
        r"(?-u:\b)db\.(?:[\w]+\.)?(?:drop|dropDatabase)\s*\(\s*\)|\.deleteMany\s*\(\s*\{\s*\}\s*\)|(?i)^\s*flush(?:all|db)(?:\s+(?:a?sync))?\s*$",
    ),
];

/// `UPDATE` statements; [`update_without_where`] checks each for a `WHERE`.
pub(crate) const SQL_UPDATE: &str =
    r#"(?i)(?:^|[;\n])\s*update\s+[\w."\x60\[\]]+\s+set\s+[\w."\x60\[\]]+\s*=[^;]*"#;

/// Whether an `UPDATE … SET …` statement (one match of [`SQL_UPDATE`]) lacks a
/// `WHERE`: every row changes.
pub(crate) fn update_without_where(stmt: &str) -> bool {
    let l = stmt.to_ascii_lowercase();
    !l.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w == "where")
}

/// Code execution in interpreted languages (Python, JavaScript, PHP, Ruby, Java,
/// PowerShell).
pub(crate) const CODE: &[(&str, &str)] = &[
    (
        "code-eval",
        // Called with something (not `eval()`), not a method (`model.eval()`).
        r"(?:^|[^\w.$])(?:eval|exec)\s*\(\s*[^\s)]",
    ),
    (
        "code-os-command",
        r"(?-u:\b)os\.(?:system|popen[234]?|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)\s*\(",
    ),
    (
        "code-subprocess-shell",
        r"(?-u:\b)subprocess\.(?:run|call|check_call|check_output|Popen)\s*\([^)]{0,300}shell\s*=\s*True|(?-u:\b)subprocess\.(?:getoutput|getstatusoutput)\s*\(",
    ),
    (
        "code-dynamic-import",
        r#"(?-u:\b)__import__\s*\(\s*['"]\w+|(?-u:\b)importlib\.import_module\s*\(\s*['"](?:os|subprocess|pty|socket|ctypes|builtins)['"]|(?-u:\b)pty\.spawn\s*\(|(?-u:\b)(?:pickle|cPickle|dill|marshal)\.loads?\s*\("#,
    ),
    (
        "code-child-process",
        r#"require\s*\(\s*['"\x60](?:node:)?child_process['"\x60]\s*\)|from\s+['"](?:node:)?child_process['"]|(?-u:\b)child_process\s*\.\s*(?:exec|execSync|spawn|spawnSync|execFile|execFileSync|fork)\s*\(|(?-u:\b)(?:execSync|spawnSync|execFileSync)\s*\(\s*['"\x60]"#,
    ),
    (
        "code-function-constructor",
        r#"(?:^|[^\w.])(?:new\s+)?Function\s*\(\s*(?:['"\x60][\w$]*['"\x60]\s*,\s*)*['"\x60][^'"\x60]*(?:return|require|process|eval|fetch|import|this|constructor|document|window|atob)|constructor\s*\.\s*constructor\s*\(|constructor\s*\(\s*['"\x60]return"#,
    ),
    (
        "code-js-sandbox-escape",
        r"(?-u:\b)vm\.(?:runInNewContext|runInThisContext|runInContext|compileFunction)\s*\(|new\s+vm\.Script\s*\(|process\.binding\s*\(|process\.mainModule(?-u:\b)|(?-u:\b)setTimeout\s*\(\s*['\x22\x60]",
    ),
    (
        "code-php-exec",
        r#"(?-u:\b)(?:shell_exec|passthru|proc_open|pcntl_exec|popen|system|exec|assert|create_function|preg_replace)\s*\(\s*(?:\$_(?:GET|POST|REQUEST|COOKIE|SERVER)|base64_decode|['"][^'"]{0,40}(?-u:\b)(?:rm|curl|wget|nc|bash|sh|cat|id|whoami|ls|chmod|python|perl|powershell|cmd)(?-u:\b))|<\?php\s+(?:@?(?:system|exec|eval|passthru|shell_exec|assert))"#,
    ),
    (
        "code-jvm-ruby-exec",
        r"(?-u:\b)(?:Kernel\.(?:exec|system|spawn)|IO\.popen|Open3\.(?:popen[23]|capture[23e]?)|Runtime\.getRuntime\(\)\s*\.\s*exec|ProcessBuilder\s*\(|ScriptEngineManager\s*\()|%x\{[^}]+\}",
    ),
    (
        "code-powershell",
        r"(?i)(?-u:\b)invoke-expression(?-u:\b)|(?:^|[|;(]\s*)iex\s*[\($]|(?-u:\b)iex\s*\(|(?-u:\b)powershell(?:\.exe)?(?:\s+-\w+)*\s+-(?:e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{8,}|\.downloadstring\s*\(",
    ),
    (
        "code-inline-interpreter",
        r#"(?-u:\b)(?:python[0-9.]*|node|nodejs|perl|ruby|php|deno|bun)\s+(?:-[A-Za-z]+\s+)*-(?:c|e|r|eval|p)\s+['"]"#,
    ),
];

/// Cryptomining: pool URLs and hosts, miner binaries being run, miner flags,
/// in-browser miners.
pub(crate) const MINING: &[(&str, &str)] = &[
    (
        "mining-pool-url",
        r"(?i)stratum2?\+(?:tcp|ssl|tls|udp|ws)://|(?i)(?-u:\b)(?:[a-z0-9-]+\.)*(?:minexmr|supportxmr|nanopool|2miners|f2pool|ethermine|hashvault|moneroocean|nicehash|miningpoolhub|herominers|c3pool|unmineable|xmrpool|monerohash|viabtc|antpool|poolin|slushpool|dwarfpool|minergate|zpool|prohashing|kryptex|zergpool)\.(?:com|org|net|pro|io|eu|cc|me|to|stream|xyz|cloud|ws)(?-u:\b)",
    ),
    (
        "mining-binary",
        r#"(?i)(?:^|[\s;|&'"=/\\])(?:xmrig|xmr-stak(?:-rx)?|cpuminer(?:-multi|-opt)?|minerd|cgminer|bfgminer|ethminer|nbminer|t-rex|phoenixminer|lolminer|gminer|teamredminer|nanominer|srbminer(?:-multi)?|ccminer|kawpowminer|nheqminer|xmr-node-proxy)(?:\.exe)?(?:\s+-{1,2}[a-z]|[-_]v?\d+(?:\.\d+)+|\.(?:tar\.gz|tgz|zip|exe)(?-u:\b))|(?i)(?:^|[\s;|&'"=])[\w.~-]*(?:/[\w.-]+)*/(?:xmrig|xmr-stak|cpuminer|minerd|cgminer|bfgminer|ethminer|nbminer|t-rex|phoenixminer|lolminer|gminer|teamredminer|nanominer|srbminer|ccminer)(?:\.exe)?(?:\s|$|[;|&'"])"#,
    ),
    (
        "mining-flags",
        r"(?i)--(?:donate-level|cpu-max-threads-hint|randomx-1gb-pages|coin=(?:monero|xmr|eth|rvn|etc))(?-u:\b)|(?:\s-a|--algo)[= ](?:rx/0|rx/wow|cn/r|cn/half|cryptonight|randomx|ethash|etchash|kawpow|autolykos2?|equihash|cuckatoo\d*)(?-u:\b)",
    ),
    (
        "mining-browser",
        r"(?i)(?-u:\b)coinhive(?:\.min)?\.js|CoinHive\.(?:Anonymous|User|Token)|(?-u:\b)(?:cryptoloot|coin-?imp|webminepool|crypto-?webminer)(?:\.min)?\.js",
    ),
];
