"""Coverage-guided fuzzing of the core (atheris): one target per dialect, detection, the framer.

``invariants`` holds the properties (also replayed by pytest, without atheris), ``corpus``
the seeds from the stream corpora, ``_target`` the atheris process, ``__main__`` the runner.
"""
