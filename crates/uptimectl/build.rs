//! The schemas are built in with `include_dir!`, which on stable Rust does
//! not tell Cargo to rebuild when a file under `proto-schemas/` changes;
//! this does (Cargo rescans a directory named here).
fn main() {
    println!("cargo:rerun-if-changed=../../proto-schemas");
}
