"""Builders, fakes and process helpers shared by the unit and end-to-end tests (on the
pytest pythonpath as ``support``)."""
