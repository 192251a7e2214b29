//! Connecting the processes of a cluster within a deadline, then handing
//! the sockets to timely's communication layer.
//!
//! The handshake is timely's own: process `p` listens on its address,
//! connects to every process before it and sends its index (a big-endian
//! `u64`); it accepts a connection from every process after it. Doing this
//! here rather than in `timely_communication::initialize_networking` bounds
//! the wait (timely retries forever) and keeps its progress messages off
//! standard output, where query results go.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::{Config as CommunicationConfig, Hooks};

use crate::TimelyError;
use crate::config::Config;

/// Allocators for this process's workers, and what must live as long as
/// they do (timely's network threads).
pub(crate) type Allocators = (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>);

/// Builds the allocators for `config`: threads only, or connected peers.
pub(crate) fn allocators(config: &Config) -> Result<Allocators, TimelyError> {
    let Some(cluster) = &config.cluster else {
        let communication = if config.workers == 1 {
            CommunicationConfig::Thread
        } else {
            CommunicationConfig::Process(config.workers)
        };
        return communication.try_build().map_err(TimelyError::Network);
    };
    let sockets = connect(&cluster.addresses, cluster.process, config.connect_timeout)?;
    let hooks = Hooks::default();
    let local =
        ProcessBuilder::new_typed_vector(config.workers, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, cluster.process, config.workers, hooks)
            .map_err(|e| TimelyError::Network(format!("starting network threads: {e}")))?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
    ))
}

/// One socket per peer process, in process order (`None` for this one),
/// or an error naming the peer that could not be reached by the deadline.
pub(crate) fn connect(
    addresses: &[String],
    me: usize,
    timeout: Duration,
) -> Result<Vec<Option<TcpStream>>, TimelyError> {
    let deadline = Instant::now() + timeout;
    let unreachable = |peer: usize, why: String| TimelyError::Unreachable {
        process: me,
        peer,
        address: addresses[peer].clone(),
        seconds: timeout.as_secs_f64(),
        why,
    };
    // Listen first, so that peers after this one can connect while this
    // one connects to the peers before it.
    let listener = TcpListener::bind(&addresses[me]).map_err(|e| {
        TimelyError::Network(format!(
            "process {me} cannot listen on {}: {e}",
            addresses[me]
        ))
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| TimelyError::Network(e.to_string()))?;
    let mut sockets: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    for (peer, socket) in sockets.iter_mut().enumerate().take(me) {
        let mut stream = dial(&addresses[peer], deadline).map_err(|why| unreachable(peer, why))?;
        stream
            .write_all(&(me as u64).to_be_bytes())
            .map_err(|e| unreachable(peer, e.to_string()))?;
        *socket = Some(stream);
    }
    while let Some(waiting) = (me + 1..addresses.len()).find(|&p| sockets[p].is_none()) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let peer =
                    read_index(&mut stream, deadline).map_err(|why| unreachable(waiting, why))?;
                if peer <= me || peer >= addresses.len() || sockets[peer].is_some() {
                    return Err(TimelyError::Network(format!(
                        "process {me} got a connection claiming to be process {peer}: check that every process has the same hostfile and a distinct --process"
                    )));
                }
                sockets[peer] = Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(unreachable(
                        waiting,
                        "it never connected (is it running, with the same hostfile?)".into(),
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(unreachable(waiting, e.to_string())),
        }
    }
    for stream in sockets.iter().flatten() {
        stream
            .set_nodelay(true)
            .and_then(|()| stream.set_nonblocking(false))
            .and_then(|()| stream.set_read_timeout(None))
            .map_err(|e| TimelyError::Network(e.to_string()))?;
    }
    Ok(sockets)
}

/// Connects to `address`, retrying until `deadline`.
fn dial(address: &str, deadline: Instant) -> Result<TcpStream, String> {
    loop {
        let attempt = address
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve it: {e}"))?
            .next()
            .ok_or_else(|| "it resolves to no address".to_string())
            .and_then(|addr| {
                let left = deadline.saturating_duration_since(Instant::now());
                TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1)))
                    .map_err(|e| e.to_string())
            });
        match attempt {
            Ok(stream) => return Ok(stream),
            Err(why) if Instant::now() >= deadline => return Err(why),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Reads the index a connecting peer announces.
fn read_index(stream: &mut TcpStream, deadline: Instant) -> Result<usize, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_read_timeout(Some(left.max(Duration::from_millis(100)))))
        .map_err(|e| e.to_string())?;
    let mut index = [0u8; 8];
    stream
        .read_exact(&mut index)
        .map_err(|e| format!("it connected but did not say who it is: {e}"))?;
    Ok(u64::from_be_bytes(index) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_addresses(n: usize) -> Vec<String> {
        crate::Cluster::free_local_addresses(n).expect("free local ports")
    }

    #[test]
    fn three_processes_connect_pairwise() {
        let addresses = free_addresses(3);
        let handles: Vec<_> = (0..3)
            .map(|me| {
                let addresses = addresses.clone();
                std::thread::spawn(move || connect(&addresses, me, Duration::from_secs(10)))
            })
            .collect();
        for (me, handle) in handles.into_iter().enumerate() {
            let sockets = handle.join().unwrap().unwrap();
            for (peer, socket) in sockets.iter().enumerate() {
                assert_eq!(socket.is_some(), peer != me, "process {me}, peer {peer}");
            }
        }
    }

    #[test]
    fn a_missing_peer_is_an_error_after_the_timeout() {
        let addresses = free_addresses(2);
        let start = Instant::now();
        let err = connect(&addresses, 1, Duration::from_millis(300)).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        let text = err.to_string();
        assert!(
            text.contains("process 1 could not reach process 0"),
            "{text}"
        );
        let err = connect(&addresses, 0, Duration::from_millis(300)).unwrap_err();
        assert!(
            err.to_string().contains("could not reach process 1"),
            "{err}"
        );
    }
}
