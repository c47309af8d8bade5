"""Chat side of digestbot: CLI, command core, scheduler and platform adapters."""
