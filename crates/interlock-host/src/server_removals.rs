//! Removals of servers a stopped gateway left half done (issue 44).
//!
//! A signed removal commits its `server.removed` leaf with the deletion of
//! the server's row, then takes the server out of `gateway.toml`. A gateway
//! stopped between the two (a kill, a power cut) came back with the server
//! still in its config and no row, and started the removed program again as
//! a new server. So the removal first leaves a note, synced, naming the
//! server (`<data dir>/removing/NAME`), and drops it once the file is edited;
//! at start, before the config is read, each note left behind is finished:
//! no row (the removal committed) — the server is taken out of the file;
//! a row (it did not) — the note is dropped and the server stays.

use std::path::{Path, PathBuf};

use crate::{Host, HostError};

/// The directory of removal notes in a data directory.
const NOTES_DIR: &str = "removing";

/// Where the note for server `name` is kept.
pub(crate) fn note_path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(NOTES_DIR).join(name)
}

/// Leaves the note for `name`, synced with its directory.
pub(crate) fn begin(data_dir: &Path, name: &str) -> std::io::Result<()> {
    let dir = data_dir.join(NOTES_DIR);
    std::fs::create_dir_all(&dir)?;
    std::fs::File::create(note_path(data_dir, name))?.sync_all()?;
    std::fs::File::open(&dir)?.sync_all()
}

/// Drops the note for `name` (none is not an error).
pub(crate) fn end(data_dir: &Path, name: &str) -> std::io::Result<()> {
    match std::fs::remove_file(note_path(data_dir, name)) {
        Ok(()) => std::fs::File::open(data_dir.join(NOTES_DIR))?.sync_all(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

impl Host {
    /// Finishes the removals a stopped gateway left (see the module doc) in
    /// the config at `config`; returns the servers taken out of it.
    pub(crate) async fn finish_server_removals(
        &self,
        config: &Path,
    ) -> Result<Vec<String>, HostError> {
        let data_dir = self.data_dir()?;
        let dir = data_dir.join(NOTES_DIR);
        let names: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(file_err(&dir, e)),
        };
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let store = interlock_store::Store::connect(&self.store_location()?).await?;
        let mut finished = Vec::new();
        for name in names {
            let row = store.server(&name).await;
            let row = match row {
                Ok(row) => row,
                Err(e) => {
                    store.close().await;
                    return Err(e.into());
                }
            };
            if row.is_none() && config.exists() {
                let text = std::fs::read_to_string(config).map_err(|e| file_err(config, e))?;
                let out = crate::connect::remove_servers(&text, std::slice::from_ref(&name))
                    .map_err(|message| HostError::File {
                        path: config.to_owned(),
                        message,
                    })?;
                if out != text {
                    let mode = crate::connect::mode_of(config).map_err(|e| file_err(config, e))?;
                    crate::connect::write_atomic(config, out.as_bytes(), mode)
                        .map_err(|e| file_err(config, e))?;
                    finished.push(name.clone());
                }
            }
            end(&data_dir, &name).map_err(|e| file_err(&dir, e))?;
        }
        store.close().await;
        Ok(finished)
    }
}

fn file_err(path: &Path, e: impl std::fmt::Display) -> HostError {
    HostError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}
