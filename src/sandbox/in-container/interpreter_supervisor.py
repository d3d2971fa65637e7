# The conversation interpreter's supervisor: the container's main process (under tini and
# `timeout -s KILL`), started as `python3 -I -S -c SOURCE KERNEL_SOURCE PREIMPORT IDLE_MS`.
#
# It starts the kernel (interpreter_kernel.py) with its stdout, stderr and a records pipe of its
# own, so nothing the cells write reaches the container's stdout except through the frames this
# process writes. The host talks to it over the container's stdin (docker attach; any replica that
# holds the interpreter's handle can attach):
#   request: `ATB1 <secret> <request id> <kind> <header length> <body length>\n<header JSON><body>`
#     kind `hello` (the creator's first request: sets the secret; later ones are ignored) or `cell`
#     (header {code, files, caps, timeoutMs, maxOutputBytes, replay}; body: code then file bytes).
#   frame: `\0ATB1 <request id> <type> <length>\n<payload>`, type `out`/`err` (the cell's output as
#     it arrives), `rec` (an image, file, note, shown value or chart), `done` (JSON: exitCode, or
#     status `timeout`, `output-limit`, `crashed`; `interrupted` when a timeout left the kernel
#     alive), or `ready` (request id `-`: the kernel finished its pre-imports).
# Requests are served one at a time, in order. Requests with the wrong secret are dropped.
#
# The supervisor enforces the cell's limits itself (output and record caps, the deadline) and exits
# whenever the kernel dies or is killed, or after IDLE_MS without a request: the container then
# ends, and the host restores the conversation in a new one. At the deadline the kernel first gets
# SIGINT (a KeyboardInterrupt in the cell: its state stays); only if the cell has not ended a grace
# later is it killed. The host checks every limit again: the cells can find this process and
# signal it.
#
# With an egress policy (AI_TOOLBELT_EGRESS_SOCKET set) it first starts the egress forwarder
# (egress.py: the user site directory, the proxy port bound here, the forwarder in a session of
# its own: the SIGINT for a cell goes to the kernel's pid only, and only the kernel's pid is
# waited for). If that fails the kernel still starts, without network; the reason is written to
# stderr and at the start of the first cell's stderr (not a replayed one's).
import hmac, json, os, selectors, signal, sys, time
from ai_toolbelt_egress import start_egress

try:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    # PR_SET_DUMPABLE (4) to 0, then PR_GET_DUMPABLE (3) must say 0: cells could otherwise read
    # this process's memory (the secret, other requests) and its pipes. Fail closed.
    if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(3, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
except BaseException as error:
    os.write(2, ("ai-toolbelt interpreter: the supervisor could not make itself non-dumpable (%s: %s); no code was run\n" % (type(error).__name__, error)).encode())
    os._exit(71)

KERNEL, PREIMPORT, IDLE_MS = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Exit codes the host reads to say why an interpreter ended: 0 only for the idle expiry, this one
# when a cell was stopped (a limit) or the kernel died, 71 when the channel was tampered with.
STOPPED = 70
MAX_HEADER = 1 << 16
MAX_BODY = 64 << 20
MAX_RECORD = 64 << 20
# How long an interrupted cell has to end before the kernel is killed (the host waits for it).
INTERRUPT_GRACE_S = 2.0

egress_problem = start_egress()
if egress_problem:
    os.write(2, egress_problem.encode())
control_r, control_w = os.pipe()
records_r, records_w = os.pipe()
out_r, out_w = os.pipe()
err_r, err_w = os.pipe()
kernel = os.fork()
if kernel == 0:
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    for fd in (out_r, out_w, err_r, err_w, control_w, records_r):
        os.close(fd)
    os.set_inheritable(control_r, True)
    os.set_inheritable(records_w, True)
    os.execv(sys.executable, [sys.executable, "-X", "utf8", "-c", KERNEL, str(control_r), str(records_w), PREIMPORT])
for fd in (control_r, records_w, out_w, err_w):
    os.close(fd)
for fd in (0, control_w, records_r, out_r, err_r):
    os.set_blocking(fd, False)


def write_all(fd, data):
    # Blocking writes: a slow host slows the cell down (its pipes fill) instead of losing output.
    # Under runsc writes to the container's stdout come back short; loop until all is written.
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def frame(request_id, kind, payload=b""):
    write_all(1, b"\0ATB1 " + request_id + b" " + kind + b" %d\n" % len(payload) + payload)


secret = None
queue = []  # parsed requests waiting: (request id, header dict, body bytes)
current = None  # the cell running: dict
pending_control = bytearray()
stdin_buffer = bytearray()
records_buffer = bytearray()
last_activity = None  # set when the kernel is ready
selector = selectors.DefaultSelector()
selector.register(0, selectors.EVENT_READ, "stdin")
selector.register(records_r, selectors.EVENT_READ, "records")
selector.register(out_r, selectors.EVENT_READ, "out")
selector.register(err_r, selectors.EVENT_READ, "err")


def finish(status_exit):
    try:
        os.kill(kernel, signal.SIGKILL)
    except OSError:
        pass
    os._exit(status_exit)


def end_cell(outcome):
    global current, last_activity
    drain()
    frame(current["id"], b"done", json.dumps(outcome).encode())
    current = None
    last_activity = time.monotonic()


def stop_cell(status):
    # The kernel cannot be trusted to stop by itself: kill it; the conversation is restored later.
    try:
        os.kill(kernel, signal.SIGKILL)
    except OSError:
        pass
    if current is not None:
        frame(current["id"], b"done", json.dumps({"status": status}).encode())
    finish(STOPPED)


def forward(kind, data):
    if current is None:
        return  # between cells (a thread the code left running): nobody asked for it
    current[kind] += len(data)
    if current[kind] > current["maxOutputBytes"]:
        stop_cell("output-limit")
    frame(current["id"], kind.encode(), data)


def drain():
    for fd, kind in ((out_r, "out"), (err_r, "err")):
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            if not data:
                break
            forward(kind, data)


def parse_requests():
    global secret
    while True:
        end = stdin_buffer.find(b"\n")
        if end < 0:
            if len(stdin_buffer) > 512:
                finish(71)  # not our protocol: the host will see the interpreter gone
            return
        fields = bytes(stdin_buffer[:end]).split(b" ")
        if len(fields) != 6 or fields[0] != b"ATB1":
            finish(71)
        if not (fields[4].isdigit() and fields[5].isdigit()):
            finish(71)
        header_length, body_length = int(fields[4]), int(fields[5])
        if header_length > MAX_HEADER or body_length > MAX_BODY:
            finish(71)
        total = end + 1 + header_length + body_length
        if len(stdin_buffer) < total:
            return
        try:
            header = json.loads(bytes(stdin_buffer[end + 1 : end + 1 + header_length]) or b"{}")
        except ValueError:
            finish(71)
        body = bytes(stdin_buffer[end + 1 + header_length : total])
        del stdin_buffer[:total]
        kind, given = fields[3], fields[1]
        if kind == b"hello":
            if secret is None:
                secret = given
            continue
        if secret is None or not hmac.compare_digest(given, secret) or kind != b"cell":
            continue
        queue.append((fields[2], header, body))


def start_next():
    global current, egress_problem
    if current is not None or not queue:
        return
    request_id, header, body = queue.pop(0)
    timeout_s = max(0.001, float(header.get("timeoutMs", 10000)) / 1000)
    current = {
        "id": request_id,
        "deadline": time.monotonic() + timeout_s,
        "interrupted": False,
        "maxOutputBytes": int(header.get("maxOutputBytes", 1 << 20)),
        "maxRecords": int(header.get("maxRecords", 64)),
        "records": 0,
        "recordBytes": 0,
        "maxRecordBytes": int(header.get("caps", {}).get("bytes", 0)) + (1 << 16),
        "out": 0,
        "err": 0,
    }
    kernel_header = {
        "code": int(header["code"]),
        "files": header.get("files", []),
        "caps": header.get("caps", {}),
        "replay": bool(header.get("replay")),
        "maxResultChars": int(header.get("maxResultChars", 20000)),
    }
    if isinstance(header.get("seed"), int):
        kernel_header["seed"] = header["seed"]
    if egress_problem and not header.get("replay"):
        forward("err", egress_problem.encode())
        egress_problem = None
    if not pending_control:
        selector.register(control_w, selectors.EVENT_WRITE, "control")
    pending_control.extend(json.dumps(kernel_header).encode() + b"\n" + body)


def on_record(kind, payload):
    global last_activity
    if kind == b"ready":
        # Idle time counts from here: the pre-imports may take longer than idleMs under load.
        last_activity = time.monotonic()
        frame(b"-", b"ready")
    elif kind == b"rec" and current is not None:
        current["records"] += 1
        current["recordBytes"] += len(payload)
        if current["records"] > current["maxRecords"] or current["recordBytes"] > current["maxRecordBytes"]:
            stop_cell("output-limit")
        drain()
        frame(current["id"], b"rec", payload)
    elif kind == b"done" and current is not None:
        try:
            exit_code = int(json.loads(payload)["exitCode"])
        except Exception:
            exit_code = 1
        outcome = {"exitCode": max(0, min(255, exit_code))}
        if current["interrupted"] and exit_code != 0:
            outcome.update(status="timeout", interrupted=True)
        end_cell(outcome)
        start_next()


def parse_records():
    while True:
        end = records_buffer.find(b"\n")
        if end < 0:
            if len(records_buffer) > 64:
                stop_cell("crashed")
            return
        fields = bytes(records_buffer[:end]).split(b" ")
        if len(fields) != 2 or fields[0] not in (b"ready", b"rec", b"done") or not fields[1].isdigit():
            stop_cell("crashed")
        length = int(fields[1])
        if length > MAX_RECORD:
            stop_cell("output-limit")
        if len(records_buffer) < end + 1 + length:
            return
        payload = bytes(records_buffer[end + 1 : end + 1 + length])
        del records_buffer[: end + 1 + length]
        on_record(fields[0], payload)


def kernel_ended():
    _, wait_status = os.waitpid(kernel, 0)
    status = os.waitstatus_to_exitcode(wait_status)
    status = status if status >= 0 else 128 - status
    if current is not None:
        drain()
        frame(current["id"], b"done", json.dumps({"status": "crashed", "exitCode": status}).encode())
    os._exit(STOPPED)


while True:
    now = time.monotonic()
    if current is not None:
        wait = current["deadline"] - now
        if wait <= 0 and current["interrupted"]:
            stop_cell("timeout")
        elif wait <= 0:
            # Interrupt first: code that handles KeyboardInterrupt (or a C loop that never checks
            # for signals) gets the grace, then the kill above.
            try:
                os.kill(kernel, signal.SIGINT)
            except OSError:
                pass
            current["interrupted"] = True
            current["deadline"] = now + INTERRUPT_GRACE_S
            wait = INTERRUPT_GRACE_S
    elif last_activity is None:
        wait = None  # still starting: the host's start deadline bounds this
    else:
        wait = last_activity + IDLE_MS / 1000 - now
        if wait <= 0 and not queue:
            finish(0)
    for key, _ in selector.select(timeout=None if wait is None else max(0.0, wait)):
        source = key.data
        if source == "stdin":
            try:
                data = os.read(0, 1 << 20)
            except BlockingIOError:
                continue
            if not data:
                selector.unregister(0)  # no host attached with stdin: keep serving until idle
                continue
            stdin_buffer.extend(data)
            if len(stdin_buffer) > MAX_HEADER + MAX_BODY + 512:
                finish(71)
            parse_requests()
            start_next()
        elif source == "control":
            try:
                sent = os.write(control_w, pending_control[: 1 << 16])
            except BlockingIOError:
                continue
            except BrokenPipeError:
                kernel_ended()
            del pending_control[:sent]
            if not pending_control:
                selector.unregister(control_w)
        elif source == "records":
            try:
                data = os.read(records_r, 1 << 20)
            except BlockingIOError:
                continue
            if not data:
                kernel_ended()
            records_buffer.extend(data)
            parse_records()
        else:
            try:
                data = os.read(key.fd, 1 << 16)
            except BlockingIOError:
                continue
            if data:
                forward(source, data)
            else:
                selector.unregister(key.fd)  # the kernel is exiting; its records pipe tells when
