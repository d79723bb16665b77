pub mod embed;
pub mod playground;
