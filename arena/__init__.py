"""The package nardy.arena (the folder arena/ of the repository)."""

if __name__ != "nardy.arena":  # pragma: no cover - only a wrong import gets here
    # arena/ is the folder of the package nardy.arena; importing it by a second name would load a
    # second copy of every module (with its own classes and caches).
    raise ImportError(
        f"{__name__!r} is the folder of the package nardy.arena: import nardy.arena instead"
    )
