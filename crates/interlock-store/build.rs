//! Rebuilds the crate when a migration is added or changed: `sqlx::migrate!`
//! embeds `migrations/sqlite/` and `migrations/postgres/` at compile time, and cargo would not notice a new
//! file on its own.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
