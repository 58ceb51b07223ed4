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
use super::soak;

/// Progress is reported every this many completions (indicatif takes a lock per update).
const PROGRESS_EVERY: u64 = 64;

/// The calls to make: which tool, with what, on which servers, how many at once.
#[derive(Debug)]
pub(crate) struct Load<'a> {
    pub(crate) clients: &'a [Client],
    /// The prefixes of the tool's name on each client: `[""]` for the servers themselves,
    /// `s0__`, `s1__`, ... for a gateway's backends (`--gateway`).
    pub(crate) prefixes: &'a [String],
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) concurrency: usize,
    /// `--faults`: the share of calls that are faults (soak.rs).
    pub(crate) faults: Option<f64>,
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
    /// `--faults`: every call accounted for.
    pub(crate) accounts: Accounts,
}

/// The soak's account of every call: the faults injected and what they got, and the ordinary
/// calls that failed, explained by a fault or not.
#[derive(Debug, Default)]
pub(crate) struct Accounts {
    pub(crate) injected: BTreeMap<String, u64>,
    pub(crate) fault_outcomes: BTreeMap<String, BTreeMap<String, u64>>,
    pub(crate) collateral: BTreeMap<String, u64>,
    pub(crate) unexplained: BTreeMap<String, u64>,
    /// The first message of each kind of unexplained failure, to say what it was.
    pub(crate) first_unexplained: BTreeMap<String, String>,
}

impl Outcome {
    pub(crate) fn calls(&self) -> u64 {
        self.latencies.count()
    }
}

/// Runs the load on the current thread until `stop`. Call `i` goes to route `i % routes`
/// (a client and, through a gateway, one of its backends: the clients first);
/// as each call completes the next is issued, so exactly `concurrency` are in flight until the
/// end. Failed calls are counted by kind and the run goes on.
pub(crate) fn drive(load: &Load<'_>, stop: Stop, progress: Option<&ProgressBar>) -> Outcome {
    let mut latencies = Latencies::new();
    let mut ok = 0;
    let mut errors = BTreeMap::new();
    let mut accounts = Accounts::default();
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
        while let Some((latency, result, fault)) = in_flight.next().await {
            if more(issued) {
                in_flight.push(timed_call(load, issued));
                issued += 1;
            }
            latencies.record(latency);
            let kind = match &result {
                Ok(r) if r.is_error => Some(TOOL_IS_ERROR.to_owned()),
                Ok(_) => None,
                Err(e) => Some(error_kind(e)),
            };
            match &kind {
                Some(k) => *errors.entry(k.clone()).or_insert(0) += 1,
                None => ok += 1,
            }
            let message = || result.as_ref().err().map(ToString::to_string).unwrap_or_default();
            accounts.record(fault, kind, message);
            let done = latencies.count();
            if let Some(bar) = progress
                && done.is_multiple_of(PROGRESS_EVERY)
            {
                bar.set_position(done);
            }
        }
    });
    Outcome { latencies, ok, errors, elapsed: start.elapsed(), accounts }
}

impl Accounts {
    /// One call: a fault (its kind) or an ordinary call, and its error kind if it failed.
    fn record(
        &mut self,
        fault: Option<usize>,
        error: Option<String>,
        message: impl Fn() -> String,
    ) {
        let bump =
            |m: &mut BTreeMap<String, u64>, k: &str| *m.entry(k.to_owned()).or_insert(0) += 1;
        match (fault, error) {
            (Some(f), error) => {
                let name = soak::FAULTS[f].0;
                bump(&mut self.injected, name);
                let outcomes = self.fault_outcomes.entry(name.to_owned()).or_default();
                bump(outcomes, error.as_deref().unwrap_or("answered"));
            }
            (None, Some(e)) if soak::explained(&e) => bump(&mut self.collateral, &e),
            (None, Some(e)) => {
                self.first_unexplained.entry(e.clone()).or_insert_with(message);
                bump(&mut self.unexplained, &e);
            }
            (None, None) => {}
        }
    }
}

/// One call, timed from its first poll (when the request is built and handed to the reactor)
/// to its typed result.
async fn timed_call(load: &Load<'_>, i: u64) -> (Duration, Result<CallToolResult>, Option<usize>) {
    let clients = load.clients.len() as u64;
    let route = i % (clients * load.prefixes.len() as u64);
    let client = &load.clients[(route % clients) as usize];
    let prefix = &load.prefixes[(route / clients) as usize];
    let fault = load.faults.and_then(|rate| soak::draw(i, rate));
    // Building the arguments is the application's work, not the host's: not timed.
    let (tool, arguments, timeout) = match fault {
        Some(f) => {
            let tool = soak::FAULTS[f].1;
            let args =
                if tool == "exit" { serde_json::json!({"code": 1}) } else { serde_json::json!({}) };
            (tool, args, (tool == "hang").then_some(soak::HANG_DEADLINE))
        }
        None => (load.tool, load.arguments.clone(), None),
    };
    let named;
    let tool = if prefix.is_empty() {
        tool
    } else {
        named = format!("{prefix}{tool}");
        &named
    };
    let started = Instant::now();
    let call = client.call(tool, arguments);
    let call = if timeout.is_some() { call.timeout(timeout) } else { call };
    let result = call.send().await;
    let elapsed = started.elapsed();
    // A server being restarted says when to come back: this slot waits until then (not
    // timed), as a caller would, instead of spinning on refusals.
    if let Some(after) = result.as_ref().err().and_then(super::kind::retry_after) {
        futures_timer::Delay::new(after).await;
    }
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
    (elapsed, result, fault)
}
