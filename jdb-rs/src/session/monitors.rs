//! jdb's `monitor` commands: command lines run at every stop, numbered from 1 in the order they
//! were added (numbers are not reused after `unmonitor`).

#[derive(Default)]
pub struct Monitors {
    list: Vec<(u32, String)>,
    count: u32,
}

impl Monitors {
    /// Adds a command; returns its number.
    pub fn add(&mut self, command: &str) -> u32 {
        self.count += 1;
        self.list.push((self.count, command.to_string()));
        self.count
    }

    /// Removes monitor `n`; returns its command, `None` when there is no such monitor.
    pub fn remove(&mut self, n: u32) -> Option<String> {
        let i = self.list.iter().position(|(m, _)| *m == n)?;
        Some(self.list.remove(i).1)
    }

    /// `N: command` lines, as `monitor` lists them.
    pub fn listed(&self) -> Vec<String> {
        self.list.iter().map(|(n, c)| format!("{n}: {c}")).collect()
    }

    /// The commands to run at a stop, in order.
    pub fn commands(&self) -> Vec<String> {
        self.list.iter().map(|(_, c)| c.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_count_up_and_are_not_reused() {
        let mut m = Monitors::default();
        assert_eq!(m.add("where"), 1);
        assert_eq!(m.add("locals"), 2);
        assert_eq!(m.remove(1).as_deref(), Some("where"));
        assert_eq!(m.remove(1), None);
        assert_eq!(m.add("threads"), 3);
        assert_eq!(m.listed(), ["2: locals", "3: threads"]);
        assert_eq!(m.commands(), ["locals", "threads"]);
    }
}
