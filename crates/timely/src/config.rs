//! Where a computation runs: worker threads in this process, and the other
//! processes of a cluster.

use std::path::Path;
use std::time::Duration;

use crate::TimelyError;

/// The processes of a cluster and this process's place among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// This process's index, `0 ≤ process < addresses.len()`.
    pub process: usize,
    /// `host:port` of every process, in process order; each process listens
    /// on its own address.
    pub addresses: Vec<String>,
}

impl Cluster {
    /// `processes` addresses on this machine (`127.0.0.1`) whose ports are
    /// free right now, for a cluster whose processes all run here (tests and
    /// demos). Another program may take a port before the cluster binds it.
    pub fn free_local_addresses(processes: usize) -> std::io::Result<Vec<String>> {
        // Hold every listener until all ports are known, so none repeats.
        let listeners = (0..processes)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<Vec<_>>>()?;
        listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.to_string()))
            .collect()
    }
}

/// How many workers, where, and how long to wait for peers.
///
/// Every process of a cluster must be given the same number of workers,
/// the same addresses and the same query.
#[derive(Clone, Debug)]
pub struct Config {
    /// Worker threads in this process (at least 1).
    pub workers: usize,
    /// The other processes, if any.
    pub cluster: Option<Cluster>,
    /// How long to wait for every peer process to connect before giving up.
    pub connect_timeout: Duration,
    /// How many input batches may be in flight (read but not yet through
    /// the windows) before the reader waits: bounds memory and latency.
    pub batches_in_flight: u64,
}

impl Config {
    /// `workers` threads in this process.
    pub fn workers(workers: usize) -> Self {
        Config {
            workers: workers.max(1),
            cluster: None,
            connect_timeout: Duration::from_secs(30),
            batches_in_flight: 16,
        }
    }

    /// `workers` threads in process `process` of the cluster whose processes
    /// listen on `addresses`.
    pub fn cluster(workers: usize, process: usize, addresses: Vec<String>) -> Self {
        Config {
            cluster: Some(Cluster { process, addresses }),
            ..Config::workers(workers)
        }
    }

    /// Reads a hostfile (one `host:port` per process, in process order;
    /// blank lines and `#` comments are skipped) and checks it against the
    /// expected number of processes.
    pub fn from_hostfile(
        workers: usize,
        process: usize,
        processes: usize,
        hostfile: &Path,
    ) -> Result<Self, TimelyError> {
        let text = std::fs::read_to_string(hostfile).map_err(|e| {
            TimelyError::Config(format!("cannot read hostfile {}: {e}", hostfile.display()))
        })?;
        let addresses: Vec<String> = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        if addresses.len() < processes {
            return Err(TimelyError::Config(format!(
                "hostfile {} lists {} address(es) for {processes} processes",
                hostfile.display(),
                addresses.len()
            )));
        }
        let config = Config::cluster(workers, process, addresses[..processes].to_vec());
        config.check()?;
        Ok(config)
    }

    /// Waits at most `timeout` for peers.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Workers in the whole computation.
    pub fn total_workers(&self) -> usize {
        self.workers * self.processes()
    }

    /// Processes in the computation (1 without a cluster).
    pub fn processes(&self) -> usize {
        self.cluster.as_ref().map_or(1, |c| c.addresses.len())
    }

    /// This process's index (0 without a cluster).
    pub fn process(&self) -> usize {
        self.cluster.as_ref().map_or(0, |c| c.process)
    }

    /// Checks the settings hang together.
    pub fn check(&self) -> Result<(), TimelyError> {
        if self.workers == 0 {
            return Err(TimelyError::Config("at least one worker is needed".into()));
        }
        if let Some(cluster) = &self.cluster {
            if cluster.process >= cluster.addresses.len() {
                return Err(TimelyError::Config(format!(
                    "process {} does not exist in a cluster of {} process(es) (they are numbered from 0)",
                    cluster.process,
                    cluster.addresses.len()
                )));
            }
            if let Some(bad) = cluster.addresses.iter().find(|a| !a.contains(':')) {
                return Err(TimelyError::Config(format!(
                    "address '{bad}' is not host:port"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostfile_gives_one_address_per_process() {
        let dir = std::env::temp_dir().join(format!("sliq-hosts-{}", std::process::id()));
        std::fs::write(
            &dir,
            "# cluster\n127.0.0.1:2101\n\n127.0.0.1:2102  # second\n",
        )
        .unwrap();
        let config = Config::from_hostfile(2, 1, 2, &dir).unwrap();
        let cluster = config.cluster.clone().unwrap();
        assert_eq!(cluster.addresses, ["127.0.0.1:2101", "127.0.0.1:2102"]);
        assert_eq!(config.total_workers(), 4);
        assert_eq!(config.process(), 1);
        let short = Config::from_hostfile(2, 0, 3, &dir)
            .unwrap_err()
            .to_string();
        assert!(short.contains("2 address(es) for 3 processes"), "{short}");
        let beyond = Config::from_hostfile(2, 2, 2, &dir)
            .unwrap_err()
            .to_string();
        assert!(beyond.contains("process 2 does not exist"), "{beyond}");
        std::fs::remove_file(&dir).unwrap();
        let missing = Config::from_hostfile(1, 0, 1, &dir)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot read hostfile"), "{missing}");
    }
}
