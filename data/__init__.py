"""Bundled labelled sample and the generator that makes it (`python -m data.make_labels`)."""
