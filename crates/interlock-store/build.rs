//! Rebuilds the crate when a migration is added or changed: `sqlx::migrate!`
//! embeds `migrations/` at compile time, and cargo would not notice a new
//! file on its own.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
