//! The load generator: one thread, exactly `concurrency` calls in flight, spread round-robin.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::executor::block_on;
use futures::stream::FuturesUnordered;
use indicatif::ProgressBar;
use ringmcp::host::{Client, Result};
use ringmcp::protocol::{CallToolResult, Content};
use serde_json::Value;

use super::kind::{TOOL_IS_ERROR, error_kind};
use super::measure::Latencies;

/// Progress is reported every this many completions (indicatif takes a lock per update).
const PROGRESS_EVERY: u64 = 64;

/// The calls to make: which tool, with what, on which servers, how many at once.
#[derive(Debug)]
pub(crate) struct Load<'a> {
    pub(crate) clients: &'a [Client],
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) concurrency: usize,
}

/// When to stop issuing calls (the ones in flight then are still awaited and counted).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    After(u64),
    At(Instant),
}

/// What a run of calls produced.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Latency of every completed call, failed ones included.
    pub(crate) latencies: Latencies,
    pub(crate) ok: u64,
    /// Failed calls by [`error_kind`], plus [`TOOL_IS_ERROR`] results.
    pub(crate) errors: BTreeMap<String, u64>,
    /// Wall time from the first call issued to the last one completed.
    pub(crate) elapsed: Duration,
}

impl Outcome {
    pub(crate) fn calls(&self) -> u64 {
        self.latencies.count()
    }
}

/// Runs the load on the current thread until `stop`. Call `i` goes to server `i % servers`;
/// as each call completes the next is issued, so exactly `concurrency` are in flight until the
/// end. Failed calls are counted by kind and the run goes on.
pub(crate) fn drive(load: &Load<'_>, stop: Stop, progress: Option<&ProgressBar>) -> Outcome {
    let mut latencies = Latencies::new();
    let mut ok = 0;
    let mut errors = BTreeMap::new();
    let start = Instant::now();
    block_on(async {
        let mut in_flight = FuturesUnordered::new();
        let mut issued: u64 = 0;
        let more = |issued: u64| match stop {
            Stop::After(n) => issued < n,
            Stop::At(deadline) => Instant::now() < deadline,
        };
        while in_flight.len() < load.concurrency.max(1) && more(issued) {
            in_flight.push(timed_call(load, issued));
            issued += 1;
        }
        while let Some((latency, result)) = in_flight.next().await {
            if more(issued) {
                in_flight.push(timed_call(load, issued));
                issued += 1;
            }
            latencies.record(latency);
            match result {
                Ok(r) if r.is_error => *errors.entry(TOOL_IS_ERROR.to_owned()).or_insert(0) += 1,
                Ok(_) => ok += 1,
                Err(e) => *errors.entry(error_kind(&e)).or_insert(0) += 1,
            }
            let done = latencies.count();
            if let Some(bar) = progress
                && done.is_multiple_of(PROGRESS_EVERY)
            {
                bar.set_position(done);
            }
        }
    });
    Outcome { latencies, ok, errors, elapsed: start.elapsed() }
}

/// One call, timed from its first poll (when the request is built and handed to the reactor)
/// to its typed result.
async fn timed_call(load: &Load<'_>, i: u64) -> (Duration, Result<CallToolResult>) {
    let client = &load.clients[(i % load.clients.len() as u64) as usize];
    // Building the arguments is the application's work, not the host's: not timed.
    let arguments = load.arguments.clone();
    let started = Instant::now();
    let result = client.call_tool(load.tool, arguments).await;
    let elapsed = started.elapsed();
    // A spilled answer is complete once on disk; letting go of it (not timed) keeps a long
    // run within the store's quota, as a real consumer would after reading it.
    if let Ok(r) = &result {
        for block in &r.content {
            if let Content::Other { kind, raw } = block
                && kind == "resource_link"
                && let Some(uri) = raw["uri"].as_str()
            {
                drop(client.release_spilled(uri));
            }
        }
    }
    (elapsed, result)
}
