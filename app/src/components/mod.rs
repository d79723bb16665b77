pub mod header;
pub mod tables;
