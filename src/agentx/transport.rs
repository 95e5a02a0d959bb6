//! The socket to the master, used *blocking* by the session's own thread.
//!
//! Connecting is async (the session's reconnect loop runs on the runtime,
//! with its timeout and backoff); once connected, the socket is handed
//! over as a plain blocking std stream: one blocking read wakes the
//! session's thread when snmpd sends a request, one write answers it. The
//! runtime's reactor is not involved in answering, which measured as one
//! `epoll_wait` and a task wake-up per request when it was (see
//! docs/benchmarks.md, "the floor").
//!
//! Reads wait without end once the session is open (a read timeout costs
//! a kernel timer per sleep; the session stops its thread by shutting the
//! reading side instead), writes end after the write timeout (a master that
//! stops reading cannot hold us forever).

use super::address::AgentxAddress;
use std::io::{self, Read, Write};
use std::time::Duration;

/// A connected stream socket, either kind.
#[derive(Debug)]
enum Socket {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

/// The connected socket, blocking. Shared by reference between the
/// session's thread (reads, answers) and the notification sender (writes,
/// serialised by the session).
#[derive(Debug)]
pub struct MasterSocket {
    socket: Socket,
}

/// Connect to the master.
pub async fn connect(address: &AgentxAddress) -> io::Result<MasterSocket> {
    let socket = match address {
        AgentxAddress::Unix(path) => {
            Socket::Unix(tokio::net::UnixStream::connect(path).await?.into_std()?)
        }
        AgentxAddress::Tcp(host, port) => {
            let stream = tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
            stream.set_nodelay(true)?;
            Socket::Tcp(stream.into_std()?)
        }
    };
    // into_std() leaves the socket non-blocking; the session's thread blocks.
    match &socket {
        Socket::Unix(s) => s.set_nonblocking(false)?,
        Socket::Tcp(s) => s.set_nonblocking(false)?,
    }
    Ok(MasterSocket { socket })
}

impl MasterSocket {
    /// One end of a socket pair, for the session's unit tests.
    #[cfg(test)]
    pub(crate) fn from_unix(stream: std::os::unix::net::UnixStream) -> Self {
        MasterSocket {
            socket: Socket::Unix(stream),
        }
    }

    /// One blocking read; `WouldBlock` or `TimedOut` when the read timeout
    /// passed with nothing to read.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match &self.socket {
            Socket::Unix(s) => (&*s).read(buf),
            Socket::Tcp(s) => (&*s).read(buf),
        }
    }

    /// Write all of `bytes`; `TimedOut` when the socket stayed full for the
    /// write timeout.
    pub fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let written = match &self.socket {
                Socket::Unix(s) => (&*s).write(bytes),
                Socket::Tcp(s) => (&*s).write(bytes),
            };
            match written {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::ErrorKind::TimedOut.into())
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// How long one read may wait, or (None) without end (a zero duration
    /// is taken as 1 ms: the socket refuses zero).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        let timeout = timeout.map(|t| t.max(Duration::from_millis(1)));
        match &self.socket {
            Socket::Unix(s) => s.set_read_timeout(timeout),
            Socket::Tcp(s) => s.set_read_timeout(timeout),
        }
    }

    /// How long one write may wait for room in the socket.
    pub fn set_write_timeout(&self, timeout: Duration) -> io::Result<()> {
        let timeout = Some(timeout.max(Duration::from_millis(1)));
        match &self.socket {
            Socket::Unix(s) => s.set_write_timeout(timeout),
            Socket::Tcp(s) => s.set_write_timeout(timeout),
        }
    }

    /// Stop reading: a read blocked on the socket, and every later one,
    /// returns end of file once what was already received is read. Writing
    /// still works (the session's Close goes out after this).
    pub fn shutdown_read(&self) {
        self.shutdown_how(std::net::Shutdown::Read);
    }

    /// Stop both ways: the master sees the connection end.
    pub fn shutdown(&self) {
        self.shutdown_how(std::net::Shutdown::Both);
    }

    fn shutdown_how(&self, how: std::net::Shutdown) {
        let _ = match &self.socket {
            Socket::Unix(s) => s.shutdown(how),
            Socket::Tcp(s) => s.shutdown(how),
        };
    }
}
