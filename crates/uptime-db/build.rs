//! The migrations are embedded at compile time (`embed_migrations!`), and
//! cargo does not notice a new migration folder by itself: without this, a
//! build could carry yesterday's migrations while the test harness names its
//! template database after today's files.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
