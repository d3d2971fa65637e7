const PNG_1X1 = '89504e470d0a1a0a0000000d494844520000000100000001';

/**
 * What code that read `python/run_bootstrap.py` can do: find the bootstrap's exit hook through
 * `gc.get_objects()`, wrap `_write_all` in its globals to learn the record prefix when the hook
 * writes its first record (a note the code adds, so there is one), and write `count` records of
 * its own behind it: zero-byte files, or 24-byte "PNG images" (a bare IHDR).
 */
export const recordFlood = ({ kind, count }: { kind: 'file' | 'image'; count: number }) =>
  [
    'import gc',
    'done = next(o for o in gc.get_objects() if getattr(o, "__name__", None) == "_done" and hasattr(o, "__globals__"))',
    'g = done.__globals__',
    'real_write = g["_write_all"]',
    'def forge(fd, data):',
    '    prefix = data[: data.index(b":", 13) + 1]',
    '    g["_write_all"] = real_write',
    kind === 'file'
      ? '    record = prefix + b\'file {"kind":"file","path":"outputs/x","mediaType":"text/plain","bytes":0}\\n\''
      : `    record = prefix + b'file {"kind":"image","path":"figure-1.png","mediaType":"image/png","bytes":24}\\n' + bytes.fromhex("${PNG_1X1}")`,
    '    block = record * 1000',
    `    for _ in range(${count} // 1000):`,
    '        real_write(1, block)',
    'g["_write_all"] = forge',
    'g["_artifacts"].notes.append("armed")',
    'print("exit hook:", done.__name__)',
  ].join('\n');
