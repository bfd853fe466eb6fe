//! The one integration-test binary. Each module is one capability, driven the way a user
//! drives it; `support` has the shared helpers (temp logs, scraping, diffs).

mod backfill;
mod cardinality;
mod clocks;
mod dashboards;
mod doc_links;
mod end_to_end;
mod http;
mod identity;
mod kubernetes;
mod packaging;
mod prometheus;
mod readiness;
mod registry;
mod reload;
mod remote_write;
mod replay;
mod restarts;
mod rotation;
mod soak;
mod startup;
mod support;
mod tailing;
mod timezones;
mod tls;
mod truth;
