// Cells that behave like notebook cells, on the real engine (issue 35): the last expression
// shown, display() in order, rich results, charts as data, interrupt instead of kill, seeded
// replays. Only the language model is scripted.
import { expect, it } from 'vitest';
import { DockerSandbox, type SandboxCellResult } from '../../../src/sandbox/index.ts';
import { describeSandbox, docker, suiteSandbox } from '../sandbox-availability.ts';
import { chatTurn } from './chat-turn.ts';
import { liveInterpreters } from './live-interpreters.ts';

let conversations = 0;
const conversationOf = () => ({ id: `notebook-${++conversations}`, userId: 'nora' });
const shown = (result: SandboxCellResult) =>
  (result.results ?? []).map(r => [r.main, r.data['text/plain']]);

describeSandbox('notebook cells (real engine)', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    {
      warmPoolSize: 0,
      preimport: ['numpy', 'pandas', 'matplotlib.pyplot'],
      maxResults: 5,
      maxOutputBytes: 4_096,
    },
    created => {
      sandbox = created;
    },
  );

  it('shows the last expression, not an assignment or a cell ending in `;`', async () => {
    const conversation = conversationOf();
    const last = await sandbox.executeCell('x = 40\nx + 2', { conversation });
    expect(last).toMatchObject({ status: 'success', stdout: '' });
    expect(shown(last)).toEqual([[true, '42']]);
    expect(shown(await sandbox.executeCell('y = x + 1', { conversation }))).toEqual([]);
    expect(shown(await sandbox.executeCell('x + 3;  # quiet', { conversation }))).toEqual([]);
    expect(shown(await sandbox.executeCell('None', { conversation }))).toEqual([]);
    // `_` holds the last shown value, as in IPython.
    expect(shown(await sandbox.executeCell('_ * 2', { conversation }))).toEqual([[true, '84']]);
  });

  it('display() needs no import and shows values in call order; prints stay in stdout', async () => {
    const conversation = conversationOf();
    const cell = await sandbox.executeCell(
      "print('before')\ndisplay('a', 1)\nfrom IPython.display import display as shown, HTML\nshown(HTML('<b>x</b>'))\nprint('after')\n[1, 2]",
      { conversation },
    );
    expect(cell.stdout).toBe('before\nafter\n');
    expect(shown(cell)).toEqual([
      [false, "'a'"],
      [false, '1'],
      [false, '<HTML object>'],
      [true, '[1, 2]'],
    ]);
    expect(cell.results![2]!.data['text/html']).toBe('<b>x</b>');
  });

  it('a DataFrame gives text and HTML; SVG and JSON reprs come through', async () => {
    const conversation = conversationOf();
    const frame = await sandbox.executeCell(
      "import pandas as pd\ndf = pd.DataFrame({'m': ['a', 'b'], 'v': [1, 2]})\ndf",
      { conversation },
    );
    const [result] = frame.results!;
    expect(result!.data['text/plain']).toContain('m  v');
    expect(result!.data['text/html']).toMatch(/<table[\s\S]*<td>a<\/td>/);
    const rich = await sandbox.executeCell(
      [
        'class Shape:',
        '    def _repr_svg_(self): return \'<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>\'',
        "    def _repr_json_(self): return {'kind': 'circle', 'r': 4}",
        '    def __repr__(self): return "Shape()"',
        'Shape()',
      ].join('\n'),
      { conversation },
    );
    expect(rich.results![0]!.data).toEqual({
      'text/plain': 'Shape()',
      'image/svg+xml': '<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>',
      'application/json': { kind: 'circle', r: 4 },
    });
  });

  it('a figure comes back as its PNG and its chart data; two axes give a composite chart', async () => {
    const conversation = conversationOf();
    const line = await sandbox.executeCell(
      "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 4, 8], label='growth')\nplt.title('Growth')\nplt.yscale('log');",
      { conversation },
    );
    expect(line.images).toHaveLength(1);
    expect(line.images[0]!.chart).toMatchObject({
      type: 'line',
      title: 'Growth',
      yScale: 'log',
      elements: [
        {
          label: 'growth',
          points: [
            [1, 2],
            [2, 4],
            [3, 8],
          ],
        },
      ],
    });
    const two = await sandbox.executeCell(
      'fig, (a, b) = plt.subplots(1, 2)\na.bar(["x", "y"], [3, 5])\nb.scatter([1, 2], [3, 4])\ndisplay(fig)',
      { conversation },
    );
    // Shown with display(): a result with its PNG and chart, and not returned again at the end.
    expect(two.images).toHaveLength(0);
    const [result] = two.results!;
    expect(result!.data['image/png']).toMatch(/^iVBOR/);
    expect(result!.chart).toMatchObject({
      type: 'composite',
      charts: [{ type: 'bar' }, { type: 'scatter' }],
    });
  });

  it('many or huge results stay within the caps, with notes', async () => {
    const conversation = conversationOf();
    const many = await sandbox.executeCell('for i in range(30): display(i)', { conversation });
    expect(many.results).toHaveLength(5);
    expect(many.notes).toContain('more values were shown; only the first 5 were returned');
    const huge = await sandbox.executeCell(
      "from IPython.display import HTML\nHTML('<p>' + 'x' * 10000 + '</p>')",
      { conversation },
    );
    expect(huge.results![0]!.data['text/html']).toBeUndefined();
    expect(huge.notes.join('\n')).toContain('a text/html result was left out');
    const long = await sandbox.executeCell("'y' * 10000", { conversation });
    expect(long.results![0]!.data['text/plain'].length).toBeLessThan(4_200);
    expect(long.results![0]!.data['text/plain']).toContain('more characters cut');
  });

  it('an error gives its name and a traceback of the cell’s own lines only', async () => {
    const conversation = conversationOf();
    const failed = await sandbox.executeCell('a = 1\nb = 0\na / b', { conversation });
    expect(failed.status).toBe('error');
    expect(failed.stderr).toContain('ZeroDivisionError: division by zero');
    expect(failed.stderr).toContain('line 3');
    expect(failed.stderr).not.toMatch(/display|ai_toolbelt|artifacts/);
    expect(failed.results).toEqual([]);
  });
});

describeSandbox('notebook cells: interrupt, kill, seeded replay (real engine)', () => {
  let sandbox: DockerSandbox;
  suiteSandbox({ warmPoolSize: 0, preimport: ['numpy'] }, created => {
    sandbox = created;
  });

  it('a cell past its timeout is interrupted: the state stays, even a value from the clock', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('import time\nstarted = time.time()', { conversation });
    const before = await sandbox.executeCell('print(started)', { conversation });
    const stuck = await sandbox.executeCell('while True:\n    pass', {
      conversation,
      timeoutMs: 1_000,
    });
    expect(stuck).toMatchObject({ status: 'timeout', interrupted: true });
    expect(stuck.ended).toBeUndefined();
    expect(stuck.stderr).toContain('KeyboardInterrupt');
    const after = await sandbox.executeCell('print(started)', { conversation });
    expect(after.stdout).toBe(before.stdout);
    expect(after.restored).toBeUndefined();
  });

  it('a loop that swallows KeyboardInterrupt is still ended, and the next cell works', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('kept = 5', { conversation });
    const stubborn = await sandbox.executeCell(
      'import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass',
      { conversation, timeoutMs: 1_000 },
    );
    expect(stubborn.status).toBe('timeout');
    expect(stubborn.interrupted).toBeUndefined();
    expect(stubborn.ended).toContain('The Python interpreter ended with this cell (timeout)');
    const next = await sandbox.executeCell('print(kept)', { conversation });
    expect(next).toMatchObject({ status: 'success', stdout: '5\n' });
    expect(next.restored).toMatchObject({ cells: 1 });
  });

  it('a replay after a killed interpreter reproduces random.random() and np.random.rand()', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell(
      'import random, numpy as np\na = random.random()\nb = np.random.rand()',
      { conversation },
    );
    const first = await sandbox.executeCell('print(a, b)', { conversation });
    // A container's host name is the start of its id: the cell names its own interpreter.
    const host = await sandbox.executeCell('import socket\nprint(socket.gethostname())', {
      conversation,
    });
    const live = await liveInterpreters(sandbox);
    const mine = live.find(id => id.startsWith(host.stdout.trim()));
    await docker.getContainer(mine!).kill();
    const again = await sandbox.executeCell('print(a, b)', { conversation });
    expect(again.restored).toMatchObject({ cells: 3 });
    expect(again.restored?.summary).toContain('the clock, os.urandom, uuid4');
    expect(again.stdout).toBe(first.stdout);
    // Another conversation draws other numbers.
    const other = conversationOf();
    await sandbox.executeCell('import random\na = random.random()', { conversation: other });
    const theirs = await sandbox.executeCell('print(a)', { conversation: other });
    expect(theirs.stdout.trim()).not.toBe(first.stdout.split(' ')[0]);
  });

  it('output and shown values reach onOutput and onResult while the cell runs', async () => {
    const conversation = conversationOf();
    const seen: Array<{ text: string; at: number }> = [];
    const shownAt: Array<{ text: string; at: number }> = [];
    const result = await sandbox.executeCell(
      "import time\nprint('first', flush=True)\ndisplay('early')\ntime.sleep(1.5)\nprint('second')",
      {
        conversation,
        onOutput: chunk => seen.push({ text: chunk.text, at: Date.now() }),
        onResult: shown => shownAt.push({ text: shown.data['text/plain'], at: Date.now() }),
      },
    );
    const ended = Date.now();
    expect(result.stdout).toBe('first\nsecond\n');
    expect(seen[0]!.text).toBe('first\n');
    expect(ended - seen[0]!.at).toBeGreaterThan(1_000);
    expect(shownAt.map(s => s.text)).toEqual(["'early'"]);
    expect(ended - shownAt[0]!.at).toBeGreaterThan(1_000);
  });

  it('the python tool shows the model the last expression and a chart summary; no "print" in its description', async () => {
    const conversation = conversationOf();
    const turn = await chatTurn(
      sandbox,
      conversation,
      "import pandas as pd\npd.DataFrame({'v': [1, 2, 3]}).describe()",
    );
    expect(turn.output).toMatchObject({ state: 'success', results: [{ main: true }] });
    expect(turn.modelText).toContain('Out:');
    expect(turn.modelText).toContain('mean');
    expect((turn.output.results as Array<{ html?: string }>)[0]!.html).toContain('<table');
  });
});
