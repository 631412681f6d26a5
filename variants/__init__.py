"""The built-in variants, each a plugin registered through the same hooks as a third party's."""

if __name__ != "nardy.variants":  # pragma: no cover - only a wrong import gets here
    # variants/ is the folder of the package nardy.variants; importing it by a second name would load a
    # second copy of every module (with its own classes and caches).
    raise ImportError(
        f"{__name__!r} is the folder of the package nardy.variants: import nardy.variants instead"
    )
