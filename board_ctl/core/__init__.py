"""The pure core: events in, effects out. No threads, no I/O, no wall clock."""
