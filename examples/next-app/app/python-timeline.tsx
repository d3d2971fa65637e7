'use client';

import type { PythonToolOutput, ToolbeltUIMessage } from 'ai-toolbelt';
import { useRef } from 'react';
import { CellResults, Figure, shownImages } from './python-results';

type PythonPart = Extract<ToolbeltUIMessage['parts'][number], { type: 'tool-python' }>;

/** Per python call, the latest state of each attempt. */
export type PythonHistory = Map<string, Map<number, PythonToolOutput>>;

/**
 * Remembers every attempt of every python call. `useChat` keeps only a tool
 * part's latest output (preliminary outputs replace each other), but a repair
 * timeline needs the failed attempt after the next one has started.
 */
export function usePythonHistory(messages: ToolbeltUIMessage[]): PythonHistory {
  const history = useRef<PythonHistory>(new Map());
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type !== 'tool-python' || part.state !== 'output-available') continue;
      const attempts = history.current.get(part.toolCallId) ?? new Map();
      attempts.set(part.output.attempt, part.output);
      history.current.set(part.toolCallId, attempts);
    }
  }
  return history.current;
}

/**
 * One python call as a timeline: each attempt running (with what it printed so far), failed
 * (with the trimmed error the model sees), being repaired, or succeeded (with its output, the
 * values the cell showed and its figures).
 */
export function PythonTimeline({ part, history }: { part: PythonPart; history: PythonHistory }) {
  const attempts = [...(history.get(part.toolCallId)?.values() ?? [])].sort(
    (a, b) => a.attempt - b.attempt,
  );
  // A failed call ends as a tool error. If its `failed` state streamed by between
  // two renders, the error stands in for the attempt that was last seen running.
  const failedLate = part.state === 'output-error' && attempts.at(-1)?.state !== 'failed';
  const unfinished =
    failedLate && attempts.at(-1)?.state !== 'success' ? attempts.pop() : undefined;
  const shown = unfinished ?? attempts.at(-1);
  const code = shown && 'code' in shown ? shown.code : part.input?.code;
  return (
    <div className="python" data-tool-call-id={part.toolCallId}>
      <details className="tool">
        <summary>Python code</summary>
        <pre>{code}</pre>
      </details>
      {attempts.length === 0 && part.state !== 'output-error' ? (
        <div className="repair" data-state="running">
          <strong>
            Python: {part.state === 'input-streaming' ? 'writing code…' : 'starting…'}
          </strong>
        </div>
      ) : null}
      {attempts.map(output => (
        <Attempt key={output.attempt} output={output} />
      ))}
      {failedLate ? (
        <div className="repair" data-state="failed">
          <strong>Python attempt {unfinished?.attempt ?? ''} failed</strong>
          <pre className="attempt-error">{part.errorText}</pre>
        </div>
      ) : null}
    </div>
  );
}

function Attempt({ output }: { output: PythonToolOutput }) {
  switch (output.state) {
    case 'running':
      return (
        <div className="repair" data-state="running">
          <strong>Python attempt {output.attempt}: running…</strong>
          {/* What it printed so far, streamed while the cell runs. */}
          {output.output ? <pre className="attempt-live">{output.output}</pre> : null}
        </div>
      );
    case 'failed':
      return (
        <div className="repair" data-state="failed">
          <strong>
            Python attempt {output.attempt} failed ({output.status})
            {output.next === 'repair' ? ' — repairing' : ' — giving up'}
          </strong>
          <pre className="attempt-error">{output.error}</pre>
        </div>
      );
    case 'repairing':
      return (
        <div className="repair" data-state="repairing">
          <strong>Python attempt {output.attempt}: writing a fix…</strong>
        </div>
      );
    case 'success':
      return (
        <div className="repair" data-state="success">
          <strong>Python attempt {output.attempt} succeeded</strong>
          {/* The chat's interpreter had ended (idle, killed): python says how its state came back. */}
          {output.restored ? <div className="note restored">{output.restored}</div> : null}
          <pre className="attempt-output">{output.stdout || '(no output)'}</pre>
          <CellResults output={output} />
          <Artifacts output={output} />
        </div>
      );
  }
}

/**
 * Figures no shown value drew already (from their chart data, or the PNG); files as downloads,
 * never rendered (the sandbox decides their contents, so they are served as
 * application/octet-stream); the caps' notes.
 */
function Artifacts({ output }: { output: Extract<PythonToolOutput, { state: 'success' }> }) {
  const shown = shownImages(output);
  return (
    <>
      {(output.images ?? [])
        .filter(image => image.mediaType === 'image/png' && !shown.has(image.name))
        .map(image => (
          <Figure key={image.name} image={image} />
        ))}
      {(output.files ?? []).map(file => {
        const name = file.name.split('/').pop()!;
        return (
          <a
            key={file.name}
            className="download"
            download={name}
            href={file.url ?? `data:application/octet-stream;base64,${file.data}`}
          >
            Download {name} ({formatBytes(file.size)})
          </a>
        );
      })}
      {(output.notes ?? []).map(note => (
        <div key={note} className="note">
          {note}
        </div>
      ))}
    </>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KB`
    : `${(bytes / 1048576).toFixed(1)} MB`;
}
