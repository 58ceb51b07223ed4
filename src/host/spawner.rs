//! The spawner: the one long-lived thread that starts server processes and hands them to
//! the reactor.

use std::sync::Arc;
use std::thread::JoinHandle;

use futures_channel::oneshot;

use super::driver::ReactorCommand;
use super::events::EventSink;
use super::request::{QueuedRequest, ServerId};
use super::{ReactorHandle, Result, ServerSpec, egress};
use crate::queue::RequestQueue;
use crate::uring::sys;

/// A server to start, handed to the spawner thread.
pub(super) struct SpawnJob {
    pub(super) id: ServerId,
    pub(super) spec: Box<ServerSpec>,
    pub(super) queue: Arc<RequestQueue<QueuedRequest>>,
    pub(super) events: EventSink,
    pub(super) reply: oneshot::Sender<Result<crate::protocol::ServerDetails>>,
    /// The handler of the server's requests, when not the host's own.
    pub(super) handler: Option<Arc<dyn super::handler::ClientHandler>>,
    /// Where callers write their requests themselves (lane.rs), when the host lets them.
    pub(super) lane: Option<Arc<super::lane::Lane>>,
}

/// Starts the spawner: a long-lived thread that starts every server process (a sandboxed one
/// takes milliseconds of setup that must not stall the reactor's I/O), then hands it to the
/// reactor. Long-lived on purpose: a parent-death signal fires when the *thread* that forked
/// the process exits.
pub(super) fn start_spawner(
    reactor: Arc<ReactorHandle>,
    egress: Arc<egress::EgressSlot>,
) -> std::io::Result<(std::sync::mpsc::Sender<SpawnJob>, JoinHandle<()>)> {
    let (tx, rx) = std::sync::mpsc::channel::<SpawnJob>();
    let thread = std::thread::Builder::new().name("ringmcp-spawner".into()).spawn(move || {
        for SpawnJob { id, spec, queue, events, reply, handler, lane } in rx {
            let spawned = Box::new(match spec.launch() {
                Some(launch) => egress.spawn(&spec.name, launch),
                None => unreachable!("only stdio servers are sent to the spawner"),
            });
            let command =
                ReactorCommand::Spawn { id, spec, spawned, queue, events, reply, handler, lane };
            if let Err(std::sync::mpsc::SendError(ReactorCommand::Spawn { spawned, .. })) =
                reactor.commands.send(command)
                && let Ok(mut s) = *spawned
            {
                // The reactor is gone (it only stops after this thread): never leave a child.
                let _ = crate::sandbox::signal_group(s.child.id(), crate::sandbox::Signal::Kill);
                let _ = s.child.wait();
            } else {
                sys::eventfd_signal(&*reactor.wake);
            }
        }
    })?;
    Ok((tx, thread))
}
