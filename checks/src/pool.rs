//! Several checks explored at once (`check --jobs N`), reported in order.
//!
//! Workers take the next unexplored item from a shared counter, so two
//! large checks that sit next to each other in the catalogue (a check and
//! its derived `-bg1` twin) go to different workers. The caller's
//! `report` runs on the calling thread, once per item, in the items'
//! order, as soon as that item and every item before it are done: the
//! output of a run with N jobs is the output of a run with one. The first
//! error (of `work` or of `report`) in item order ends the run: no worker
//! starts another item, the ones running finish theirs, and the error is
//! returned (a later item's error is not reported while an earlier item
//! can still fail).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// The default number of jobs: the cores this process may use.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run `work` on every item, `jobs` at a time, and `report` each result
/// in item order on the calling thread.
pub fn run_ordered<I, R, W, F>(
    items: &[I],
    jobs: usize,
    work: W,
    mut report: F,
) -> Result<(), String>
where
    I: Sync,
    R: Send,
    W: Fn(&I) -> Result<R, String> + Sync,
    F: FnMut(&I, R) -> Result<(), String>,
{
    let jobs = jobs.clamp(1, items.len().max(1));
    if jobs == 1 {
        for it in items {
            report(it, work(it)?)?;
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // the first item that failed: no later item can be reported, so none
    // is started (a one-job run would not start it either)
    let failed = AtomicUsize::new(usize::MAX);
    std::thread::scope(|sc| {
        let (tx, rx) = mpsc::channel::<(usize, Result<R, String>)>();
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop, failed, work) = (&next, &stop, &failed, &work);
            sc.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(it) = items.get(i) else { break };
                    if i > failed.load(Ordering::Relaxed) {
                        break;
                    }
                    // a panic stops the other workers after their current
                    // item (as a one-job run stops at once), then unwinds:
                    // the scope re-raises it when it joins
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(it)))
                        .unwrap_or_else(|p| {
                            stop.store(true, Ordering::Relaxed);
                            std::panic::resume_unwind(p)
                        });
                    if r.is_err() {
                        failed.fetch_min(i, Ordering::Relaxed);
                    }
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut done: BTreeMap<usize, Result<R, String>> = BTreeMap::new();
        let mut want = 0;
        let outcome = loop {
            if want == items.len() {
                break Ok(());
            }
            if let Some(r) = done.remove(&want) {
                let r = r.and_then(|r| report(&items[want], r));
                if let Err(e) = r {
                    break Err(e);
                }
                want += 1;
                continue;
            }
            match rx.recv() {
                Ok((i, r)) => {
                    done.insert(i, r);
                }
                // every worker ended before the item wanted was done: a
                // worker panicked (the scope re-raises it when it joins)
                Err(_) => break Err("a check's exploration ended without a result".into()),
            }
        };
        stop.store(true, Ordering::Relaxed);
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Items finish out of order (later items are quicker); the reports
    /// still come in item order, for any number of jobs.
    #[test]
    fn reports_come_in_item_order() {
        let items: Vec<u64> = (0..12).collect();
        for jobs in [1, 2, 3, 8, 50] {
            let mut seen = Vec::new();
            run_ordered(
                &items,
                jobs,
                |&i| {
                    std::thread::sleep(Duration::from_millis(12 - i));
                    Ok(i * 10)
                },
                |&i, r| {
                    seen.push((i, r));
                    Ok(())
                },
            )
            .unwrap();
            let want: Vec<(u64, u64)> = items.iter().map(|&i| (i, i * 10)).collect();
            assert_eq!(seen, want, "jobs {jobs}");
        }
    }

    /// The first error in item order is returned, and nothing after it is
    /// reported, even when a later item failed first.
    #[test]
    fn the_first_error_in_item_order_wins() {
        let items: Vec<u64> = (0..10).collect();
        for jobs in [1, 2, 4] {
            let mut seen = Vec::new();
            let r = run_ordered(
                &items,
                jobs,
                |&i| match i {
                    3 => {
                        std::thread::sleep(Duration::from_millis(30));
                        Err("three".to_string())
                    }
                    7 => Err("seven".to_string()),
                    _ => Ok(i),
                },
                |&i, _| {
                    seen.push(i);
                    Ok(())
                },
            );
            assert_eq!(r, Err("three".to_string()), "jobs {jobs}");
            assert_eq!(seen, vec![0, 1, 2], "jobs {jobs}");
        }
    }

    /// A panic in a worker reaches the caller after the reports of the
    /// items before it (and stops the other worker: not asserted, see
    /// below). Items after a failed one are not started.
    /// (Item 0 is held until item 2 has failed, so the other worker would
    /// otherwise run every later item meanwhile.)
    #[test]
    fn a_panic_or_an_error_stops_the_workers() {
        let items: Vec<u64> = (0..40).collect();
        for fail in ["panic", "error"] {
            let started = AtomicUsize::new(0);
            let two = AtomicBool::new(false);
            let mut seen = Vec::new();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_ordered(
                    &items,
                    2,
                    |&i| {
                        started.fetch_add(1, Ordering::SeqCst);
                        if i == 0 {
                            while !two.load(Ordering::SeqCst) {
                                std::thread::yield_now();
                            }
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        if i == 2 {
                            two.store(true, Ordering::SeqCst);
                            if fail == "panic" {
                                panic!("a check panicked");
                            }
                            return Err("two".to_string());
                        }
                        Ok(i)
                    },
                    |&i, _| {
                        seen.push(i);
                        Ok(())
                    },
                )
            }));
            match fail {
                "panic" => assert!(r.is_err(), "the panic reaches the caller"),
                _ => assert_eq!(r.ok(), Some(Err("two".to_string()))),
            }
            assert_eq!(seen, vec![0, 1], "{fail}");
            // (a panic sets `stop` only once the panic hook has printed,
            // which may take longer than item 0's wait: not counted)
            let n = started.load(Ordering::SeqCst);
            assert!(fail == "panic" || n <= 4, "{fail}: {n} items started");
        }
    }

    /// An error of the report stops the run too.
    #[test]
    fn a_report_error_stops_the_run() {
        let items: Vec<u64> = (0..6).collect();
        let mut seen = Vec::new();
        let r = run_ordered(
            &items,
            2,
            |&i| Ok(i),
            |&i, _| {
                seen.push(i);
                if i == 2 {
                    Err("stop".into())
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err("stop".to_string()));
        assert_eq!(seen, vec![0, 1, 2]);
    }
}
