//! The socket to the master, registered with the reactor for *readability
//! only*.
//!
//! tokio registers its own sockets for reading and writing at once; with
//! edge-triggered epoll, every time snmpd reads one of our responses the
//! kernel then reports "writable" and wakes us for nothing: one extra wake-up
//! and context switch per request, which measured as about half of the
//! agent's CPU per request. Our responses are small and the socket buffer
//! large, so writes go straight to the socket; in the rare case it is full
//! (snmpd not reading), we retry after a short pause until the deadline.

use super::address::AgentxAddress;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};

/// A connected stream socket, either kind.
#[derive(Debug)]
enum Socket {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Unix(s) => s.as_raw_fd(),
            Socket::Tcp(s) => s.as_raw_fd(),
        }
    }
}

impl Socket {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Unix(s) => (&*s).read(buf),
            Socket::Tcp(s) => (&*s).read(buf),
        }
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Unix(s) => (&*s).write(buf),
            Socket::Tcp(s) => (&*s).write(buf),
        }
    }

    fn shutdown(&self) {
        let _ = match self {
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
}

/// Connect to the master; returns the reading and writing halves.
pub async fn connect(address: &AgentxAddress) -> io::Result<(MasterReader, MasterWriter)> {
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
    // into_std() leaves the socket non-blocking, as AsyncFd needs.
    // SAFETY: `Socket` owns its file descriptor (a std stream), always
    // returns the same one from as_raw_fd, and the AsyncFd owns the Socket,
    // so the descriptor stays open and the same for the AsyncFd's lifetime.
    let fd = unsafe { AsyncFd::register_with_interest(socket, Interest::READABLE) }
        .map_err(|e| e.into_parts().1)?;
    let fd = Arc::new(fd);
    Ok((MasterReader { fd: fd.clone() }, MasterWriter { fd }))
}

pub struct MasterReader {
    fd: Arc<AsyncFd<Socket>>,
}

impl AsyncRead for MasterReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let wanted = unfilled.len();
            match guard.try_io(|fd| fd.get_ref().read(unfilled)) {
                Ok(Ok(n)) => {
                    // A short read drained the socket: skip the read that
                    // would only say EAGAIN. New data raises a new edge.
                    if n > 0 && n < wanted {
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

pub struct MasterWriter {
    fd: Arc<AsyncFd<Socket>>,
}

/// Pause between two attempts to write to a full socket.
const FULL_SOCKET_PAUSE: Duration = Duration::from_millis(2);

impl MasterWriter {
    /// Write all of `bytes`, giving up with `TimedOut` after `deadline`.
    pub async fn write_all(&self, mut bytes: &[u8], deadline: Duration) -> io::Result<()> {
        let started = tokio::time::Instant::now();
        while !bytes.is_empty() {
            match self.fd.get_ref().write(bytes) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if started.elapsed() > deadline {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    tokio::time::sleep(FULL_SOCKET_PAUSE).await;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    pub fn shutdown(&self) {
        self.fd.get_ref().shutdown();
    }
}
