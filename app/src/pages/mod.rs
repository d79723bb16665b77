pub mod embed;
pub mod playground;
pub mod replay;
