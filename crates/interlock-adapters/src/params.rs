//! Parameter checks and typed access.
//!
//! The engine validates a plan against the registry before it runs, but an adapter
//! is the last line before infrastructure, so it checks again against the very same
//! built-in specs (one source of truth: `interlock_core::Registry::builtin`). A
//! mismatch here means a caller skipped validation, and the adapter refuses rather
//! than guessing.

use std::sync::LazyLock;

use interlock_canon::{Map, Value};
use interlock_core::Registry;
use interlock_core::registry::check_params;

static BUILTIN: LazyLock<Registry> = LazyLock::new(Registry::builtin);

/// Checks the params of built-in action `action` against its registered spec.
pub(crate) fn check_action(action: &str, params: &Map) -> Result<(), String> {
    let specs = BUILTIN
        .action(action)
        .and_then(|a| a.params.as_deref())
        .ok_or_else(|| format!("`{action}` is not a built-in action"))?;
    join(check_params(specs, params))
}

/// Checks the params of built-in probe `probe` against its registered spec.
pub(crate) fn check_probe(probe: &str, params: &Map) -> Result<(), String> {
    let specs = BUILTIN
        .probe(probe)
        .and_then(|p| p.params.as_deref())
        .ok_or_else(|| format!("`{probe}` is not a built-in probe"))?;
    join(check_params(specs, params))
}

fn join(problems: Vec<(String, String)>) -> Result<(), String> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems
            .into_iter()
            .map(|(_, m)| m)
            .collect::<Vec<_>>()
            .join("; "))
    }
}

/// A string param (already type-checked, so `None` means absent).
pub(crate) fn string<'a>(params: &'a Map, name: &str) -> Option<&'a str> {
    params.get(name).and_then(Value::as_str)
}

/// An integer param.
pub(crate) fn integer(params: &Map, name: &str) -> Option<i64> {
    params
        .get(name)
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
}

/// A string-list param.
pub(crate) fn string_list(params: &Map, name: &str) -> Option<Vec<String>> {
    params.get(name).and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

/// A file mode param: permission bits only. Set-uid, set-gid and sticky bits are
/// refused: an agent-written file should never gain privileges when executed.
pub(crate) fn mode(params: &Map) -> Result<Option<u32>, String> {
    match integer(params, "mode") {
        None => Ok(None),
        Some(m) if (0..=0o777).contains(&m) => Ok(Some(m as u32)),
        Some(m) => Err(format!(
            "`mode` must be permission bits between 0 and 0o777 (511), found {m}"
        )),
    }
}
