# tests/sim: filled in by its owner
