//! Fleet scale: schedules all-pairs over 1,000 hosts (499,500 pairs) and fits host effects to
//! synthetic pair results with three slow hosts and one slow pair, then prints the time of each
//! step, what the fit named, and peak memory. Also prints how many rounds the other patterns
//! take. Run with `cargo bench --bench fleet` (`HOSTS=N` to change the size).

mod common;
use common::{env_usize, peak_rss_mib};

use linkperf::fleet::{fit, Observation};
use linkperf::runner::pattern::{schedule, Pattern};
use std::time::Instant;

fn main() {
    let n: usize = env_usize("HOSTS", 1000);
    let t = Instant::now();
    let slots = schedule(Pattern::AllPairs, n, false);
    let rounds = slots.iter().map(|s| s.round).max().unwrap_or(0);
    println!(
        "schedule all-pairs, {n} hosts: {} pairs in {rounds} rounds, {:.3} s",
        slots.len(),
        t.elapsed().as_secs_f64()
    );
    for p in [Pattern::Ring, Pattern::Pairs, Pattern::OneToMany] {
        let s = schedule(p, n, false);
        let r = s.iter().map(|s| s.round).max().unwrap_or(0);
        println!("schedule {}: {} pairs in {r} rounds", p.as_str(), s.len());
    }
    let (slow_hosts, slow_pair) = ([17usize, n / 2, n - 1], (5usize, 6usize));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let obs: Vec<Observation> = slots
        .iter()
        .map(|s| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut v = 100.0 * (0.98 + 0.04 * (state >> 11) as f64 / (1u64 << 53) as f64);
            for h in [s.server, s.client] {
                if slow_hosts.contains(&h) {
                    v *= 0.4;
                }
            }
            if (s.server.min(s.client), s.server.max(s.client)) == slow_pair {
                v *= 0.5;
            }
            Observation {
                server: format!("h{:04}", s.server),
                client: format!("h{:04}", s.client),
                value: v,
                source: format!("synthetic:{}", s.round),
            }
        })
        .collect();
    let t = Instant::now();
    let f = fit(&obs, 0.1);
    let secs = t.elapsed().as_secs_f64();
    let named: Vec<String> = f
        .suspects
        .iter()
        .map(|s| format!("{} {}", s.kind, s.name))
        .collect();
    println!(
        "fit {} pairs: {secs:.3} s ({:.0} pairs/s); suspects: {}",
        obs.len(),
        obs.len() as f64 / secs,
        named.join(", ")
    );
    println!("peak memory: {:.0} MiB", peak_rss_mib());
}
