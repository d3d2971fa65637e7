# The supervisors' part of the egress allow-list (issue 37), loaded into run_supervisor.py and
# interpreter_supervisor.py as `ai_toolbelt_egress` (see python-source.ts). When the host gives a
# container an egress policy it sets, besides HTTP(S)_PROXY=http://127.0.0.1:PORT and pip's
# settings (PIP_USER=1, ...):
#   AI_TOOLBELT_EGRESS_SOCKET     the host proxy's Unix socket, as mounted in the container
#   AI_TOOLBELT_EGRESS_PORT       the loopback port HTTP_PROXY names
#   AI_TOOLBELT_EGRESS_FORWARDER  the source of egress_forwarder.py
# and start_egress() runs before the supervisor starts the code's process.
import os, sys


def start_egress():
    """Prepares the egress path; returns why it could not start (one line), or None.

    Always removes AI_TOOLBELT_EGRESS_FORWARDER from the environment (large, and of no use to
    the code). With AI_TOOLBELT_EGRESS_SOCKET set: creates the user site directory (the code's
    Python adds it to sys.path only if it exists at start-up, so packages `pip install --user`
    puts there later are importable), binds and listens on 127.0.0.1:AI_TOOLBELT_EGRESS_PORT
    (here, before the code starts, so the code never races the forwarder: early connections
    wait in the backlog) and starts the forwarder in a session of its own (no signal meant for
    the code's process group reaches it) with /dev/null as stdin, stdout and stderr (it holds
    none of the supervisor's channels). Nothing here stops the code from running: on a failure
    the network is simply unreachable.
    """
    forwarder = os.environ.pop("AI_TOOLBELT_EGRESS_FORWARDER", None)
    path = os.environ.get("AI_TOOLBELT_EGRESS_SOCKET")
    if not path:
        return None
    problems = []
    try:
        # site.getuserbase() and site.getusersitepackages(), as the code's Python computes them.
        base = os.environ.get("PYTHONUSERBASE") or os.path.join(os.path.expanduser("~"), ".local")
        version = "python%d.%d" % sys.version_info[:2]
        os.makedirs(os.path.join(base, "lib", version, "site-packages"), exist_ok=True)
    except Exception as error:
        problems.append("packages pip installs will not be importable: the user site directory could not be created (%s: %s)" % (type(error).__name__, error))
    listener = None
    try:
        import socket
        if not forwarder:
            raise ValueError("AI_TOOLBELT_EGRESS_FORWARDER is not set")
        port = int(os.environ.get("AI_TOOLBELT_EGRESS_PORT", ""))
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        fd = listener.fileno()
        os.set_inheritable(fd, True)
        null = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        null += [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_WRONLY, 0) for n in (1, 2)]
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-I", "-S", "-c", forwarder, str(fd), path],
            dict(os.environ),
            file_actions=null,
            setsid=True,
        )
    except Exception as error:
        problems.append("the network is unreachable: the egress forwarder could not be started (%s: %s)" % (type(error).__name__, error))
    finally:
        if listener is not None:
            listener.close()
    if not problems:
        return None
    return "ai-toolbelt sandbox: %s\n" % "; ".join(problems)
