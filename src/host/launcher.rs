//! What starting a server takes, shared by the [`Host`](super::Host) and the supervisors of
//! the servers it restarts (docs/host.md, "Supervision"): the reactor and the spawner's job
//! queue, the session settings, the policy, and the host-wide tables (eras, live clients,
//! taint).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_channel::oneshot;

use crate::parse::JsonParser;
use crate::protocol::{Era, SessionConfig};
use crate::queue::RequestQueue;

use super::client::{Client, ClientInner};
use super::error::{self, Error, Result};
use super::events::{EventSink, EventStream};
use super::request::ServerId;
use super::spawner::SpawnJob;
use super::supervise::Supervision;
use super::{
    ClientHandler, PolicySettings, ReactorHandle, RequestSink, ServerSpec, gate, handler, remote,
    router, spilling,
};

#[derive(Debug)]
pub(super) struct Launcher {
    pub(super) reactor: Arc<ReactorHandle>,
    /// The spawner thread's job queue; `None` once the host is dropped (so that a supervisor
    /// holding the launcher cannot keep the spawner thread alive).
    pub(super) jobs: Mutex<Option<std::sync::mpsc::Sender<SpawnJob>>>,
    pub(super) next_id: AtomicU64,
    pub(super) events_capacity: usize,
    pub(super) queue_limit: usize,
    pub(super) parser: JsonParser,
    pub(super) max_request: usize,
    pub(super) spill_store: Option<Arc<crate::spill::store::SpillStore>>,
    /// Session settings, for HTTP servers (stdio ones get them from the reactor's copy).
    pub(super) session: SessionConfig,
    /// The application's answers to server requests, for HTTP servers (stdio ones go through
    /// the reactor's copy).
    pub(super) handler: Option<handler::SharedHandler>,
    /// The policy gate's settings, when the host has a policy.
    pub(super) policy: Option<PolicySettings>,
    /// The era each server spoke at its last start (true: 2026-07-28), by
    /// [`ServerSpec::identity`] (the era is cached per server).
    pub(super) eras: Arc<Mutex<std::collections::HashMap<String, bool>>>,
    /// Every client this host started, for [`Host::router`](super::Host::router).
    pub(super) live: router::LiveClients,
    /// The session's taint (docs/policy.md, "After untrusted content"), shared by every gate.
    pub(super) taint: Arc<Mutex<crate::policy::taint::Taint>>,
}

impl Launcher {
    /// The host is going away: no server is started any more.
    pub(crate) fn close(&self) {
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner).take();
    }

    /// Whether the host went away.
    pub(crate) fn closed(&self) -> bool {
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// Starts a server (see [`Host::spawn`](super::Host::spawn)); one with a restart policy
    /// gets its supervision.
    pub(crate) fn spawn(
        this: &Arc<Launcher>,
        spec: ServerSpec,
    ) -> impl Future<Output = Result<Client>> + Send + use<> {
        let (sink, stream) = EventSink::new(this.events_capacity);
        let supervision = (spec.restart.clone()).map(|policy| {
            Supervision::new(policy, spec.clone(), this, sink.sibling(None), &stream)
        });
        let sink = match &supervision {
            Some(s) => sink.sibling(Some(s.hook(0))),
            None => sink,
        };
        let started = this.connect(spec, sink, stream);
        let live = this.live.clone();
        async move {
            let inner = started.await?;
            let client = Client::new(inner, supervision.clone());
            if let Some(s) = &supervision {
                s.attach(&client);
            }
            live.add(&client);
            Ok(client)
        }
    }

    /// Starts one connection to a server and completes its handshake: its events go to
    /// `sink` (a restarted server's to the same stream as before).
    pub(crate) fn connect(
        &self,
        spec: ServerSpec,
        events: EventSink,
        stream: EventStream,
    ) -> impl Future<Output = Result<ClientInner>> + Send + use<> {
        use futures::future::Either;
        if let Some(why) = spec.misuse() {
            return Either::Left(std::future::ready(Err(Error::InvalidArgument(why))));
        }
        // Relaxed: the counter only needs to hand out distinct values.
        let id = ServerId::new(self.next_id.fetch_add(1, Ordering::Relaxed));
        let name: Arc<str> = spec.name.as_str().into();
        let lists = events.lists();
        let (tx, rx) = oneshot::channel();
        let queue = Arc::new(RequestQueue::new(id.get(), self.queue_limit));
        let max_request = spec.max_request_bytes.unwrap_or(self.max_request);
        let supervised = spec.restart.is_some();
        let mut spec = Box::new(spec);
        // A server known to be legacy skips the probe; a modern one is probed anyway (the
        // probe is its first request), with the fallback, in case it changed.
        let identity = spec.identity();
        let gate = self.policy.clone().map(|settings| {
            let roots = self.session.roots.as_deref().unwrap_or_default();
            gate::GateInputs::of(&spec, settings, roots, self.taint.clone())
        });
        let eras = self.eras.clone();
        let known = eras.lock().unwrap_or_else(PoisonError::into_inner).get(&identity).copied();
        let era = spec.era.unwrap_or(match (self.session.era, known) {
            (Era::Auto, Some(false)) => Era::Legacy,
            (era, _) => era,
        });
        spec.era = Some(era);
        let hint = spec.launch().filter(|_| spec.sandboxed()).map(|l| {
            let words = std::iter::once(&l.program).chain(&l.args);
            let command: Vec<String> =
                words.map(|w| super::shell_word(&w.to_string_lossy())).collect();
            let network = l.sandbox.as_ref().map(|s| s.network.clone()).unwrap_or_default();
            error::sandbox_hint(&command.join(" "), &network)
        });
        let registry = Arc::new(spilling::SpillRegistry::default());
        // With a policy, the server's sampling requests pass its gate before the handler.
        let gate_slot: Option<gate::GateSlot> = self.policy.as_ref().map(|_| Arc::default());
        let handler = self.handler.as_ref().map(|shared| match &gate_slot {
            Some(slot) => {
                let gated = gate::Gated { inner: shared.0.clone(), gate: slot.clone() };
                Arc::new(gated) as Arc<dyn ClientHandler>
            }
            None => shared.0.clone(),
        });
        let description = spec.description.clone();
        let lane = spec.remote().is_none().then(|| self.reactor.lane(id)).flatten();
        let job = SpawnJob {
            id,
            spec,
            queue: queue.clone(),
            events,
            reply: tx,
            handler,
            lane: lane.clone(),
        };
        let reactor = self.start_backend(job);
        let parser = self.parser;
        let store = self.spill_store.clone();
        Either::Right(async move {
            let details = rx.await.map_err(|_| Error::ReactorStopped)?;
            let mut eras = eras.lock().unwrap_or_else(PoisonError::into_inner);
            match &details {
                Ok(d) => eras.insert(identity, d.version.is_modern()),
                // Probe again next time.
                Err(_) => eras.remove(&identity),
            };
            drop(eras);
            let details = details.map_err(|mut e| {
                if let Error::Handshake(failure) = &mut e {
                    failure.hint = hint;
                }
                e
            })?;
            let gate = gate.map(|g| g.build(name.clone(), details.init.instructions.clone()));
            if let (Some(slot), Some(gate)) = (&gate_slot, &gate) {
                let _ = slot.set(gate.clone());
            }
            Ok(ClientInner {
                id,
                queue,
                lane,
                name,
                description,
                details,
                reactor,
                events: stream,
                parser,
                max_request,
                spilled: registry,
                store,
                next_request_seq: AtomicU64::new(0),
                lists,
                cache: Mutex::default(),
                output_schemas: super::schema::OutputSchemas::default(),
                gate,
                supervised,
            })
        })
    }

    /// Hands a server to its connection: an HTTP server to a thread of its own, a stdio one
    /// to the spawner thread and then the reactor. Returns where its requests go.
    fn start_backend(&self, job: SpawnJob) -> Arc<dyn RequestSink> {
        let Some(remote) = job.spec.remote().cloned() else {
            if let Some(jobs) = &*self.jobs.lock().unwrap_or_else(PoisonError::into_inner) {
                // If the spawner is gone the job (and its reply sender) is dropped: the
                // caller sees `ReactorStopped`.
                let _ = jobs.send(job);
            }
            return self.reactor.clone();
        };
        let SpawnJob { id, spec, queue, events, reply, handler, lane: _ } = job;
        // Declares what the handler answers, as for stdio servers; the connection's thread
        // runs the handler.
        let mut session = self.session.clone();
        if let Some(t) = spec.request_timeout {
            session.request_timeout = t;
        }
        session.era = spec.era.unwrap_or(session.era);
        gate::scope_roots(&mut session, &spec);
        let name = spec.name.as_str().into();
        remote::start(remote::RemoteParts {
            id,
            name,
            spec: remote,
            session,
            queue,
            events,
            reply,
            handler,
        })
    }
}
