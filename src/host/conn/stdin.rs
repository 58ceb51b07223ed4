//! What goes to a server's stdin: the reactor's writes (coalesced, one in flight at a time)
//! and the lane through which callers write requests themselves (docs/host.md, "The direct
//! write"), which the two share without ever interleaving a line.

use std::time::Instant;

use bytes::{Bytes, BytesMut};

use crate::protocol::CloseReason;
use crate::uring::Ring;

use super::super::lane::Handed;
use super::{Conn, EXIT_GRACE, MAX_WRITE, Op};

impl Conn {
    /// A caller's hand-off (lane.rs): a request it wrote under a lent id, or the rest of
    /// one that did not fit in the pipe.
    pub(crate) fn handed(&mut self, ring: &mut Ring, handed: Handed, now: Instant) {
        match handed {
            Handed::Sent { id, method, line, sent, timeout, reply } => {
                self.lane_by = None;
                self.lending = true;
                self.direct_writes += 1;
                self.pump.adopt(id, &method, line, sent, timeout, reply);
            }
            Handed::Rest(rest) => {
                if let Some(lane) = &self.lane {
                    lane.take_rest();
                }
                if self.stdin.is_some() {
                    self.outq.push_front(rest);
                }
            }
        }
        self.flush(ring, now);
    }

    /// Takes back the lane's unused loan (all of it with `None`; only an expired one with
    /// the time).
    pub(super) fn withdraw_loan(&mut self, now: Option<Instant>) {
        if let Some(lane) = &self.lane {
            lane.withdraw(now);
            self.lane_by = lane.wake_by();
        }
    }

    /// The reactor has nothing left to write: callers may write themselves again.
    pub(super) fn open_lane(&mut self, now: Instant) {
        let Some(lane) = &self.lane else { return };
        if self.armed.stdin || !self.outq.is_empty() || self.stdin.is_none() {
            return;
        }
        let session = &mut self.pump.session;
        // Only to an idle server: under load the queue batches many requests into one write
        // (and one wake-up of the server), which beats a write per request.
        let lending = self.lending && session.pending() == 0;
        self.lane_by = lane.open(|| if lending { session.lend() } else { None }, now);
    }

    /// No direct write from now on.
    pub(crate) fn close_lane(&mut self) {
        if let Some(lane) = &self.lane {
            lane.close();
        }
        self.lane_by = None;
    }

    /// Moves the session's output to the pipe.
    pub(super) fn write_transmit(&mut self, ring: &mut Ring) {
        while let Some(transmit) = self.pump.session.poll_transmit() {
            if self.stdin.is_some() {
                self.outq.push_back(transmit.bytes);
            }
        }
        self.start_write(ring);
    }

    pub(super) fn start_write(&mut self, ring: &mut Ring) {
        if self.armed.stdin {
            return;
        }
        let Some(stdin) = &self.stdin else { return };
        if self.outq.is_empty() || self.lane.as_ref().is_some_and(|lane| !lane.claim()) {
            // Nothing to write, or a caller's rest must go first (it is on its way).
            return;
        }
        let data = match self.outq.len() {
            1 => self.outq.pop_front().expect("one queued"),
            _ => {
                let mut merged = BytesMut::new();
                while let Some(front) = self.outq.front() {
                    if !merged.is_empty() && merged.len() + front.len() > MAX_WRITE {
                        break;
                    }
                    merged.extend_from_slice(&self.outq.pop_front().expect("front exists"));
                }
                merged.freeze()
            }
        };
        match ring.write(stdin, data, self.tag(Op::Stdin)) {
            Ok(()) => self.armed.stdin = true,
            Err(e) => tracing::error!(server = self.name(), "submitting a write: {e}"),
        }
    }

    /// A write to stdin completed.
    pub(crate) fn on_stdin(&mut self, ring: &mut Ring, result: i32, data: Bytes, now: Instant) {
        self.armed.stdin = false;
        match usize::try_from(result) {
            Ok(n) if n < data.len() && n > 0 => {
                // Partial write: put the rest back at the front.
                self.outq.push_front(data.slice(n..));
                self.start_write(ring);
            }
            Ok(n) if n > 0 || data.is_empty() => {
                self.start_write(ring);
                self.open_lane(now);
            }
            _ if self.stdin.is_none() => {} // cancelled by shutdown
            _ if -result == libc::EPIPE => {
                // Nobody reads stdin any more: the server exited or closed it. Its exit status
                // (or its stdout's end) says why; wait for it briefly rather than report EPIPE.
                tracing::debug!(server = self.name(), "stdin closed by the server (EPIPE)");
                self.stdin = None;
                self.close_lane();
                self.outq.clear();
                match self.exited() {
                    Some(reason) => {
                        let reason = reason.clone();
                        self.close_session(reason);
                    }
                    None if self.close_at.is_none() => {
                        let reason = CloseReason::io("the server closed its stdin");
                        self.close_at = Some((now + EXIT_GRACE, reason));
                    }
                    None => {}
                }
                self.flush(ring, now);
            }
            _ => {
                let err = std::io::Error::from_raw_os_error(-result.min(-1));
                tracing::warn!(server = self.name(), "writing to stdin: {err}");
                let reason = CloseReason::io_error("writing to stdin", err);
                self.pump.refuse_new(&reason);
                self.pump.session.handle_closed(reason);
                self.flush(ring, now);
                self.begin_shutdown(ring, now);
            }
        }
    }
}
