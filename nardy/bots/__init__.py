"""Bots beyond the kernel's two: the neural bot (numpy) and the gnubg bot (optional extra)."""
