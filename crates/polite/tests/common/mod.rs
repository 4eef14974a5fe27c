//! Shared by the simulations: a small deterministic generator (xorshift),
//! so every run of a seed replays the same traffic.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    #[allow(dead_code)] // not every simulation needs it
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
