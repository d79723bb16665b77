pub mod playground;
