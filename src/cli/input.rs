//! Reading documents from files or stdin, with the format taken from the extension.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, bail};
use interlock_core::canon::Format;

use super::FormatArg;

/// The largest document read (16 MiB): a plan or policy is reviewed by a human, and
/// a bound keeps a hostile input from exhausting memory before intake rejects it.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads `path` (or stdin for `-`/`None`) and decides its format.
pub fn read_document(
    path: Option<&Path>,
    format: Option<FormatArg>,
) -> anyhow::Result<(Vec<u8>, Format)> {
    let stdin = path.is_none_or(|p| p == Path::new("-"));
    let format = match (format, path) {
        (Some(FormatArg::Json), _) => Format::Json,
        (Some(FormatArg::Yaml), _) => Format::Yaml,
        (None, _) if stdin => Format::Json,
        (None, Some(p)) => format_from_extension(p)?,
        (None, None) => Format::Json,
    };
    let mut bytes = Vec::new();
    let read = if stdin {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("reading stdin")
    } else {
        let p = path.expect("not stdin");
        std::fs::File::open(p)
            .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
            .with_context(|| format!("reading {}", p.display()))
    };
    read?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        bail!("input is larger than {MAX_INPUT_BYTES} bytes");
    }
    Ok((bytes, format))
}

fn format_from_extension(path: &Path) -> anyhow::Result<Format> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Ok(Format::Json),
        Some("yaml" | "yml") => Ok(Format::Yaml),
        _ => bail!(
            "cannot tell the format of {} from its extension; pass --format json or --format yaml",
            path.display()
        ),
    }
}
