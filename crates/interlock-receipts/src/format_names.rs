//! The names that identify the formats this crate reads and writes. A module of
//! their own because the errors name them as well as the formats that check them
//! (`bundle`, `leaf`), and those report their errors.

/// The bundle format this crate writes.
pub const BUNDLE_VERSION: &str = "interlock.receipts/v2";

/// The older format (a proof inline per receipt), still read and verified.
pub const BUNDLE_VERSION_V1: &str = "interlock.receipts/v1";

/// The DSSE `payloadType` of a receipt.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
