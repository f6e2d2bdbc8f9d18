//! Waiting on a host call from the script thread. A call to the in-process twin is answered in
//! about 100 µs, and putting the thread to sleep and waking it again costs as much on a
//! virtual machine, so the wait looks for the answer for a moment (yielding the core) before
//! it sleeps.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a wait stays awake before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

struct Signal {
    woken: AtomicBool,
    thread: Thread,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        // Only a parked thread is woken by a system call; a spinning one sees the flag.
        self.thread.unpark();
    }
}

/// Runs `future` to its end on this thread, inside the runtime's context (its timers, I/O and
/// spawned tasks run on the runtime's workers). Not for the runtime's own workers.
pub(super) fn block_on<F: Future>(runtime: &tokio::runtime::Handle, future: F) -> F::Output {
    let _entered = runtime.enter();
    let signal = Arc::new(Signal {
        woken: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let waker = Waker::from(signal.clone());
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        let awake_until = Instant::now() + SPIN;
        while !signal.woken.swap(false, Ordering::Acquire) {
            if Instant::now() < awake_until {
                std::thread::yield_now();
            } else {
                // Wakes on unpark (or spuriously: the flag is checked again).
                std::thread::park();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_work_done_on_the_runtime_and_for_its_timers() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let handle = runtime.handle().clone();
        let spawned = block_on(&handle, async {
            tokio::spawn(async { 40 + 2 }).await.unwrap()
        });
        assert_eq!(spawned, 42);
        let started = Instant::now();
        block_on(&handle, async {
            tokio::time::sleep(Duration::from_millis(20)).await;
        });
        assert!(started.elapsed() >= Duration::from_millis(20));
    }
}
