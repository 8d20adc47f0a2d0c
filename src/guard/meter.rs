//! The guard's own CPU: every future the guard runs (the accept loop, each compose connection
//! with its judging and forwarding, the engine client's connection tasks, the preflight) is
//! polled inside [`Metered`], which adds the calling thread's CPU time (user + system) spent in
//! each poll. What other tasks on the same thread do between polls is not counted, so the sum
//! is the guard's share of the agent's CPU, not the tick's.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// CPU time of the calling thread, in nanoseconds (0 if the clock cannot be read).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-parameter for clock_gettime.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A future whose polls are charged to `cpu` (nanoseconds).
pub(super) struct Metered<F> {
    inner: Pin<Box<F>>,
    cpu: Arc<AtomicU64>,
}

impl<F: Future> Metered<F> {
    pub(super) fn new(inner: F, cpu: Arc<AtomicU64>) -> Metered<F> {
        Metered {
            inner: Box::pin(inner),
            cpu,
        }
    }
}

impl<F: Future> Future for Metered<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let t0 = thread_cpu_ns();
        let r = self.inner.as_mut().poll(cx);
        let spent = thread_cpu_ns().saturating_sub(t0);
        self.cpu.fetch_add(spent, Ordering::Relaxed);
        r
    }
}

/// The executor of the guard's engine client: its connection tasks are the guard's work too.
#[derive(Clone)]
pub(super) struct MeteredExecutor(pub(super) Arc<AtomicU64>);

impl<F> hyper::rt::Executor<F> for MeteredExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(Metered::new(fut, self.0.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_busy_poll_is_charged_and_the_wait_is_not() {
        let cpu = Arc::new(AtomicU64::new(0));
        let work = Metered::new(
            async {
                // 10 ms of this thread's CPU, then 100 ms asleep
                let t0 = thread_cpu_ns();
                let mut x = 0u64;
                while thread_cpu_ns() - t0 < 10_000_000 {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                x
            },
            cpu.clone(),
        );
        let wall = std::time::Instant::now();
        work.await;
        assert!(wall.elapsed() >= std::time::Duration::from_millis(100));
        let ns = cpu.load(Ordering::Relaxed);
        assert!(ns >= 10_000_000, "charged {ns} ns");
        assert!(ns < 60_000_000, "the sleep was charged: {ns} ns");
    }
}
