"""The agent loop, governed: tool results as gated pack inputs (:mod:`.tool_results`) and the
project's tool registry (:mod:`.registry`). This layer sits between the pipeline and the
engine: it gates what an agent brings in and hands the engine ready items to pack."""
