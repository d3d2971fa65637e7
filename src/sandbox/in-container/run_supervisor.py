# The first Python process of every one-shot sandbox container (run as `python3 -I -S -c
# SOURCE BOOTSTRAP PREIMPORT` under `timeout -s KILL`; BOOTSTRAP is run_bootstrap.py): it starts the bootstrap (which runs the code)
# as its child and is the only one that can say how the run ended.
#
# 1. Makes itself non-dumpable (`PR_SET_DUMPABLE` 0, checked with `PR_GET_DUMPABLE`): code
#    running as the same user can then neither ptrace it nor read /proc/<pid>/mem (gVisor
#    enforces both, like Linux). If that fails, or ctypes is missing, it fails closed: one
#    line on stderr, exit 71 (`SUPERVISOR_UNSAFE_EXIT` on the host), and the bootstrap is never started.
# 2. With an egress policy (AI_TOOLBELT_EGRESS_SOCKET set), starts the egress forwarder
#    (egress.py: user site directory, the proxy port bound here, the forwarder in a session of
#    its own); if that fails the code still runs, without network, and the reason is written to
#    stderr just before the done marker (a line before the bootstrap's ready marker would break
#    the host's ready check). Then forks the bootstrap, which imports its modules and then
#    waits on a pipe.
# 3. Reads exactly the first line of stdin, the run's proof token, then tells the bootstrap
#    to read the rest (the code's nonce, header, code and files). The token was never in the
#    code's process: not in its memory, its stdin or its arguments.
# 4. Waits for the bootstrap to exit, SIGKILLs every other process of the container (a
#    daemon the code left behind, the egress forwarder), waits until none can still write, and
#    writes the done marker `\0ai-toolbelt:<token>:<status>\n` on stdout and stderr, then exits
#    with the status.
#
# So the host reports a run as soon as this marker arrives (no wait for gVisor's teardown),
# and a marker the code forges (it cannot know the token) is just output. Code that kills or
# stops this process only loses its marker: the run is then classified from the container's
# real exit state, or killed at its deadline.
import os, sys, time
from ai_toolbelt_egress import start_egress
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # PR_SET_DUMPABLE (4) to 0, then PR_GET_DUMPABLE (3) must say 0: a dumpable supervisor's
    # memory (the proof token) is readable by the code, so without this nothing runs.
    if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(3, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
except BaseException as error:
    os.write(2, ("ai-toolbelt sandbox: the supervisor could not make itself non-dumpable (%s: %s); no code was run\n" % (type(error).__name__, error)).encode())
    os._exit(71)
egress_problem = start_egress()
go_read, go_write = os.pipe()
child = os.fork()
if child == 0:
    os.close(go_write)
    os.set_inheritable(go_read, True)
    os.execv(sys.executable, [sys.executable, "-X", "utf8", "-c", sys.argv[1], sys.argv[2], str(go_read)])
os.close(go_read)
token = b""
while len(token) < 33:
    chunk = os.read(0, 33 - len(token))
    if not chunk:
        os.kill(child, 9)
        os._exit(70)
    token += chunk
os.close(0)
os.write(go_write, b"g")
os.close(go_write)
_, wait_status = os.waitpid(child, 0)
status = os.waitstatus_to_exitcode(wait_status)
status = status if status >= 0 else 128 - status
me = os.getpid()
try:
    os.kill(-1, 9)
except OSError:
    pass
deadline = time.monotonic() + 2
while time.monotonic() < deadline:
    busy = False
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, me):
            try:
                state = open("/proc/%s/stat" % name).read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                busy = True
                break
    if not busy:
        break
    time.sleep(0.002)
if egress_problem:
    os.write(2, egress_problem.encode())
mark = b"\0ai-toolbelt:" + token[:32] + b":" + str(status).encode() + b"\n"
for fd in (1, 2):
    data = mark
    while data:
        data = data[os.write(fd, data):]
os._exit(status)
