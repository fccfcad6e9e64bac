//! The migrations are embedded at compile time (`embed_migrations!`), and
//! cargo does not notice a new migration folder by itself: without this, a
//! build could carry yesterday's migrations while the test harness names its
//! template database after today's files.
//!
//! It also digests the migrations it embeds (`UPTIME_MIGRATIONS_DIGEST`), so
//! that the test harness names its template after exactly the migrations this
//! build carries, never after files that changed since.
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut hasher = DefaultHasher::new();
    for path in files {
        let relative = path.strip_prefix(&root).unwrap_or(&path);
        hasher.write(relative.to_string_lossy().as_bytes());
        hasher.write(&std::fs::read(&path).unwrap_or_default());
    }
    println!(
        "cargo:rustc-env=UPTIME_MIGRATIONS_DIGEST={:016x}",
        hasher.finish()
    );
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("read migrations dir")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
