"""The built-in variants, each a plugin registered through the same hooks as a third party's."""
