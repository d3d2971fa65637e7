# The egress forwarder (issue 37): started by a supervisor (egress.py) when the app gave the
# sandbox an egress policy, as `python3 -I -S -c SOURCE LISTEN_FD SOCKET_PATH`. The container has
# no network of its own (runsc --network=none: only its loopback); the host serves an HTTP proxy
# on a Unix socket bind-mounted into it (SOCKET_PATH), which checks every CONNECT and absolute-form
# request against the allow-list. This process joins the two: each connection accepted on
# LISTEN_FD (a TCP socket the supervisor bound and listens on, 127.0.0.1:AI_TOOLBELT_EGRESS_PORT,
# where HTTP_PROXY points) is paired with a new connection to SOCKET_PATH, and bytes are copied
# both ways until both directions have ended; an end in one direction is passed on as a
# half-close (shutdown(SHUT_WR)) of the other side.
#
# One thread, non-blocking sockets and `selectors` (the container's pids limit counts threads);
# at most MAX_PAIRS pairs (connections past it are closed at once); at most BUFFER bytes waiting
# per direction (a side is not read while the other side's buffer is full). A client whose
# Unix connection cannot be made is closed. A pair ends when both sides are half-closed; a socket
# that cannot be written to any more (its peer closed) counts as half-closed, and what is read
# for it from then on is dropped (a proxy that answers 403 and closes while the client still
# sends: the answer is still delivered); a socket that fails to read (a reset) ends its pair at
# once. The code can signal or kill this process (same user) and can reach the Unix socket
# without it: it is a convenience, not a boundary. Standard library only (Python 3.9+).
import errno, selectors, signal, socket, sys, time

BUFFER = 256 << 10
MAX_PAIRS = 64
# How long accepting pauses when accept() fails for want of resources (EMFILE, ENOBUFS, ...).
ACCEPT_PAUSE_S = 0.1


class End:
    """One socket of a pair; `out` holds the bytes waiting to be written to it."""

    __slots__ = ("sock", "pair", "peer", "out", "eof", "shut", "connecting", "events")

    def __init__(self, sock, pair, connecting=False):
        self.sock = sock
        self.pair = pair
        self.peer = None
        self.out = bytearray()
        self.eof = False  # nothing more is read from it (it ended)
        self.shut = False  # nothing more is written to it (half-closed, or a write failed)
        self.connecting = connecting
        self.events = 0


class Pair:
    __slots__ = ("ends", "closed")

    def __init__(self, client, upstream, connecting):
        a, b = End(client, self), End(upstream, self, connecting)
        a.peer, b.peer = b, a
        self.ends = (a, b)
        self.closed = False


selector = selectors.DefaultSelector()
pairs = set()


def set_events(end, events):
    if events == end.events:
        return
    if end.events == 0:
        selector.register(end.sock, events, end)
    elif events == 0:
        selector.unregister(end.sock)
    else:
        selector.modify(end.sock, events, end)
    end.events = events


def close(pair):
    if pair.closed:
        return
    pair.closed = True
    pairs.discard(pair)
    for end in pair.ends:
        if end.events:
            try:
                selector.unregister(end.sock)
            except (KeyError, ValueError, OSError):
                pass
            end.events = 0
        try:
            end.sock.close()
        except OSError:
            pass


def write_failed(end):
    # Nothing more can be written to `end`: what its peer sends from now on is dropped.
    end.out.clear()
    end.shut = True


def flush(end):
    if end.connecting or end.shut or not end.out:
        return
    try:
        sent = end.sock.send(end.out)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        write_failed(end)
        return
    del end.out[:sent]


def read(end):
    peer = end.peer
    room = BUFFER if peer.shut else BUFFER - len(peer.out)
    if end.eof or room <= 0:
        return
    try:
        data = end.sock.recv(room)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        close(end.pair)  # reset: nothing more goes either way
        return
    if not data:
        end.eof = True
    elif not peer.shut:
        peer.out += data
        flush(peer)


def update(pair):
    """Passes ends on as half-closes, closes a finished pair, and sets what each socket waits for."""
    if pair.closed:
        return
    for end in pair.ends:
        peer = end.peer
        # `end` has ended and all it sent is delivered: half-close its peer.
        if end.eof and not peer.out and not peer.shut and not peer.connecting:
            peer.shut = True
            try:
                peer.sock.shutdown(socket.SHUT_WR)
            except OSError:
                write_failed(peer)
    a, b = pair.ends
    if a.shut and b.shut:
        close(pair)
        return
    for end in pair.ends:
        if end.connecting:
            events = selectors.EVENT_WRITE
        else:
            events = 0
            if not end.eof and (end.peer.shut or len(end.peer.out) < BUFFER):
                events |= selectors.EVENT_READ
            if end.out and not end.shut:
                events |= selectors.EVENT_WRITE
        set_events(end, events)


def handle(end, mask):
    pair = end.pair
    if pair.closed:
        return  # closed by an earlier event of the same select()
    if end.connecting:
        if end.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
            close(pair)
            return
        end.connecting = False
        flush(end)
    else:
        if mask & selectors.EVENT_WRITE:
            flush(end)
        if mask & selectors.EVENT_READ:
            read(end)
    update(pair)


def connect(client, path):
    """A new pair for `client`, or None (the client is then closed)."""
    upstream = None
    try:
        client.setblocking(False)
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.setblocking(False)
        connecting = False
        try:
            upstream.connect(path)
        except BlockingIOError as error:
            # EAGAIN: the proxy's backlog is full (Linux); only EINPROGRESS is worth waiting for.
            if error.errno != errno.EINPROGRESS:
                raise
            connecting = True
        return Pair(client, upstream, connecting)
    except OSError:
        for sock in (client, upstream):
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass
        return None


def accept(listener, path):
    """Accepts what is waiting; returns False when accepting should pause (out of resources)."""
    for _ in range(MAX_PAIRS):
        try:
            client, _address = listener.accept()
        except (BlockingIOError, InterruptedError):
            return True
        except (ConnectionAbortedError, ConnectionResetError):
            continue
        except OSError:
            return False  # EMFILE, ENFILE, ENOBUFS, ENOMEM: try again a little later
        if len(pairs) >= MAX_PAIRS:
            try:
                client.close()
            except OSError:
                pass
            continue
        pair = connect(client, path)
        if pair is None:
            continue
        pairs.add(pair)
        try:
            update(pair)
        except Exception:
            close(pair)
    return True


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    listener = socket.socket(fileno=int(sys.argv[1]))
    listener.setblocking(False)
    path = sys.argv[2]
    selector.register(listener, selectors.EVENT_READ, None)
    resume = None  # when accepting resumes after a pause
    while True:
        try:
            if resume is not None and time.monotonic() >= resume:
                selector.register(listener, selectors.EVENT_READ, None)
                resume = None
            timeout = None if resume is None else max(0.0, resume - time.monotonic())
            events = selector.select(timeout)
        except InterruptedError:
            continue
        for key, mask in events:
            if key.data is None:
                try:
                    accepting = accept(listener, path)
                except Exception:
                    accepting = False
                if not accepting and resume is None:
                    selector.unregister(listener)
                    resume = time.monotonic() + ACCEPT_PAUSE_S
                continue
            try:
                handle(key.data, mask)
            except Exception:
                close(key.data.pair)


if __name__ == "__main__":
    main()
