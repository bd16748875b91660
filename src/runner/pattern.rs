//! Traffic patterns over many hosts: which host pairs a fleet test runs, and in which rounds,
//! so that no host takes part in two tests of one round.
//!
//! - `pairs`: hosts 1–2, 3–4, … (one round);
//! - `ring`: each host against the next, the last against the first (2 rounds, 3 when odd);
//! - `all-pairs`: every pair once, scheduled as a round-robin tournament (the circle method:
//!   n − 1 rounds of n / 2 pairs, n rounded up to even);
//! - `one-to-many`: the first host as the client (sender) against every other, one per round;
//! - `many-to-one`: every other host as the client against the first.
//!
//! Bidirectional patterns add each pair's reverse (server and client swapped) in a round of
//! its own right after, so a host still runs one test at a time.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    Pairs,
    Ring,
    AllPairs,
    OneToMany,
    ManyToOne,
}

impl Pattern {
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Pairs => "pairs",
            Pattern::Ring => "ring",
            Pattern::AllPairs => "all-pairs",
            Pattern::OneToMany => "one-to-many",
            Pattern::ManyToOne => "many-to-one",
        }
    }
}

/// One test of a pattern: indexes into the host list, and its 1-based round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub round: u32,
    pub server: usize,
    pub client: usize,
}

/// The pattern's tests over `n` hosts, in round order.
pub fn schedule(pattern: Pattern, n: usize, bidirectional: bool) -> Vec<Slot> {
    let one_way: Vec<Vec<(usize, usize)>> = match pattern {
        Pattern::Pairs => vec![(0..n / 2).map(|i| (2 * i, 2 * i + 1)).collect()],
        Pattern::Ring => ring(n),
        Pattern::AllPairs => round_robin(n),
        Pattern::OneToMany => (1..n).map(|i| vec![(i, 0)]).collect(),
        Pattern::ManyToOne => (1..n).map(|i| vec![(0, i)]).collect(),
    };
    let mut out = Vec::new();
    let mut round = 0;
    for pairs in one_way.into_iter().filter(|p| !p.is_empty()) {
        round += 1;
        out.extend(pairs.iter().map(|&(server, client)| Slot {
            round,
            server,
            client,
        }));
        if bidirectional {
            round += 1;
            out.extend(pairs.iter().map(|&(server, client)| Slot {
                round,
                server: client,
                client: server,
            }));
        }
    }
    out
}

/// Ring edges (i, i + 1): even positions in one round, odd in another, and for an odd ring the
/// closing edge in a third.
fn ring(n: usize) -> Vec<Vec<(usize, usize)>> {
    match n {
        0 | 1 => Vec::new(),
        2 => vec![vec![(0, 1)]],
        _ => {
            let mut rounds = vec![Vec::new(), Vec::new(), Vec::new()];
            for i in 0..n {
                let r = if n % 2 == 1 && i == n - 1 { 2 } else { i % 2 };
                rounds[r].push((i, (i + 1) % n));
            }
            rounds
        }
    }
}

/// The circle method: host 0 stays, the others rotate; round r pairs position k with position
/// m − 1 − k. With an odd count a phantom host makes the count even and its partner sits out.
/// Roles alternate by round so each host serves about as often as it sends.
fn round_robin(n: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    let m = n + n % 2;
    let mut ring: Vec<usize> = (0..m).collect();
    let mut rounds = Vec::with_capacity(m - 1);
    for r in 0..m - 1 {
        let mut pairs = Vec::with_capacity(m / 2);
        for k in 0..m / 2 {
            let (a, b) = (ring[k], ring[m - 1 - k]);
            if a < n && b < n {
                pairs.push(if (r + k) % 2 == 0 { (a, b) } else { (b, a) });
            }
        }
        rounds.push(pairs);
        ring[1..].rotate_right(1);
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashSet};

    fn no_host_twice_in_a_round(slots: &[Slot]) {
        let mut seen: HashSet<(u32, usize)> = HashSet::new();
        for s in slots {
            assert!(seen.insert((s.round, s.server)), "{s:?}");
            assert!(seen.insert((s.round, s.client)), "{s:?}");
        }
    }

    fn undirected(slots: &[Slot]) -> BTreeSet<(usize, usize)> {
        slots
            .iter()
            .map(|s| (s.server.min(s.client), s.server.max(s.client)))
            .collect()
    }

    #[test]
    fn all_pairs_is_every_pair_once_in_n_minus_1_rounds() {
        for n in [2, 3, 6, 7, 16] {
            let s = schedule(Pattern::AllPairs, n, false);
            no_host_twice_in_a_round(&s);
            assert_eq!(s.len(), n * (n - 1) / 2, "n={n}");
            assert_eq!(undirected(&s).len(), n * (n - 1) / 2, "n={n}");
            let rounds = s.iter().map(|s| s.round).max().unwrap();
            assert_eq!(rounds as usize, n + n % 2 - 1, "n={n}");
        }
        let both = schedule(Pattern::AllPairs, 6, true);
        no_host_twice_in_a_round(&both);
        let directed: BTreeSet<(usize, usize)> =
            both.iter().map(|s| (s.server, s.client)).collect();
        assert_eq!(directed.len(), 30);
    }

    #[test]
    fn ring_pairs_and_hubs() {
        let r = schedule(Pattern::Ring, 6, false);
        no_host_twice_in_a_round(&r);
        let edges: Vec<(usize, usize)> = r.iter().map(|s| (s.server, s.client)).collect();
        for i in 0..6 {
            assert!(edges.contains(&(i, (i + 1) % 6)));
        }
        assert_eq!(r.iter().map(|s| s.round).max(), Some(2));
        let odd = schedule(Pattern::Ring, 5, false);
        no_host_twice_in_a_round(&odd);
        assert_eq!(odd.iter().map(|s| s.round).max(), Some(3));
        let p = schedule(Pattern::Pairs, 5, true);
        assert_eq!(p.len(), 4);
        no_host_twice_in_a_round(&p);
        let one = schedule(Pattern::OneToMany, 4, false);
        assert_eq!(
            one.iter().map(|s| (s.round, s.server, s.client)).collect::<Vec<_>>(),
            vec![(1, 1, 0), (2, 2, 0), (3, 3, 0)]
        );
        let many = schedule(Pattern::ManyToOne, 4, false);
        assert!(many.iter().all(|s| s.server == 0));
    }
}
