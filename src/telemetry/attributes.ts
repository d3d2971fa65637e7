// Names of what ai-toolbelt records: the OpenTelemetry GenAI and MCP semantic conventions'
// names where they have one (development status as of semconv-genai 0.1), `ai_toolbelt.*`
// for the rest. README "Observability" lists them with their meaning; keep the two in step.

/** Span names (low cardinality: tool names only where the conventions put them there). */
export const SPAN = {
  /** One tool selection per model call (GenAI retrieval span: `{operation} {data source}`). */
  selection: 'retrieval tool-index',
  /** The query embedding of a selection (the AI SDK's own `embeddings` span nests inside). */
  embedQuery: 'ai_toolbelt.embed_query',
  /** A sign-in's code exchange (`finishAuth`). MCP requests are `{method} {tool}` (MCP client spans). */
  mcpSignIn: 'ai_toolbelt.mcp.sign_in',
  /** One python attempt of a tool call: the run, then the repair decision. */
  pythonAttempt: 'ai_toolbelt.python.attempt',
  /** Inline mode: the repair model writing the next attempt's code. */
  repair: 'ai_toolbelt.repair',
  /** A one-shot sandbox run. */
  sandboxRun: 'ai_toolbelt.sandbox.run',
  /** A cell in a conversation's interpreter. */
  sandboxCell: 'ai_toolbelt.sandbox.cell',
} as const;

/** Attribute keys. */
export const ATTR = {
  // Conventions (gen_ai.*, mcp.*, error.type, network.*, server.*).
  operationName: 'gen_ai.operation.name',
  dataSourceId: 'gen_ai.data_source.id',
  requestTopK: 'gen_ai.request.top_k',
  retrievalDocuments: 'gen_ai.retrieval.documents',
  retrievalQueryText: 'gen_ai.retrieval.query.text',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  errorType: 'error.type',
  mcpMethod: 'mcp.method.name',
  mcpSessionId: 'mcp.session.id',
  mcpProtocolVersion: 'mcp.protocol.version',
  networkTransport: 'network.transport',
  serverAddress: 'server.address',
  serverPort: 'server.port',

  // Tool selection.
  selectionRetrieval: 'ai_toolbelt.selection.retrieval',
  selectionMode: 'ai_toolbelt.selection.mode',
  selectionStability: 'ai_toolbelt.selection.stability',
  selectionQueryLength: 'ai_toolbelt.selection.query.length',
  selectionCandidates: 'ai_toolbelt.selection.candidates',
  selectionTools: 'ai_toolbelt.selection.tools',
  selectionReasons: 'ai_toolbelt.selection.reasons',
  selectionDropped: 'ai_toolbelt.selection.dropped',
  selectionPinned: 'ai_toolbelt.selection.pinned',
  selectionCalled: 'ai_toolbelt.selection.called',
  selectionDiscovered: 'ai_toolbelt.selection.discovered',
  selectionForced: 'ai_toolbelt.selection.forced',
  selectionFallback: 'ai_toolbelt.selection.fallback',
  selectionSticky: 'ai_toolbelt.selection.sticky',
  selectionCached: 'ai_toolbelt.selection.cached',
  selectionEmbeddingMs: 'ai_toolbelt.selection.embedding_ms',
  selectionSearchMs: 'ai_toolbelt.selection.search_ms',
  embeddingModel: 'ai_toolbelt.embedding.model',
  embeddingTexts: 'ai_toolbelt.embedding.texts',

  // MCP.
  mcpServer: 'ai_toolbelt.mcp.server',
  mcpPage: 'ai_toolbelt.mcp.page',
  mcpTools: 'ai_toolbelt.mcp.tools',
  mcpOutcome: 'ai_toolbelt.mcp.outcome',

  // Sandbox.
  sandboxEngine: 'ai_toolbelt.sandbox.engine',
  sandboxQueueMs: 'ai_toolbelt.sandbox.queue_ms',
  sandboxWarm: 'ai_toolbelt.sandbox.warm',
  sandboxStartMs: 'ai_toolbelt.sandbox.start_ms',
  sandboxPlacements: 'ai_toolbelt.sandbox.placements',
  sandboxRunMs: 'ai_toolbelt.sandbox.run_ms',
  sandboxTimeoutMs: 'ai_toolbelt.sandbox.timeout_ms',
  sandboxStatus: 'ai_toolbelt.sandbox.status',
  sandboxExitCode: 'ai_toolbelt.sandbox.exit_code',
  sandboxStdoutBytes: 'ai_toolbelt.sandbox.stdout_bytes',
  sandboxStderrBytes: 'ai_toolbelt.sandbox.stderr_bytes',
  sandboxTruncated: 'ai_toolbelt.sandbox.truncated',
  sandboxImages: 'ai_toolbelt.sandbox.images',
  sandboxFiles: 'ai_toolbelt.sandbox.files',
  sandboxArtifactBytes: 'ai_toolbelt.sandbox.artifact_bytes',
  sandboxInputFiles: 'ai_toolbelt.sandbox.input_files',
  sandboxResource: 'ai_toolbelt.sandbox.resource',
  sandboxEngineState: 'ai_toolbelt.sandbox.engine.state',
  cellNumber: 'ai_toolbelt.sandbox.cell.number',
  cellInterpreter: 'ai_toolbelt.sandbox.cell.interpreter',
  cellRestored: 'ai_toolbelt.sandbox.cell.restored',
  cellRestoreReason: 'ai_toolbelt.sandbox.cell.restore_reason',
  cellRestoreMs: 'ai_toolbelt.sandbox.cell.restore_ms',
  cellReplayed: 'ai_toolbelt.sandbox.cell.replayed',
  cellReplayFailed: 'ai_toolbelt.sandbox.cell.replay_failed',
  cellResults: 'ai_toolbelt.sandbox.cell.results',
  cellInterrupted: 'ai_toolbelt.sandbox.cell.interrupted',
  cellEnded: 'ai_toolbelt.sandbox.cell.ended',
  egressConnections: 'ai_toolbelt.sandbox.egress.connections',
  egressBytesSent: 'ai_toolbelt.sandbox.egress.bytes_sent',
  egressBytesReceived: 'ai_toolbelt.sandbox.egress.bytes_received',
  egressRefused: 'ai_toolbelt.sandbox.egress.refused',
  egressHost: 'ai_toolbelt.sandbox.egress.host',
  egressPort: 'ai_toolbelt.sandbox.egress.port',
  egressReason: 'ai_toolbelt.sandbox.egress.reason',

  // Python tool and repair.
  pythonAttempt: 'ai_toolbelt.python.attempt',
  pythonMode: 'ai_toolbelt.python.mode',
  pythonStatus: 'ai_toolbelt.python.status',
  pythonErrorType: 'ai_toolbelt.python.error_type',
  pythonCode: 'ai_toolbelt.python.code',
  pythonCodeBytes: 'ai_toolbelt.python.code_bytes',
  repairFingerprint: 'ai_toolbelt.repair.fingerprint',
  repairDecision: 'ai_toolbelt.repair.decision',
  repairReason: 'ai_toolbelt.repair.reason',
  repairBudgetLeft: 'ai_toolbelt.repair.budget_left',
  repairOutcome: 'ai_toolbelt.repair.outcome',
} as const;

/** Metric instrument names. */
export const METRIC = {
  selectionDuration: 'ai_toolbelt.selection.duration',
  mcpOperationDuration: 'mcp.client.operation.duration',
  mcpReconnects: 'ai_toolbelt.mcp.reconnects',
  sandboxRunDuration: 'ai_toolbelt.sandbox.run.duration',
  sandboxQueueDepth: 'ai_toolbelt.sandbox.queue.depth',
  sandboxQueueDuration: 'ai_toolbelt.sandbox.queue.duration',
  sandboxBusyRejections: 'ai_toolbelt.sandbox.busy_rejections',
  sandboxEngineStateChanges: 'ai_toolbelt.sandbox.engine.state_changes',
  sandboxWarmPool: 'ai_toolbelt.sandbox.warm_pool.acquisitions',
  sandboxEgressRefusals: 'ai_toolbelt.sandbox.egress.refusals',
  repairOutcomes: 'ai_toolbelt.repair.outcomes',
} as const;
