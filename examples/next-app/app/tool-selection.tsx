import type { ToolSelectionData } from 'ai-toolbelt';

/** One model call's tools: retrieval's top-k plus pinned and already-called tools. */
export function ToolSelection({ data }: { data: ToolSelectionData }) {
  return (
    <div className="tool-selection" data-step={data.step} data-retrieval={data.retrieval}>
      Step {data.step} ({data.retrieval}): tools offered to the model:{' '}
      {data.selected.map(tool => (
        <span
          key={tool.name}
          className={`chip ${tool.reason}`}
          title={
            tool.score === undefined ? tool.reason : `retrieval score ${tool.score.toFixed(2)}`
          }
        >
          {tool.name}
        </span>
      ))}{' '}
      ({data.dropped} left out, {data.ms.toFixed(1)} ms)
    </div>
  );
}
