//! End-to-end tests of the `interlock` binary against real peers: the real SQLite
//! file, the real OS keychain (Secret Service, under `scripts/with-keyring`), the
//! real filesystem. One test binary, one module per area.

mod admin;
mod admin_api;
mod alert_formats;
mod alerts;
mod callpath;
mod canon;
mod channels;
mod clients_api;
mod connect;
mod content;
mod envelope;
mod eras;
mod evidence;
mod faults;
mod faults_postgres;
mod gateway;
mod gateway_util;
mod governance;
mod held_tasks;
mod hooks;
mod key_limits;
mod limits;
mod mcp_bridge;
mod metrics;
mod pinning;
mod plan_seed;
mod probes;
mod receipts;
mod receipts_view;
mod receiver;
mod review;
mod sandbox;
mod scoped;
mod servers_runtime;
mod shared_store;
mod signin;
mod standing;
mod syslog;
mod team;
mod trust;
mod util;
mod witness;
