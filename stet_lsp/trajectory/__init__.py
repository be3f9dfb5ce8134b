"""Trajectories: an agent's run as a versioned artifact (events.jsonl, meta.json, narration.md).

Editor-agnostic: nothing here imports pygls or lsprotocol.
"""
