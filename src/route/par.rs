//! Independent work spread over the cores with scoped threads: nothing outlives the call, and
//! the caller's thread takes a share. Items are handed out one at a time, so a slow item (a long
//! tool description, a long text for the encoder) does not hold up the rest.

#![forbid(unsafe_code)]

use std::sync::{Mutex, PoisonError};

/// `f` over `items`, in order, on up to as many threads as the machine has cores and no more
/// than one thread per `per_thread` items (a thread costs tens of microseconds to start: cheap
/// items are worth one in batches, an encoder's texts one each).
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    per_thread: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    map_owned(items.iter().collect(), per_thread, f)
}

/// [`map`] over items it owns: each is `f`'s to keep or drop (dropping is work too, and it is
/// spread with the rest).
pub(crate) fn map_owned<T: Send, R: Send>(
    items: Vec<T>,
    per_thread: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let threads = cores().min(items.len() / per_thread.max(1));
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let n = items.len();
    // One item at a time to whichever thread is free (items take tens of microseconds or
    // more: the lock is never the bottleneck).
    let queue = Mutex::new(items.into_iter().enumerate());
    let work = || {
        let mut mine = Vec::new();
        loop {
            let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some((i, item)) = next else { return mine };
            mine.push((i, f(item)));
        }
    };
    let mut out: Vec<Option<R>> = std::iter::repeat_with(|| None).take(n).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for h in helpers {
            // A panic in `f` is the caller's panic, as if it had run here.
            done.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        for (i, r) in done {
            out[i] = Some(r);
        }
    });
    out.into_iter().map(|r| r.expect("every item is taken by one thread")).collect()
}

/// The cores this process may use, asked once: the answer opens and reads the cgroup's files
/// each time, and a re-index asks twice.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_maps_every_item() {
        let items: Vec<u64> = (0..1000).collect();
        let out = map(&items, 1, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(map(&[] as &[u8], 1, |x| *x).is_empty());
        assert_eq!(map(&items, 5000, |x| x + 1).len(), 1000, "one thread: still every item");
        assert_eq!(map(&[7u8], 1, |x| *x + 1), [8]);
        let owned: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        assert_eq!(
            map_owned(owned.clone(), 1, |s| s + "!"),
            owned.iter().map(|s| format!("{s}!")).collect::<Vec<_>>()
        );
    }

    #[test]
    #[should_panic(expected = "item 3")]
    fn a_panic_reaches_the_caller() {
        let items: Vec<u32> = (0..8).collect();
        map(&items, 1, |&x| if x == 3 { panic!("item 3") } else { x });
    }
}
