"""Stage 2, serialize and tokenize: the model's input and output contract.

Enters: a :class:`~laser_ci.workflows.model.JobInstance` (and its earlier runs). Leaves: one
deterministic text per job (``serialize``, with the ``history`` block), the token ids a
language model reads (``tokenize``), and runtimes written as fixed-length scientific notation
(``numbers``).
"""
