//! A panic ends the process, logged, so that a supervisor restarts it.
//!
//! Without this, a panic in a spawned task ends only that task: tokio keeps
//! the runtime, and with it the ops server, going. A scheduler whose engine
//! had panicked answered `/healthz` 200 while it scheduled nothing, and
//! nothing restarted it. [`exit_on_panic`] (every service's `main` calls it)
//! logs the panic as one structured ERROR line, its message and location,
//! then exits with [`PANIC_EXIT_CODE`]: the local supervisor and Kubernetes
//! restart a process that has exited, not one that has stopped working.
//!
//! The exceptions are the work whose caller already turns a panic into an
//! answer and keeps no state from it, wrapped in [`contain`] or
//! [`contain_async`]: a check's assertions (the check fails with an
//! internal error) and one message's handler in the consumer scaffold (the
//! message is redelivered). Their panics are logged, counted in
//! `panics_contained_total`, and unwind to that caller as before.

use std::cell::Cell;
use std::future::Future;
use std::io::Write;

/// The exit code after a panic: Rust's own for a panic that ends `main`.
pub const PANIC_EXIT_CODE: i32 = 101;

thread_local! {
    /// How many [`contain`] scopes the current thread is in.
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
}

/// Marks the current thread as inside a contained scope until dropped (on
/// unwinding too, so a contained panic leaves the thread unmarked).
struct Scope;

impl Scope {
    fn enter() -> Self {
        CONTAINED.with(|c| c.set(c.get() + 1));
        Scope
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        CONTAINED.with(|c| c.set(c.get().saturating_sub(1)));
    }
}

/// Runs `work`; a panic in it unwinds to the caller (who handles it)
/// instead of ending the process.
pub fn contain<T>(work: impl FnOnce() -> T) -> T {
    let _scope = Scope::enter();
    work()
}

/// [`contain`] for a future: each poll runs in a contained scope (a task
/// may move between threads between polls, so the mark is per poll).
pub async fn contain_async<F: Future>(work: F) -> F::Output {
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(|cx| {
        let _scope = Scope::enter();
        work.as_mut().poll(cx)
    })
    .await
}

/// Installs the panic hook of a service process (see the module
/// documentation). Call it after [`crate::init`], so the line goes out
/// through the service's logger; without a logger it goes to stderr.
pub fn exit_on_panic(service: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let message = payload_text(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_else(|| "unknown".into());
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        if CONTAINED.with(Cell::get) > 0 {
            metrics::counter!("panics_contained_total").increment(1);
            tracing::error!(
                service,
                panic = %message,
                location = %location,
                thread = %thread,
                "panicked in contained work; its caller handles it"
            );
            return;
        }
        // Captured only when RUST_BACKTRACE asks for it.
        let backtrace = std::backtrace::Backtrace::capture();
        let backtrace = match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => backtrace.to_string(),
            _ => String::new(),
        };
        if tracing::dispatcher::has_been_set() {
            tracing::error!(
                service,
                panic = %message,
                location = %location,
                thread = %thread,
                backtrace = %backtrace,
                exit_code = PANIC_EXIT_CODE,
                "panicked; exiting so that a supervisor restarts the service"
            );
        } else {
            eprintln!(
                "{service} panicked at {location} (thread {thread}): {message}; exiting\n{backtrace}"
            );
        }
        // The log writers write each line whole and unbuffered or
        // line-buffered; flush anyway, `exit` runs no destructors.
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        std::process::exit(PANIC_EXIT_CODE);
    }));
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic payload that is not text)".into()
    }
}
