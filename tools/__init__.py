"""Generic controller tools built on the client layer, as client-go's ``tools/`` packages:
``tools.record`` (Events) and ``tools.leaderelection`` (Lease-based leader election)."""
