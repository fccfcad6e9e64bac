//! CPU time and memory of a process and its children, from `/proc`, so the
//! "million" stage can say where the cores went: each service, `nats-server`,
//! PostgreSQL (the postmaster and every backend), the target.

use std::collections::HashMap;

/// A process tree: `root` and everything below it.
#[derive(Debug, Clone)]
pub struct Tree {
    pub name: String,
    pub root: u32,
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on every Linux we run on).
pub fn ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// `(ppid, own ticks, ticks of reaped children)` of one process.
fn stat(pid: u32) -> Option<(u32, u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some((num(1)? as u32, num(11)? + num(12)?, num(13)? + num(14)?))
}

/// Every live process's parent.
fn parents() -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            if let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                if let Some((ppid, _, _)) = stat(pid) {
                    out.insert(pid, ppid);
                }
            }
        }
    }
    out
}

fn members(root: u32, parents: &HashMap<u32, u32>) -> Vec<u32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| **pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// CPU ticks the tree has used so far. A child that ended and was reaped
/// (a PostgreSQL autovacuum worker) still counts, in its parent's
/// children's time, so a difference of two readings is the tree's use.
fn cpu_ticks(tree: &Tree, parents: &HashMap<u32, u32>) -> u64 {
    members(tree.root, parents)
        .into_iter()
        .filter_map(stat)
        .map(|(_, own, reaped)| own + reaped)
        .sum()
}

fn status_kib(pid: u32, field: &str, file: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The tree's memory in bytes: proportional set size, so PostgreSQL's shared
/// buffers count once across its backends, not once per backend.
pub fn pss_bytes(tree: &Tree) -> u64 {
    let parents = parents();
    members(tree.root, &parents)
        .into_iter()
        .map(|pid| status_kib(pid, "Pss:", "smaps_rollup") * 1024)
        .sum()
}

/// The postmaster listening on `port` (its command line names the port).
pub fn postmaster(port: u16) -> Option<u32> {
    let wanted = port.to_string();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let is_postgres = args.first().is_some_and(|a| a.ends_with(b"postgres"));
            let on_port = args
                .windows(2)
                .any(|w| w[0] == b"-p" && w[1] == wanted.as_bytes());
            (is_postgres && on_port).then_some(pid)
        })
}

/// Busy and total ticks of the whole machine (`/proc/stat`).
pub fn machine_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let v: Vec<u64> = text
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().sum();
    // idle and iowait are the 4th and 5th columns.
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// CPU readings of several trees at one moment.
pub struct Reading {
    pub at: std::time::Instant,
    pub ticks: Vec<u64>,
    pub machine: (u64, u64),
}

pub fn read(trees: &[Tree]) -> Reading {
    // One walk of /proc for every tree of the reading.
    let parents = parents();
    Reading {
        at: std::time::Instant::now(),
        ticks: trees.iter().map(|t| cpu_ticks(t, &parents)).collect(),
        machine: machine_ticks(),
    }
}

/// Cores each tree used between two readings, and the machine's busy cores.
pub fn cores_between(a: &Reading, b: &Reading) -> (Vec<f64>, f64) {
    let secs = (b.at - a.at).as_secs_f64().max(1e-9);
    let hz = ticks_per_second();
    let per = a
        .ticks
        .iter()
        .zip(&b.ticks)
        .map(|(x, y)| y.saturating_sub(*x) as f64 / hz / secs)
        .collect();
    let busy = b.machine.0.saturating_sub(a.machine.0) as f64;
    let total = b.machine.1.saturating_sub(a.machine.1).max(1) as f64;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    (per, busy / total * cores)
}
