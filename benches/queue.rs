//! Contention on a server's request queue: `P` producer threads (callers) admit and push
//! requests while one consumer (the reactor) drains, as in `Client::request` → reactor.
//!
//! Compared with the same traffic through crossbeam's bounded `ArrayQueue` alone (no admission
//! counter, no wake-up coalescing), the floor for a lock-free bounded hand-off. Each iteration
//! moves `MESSAGES` items in total; throughput is reported in items per second.
//!
//! Run with `cargo bench --bench queue`.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use crossbeam_queue::{ArrayQueue, SegQueue};
use ringmcp::queue::{ReadyList, RequestQueue, Ticket};

/// What the bench's callers queue: a sequence number and the admission slot it holds.
type Item = (usize, Ticket<()>);

/// Items moved per iteration.
const MESSAGES: usize = 100_000;
/// The per-server limit (the host's default).
const LIMIT: usize = 4096;

/// ringmcp's queue: admit (quota), push, schedule on the ready list on the idle→busy edge;
/// the consumer pops ready queues, drains them and drops the tickets (freeing the quota).
fn ringmcp_queue(producers: usize) {
    let queue = Arc::new(RequestQueue::<Item>::new(1, LIMIT));
    let quota = Arc::new(RequestQueue::<()>::new(0, LIMIT));
    let ready: Arc<ReadyList<Item>> = Arc::new(SegQueue::new());
    let per = MESSAGES / producers;
    let handles: Vec<_> = (0..producers)
        .map(|_| {
            let (queue, quota, ready) = (queue.clone(), quota.clone(), ready.clone());
            thread::spawn(move || {
                let mut sent = 0;
                while sent < per {
                    // The inner ticket stands for the admission slot the real request carries.
                    let Ok(ticket) = quota.admit() else {
                        std::hint::spin_loop();
                        continue;
                    };
                    if queue.push((sent, ticket)) {
                        ready.push(queue.clone());
                    }
                    sent += 1;
                }
            })
        })
        .collect();
    let mut received = 0;
    while received < per * producers {
        match ready.pop() {
            Some(q) => {
                for item in q.drain() {
                    black_box(&item);
                    received += 1;
                }
            }
            None => std::hint::spin_loop(),
        }
    }
    for h in handles {
        h.join().expect("producer");
    }
}

/// The floor: a bounded `ArrayQueue`, producers retrying when it is full.
fn array_queue(producers: usize) {
    let queue = Arc::new(ArrayQueue::<usize>::new(LIMIT));
    let done = Arc::new(AtomicBool::new(false));
    let per = MESSAGES / producers;
    let handles: Vec<_> = (0..producers)
        .map(|_| {
            let queue = queue.clone();
            thread::spawn(move || {
                for i in 0..per {
                    let mut item = i;
                    while let Err(back) = queue.push(item) {
                        item = back;
                        std::hint::spin_loop();
                    }
                }
            })
        })
        .collect();
    let mut received = 0;
    while received < per * producers {
        match queue.pop() {
            Some(item) => {
                black_box(item);
                received += 1;
            }
            None => std::hint::spin_loop(),
        }
    }
    done.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("producer");
    }
}

fn contention(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue");
    group.throughput(Throughput::Elements(MESSAGES as u64));
    group.sample_size(20);
    for producers in [1, 2, 4] {
        group.bench_with_input(BenchmarkId::new("ringmcp", producers), &producers, |b, &p| {
            b.iter(|| ringmcp_queue(p));
        });
        group.bench_with_input(BenchmarkId::new("array_queue", producers), &producers, |b, &p| {
            b.iter(|| array_queue(p));
        });
    }
    group.finish();
}

criterion_group!(benches, contention);
criterion_main!(benches);
