"""Training of the neural bots (``nardy train``)."""
