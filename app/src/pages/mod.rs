pub mod author;
pub mod embed;
pub mod playground;
pub mod quests;
pub mod replay;
