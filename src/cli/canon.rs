//! `interlock canon`: canonical bytes or their hash.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use interlock_core::canon;

use super::{CanonArgs, EXIT_REJECTED, input};

pub fn run(args: CanonArgs) -> anyhow::Result<ExitCode> {
    let (bytes, format) = input::read_document(args.file.as_deref(), args.format)?;
    let value = match canon::parse(&bytes, format) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("interlock: rejected: {e}");
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    let mut out = std::io::stdout().lock();
    if args.hash {
        writeln!(out, "{}", canon::digest(&value))
    } else {
        out.write_all(&canon::canonical_bytes(&value))
    }
    .and_then(|()| out.flush())
    .context("writing stdout")?;
    Ok(ExitCode::SUCCESS)
}
