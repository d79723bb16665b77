//! The migrations are embedded by `sqlx::migrate!`; rebuild when one changes, which cargo
//! would not notice on its own.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
