use super::*;

use std::sync::atomic::AtomicUsize;
use std::thread;

#[test]
fn admits_up_to_the_limit_then_refuses_with_an_estimate() {
    let q = Arc::new(RequestQueue::<u32>::new(1, 2));
    let a = q.admit().unwrap();
    let b = q.admit().unwrap();
    let full = q.admit().unwrap_err();
    assert_eq!(full.limit, 2);
    assert_eq!(full.retry_after, Duration::from_secs(1), "no rate estimate yet");
    drop(a);
    let c = q.admit().unwrap();
    assert_eq!(q.outstanding(), 2);
    drop((b, c));
    assert_eq!(q.outstanding(), 0);
}

#[test]
fn retry_after_follows_the_service_rate() {
    let q = Arc::new(RequestQueue::<u32>::new(1, 10));
    let mut meter = RateMeter::new();
    let t0 = Instant::now();
    // 100 completions over 100 ms: 1,000/s.
    for i in 0..=100 {
        q.record_completion(&mut meter, t0 + Duration::from_millis(i));
    }
    let tickets: Vec<_> = (0..10).map(|_| q.admit().unwrap()).collect();
    let full = q.admit().unwrap_err();
    // 10 outstanding at ~1,000/s: ~10 ms.
    assert!(
        full.retry_after >= Duration::from_millis(5)
            && full.retry_after <= Duration::from_millis(20),
        "{full:?}"
    );
    drop(tickets);
}

#[test]
fn push_schedules_only_an_idle_queue() {
    let q = Arc::new(RequestQueue::new(1, 4));
    let (_t1, _t2) = (q.admit().unwrap(), q.admit().unwrap());
    assert!(q.push(1));
    assert!(!q.push(2), "already scheduled: no second wake-up");
    assert_eq!(q.drain().collect::<Vec<_>>(), [1, 2]);
    let _t3 = q.admit().unwrap();
    assert!(q.push(3), "drained: the next push schedules again");
}

/// Many producers, one consumer that drains only when woken through the ready list: every
/// request is delivered exactly once and none is stranded in an unscheduled queue.
#[test]
fn stress_no_lost_wakeups_and_exact_accounting() {
    const PRODUCERS: usize = 4;
    const PER_PRODUCER: usize = 50_000;
    let q = Arc::new(RequestQueue::<(usize, Ticket<()>)>::new(7, 64));
    let ready: Arc<ReadyList<(usize, Ticket<()>)>> = Arc::new(SegQueue::new());
    let quota = Arc::new(RequestQueue::<()>::new(0, 64));
    let refused = Arc::new(AtomicUsize::new(0));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (q, ready, quota, refused) =
                (q.clone(), ready.clone(), quota.clone(), refused.clone());
            thread::spawn(move || {
                let mut sent = 0;
                while sent < PER_PRODUCER {
                    let Ok(ticket) = q.admit() else {
                        refused.fetch_add(1, Ordering::Relaxed);
                        thread::yield_now();
                        continue;
                    };
                    let inner =
                        quota.admit().unwrap_or_else(|_| panic!("inner quota mirrors outer"));
                    if q.push((p * PER_PRODUCER + sent, inner)) {
                        ready.push(q.clone());
                    }
                    // The slot stays taken until the consumer drops the request.
                    std::mem::forget(ticket);
                    sent += 1;
                }
            })
        })
        .collect();
    let mut seen = vec![false; PRODUCERS * PER_PRODUCER];
    let mut received = 0;
    while received < seen.len() {
        match ready.pop() {
            Some(queue) => {
                for (n, inner) in queue.drain() {
                    assert!(!std::mem::replace(&mut seen[n], true), "{n} delivered twice");
                    received += 1;
                    drop(inner);
                    // Release the forgotten outer ticket's slot.
                    queue.outstanding.fetch_sub(1, Ordering::Relaxed);
                }
            }
            None => thread::yield_now(),
        }
    }
    for p in producers {
        p.join().unwrap();
    }
    assert!(seen.iter().all(|&s| s));
    assert_eq!(q.outstanding(), 0);
    assert_eq!(quota.outstanding(), 0);
    assert!(ready.pop().is_none() || q.drain().next().is_none(), "nothing stranded");
}
