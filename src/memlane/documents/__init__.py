"""Document collections searched by late interaction (multi-vector MaxSim)."""
