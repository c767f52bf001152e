// SPDX-License-Identifier: GPL-2.0

//! A module written the way a Linux 6.4 user writes one, built unchanged
//! on the 6.1 series and loaded in the guest by tests/boot/test_rust.py:
//! string literals in `module!`, names from the 6.4 prelude only,
//! `Arc::pin_init` returning an `Arc`, a `#[pin_data]` struct holding a
//! `Mutex`, a `SpinLock` and a `CondVar`, data guarded by `LockedBy`, and
//! an `ARef<Task>` kept past the call that took it.

use kernel::prelude::*;
use kernel::{
    new_condvar, new_mutex, new_spinlock,
    sync::{Arc, CondVar, LockedBy, Mutex, SpinLock},
    task::Task,
    types::ARef,
};

module! {
    type: Sample64,
    name: "rust_sample_64",
    author: "nvmem-lab",
    description: "A module in Linux 6.4 style, on the 6.1 series",
    license: "GPL",
}

struct Ledger {
    total: u64,
}

#[pin_data]
struct Station {
    #[pin]
    ledger: Mutex<Ledger>,
    #[pin]
    hits: SpinLock<u32>,
    #[pin]
    changed: CondVar,
    label: &'static CStr,
}

impl Station {
    fn new(label: &'static CStr) -> impl PinInit<Self> {
        pin_init!(Self {
            ledger <- new_mutex!(Ledger { total: 0 }, "sample64_ledger"),
            hits <- new_spinlock!(0, "sample64_hits"),
            changed <- new_condvar!("sample64_changed"),
            label,
        })
    }

    fn deposit(&self, amount: u64, entry: &LockedBy<u32, Ledger>) {
        let mut ledger = self.ledger.lock();
        ledger.total += amount;
        *entry.access_mut(&mut ledger) += 1;
        *self.hits.lock() += 1;
        self.changed.notify_all();
    }
}

struct Sample64 {
    station: Arc<Station>,
    loader: ARef<Task>,
}

impl kernel::Module for Sample64 {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let station: Arc<Station> = Arc::pin_init(Station::new(kernel::c_str!("front")))?;
        let entry = LockedBy::new(&station.ledger, 0u32);
        let again = station.clone();
        station.deposit(40, &entry);
        again.deposit(2, &entry);
        let (total, deposits) = {
            let ledger = station.ledger.lock();
            (ledger.total, *entry.access(&ledger))
        };
        let hits = *station.hits.lock();
        if total != 42 || deposits != 2 || hits != 2 {
            pr_err!("rust_sample_64: total {} deposits {} hits {}\n", total, deposits, hits);
            return Err(EINVAL);
        }
        let loader: ARef<Task> = current!().into();
        pr_info!(
            "rust_sample_64: {} total {} deposits {} hits {} loader {}\n",
            station.label,
            total,
            deposits,
            hits,
            loader.pid()
        );
        Ok(Sample64 { station, loader })
    }
}

impl Drop for Sample64 {
    fn drop(&mut self) {
        pr_info!(
            "rust_sample_64: unloading, {} still counted, loader was {}\n",
            self.station.label,
            self.loader.pid()
        );
    }
}
